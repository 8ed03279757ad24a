//! A handler's outcome, and every answer: the `Result` with its credit
//! grant, the release of the event's place, and what follows the last answer.

use std::cmp::Reverse;
use std::sync::Arc;

use celerity_proto::v1::{self as pb, HandlerMessage, handler_message, result::Outcome};

use prost::Message as _;

use crate::kind;
use crate::reply::{HttpResult, Reply};
use crate::session::{Action, Phase, Session, error_type, quoted};

impl Session {
    pub(in crate::session) fn on_completed(&mut self, _now: i64, id: Arc<str>, reply: Reply) {
        let Some(event) = self.in_flight.get(&id) else {
            // The session already answered for it (deadline or cancellation
            // grace); the late outcome is dropped.
            return;
        };
        let spec = &self.config.handlers[event.handler];
        // A hand-written answer can build any outcome; one the runtime
        // cannot use for this source is never sent.
        let reply = if spec.kind.fits_reply(&reply) {
            reply
        } else {
            kind::wrong_outcome(spec.kind, &spec.name, &reply.into_outcome(), &self.tags[event.handler]).into()
        };
        self.answer(&id, reply);
        self.after_answers();
    }

    /// Sends the result for an in-flight event and releases its place.
    pub(in crate::session) fn answer(&mut self, id: &str, reply: impl Into<Reply>) {
        let wire_id = self.forget(id).unwrap_or_else(|| id.to_string());
        let credit_grant = self.credit.grant_for_result();
        self.send_result(wire_id, credit_grant, reply.into());
    }

    /// Sends a `Result`, unless it would not fit a frame: then an error
    /// saying so goes in its place, since the transport's encoder would
    /// fail the whole stream on it. Ids are at most [`MAX_ID_BYTES`] and
    /// frames at least [`MIN_MESSAGE_BYTES`], so that error always fits.
    pub(in crate::session) fn send_result(&mut self, id: String, credit_grant: u32, reply: Reply) {
        let limit = self.config.max_message_bytes;
        let mut message = match reply {
            Reply::Http(reply) => {
                let result = HttpResult { id, credit_grant, reply };
                if result.encoded_len() <= limit {
                    self.actions.push_back(Action::SendHttp(result));
                    return;
                }
                result.into_message()
            }
            Reply::Outcome(outcome) => HandlerMessage {
                frame: Some(handler_message::Frame::Result(pb::Result { id, credit_grant, outcome: Some(outcome) })),
            },
        };
        let bytes = message.encoded_len();
        if bytes > limit
            && let Some(handler_message::Frame::Result(result)) = &mut message.frame
        {
            let text = format!(
                "the handler's answer is {bytes} bytes encoded, over the largest frame of {limit} bytes \
                 (CELERITY_MAX_MESSAGE_BYTES); this error was sent instead"
            );
            self.actions.push_back(Action::Warn(format!("event {}: {text}", quoted(&result.id))));
            result.outcome = Some(Outcome::Error(pb::HandlerError {
                message: text,
                r#type: error_type::RESULT_TOO_LARGE.to_string(),
                stack: String::new(),
            }));
        }
        self.actions.push_back(Action::Send(message));
    }

    /// Forgets an event answered, returning its id as it arrived.
    pub(in crate::session) fn forget(&mut self, id: &str) -> Option<String> {
        let event = self.in_flight.remove(id);
        if let Some(event) = &event {
            self.in_flight_per_handler[event.handler] -= 1;
        }
        // An answered event leaves its timers in the heap until they come
        // due, which for a long deadline is long after. Rebuilding the heap
        // when stale entries outnumber live ones keeps it bounded by the
        // events in flight, at amortised constant cost.
        if self.timers.len() > 2 * self.in_flight.len() + 64 {
            let in_flight = &self.in_flight;
            self.timers.retain(|Reverse((at, id))| in_flight.get(id).is_some_and(|e| e.timer == Some(*at)));
        }
        event.map(|event| event.wire_id)
    }

    /// Work to do once results have been sent: end a shrink's withhold, and
    /// finish a drain when nothing is left.
    pub(in crate::session) fn after_answers(&mut self) {
        if let Some(additional) = self.credit.resume_after_shrink(self.in_flight.len()) {
            self.send_grant(additional);
        }
        let (finished, past_deadline) = match self.phase {
            Phase::Drained { deadline } => (true, self.now >= deadline),
            Phase::Draining { settle_until, deadline } => (self.now >= settle_until, self.now >= deadline),
            _ => (false, false),
        };
        // Sends still awaiting acknowledgement are waited for too, until the
        // deadline: a handler that sent before finishing gets its answer.
        if finished && self.in_flight.is_empty() && (self.ws_pending.is_empty() || past_deadline) {
            self.phase = Phase::Closed;
            self.timers.clear();
            self.actions.push_back(Action::Close);
            self.actions.push_back(Action::Exit(Ok(())));
        }
    }
}
