//! An event's answer, as layers see it and make it.

use celerity_proto::v1 as pb;
use celerity_proto::v1::result::Outcome;
use http::StatusCode;

use crate::error::Error;
use crate::http::{Http, HttpError, IntoResponse};
use crate::kind::HandlerKind;
use crate::pipeline::IntoAnswer;

/// What an event is answered with, as the runtime will receive it: the
/// handler's answer on its way back through the layers, or one a layer makes
/// without calling the handler.
///
/// ```
/// use celerity::HandlerKind;
/// use celerity::http::StatusCode;
/// use celerity::layer::Answer;
///
/// let limited = Answer::http((StatusCode::TOO_MANY_REQUESTS, "slow down"));
/// assert_eq!(limited.http_status(), Some(StatusCode::TOO_MANY_REQUESTS));
///
/// // The kind's own failure: a failed `Ack`, a batch failed whole, ...
/// let failed = Answer::failure(HandlerKind::Consumer, "the queue is paused");
/// assert!(!failed.is_success());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    outcome: Outcome,
}

impl Answer {
    /// An HTTP response.
    pub fn http(response: impl IntoResponse) -> Self {
        Answer { outcome: Outcome::Http(response.__into_wire_response()) }
    }

    /// A `HandlerError`: the event failed, as when a handler returns an
    /// error (the runtime answers an HTTP caller 500).
    pub fn error(error: impl Into<Error>) -> Self {
        Answer { outcome: Outcome::Error(error.into().to_handler_error()) }
    }

    /// The failure of an event of `kind`, in its own shape: a `500`
    /// `{"message": ...}` for HTTP, a failed `Ack` with the message for a
    /// WebSocket message or a schedule, a batch failed whole for a consumer
    /// (a batch's answer carries no message), and the invoker's
    /// `error_message` for a custom invocation.
    pub fn failure(kind: HandlerKind, message: impl Into<String>) -> Self {
        let message = message.into();
        let outcome = match kind {
            HandlerKind::Http => IntoAnswer::<Http>::into_answer(HttpError::internal(message)).into_outcome(),
            HandlerKind::WebSocket => Outcome::Websocket(pb::Ack { success: false, error_message: message }),
            HandlerKind::Schedule => Outcome::Schedule(pb::Ack { success: false, error_message: message }),
            HandlerKind::Consumer => Outcome::Consumer(pb::BatchResult { success: false, failures: Vec::new() }),
            HandlerKind::Custom => {
                Outcome::Custom(pb::CustomInvokeResult { output: Default::default(), error_message: message })
            }
        };
        Answer { outcome }
    }

    /// The answer in its wire form.
    pub fn from_wire(outcome: Outcome) -> Self {
        Answer { outcome }
    }

    /// The wire form.
    pub fn as_wire(&self) -> &Outcome {
        &self.outcome
    }

    /// The wire form, to send.
    pub fn into_wire(self) -> Outcome {
        self.outcome
    }

    /// The status of an HTTP response.
    pub fn http_status(&self) -> Option<StatusCode> {
        match &self.outcome {
            Outcome::Http(response) => u16::try_from(response.status).ok().and_then(|s| StatusCode::from_u16(s).ok()),
            _ => None,
        }
    }

    /// Whether the event succeeded: an HTTP response below 500, an `Ack`
    /// or batch result of success, a custom result without an error.
    pub fn is_success(&self) -> bool {
        match &self.outcome {
            Outcome::Http(response) => response.status < 500,
            Outcome::Websocket(ack) | Outcome::Schedule(ack) => ack.success,
            Outcome::Consumer(batch) => batch.success && batch.failures.is_empty(),
            Outcome::Custom(result) => result.error_message.is_empty(),
            Outcome::Error(_) => false,
        }
    }

    /// The `HandlerError`, when the event failed as one.
    pub fn handler_error(&self) -> Option<&pb::HandlerError> {
        match &self.outcome {
            Outcome::Error(error) => Some(error),
            _ => None,
        }
    }
}

impl From<HttpError> for Answer {
    fn from(error: HttpError) -> Self {
        Answer::http(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_fails_in_its_own_shape() {
        let http = Answer::failure(HandlerKind::Http, "no");
        assert_eq!(http.http_status(), Some(StatusCode::INTERNAL_SERVER_ERROR));
        for kind in [HandlerKind::WebSocket, HandlerKind::Consumer, HandlerKind::Schedule, HandlerKind::Custom] {
            let answer = Answer::failure(kind, "no");
            assert!(kind.fits(answer.as_wire()), "{kind}: {answer:?}");
            assert!(!answer.is_success(), "{kind}");
        }
        assert!(!Answer::error(Error::msg("boom")).is_success());
        assert_eq!(Answer::error(Error::msg("boom")).handler_error().unwrap().message, "boom");
        assert!(Answer::http("ok").is_success());
    }
}
