//! A `Dispatch`: started, or answered at once when it cannot be (no id,
//! beyond the window or a cap, an unknown tag, a source its handler does not
//! take, during a drain).

use std::cmp::Reverse;
use std::sync::Arc;

use celerity_proto::v1::{self as pb, handler_message, result::Outcome};

use crate::kind;
use crate::session::warnings::Warning;
use crate::session::{
    Action, Event, InFlight, LazySource, MAX_ID_BYTES, Phase, Session, SessionError, error_type, event_deadline, quoted,
};

impl Session {
    /// A `Dispatch`, in whichever phase it comes.
    pub(in crate::session) fn on_event(&mut self, now: i64, event: Event) {
        match self.phase {
            Phase::AwaitingConfig => self.fail(SessionError::UnexpectedFirstFrame("Dispatch")),
            Phase::AwaitingAck => self.on_dispatch_before_ack(event.id, &event.handler_tag),
            Phase::Serving | Phase::Drained { .. } | Phase::Draining { .. } => self.on_dispatch(now, event),
            Phase::Closed => {}
        }
    }

    fn on_dispatch(&mut self, now: i64, mut dispatch: Event) {
        if !self.admit(&dispatch.id, &dispatch.handler_tag) {
            return;
        }
        let Some(&handler) = self.by_tag.get(&dispatch.handler_tag) else {
            let message = format!("no handler in this process serves tag {}", quoted(&dispatch.handler_tag));
            return self.answer_unstarted(dispatch.id, error_type::UNKNOWN_TAG, message);
        };
        let spec = &self.config.handlers[handler];
        let source = dispatch.source.as_ref().map(LazySource::kind);
        if source != Some(spec.kind) {
            // The runtime's local invoke endpoint can send a custom
            // invocation to a handler of any kind; no handler is started for
            // a source it cannot take.
            let outcome = kind::wrong_source(spec.kind, &spec.name, source, &dispatch.handler_tag);
            return self.answer_unstarted_with(dispatch.id, outcome);
        }
        if let Some(cap) = spec.max_concurrent
            && self.in_flight_per_handler[handler] >= cap
        {
            let message = format!(
                "tag {} already has {cap} event(s) in flight, its max_concurrent",
                quoted(&dispatch.handler_tag)
            );
            self.warn_about(Warning::OverCap, || format!("the runtime exceeded a per-tag cap: {message}"));
            return self.answer_unstarted(dispatch.id, error_type::OVER_CAPACITY, message);
        }

        let deadline = event_deadline(dispatch.deadline_unix_ms);
        // One allocation for the id, shared by the table, the timer and the
        // driver, instead of a copy for each.
        let id: Arc<str> = Arc::from(dispatch.id.as_str());
        let wire_id = std::mem::take(&mut dispatch.id);
        if let Some(at) = deadline {
            self.timers.push(Reverse((at, Arc::clone(&id))));
        }
        self.in_flight.insert(
            Arc::clone(&id),
            InFlight { handler, deadline: deadline.unwrap_or(0), cancelled: None, timer: deadline, wire_id },
        );
        self.in_flight_per_handler[handler] += 1;
        self.actions.push_back(Action::Start { handler, id, dispatch });
        // A deadline already passed fires at once rather than on the next tick.
        if deadline.is_some_and(|at| at <= now) {
            self.on_tick(now);
        }
    }

    /// The checks every dispatch goes through before its contents are
    /// looked at: an id that can be answered, a session still taking work,
    /// room in the window. Returns whether it may go on; if not, it has been
    /// dealt with.
    pub(in crate::session) fn admit(&mut self, id: &str, tag: &str) -> bool {
        if id.is_empty() {
            self.unanswerable(id, tag, "it has no id");
            return false;
        }
        if id.len() > MAX_ID_BYTES {
            self.unanswerable(id, tag, "its id is longer than any answer may carry");
            return false;
        }
        if self.in_flight.contains_key(id) {
            // A second answer for the id would be taken as the first one's.
            self.unanswerable(id, tag, "its id is still in flight");
            return false;
        }
        if let Phase::Drained { .. } = self.phase {
            self.answer_unstarted(
                id.to_string(),
                error_type::NOT_ACCEPTING,
                "the runtime dispatched after asking this handler to drain".to_string(),
            );
            return false;
        }
        if !self.credit.has_room(self.in_flight.len()) {
            // Answered at once, never queued.
            let window = self.credit.window();
            self.warn_about(Warning::OverCredit, || {
                format!(
                    "the runtime dispatched {} beyond the credit window of {window}; answered OverCapacity without running it",
                    quoted(id)
                )
            });
            self.answer_over_credit(id.to_string());
            return false;
        }
        true
    }

    /// A dispatch before `ReadyAck`: never run, but never left unanswered
    /// either, even though it breaks the handshake order.
    pub(in crate::session) fn on_dispatch_before_ack(&mut self, id: String, tag: &str) {
        if id.is_empty() {
            return self.unanswerable(&id, tag, "it has no id");
        }
        if id.len() > MAX_ID_BYTES {
            return self.unanswerable(&id, tag, "its id is longer than any answer may carry");
        }
        self.answer_unstarted(
            id,
            error_type::NOT_ACCEPTING,
            "the runtime dispatched before acknowledging Ready".to_string(),
        );
    }

    /// A dispatch that cannot be answered with a `Result`: run nothing, and
    /// give its place back (see [`Session::return_place`]).
    pub(in crate::session) fn unanswerable(&mut self, id: &str, tag: &str, why: &str) {
        self.warn_about(Warning::Unanswerable, || {
            format!(
                "the runtime dispatched id {} for tag {}, which cannot be answered because {why}; it was dropped",
                quoted(id),
                quoted(tag)
            )
        });
        self.return_place();
    }

    /// Gives back the place of a dispatch that will never be answered, with
    /// a `CreditGrant` when that can be done without ending a withhold.
    pub(in crate::session) fn return_place(&mut self) {
        if let Some(additional) = self.credit.return_unanswered() {
            self.send_grant(additional);
        }
        // Keeping the place may have completed a shrink.
        self.after_answers();
    }

    /// Answers an event that was never started: it still takes its place in
    /// the window's accounting, so it is answered like any other result.
    pub(in crate::session) fn answer_unstarted(&mut self, id: String, r#type: &str, message: String) {
        let outcome = Outcome::Error(pb::HandlerError { message, r#type: r#type.to_string(), stack: String::new() });
        self.answer_unstarted_with(id, outcome);
    }

    /// [`Session::answer_unstarted`] with a whole outcome.
    pub(in crate::session) fn answer_unstarted_with(&mut self, id: String, outcome: Outcome) {
        let credit_grant = self.credit.grant_for_result();
        self.send_result(id, credit_grant, outcome.into());
        self.after_answers();
    }

    /// Answers a dispatch that came beyond the window. It is outside our
    /// accounting, so it gives back exactly the place the runtime spent on it.
    pub(in crate::session) fn answer_over_credit(&mut self, id: String) {
        self.send(handler_message::Frame::Result(pb::Result {
            id,
            credit_grant: 1,
            outcome: Some(Outcome::Error(pb::HandlerError {
                message: format!(
                    "the handler process is at its credit window of {} event(s) in flight",
                    self.credit.window()
                ),
                r#type: error_type::OVER_CAPACITY.to_string(),
                stack: String::new(),
            })),
        }));
    }
}
