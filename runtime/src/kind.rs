//! The five kinds of event a handler serves, and what each kind receives and
//! answers on the wire: which `Dispatch` source it takes and which `Result`
//! outcome the runtime can use from it.
//!
//! The protocol core checks both with these (a source of another kind is
//! answered without starting the handler; an outcome of another shape is
//! replaced by an error), and the handler pipeline names its kinds with
//! [`HandlerKind`].

use std::fmt;

use celerity_proto::v1::{HandlerError, dispatch::Source, result::Outcome};

use crate::reply::Reply;

/// The kind of event a handler serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HandlerKind {
    /// HTTP requests.
    Http,
    /// WebSocket messages.
    WebSocket,
    /// Batches from a queue or topic.
    Consumer,
    /// Schedule triggers.
    Schedule,
    /// Custom invocations.
    Custom,
}

impl HandlerKind {
    /// The kind's name in manifests and messages: `http`, `websocket`,
    /// `consumer`, `schedule`, `custom`.
    pub fn as_str(self) -> &'static str {
        match self {
            HandlerKind::Http => "http",
            HandlerKind::WebSocket => "websocket",
            HandlerKind::Consumer => "consumer",
            HandlerKind::Schedule => "schedule",
            HandlerKind::Custom => "custom",
        }
    }

    /// The kind whose events arrive with `source`.
    pub(crate) fn of_source(source: &Source) -> HandlerKind {
        match source {
            Source::Http(_) => HandlerKind::Http,
            Source::Websocket(_) => HandlerKind::WebSocket,
            Source::Consumer(_) => HandlerKind::Consumer,
            Source::Schedule(_) => HandlerKind::Schedule,
            Source::Custom(_) => HandlerKind::Custom,
        }
    }

    /// Whether `reply` is an answer the runtime can use for this kind, as
    /// [`HandlerKind::fits`] says of its protocol form: an HTTP reply of the
    /// SDK's own is an HTTP response (an empty one, which allocates nothing,
    /// stands for it).
    pub(crate) fn fits_reply(self, reply: &Reply) -> bool {
        match reply {
            Reply::Outcome(outcome) => self.fits(outcome),
            Reply::Http(_) => self.fits(&Outcome::Http(Default::default())),
        }
    }

    /// Whether the runtime can use `outcome` to answer an event of this
    /// kind: its own shape, or a `HandlerError`.
    pub(crate) fn fits(self, outcome: &Outcome) -> bool {
        matches!(
            (self, outcome),
            (_, Outcome::Error(_))
                | (HandlerKind::Http, Outcome::Http(_))
                | (HandlerKind::WebSocket, Outcome::Websocket(_))
                | (HandlerKind::Consumer, Outcome::Consumer(_))
                | (HandlerKind::Schedule, Outcome::Schedule(_))
                | (HandlerKind::Custom, Outcome::Custom(_))
        )
    }
}

impl fmt::Display for HandlerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HandlerKind::Http => "HTTP",
            HandlerKind::WebSocket => "WebSocket",
            HandlerKind::Consumer => "consumer",
            HandlerKind::Schedule => "schedule",
            HandlerKind::Custom => "custom",
        })
    }
}

/// The `HandlerError.type` answering an event whose source does not fit its
/// handler.
pub(crate) const WRONG_SOURCE: &str = "WrongEventSource";

/// The `HandlerError.type` answering an outcome whose shape the event's
/// source cannot use.
pub(crate) const WRONG_OUTCOME: &str = "WrongOutcomeShape";

/// The source of an event of `kind` (none: no source at all), for messages.
fn source_text(kind: Option<HandlerKind>) -> &'static str {
    match kind {
        Some(HandlerKind::Http) => "an HTTP request",
        Some(HandlerKind::WebSocket) => "a WebSocket message",
        Some(HandlerKind::Consumer) => "a consumer batch",
        Some(HandlerKind::Schedule) => "a schedule trigger",
        Some(HandlerKind::Custom) => "a custom invocation",
        None => "no source at all",
    }
}

/// The answer to an event for the handler `name` of `kind`, whose source
/// (of the kind `source`, or none at all) the handler cannot take.
pub(crate) fn wrong_source(kind: HandlerKind, name: &str, source: Option<HandlerKind>, tag: &str) -> Outcome {
    Outcome::Error(HandlerError {
        message: format!(
            "handler `{name}` serves {kind} events, but the runtime sent {} for tag {}",
            source_text(source),
            crate::excerpt::quoted(tag)
        ),
        r#type: WRONG_SOURCE.to_string(),
        stack: String::new(),
    })
}

/// The answer in place of `outcome`, which the handler `name` of `kind`
/// gave and the runtime cannot use: an error naming both shapes.
pub(crate) fn wrong_outcome(kind: HandlerKind, name: &str, outcome: &Outcome, tag: &str) -> Outcome {
    let shape = match outcome {
        Outcome::Http(_) => "an HTTP response",
        Outcome::Websocket(_) => "a WebSocket Ack",
        Outcome::Consumer(_) => "a batch result",
        Outcome::Schedule(_) => "a schedule Ack",
        Outcome::Custom(_) => "a custom invocation result",
        Outcome::Error(_) => "an error",
    };
    Outcome::Error(HandlerError {
        message: format!(
            "handler `{name}` serves {kind} events, but answered with {shape}, which the runtime cannot use for tag {}",
            crate::excerpt::quoted(tag)
        ),
        r#type: WRONG_OUTCOME.to_string(),
        stack: String::new(),
    })
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::reply::HttpReply;

    #[test]
    fn an_http_reply_fits_an_http_handler_only_as_its_protocol_form_does() {
        let reply = HttpReply::new(http::StatusCode::OK, Some("text/plain; charset=utf-8"), Bytes::from_static(b"ok"));
        let kinds = [
            HandlerKind::Http,
            HandlerKind::WebSocket,
            HandlerKind::Consumer,
            HandlerKind::Schedule,
            HandlerKind::Custom,
        ];
        for kind in kinds {
            let wire = Reply::Http(reply.clone()).into_outcome();
            assert_eq!(kind.fits_reply(&Reply::Http(reply.clone())), kind.fits(&wire), "{kind}");
        }
        assert!(HandlerKind::Http.fits_reply(&Reply::Http(reply)));
    }
}
