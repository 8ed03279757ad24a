//! An event's answer on its way from its handler's task to the wire.
//!
//! The protocol's `Outcome` holds an HTTP response's headers as a
//! `HashMap<String, Values>`: four allocations for one `content-type`, made
//! on the worker that ran the handler, measured by the session and the
//! encoder on the stream's thread, and freed there. The SDK's own answer
//! types (text, bytes, JSON, an error, a bare status) carry at most that
//! one header, and it is always a static string. So they travel as an
//! [`HttpReply`] (a status, that content type and the body) and are
//! written to the wire as what they are ([`HttpResult`]); wherever the
//! protocol's form is needed instead (a layer, a tower service, the test
//! kit, Lambda), [`Reply::into_outcome`] makes it, the same response.

use bytes::{BufMut, Bytes};
use celerity_proto::v1::{self as pb, result::Outcome};
use prost::encoding::{self, WireType};

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
    status: u16,
    content_type: Option<&'static str>,
    body: Bytes,
}

impl HttpReply {
    pub(crate) fn new(status: http::StatusCode, content_type: Option<&'static str>, body: Bytes) -> Self {
        HttpReply { status: status.as_u16(), content_type, body }
    }

    /// The status.
    pub(crate) fn status(&self) -> u16 {
        self.status
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

    /// How long [`HttpReply::encode`] writes.
    fn encoded_len(&self) -> usize {
        let status = if self.status == 0 { 0 } else { encoding::uint32::encoded_len(1, &u32::from(self.status)) };
        let headers = self.content_type.map_or(0, |content_type| nested_len(2, entry_len(content_type)));
        let body = if self.body.is_empty() { 0 } else { nested_len(3, self.body.len()) };
        status + headers + body
    }

    /// Writes the `HttpResponse` message's fields, as prost writes
    /// [`HttpReply::into_wire`]'s, the body in place.
    fn encode(&self, buf: &mut impl BufMut) {
        if self.status != 0 {
            encoding::uint32::encode(1, &u32::from(self.status), buf);
        }
        if let Some(content_type) = self.content_type {
            nested(2, entry_len(content_type), buf);
            text(1, CONTENT_TYPE, buf);
            nested(2, value_len(content_type), buf);
            text(1, content_type, buf);
        }
        if !self.body.is_empty() {
            nested(3, self.body.len(), buf);
            buf.put_slice(&self.body);
        }
    }
}

const CONTENT_TYPE: &str = "content-type";

/// The map entry `content-type` → `Values { values: [content_type] }`.
fn entry_len(content_type: &str) -> usize {
    string_len(1, CONTENT_TYPE) + nested_len(2, value_len(content_type))
}

/// `Values { values: [content_type] }`.
fn value_len(content_type: &str) -> usize {
    string_len(1, content_type)
}

fn string_len(tag: u32, text: &str) -> usize {
    encoding::key_len(tag) + encoding::encoded_len_varint(text.len() as u64) + text.len()
}

fn nested_len(tag: u32, len: usize) -> usize {
    encoding::key_len(tag) + encoding::encoded_len_varint(len as u64) + len
}

fn nested(tag: u32, len: usize, buf: &mut impl BufMut) {
    encoding::encode_key(tag, WireType::LengthDelimited, buf);
    encoding::encode_varint(len as u64, buf);
}

/// A string field, as prost writes one that is not empty.
fn text(tag: u32, text: &str, buf: &mut impl BufMut) {
    nested(tag, text.len(), buf);
    buf.put_slice(text.as_bytes());
}

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
/// it: written by the encoder as prost writes the same frame with the
/// reply in the protocol's form.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpResult {
    pub(crate) id: String,
    pub(crate) credit_grant: u32,
    pub(crate) reply: HttpReply,
}

impl HttpResult {
    /// The `Result` message's length.
    fn result_len(&self) -> usize {
        let id = if self.id.is_empty() { 0 } else { string_len(1, &self.id) };
        let credit = if self.credit_grant == 0 { 0 } else { encoding::uint32::encoded_len(2, &self.credit_grant) };
        id + credit + nested_len(10, self.reply.encoded_len())
    }

    /// The whole `HandlerMessage`'s length.
    pub(crate) fn encoded_len(&self) -> usize {
        nested_len(2, self.result_len())
    }

    /// Writes the `HandlerMessage`.
    pub(crate) fn encode(&self, buf: &mut impl BufMut) {
        nested(2, self.result_len(), buf);
        if !self.id.is_empty() {
            text(1, &self.id, buf);
        }
        if self.credit_grant != 0 {
            encoding::uint32::encode(2, &self.credit_grant, buf);
        }
        nested(10, self.reply.encoded_len(), buf);
        self.reply.encode(buf);
    }

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
    use prost::Message as _;

    use super::*;

    #[test]
    fn a_result_is_written_as_prost_writes_it_in_the_protocols_form() {
        let bodies = [Bytes::new(), Bytes::from_static(b"{\"ok\":true}"), Bytes::from(vec![7u8; 70_000])];
        for body in bodies {
            for content_type in [None, Some("application/json"), Some("text/plain; charset=utf-8")] {
                for status in [200, 204, 404, 500] {
                    for (id, credit_grant) in [("ev-1", 1), ("", 0), ("e", 7)] {
                        let status = http::StatusCode::from_u16(status).unwrap();
                        let result = HttpResult {
                            id: id.to_string(),
                            credit_grant,
                            reply: HttpReply::new(status, content_type, body.clone()),
                        };
                        let mut ours = Vec::new();
                        result.encode(&mut ours);
                        assert_eq!(ours.len(), result.encoded_len());
                        assert_eq!(ours, result.clone().into_message().encode_to_vec(), "{result:?}");
                    }
                }
            }
        }
    }

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
