//! An event's answer on its way from its handler's task to the wire.
//!
//! The protocol's `Outcome` holds an HTTP response's headers as a
//! `HashMap<String, Values>`: four allocations for one `content-type`, made
//! on the worker that ran the handler, measured by the session and the
//! encoder on the stream's thread, and freed there. The SDK's own answer
//! types (text, bytes, JSON, a bare status, and those with a status beside
//! them) carry at most that one header, and it is always a static string.
//! So they travel as an [`HttpReply`] (a status, that content type and the
//! body) and are written to the wire as what they are ([`HttpResult`],
//! written by `codec/outbound.rs`). Wherever the protocol's form is needed
//! instead (a layer, a tower service, the test kit, Lambda),
//! [`Reply::into_outcome`] makes it: the same response.

use bytes::Bytes;
use celerity_proto::v1::{self as pb, result::Outcome};

/// The answer an event's handler gave, as its task hands it on.
///
/// What an HTTP handler's return value becomes (`<Http as Kind>::Answer`);
/// the SDK converts it to the protocol's form where that is what is needed.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// In the protocol's form.
    Outcome(Outcome),
    /// An HTTP response of one of the SDK's own answer types.
    Http(HttpReply),
}

/// An HTTP response with no header but, perhaps, a static `content-type`.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpReply {
    pub(crate) status: u16,
    pub(crate) content_type: Option<&'static str>,
    pub(crate) body: Bytes,
}

impl HttpReply {
    /// A response of `status` and `body`, with `content_type` when given.
    pub(crate) fn new(status: http::StatusCode, content_type: Option<&'static str>, body: Bytes) -> Self {
        HttpReply { status: status.as_u16(), content_type, body }
    }

    /// The response in the protocol's form: the content type, when there is
    /// one, its one header.
    pub(crate) fn into_wire(self) -> pb::HttpResponse {
        let mut headers = std::collections::HashMap::new();
        if let Some(content_type) = self.content_type {
            headers.insert(CONTENT_TYPE.to_owned(), pb::Values { values: vec![content_type.to_owned()] });
        }
        pb::HttpResponse { status: u32::from(self.status), headers, body: self.body }
    }
}

/// The one header an [`HttpReply`] may have.
pub(crate) const CONTENT_TYPE: &str = "content-type";

/// An HTTP response as an answer type makes it: in the protocol's form, or
/// as an [`HttpReply`].
#[derive(Debug, Clone, PartialEq)]
pub enum Answered {
    /// In the protocol's form.
    Wire(pb::HttpResponse),
    /// One of the SDK's own answer types.
    Own(HttpReply),
}

impl Answered {
    /// The response in the protocol's form.
    pub(crate) fn into_wire(self) -> pb::HttpResponse {
        match self {
            Answered::Wire(response) => response,
            Answered::Own(reply) => reply.into_wire(),
        }
    }

    /// The same response with `status`.
    pub(crate) fn with_status(self, status: http::StatusCode) -> Self {
        match self {
            Answered::Wire(mut response) => {
                response.status = u32::from(status.as_u16());
                Answered::Wire(response)
            }
            Answered::Own(reply) => Answered::Own(HttpReply { status: status.as_u16(), ..reply }),
        }
    }
}

impl From<Answered> for Reply {
    fn from(answer: Answered) -> Self {
        match answer {
            Answered::Wire(response) => Reply::Outcome(Outcome::Http(response)),
            Answered::Own(reply) => Reply::Http(reply),
        }
    }
}

impl Reply {
    /// The answer in the protocol's form.
    pub(crate) fn into_outcome(self) -> Outcome {
        match self {
            Reply::Outcome(outcome) => outcome,
            Reply::Http(reply) => Outcome::Http(reply.into_wire()),
        }
    }
}

impl From<Outcome> for Reply {
    fn from(outcome: Outcome) -> Self {
        Reply::Outcome(outcome)
    }
}

/// A `Result` frame answering with an [`HttpReply`], as the session sends
/// it: written by the encoder (`codec/outbound.rs`) as prost writes the same
/// frame with the reply in the protocol's form.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpResult {
    pub(crate) id: String,
    pub(crate) credit_grant: u32,
    pub(crate) reply: HttpReply,
}

impl HttpResult {
    /// The same frame in the protocol's form.
    pub(crate) fn into_message(self) -> pb::HandlerMessage {
        pb::HandlerMessage {
            frame: Some(pb::handler_message::Frame::Result(pb::Result {
                id: self.id,
                credit_grant: self.credit_grant,
                outcome: Some(Outcome::Http(self.reply.into_wire())),
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_protocols_form_has_the_content_type_as_its_one_header() {
        let reply = HttpReply::new(http::StatusCode::CREATED, Some("application/json"), Bytes::from_static(b"{}"));
        let wire = Reply::Http(reply).into_outcome();
        let Outcome::Http(response) = wire else { panic!("{wire:?}") };
        assert_eq!(response.status, 201);
        assert_eq!(response.headers.len(), 1);
        assert_eq!(response.headers["content-type"].values, ["application/json"]);
        assert_eq!(response.body, Bytes::from_static(b"{}"));
        let bare = HttpReply::new(http::StatusCode::NO_CONTENT, None, Bytes::new()).into_wire();
        assert!(bare.headers.is_empty());
    }
}
