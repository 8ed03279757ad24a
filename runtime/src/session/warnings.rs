//! Warnings about what the runtime sent, at a bounded rate.
//!
//! Each of these costs the runtime a few bytes on the wire and this process
//! a log line of a hundred bytes or more, so a runtime sending them by the
//! thousand would fill the log. The first of a kind is logged at once; the
//! ones after it are counted for [`WARNING_INTERVAL_MS`], and then one line
//! says how many there were. A kind that stays quiet for a whole interval is
//! logged at once again the next time.

/// How long further warnings of a kind are counted rather than logged,
/// after one was logged.
pub const WARNING_INTERVAL_MS: i64 = 10_000;

/// The kinds of warning that are rate-limited, each about something the
/// runtime did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Warning {
    /// A frame with nothing in it.
    EmptyFrame,
    /// A `RuntimeConfig` or `ReadyAck` after the first.
    OutOfPlace,
    /// A `WsSendAck` for a send that is not awaited.
    UnawaitedAck,
    /// A dispatch that cannot be answered: no id, one too long, or one in
    /// flight.
    Unanswerable,
    /// A dispatch beyond the credit window.
    OverCredit,
    /// A dispatch beyond a tag's `max_concurrent`.
    OverCap,
    /// A frame this process could not decode.
    Undecodable,
}

impl Warning {
    const COUNT: usize = 7;

    /// What the runtime sent, for the line that counts them.
    fn what(self) -> &'static str {
        match self {
            Warning::EmptyFrame => "frame(s) with nothing in them, ignored",
            Warning::OutOfPlace => "RuntimeConfig or ReadyAck frame(s) after the first, ignored",
            Warning::UnawaitedAck => "WebSocket acknowledgement(s) of sends not awaited, ignored",
            Warning::Unanswerable => "dispatch(es) that could not be answered, dropped with their places returned",
            Warning::OverCredit => "dispatch(es) beyond the credit window, answered OverCapacity",
            Warning::OverCap => "dispatch(es) beyond a tag's max_concurrent, answered OverCapacity",
            Warning::Undecodable => "frame(s) that could not be decoded",
        }
    }
}

/// Per kind of warning: the interval after the last line logged, and what
/// was counted in it.
#[derive(Debug, Clone, Copy, Default)]
struct Window {
    /// When the last line was logged.
    since: i64,
    /// Until when further warnings are counted; `None` before the first.
    until: Option<i64>,
    /// Warnings counted since the last line.
    counted: u64,
}

/// The rate limit on the session's warnings about the runtime.
#[derive(Debug, Default)]
pub(super) struct Warnings {
    windows: [Window; Warning::COUNT],
}

impl Warnings {
    /// Whether a warning of `kind` at `now` is to be logged; if not, it is
    /// counted. Call [`Warnings::due`] first, so that a count whose interval
    /// is over is logged before the warning that follows it.
    pub(super) fn admit(&mut self, kind: Warning, now: i64) -> bool {
        let window = &mut self.windows[kind as usize];
        match window.until {
            Some(until) if now < until => {
                window.counted += 1;
                false
            }
            _ => {
                *window = Window { since: now, until: Some(now.saturating_add(WARNING_INTERVAL_MS)), counted: 0 };
                true
            }
        }
    }

    /// The lines counting what was held back, for every interval over by
    /// `now`. Each such line starts an interval of its own, so a runtime
    /// that keeps on gets one line per interval.
    pub(super) fn due(&mut self, now: i64) -> Vec<String> {
        let mut lines = Vec::new();
        for (index, window) in self.windows.iter_mut().enumerate() {
            if window.counted > 0 && window.until.is_some_and(|until| until <= now) {
                lines.push(count_line(KINDS[index], window, now));
                *window = Window { since: now, until: Some(now.saturating_add(WARNING_INTERVAL_MS)), counted: 0 };
            }
        }
        lines
    }

    /// The lines counting everything still held back, whatever the time:
    /// for a session that is ending.
    pub(super) fn take_all(&mut self, now: i64) -> Vec<String> {
        let mut lines = Vec::new();
        for (index, window) in self.windows.iter_mut().enumerate() {
            if window.counted > 0 {
                lines.push(count_line(KINDS[index], window, now));
            }
            *window = Window::default();
        }
        lines
    }

    /// When the next counting line is due, if anything was counted.
    pub(super) fn next_due(&self) -> Option<i64> {
        self.windows.iter().filter(|w| w.counted > 0).filter_map(|w| w.until).min()
    }
}

/// Every kind, in the order of their windows.
const KINDS: [Warning; Warning::COUNT] = [
    Warning::EmptyFrame,
    Warning::OutOfPlace,
    Warning::UnawaitedAck,
    Warning::Unanswerable,
    Warning::OverCredit,
    Warning::OverCap,
    Warning::Undecodable,
];

fn count_line(kind: Warning, window: &Window, now: i64) -> String {
    let seconds = now.saturating_sub(window.since).max(0) as f64 / 1000.0;
    format!(
        "in the last {seconds:.1} s the runtime sent {} more {}; not logged one by one",
        window.counted,
        kind.what()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_is_logged_and_the_rest_counted_until_the_interval_ends() {
        let mut warnings = Warnings::default();
        assert!(warnings.admit(Warning::EmptyFrame, 0));
        for t in 1..=999 {
            assert!(!warnings.admit(Warning::EmptyFrame, t));
        }
        assert_eq!(warnings.next_due(), Some(WARNING_INTERVAL_MS));
        assert!(warnings.due(WARNING_INTERVAL_MS - 1).is_empty());
        let lines = warnings.due(WARNING_INTERVAL_MS);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].contains("999 more frame(s) with nothing in them"), "{}", lines[0]);
        assert!(lines[0].contains("in the last 10.0 s"), "{}", lines[0]);
        // The count line starts an interval: the next one is counted too.
        assert!(!warnings.admit(Warning::EmptyFrame, WARNING_INTERVAL_MS + 1));
        assert_eq!(warnings.due(2 * WARNING_INTERVAL_MS).len(), 1);
        // A quiet interval: nothing to say, and the next one is logged again.
        assert!(warnings.due(3 * WARNING_INTERVAL_MS).is_empty());
        assert_eq!(warnings.next_due(), None);
        assert!(warnings.admit(Warning::EmptyFrame, 3 * WARNING_INTERVAL_MS));
    }

    #[test]
    fn kinds_are_limited_apart() {
        let mut warnings = Warnings::default();
        assert!(warnings.admit(Warning::OverCredit, 0));
        assert!(warnings.admit(Warning::UnawaitedAck, 0));
        assert!(!warnings.admit(Warning::OverCredit, 1));
        let lines = warnings.take_all(5);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].contains("1 more dispatch(es) beyond the credit window"), "{}", lines[0]);
        assert!(warnings.admit(Warning::OverCredit, 6));
    }
}
