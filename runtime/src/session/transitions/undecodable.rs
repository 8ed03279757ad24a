//! Frames this process could not take: one that did not decode, which costs
//! only itself, and one over the size limit, which ends the stream.

use std::sync::Arc;

use celerity_proto::v1::{self as pb, result::Outcome};
use prost::DecodeError;

use crate::session::warnings::Warning;
use crate::session::{Phase, Session, SessionError, error_type, quoted, wire};

impl Session {
    pub(in crate::session) fn on_undecodable(&mut self, frame: &[u8], error: &DecodeError) {
        let salvaged = wire::salvage(frame);
        let kind = salvaged.kind.unwrap_or("frame of unknown kind");
        match (self.phase, salvaged.kind) {
            // The handshake cannot go on without the frame it waits for.
            (Phase::AwaitingConfig, _) | (Phase::AwaitingAck, Some("ReadyAck")) => {
                let expected = if self.phase == Phase::AwaitingConfig { "RuntimeConfig" } else { "ReadyAck" };
                self.fail(SessionError::Undecodable { frame: kind, expected, error: error.to_string() });
            }
            (_, Some("Dispatch")) => self.on_undecodable_dispatch(salvaged, error),
            _ => self.warn_about(Warning::Undecodable, || {
                format!("the SDK could not decode a {kind} from the runtime ({error}); it was ignored")
            }),
        }
    }

    /// A `Dispatch` that did not decode: answered with an error naming the
    /// field when its id can be read, since that returns its place; its
    /// place given back with a `CreditGrant` when it cannot.
    fn on_undecodable_dispatch(&mut self, salvaged: wire::Salvaged<'_>, error: &DecodeError) {
        let tag = salvaged.tag.map(String::from_utf8_lossy).unwrap_or_default();
        let Some(id) = salvaged.id.and_then(|id| std::str::from_utf8(id).ok()) else {
            let why = if salvaged.id.is_some() { "its id is not UTF-8" } else { "its id could not be read" };
            self.warn_about(Warning::Undecodable, || {
                format!(
                    "the SDK could not decode a Dispatch for tag {} from the runtime ({error}), and {why}, \
                     so it cannot be answered; it was dropped",
                    quoted(&tag)
                )
            });
            return self.return_place();
        };
        self.warn_about(Warning::Undecodable, || undecodable_warning(id, &tag, error));
        if self.phase == Phase::AwaitingAck {
            return self.on_dispatch_before_ack(id.to_string(), &tag);
        }
        if self.admit(id, &tag) {
            self.answer_unstarted_with(id.to_string(), undecodable_answer(error));
        }
    }

    /// A started event whose source did not decode in its task: answered
    /// as a `Dispatch` that did not decode at all, unless it was answered
    /// for already.
    pub(in crate::session) fn on_undecoded(&mut self, id: Arc<str>, error: &DecodeError) {
        let Some(event) = self.in_flight.get(&id) else { return };
        let tag = self.tags[event.handler].clone();
        self.warn_about(Warning::Undecodable, || undecodable_warning(&id, &tag, error));
        self.answer(&id, undecodable_answer(error));
        self.after_answers();
    }

    /// A frame over `CELERITY_MAX_MESSAGE_BYTES`: refused unread. Its bytes
    /// are still on the stream, and nothing after them can be told apart,
    /// so the stream ends here, with what is held abandoned.
    pub(in crate::session) fn on_frame_too_large(&mut self, bytes: usize, limit: usize) {
        let in_flight = self.abandon_unanswered();
        self.fail(SessionError::FrameTooLarge { bytes, limit, in_flight });
    }
}

/// What is logged of a `Dispatch` that did not decode but can be answered.
fn undecodable_warning(id: &str, tag: &str, error: &DecodeError) -> String {
    format!(
        "the SDK could not decode Dispatch {} for tag {} from the runtime ({error}); no handler ran, \
         and it was answered {}",
        quoted(id),
        quoted(tag),
        error_type::UNDECODABLE
    )
}

/// The answer to a `Dispatch` that did not decode, naming the field.
fn undecodable_answer(error: &DecodeError) -> Outcome {
    Outcome::Error(pb::HandlerError {
        message: format!("the handler process could not decode this event's Dispatch, so no handler ran ({error})"),
        r#type: error_type::UNDECODABLE.to_string(),
        stack: String::new(),
    })
}
