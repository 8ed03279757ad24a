//! The credit account of one handler stream, as the runtime keeps it.

/// A snapshot of a stream's credit account.
///
/// The rules (specification, "Credit and Flow Control"): the window starts at
/// `Ready.initial_credit`; each dispatch consumes one unit; a Result adds its
/// `credit_grant`; a Result with `credit_grant` 0 asks the runtime to
/// withhold, and it dispatches nothing until a later `CreditGrant`; a
/// `CreditGrant` adds `additional` and ends any withhold, even with
/// `additional` 0. Credit is never returned implicitly by a Result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CreditState {
    /// Places available for new dispatches. Negative only after forced
    /// dispatches beyond the window.
    pub available: i64,
    /// Events dispatched and not yet answered.
    pub in_flight: u32,
    /// Whether the handler is withholding (no dispatch until a CreditGrant).
    pub withheld: bool,
}

impl CreditState {
    /// Starts an account with the handler's declared initial window.
    pub fn new(initial_credit: u32) -> Self {
        CreditState { available: i64::from(initial_credit), in_flight: 0, withheld: false }
    }

    /// The current window: places available plus places in flight. It grows
    /// with grants beyond one per result and shrinks with withheld results.
    pub fn window(&self) -> i64 {
        self.available + i64::from(self.in_flight)
    }

    /// Whether the runtime may dispatch now (credit left, no withhold).
    pub fn can_dispatch(&self) -> bool {
        !self.withheld && self.available > 0
    }

    /// Accounts one dispatch.
    pub(crate) fn on_dispatch(&mut self) {
        self.available -= 1;
        self.in_flight += 1;
    }

    /// Accounts a Result for an event in flight.
    pub(crate) fn on_result(&mut self, credit_grant: u32) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if credit_grant == 0 {
            self.withheld = true;
        } else {
            self.available += i64::from(credit_grant);
        }
    }

    /// Accounts a CreditGrant frame.
    pub(crate) fn on_grant(&mut self, additional: u32) {
        self.available += i64::from(additional);
        self.withheld = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn withhold_then_grant_resumes() {
        let mut c = CreditState::new(2);
        c.on_dispatch();
        c.on_dispatch();
        assert!(!c.can_dispatch());
        c.on_result(0);
        assert!(c.withheld);
        assert_eq!(c.window(), 1);
        c.on_result(1);
        assert_eq!(c.available, 1);
        assert!(!c.can_dispatch(), "a Result grant does not end a withhold");
        c.on_grant(0);
        assert!(c.can_dispatch());
        assert_eq!(c.window(), 1);
    }
}
