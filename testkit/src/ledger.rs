//! What the runtime side knows about one handler stream: dispatches, results,
//! other frames, credit, caps, violations and how the stream ended.
//!
//! The ledger is plain data with synchronous rules; the
//! [`Connection`](crate::Connection) wraps it in a lock and feeds it from its
//! reader task.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt::Write as _;

use celerity_proto::v1::{Dispatch, HandlerMessage, Ready, handler_message};

use crate::credit::CreditState;
use crate::error::{DispatchRefusal, StreamEnd};
use crate::violation::Violation;

/// The runtime-side record of one handler stream.
#[derive(Debug)]
pub(crate) struct Ledger {
    pub(crate) credit: CreditState,
    /// Per-tag caps from `Ready.limits` (a cap of 0 means none).
    limits: HashMap<String, u32>,
    /// Tags the handler declared in `Ready`.
    served_tags: HashSet<String>,
    /// Events in flight per tag.
    tag_in_flight: HashMap<String, u32>,
    /// Dispatched ids awaiting a Result, with their tag and how many times
    /// they were dispatched (more than once only when forced).
    outstanding: HashMap<String, (String, u32)>,
    /// Every id ever dispatched.
    dispatched: HashSet<String>,
    /// Results received and not yet claimed by the test, in arrival order.
    pub(crate) results: VecDeque<celerity_proto::v1::Result>,
    /// Every other frame from the handler, in arrival order.
    pub(crate) frames: VecDeque<HandlerMessage>,
    /// Violations not yet taken by the test.
    pub(crate) violations: Vec<Violation>,
    /// Whether a Result with credit_grant 0 is expected.
    pub(crate) expect_withhold: bool,
    /// The deadline of the handler's `Draining`, once sent.
    pub(crate) handler_draining: Option<i64>,
    /// The deadline of the runtime's `Drain`, once sent.
    pub(crate) drain_sent: Option<i64>,
    /// How the handler's stream ended, once it has.
    pub(crate) end: Option<StreamEnd>,
    /// Results received in total (valid ones).
    pub(crate) results_received: u64,
}

impl Ledger {
    /// A ledger for a stream whose handler sent `ready`.
    pub(crate) fn new(ready: &Ready) -> Self {
        Ledger {
            credit: CreditState::new(ready.initial_credit),
            limits: ready
                .limits
                .iter()
                .filter(|l| l.max_concurrent > 0)
                .map(|l| (l.handler_tag.clone(), l.max_concurrent))
                .collect(),
            served_tags: ready.handler_tags.iter().cloned().collect(),
            tag_in_flight: HashMap::new(),
            outstanding: HashMap::new(),
            dispatched: HashSet::new(),
            results: VecDeque::new(),
            frames: VecDeque::new(),
            violations: Vec::new(),
            expect_withhold: false,
            handler_draining: None,
            drain_sent: None,
            end: None,
            results_received: 0,
        }
    }

    /// Checks that the real runtime would send `d` now.
    pub(crate) fn check_dispatch(&self, d: &Dispatch) -> Result<(), DispatchRefusal> {
        if let Some(end) = &self.end {
            return Err(DispatchRefusal::StreamEnded(end.clone()));
        }
        if self.drain_sent.is_some() {
            return Err(DispatchRefusal::RuntimeDraining);
        }
        if self.handler_draining.is_some() {
            return Err(DispatchRefusal::HandlerDraining);
        }
        if self.dispatched.contains(&d.id) {
            return Err(DispatchRefusal::DuplicateId(d.id.clone()));
        }
        if !self.served_tags.contains(&d.handler_tag) {
            return Err(DispatchRefusal::UnknownTag(d.handler_tag.clone()));
        }
        if self.credit.withheld {
            return Err(DispatchRefusal::Withheld);
        }
        if self.credit.available < 1 {
            return Err(DispatchRefusal::NoCredit { available: self.credit.available });
        }
        if let Some(&cap) = self.limits.get(&d.handler_tag) {
            let in_flight = self.tag_in_flight(&d.handler_tag);
            if in_flight >= cap {
                return Err(DispatchRefusal::TagCap { tag: d.handler_tag.clone(), cap, in_flight });
            }
        }
        Ok(())
    }

    /// Accounts a dispatch that was sent.
    pub(crate) fn record_dispatch(&mut self, d: &Dispatch) {
        self.credit.on_dispatch();
        *self.tag_in_flight.entry(d.handler_tag.clone()).or_default() += 1;
        self.outstanding.entry(d.id.clone()).or_insert_with(|| (d.handler_tag.clone(), 0)).1 += 1;
        self.dispatched.insert(d.id.clone());
    }

    /// Events of `tag` in flight.
    pub(crate) fn tag_in_flight(&self, tag: &str) -> u32 {
        self.tag_in_flight.get(tag).copied().unwrap_or(0)
    }

    /// Whether `id` was ever dispatched.
    pub(crate) fn was_dispatched(&self, id: &str) -> bool {
        self.dispatched.contains(id)
    }

    /// Records one frame from the handler.
    pub(crate) fn on_frame(&mut self, msg: HandlerMessage) {
        match msg.frame {
            Some(handler_message::Frame::Result(result)) => self.on_result(result),
            Some(handler_message::Frame::Credit(grant)) => {
                self.credit.on_grant(grant.additional);
                self.frames.push_back(HandlerMessage { frame: Some(handler_message::Frame::Credit(grant)) });
            }
            Some(handler_message::Frame::Draining(draining)) => {
                self.handler_draining = Some(draining.deadline_unix_ms);
                self.frames.push_back(HandlerMessage { frame: Some(handler_message::Frame::Draining(draining)) });
            }
            frame => self.frames.push_back(HandlerMessage { frame }),
        }
    }

    fn on_result(&mut self, result: celerity_proto::v1::Result) {
        let Some((tag, count)) = self.outstanding.get_mut(&result.id) else {
            // The runtime ignores a Result for an id it does not hold,
            // credit_grant included.
            let id = result.id.clone();
            self.violations.push(if self.dispatched.contains(&id) {
                Violation::DuplicateResult { id }
            } else {
                Violation::ResultForUnknownId { id }
            });
            return;
        };
        let tag = tag.clone();
        *count -= 1;
        if *count == 0 {
            self.outstanding.remove(&result.id);
        }
        if let Some(n) = self.tag_in_flight.get_mut(&tag) {
            *n = n.saturating_sub(1);
        }
        self.credit.on_result(result.credit_grant);
        if result.credit_grant == 0 && !self.expect_withhold {
            self.violations.push(Violation::UnexpectedWithhold { id: result.id.clone() });
        }
        if result.outcome.is_none() {
            self.violations.push(Violation::ResultWithoutOutcome { id: result.id.clone() });
        }
        self.results_received += 1;
        self.results.push_back(result);
    }

    /// Removes and returns the first unclaimed Result for `id`.
    pub(crate) fn take_result(&mut self, id: &str) -> Option<celerity_proto::v1::Result> {
        let pos = self.results.iter().position(|r| r.id == id)?;
        self.results.remove(pos)
    }

    /// A one-line summary for timeout messages.
    pub(crate) fn summary(&self) -> String {
        let mut s = format!(
            "credit {}, window {}, in flight {}, withheld {}, {} unclaimed results, {} unread frames",
            self.credit.available,
            self.credit.window(),
            self.credit.in_flight,
            self.credit.withheld,
            self.results.len(),
            self.frames.len()
        );
        if let Some(end) = &self.end {
            let _ = write!(s, ", stream ended: {end}");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celerity_proto::v1::{Ack, CreditGrant, HandlerLimit, result::Outcome};

    fn ready() -> Ready {
        Ready {
            handler_tags: vec!["a".into(), "b".into()],
            initial_credit: 2,
            limits: vec![HandlerLimit { handler_tag: "a".into(), max_concurrent: 1 }],
            ..Default::default()
        }
    }

    fn dispatch(id: &str, tag: &str) -> Dispatch {
        Dispatch { id: id.into(), handler_tag: tag.into(), ..Default::default() }
    }

    fn result(id: &str, grant: u32) -> HandlerMessage {
        HandlerMessage {
            frame: Some(handler_message::Frame::Result(celerity_proto::v1::Result {
                id: id.into(),
                credit_grant: grant,
                outcome: Some(Outcome::Schedule(Ack { success: true, error_message: String::new() })),
            })),
        }
    }

    #[test]
    fn caps_credit_and_violations() {
        let mut l = Ledger::new(&ready());
        let a1 = dispatch("1", "a");
        l.check_dispatch(&a1).unwrap();
        l.record_dispatch(&a1);
        assert!(matches!(l.check_dispatch(&dispatch("2", "a")), Err(DispatchRefusal::TagCap { cap: 1, .. })));
        assert!(matches!(l.check_dispatch(&dispatch("1", "b")), Err(DispatchRefusal::DuplicateId(_))));
        assert!(matches!(l.check_dispatch(&dispatch("3", "c")), Err(DispatchRefusal::UnknownTag(_))));
        let b = dispatch("2", "b");
        l.check_dispatch(&b).unwrap();
        l.record_dispatch(&b);
        assert!(matches!(l.check_dispatch(&dispatch("3", "b")), Err(DispatchRefusal::NoCredit { available: 0 })));
        l.on_frame(result("1", 1));
        l.on_frame(result("1", 1));
        l.on_frame(result("9", 1));
        assert_eq!(
            l.violations,
            vec![Violation::DuplicateResult { id: "1".into() }, Violation::ResultForUnknownId { id: "9".into() }]
        );
        assert_eq!(l.credit.available, 1);
        l.expect_withhold = true;
        l.on_frame(result("2", 0));
        assert!(matches!(l.check_dispatch(&dispatch("3", "b")), Err(DispatchRefusal::Withheld)));
        l.on_frame(HandlerMessage { frame: Some(handler_message::Frame::Credit(CreditGrant { additional: 0 })) });
        l.check_dispatch(&dispatch("3", "b")).unwrap();
        assert_eq!(l.violations.len(), 2);
        assert_eq!(l.frames.len(), 1);
    }
}
