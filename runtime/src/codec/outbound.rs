//! The frames this process sends, encoded as prost encodes them but for the
//! `bytes` fields of answers and WebSocket messages, which are written from
//! where they are.
//!
//! prost writes a `bytes` field by cloning its `Bytes` and appending the
//! clone, and a `Bytes` made from a `Vec` or a `String` (a JSON answer's
//! body, a text message) allocates on its first clone: one allocation per
//! answer, and one per WebSocket message, on the stream's thread. Here those
//! fields are written as slices, and every other field through prost's own
//! encoding, in the order prost's generated code writes them. An
//! [`HttpResult`] is written from its status, content type and body as prost
//! writes the same frame in the protocol's form. Tests check the bytes
//! against prost's for every shape of frame.

use bytes::BufMut;
use celerity_proto::v1::{self as pb, HandlerMessage, handler_message::Frame, result::Outcome};
use prost::Message as _;
use prost::encoding::{self, WireType};

use crate::reply::{CONTENT_TYPE, HttpReply, HttpResult};

/// `message`, as its `encode_raw` writes it.
pub(super) fn encode(message: &HandlerMessage, buf: &mut impl BufMut) {
    match &message.frame {
        Some(Frame::Result(result)) => {
            // An HTTP response is measured once, for its own length and for
            // the `Result`'s: its header map is a walk of a hash table.
            let response_len = match &result.outcome {
                Some(Outcome::Http(response)) => Some(response.encoded_len()),
                _ => None,
            };
            let len = match response_len {
                Some(response_len) => head_len(&result.id, result.credit_grant) + nested_len(10, response_len),
                None => result.encoded_len(),
            };
            nested(2, len, buf);
            result_raw(result, response_len, buf);
        }
        Some(Frame::WsSend(send)) => {
            nested(4, send.encoded_len(), buf);
            ws_send_raw(send, buf);
        }
        _ => message.encode_raw(buf),
    }
}

/// How long a message field of `len` bytes is, key and length included.
fn nested_len(tag: u32, len: usize) -> usize {
    encoding::key_len(tag) + encoding::encoded_len_varint(len as u64) + len
}

/// How long a `string` or `bytes` field is, left out when empty.
fn slice_len(tag: u32, slice: &[u8]) -> usize {
    if slice.is_empty() { 0 } else { nested_len(tag, slice.len()) }
}

/// How long a `Result`'s fields before its outcome are: its id and credit.
fn head_len(id: &str, credit_grant: u32) -> usize {
    let credit = if credit_grant == 0 { 0 } else { encoding::uint32::encoded_len(2, &credit_grant) };
    slice_len(1, id.as_bytes()) + credit
}

/// A `Result`'s fields before its outcome.
fn head_raw(id: &str, credit_grant: u32, buf: &mut impl BufMut) {
    slice_field(1, id.as_bytes(), buf);
    if credit_grant != 0 {
        encoding::uint32::encode(2, &credit_grant, buf);
    }
}

impl HttpResult {
    /// The whole `HandlerMessage`'s length.
    pub(crate) fn encoded_len(&self) -> usize {
        nested_len(2, self.result_len())
    }

    /// Writes the `HandlerMessage`.
    pub(crate) fn encode(&self, buf: &mut impl BufMut) {
        nested(2, self.result_len(), buf);
        head_raw(&self.id, self.credit_grant, buf);
        nested(10, reply_len(&self.reply), buf);
        reply_raw(&self.reply, buf);
    }

    fn result_len(&self) -> usize {
        head_len(&self.id, self.credit_grant) + nested_len(10, reply_len(&self.reply))
    }
}

/// How long `reply`'s `HttpResponse` fields are.
fn reply_len(reply: &HttpReply) -> usize {
    let status = if reply.status == 0 { 0 } else { encoding::uint32::encoded_len(1, &u32::from(reply.status)) };
    let headers = reply.content_type.map_or(0, |content_type| nested_len(2, entry_len(content_type)));
    status + headers + slice_len(3, &reply.body)
}

/// The map entry `content-type` → `Values { values: [content_type] }`.
fn entry_len(content_type: &str) -> usize {
    slice_len(1, CONTENT_TYPE.as_bytes()) + nested_len(2, slice_len(1, content_type.as_bytes()))
}

/// `reply`'s `HttpResponse` fields, as prost writes [`HttpReply::into_wire`]'s,
/// the body in place.
fn reply_raw(reply: &HttpReply, buf: &mut impl BufMut) {
    if reply.status != 0 {
        encoding::uint32::encode(1, &u32::from(reply.status), buf);
    }
    if let Some(content_type) = reply.content_type {
        nested(2, entry_len(content_type), buf);
        slice_field(1, CONTENT_TYPE.as_bytes(), buf);
        nested(2, slice_len(1, content_type.as_bytes()), buf);
        slice_field(1, content_type.as_bytes(), buf);
    }
    slice_field(3, &reply.body, buf);
}

/// The key and length of a message field of `len` bytes.
fn nested(tag: u32, len: usize, buf: &mut impl BufMut) {
    encoding::encode_key(tag, WireType::LengthDelimited, buf);
    encoding::encode_varint(len as u64, buf);
}

/// A `string` or `bytes` field, left out when empty, as prost writes it, its
/// contents written in place.
fn slice_field(tag: u32, slice: &[u8], buf: &mut impl BufMut) {
    if !slice.is_empty() {
        nested(tag, slice.len(), buf);
        buf.put_slice(slice);
    }
}

/// `result`'s fields; `response_len` is its HTTP response's length, when
/// it answers with one.
fn result_raw(result: &pb::Result, response_len: Option<usize>, buf: &mut impl BufMut) {
    head_raw(&result.id, result.credit_grant, buf);
    match &result.outcome {
        Some(Outcome::Http(response)) => {
            nested(10, response_len.unwrap_or_else(|| response.encoded_len()), buf);
            http_response_raw(response, buf);
        }
        Some(outcome) => outcome.encode(buf),
        None => {}
    }
}

fn http_response_raw(response: &pb::HttpResponse, buf: &mut impl BufMut) {
    if response.status != 0 {
        encoding::uint32::encode(1, &response.status, buf);
    }
    encoding::hash_map::encode(
        encoding::string::encode,
        encoding::string::encoded_len,
        encoding::message::encode,
        encoding::message::encoded_len,
        2,
        &response.headers,
        buf,
    );
    slice_field(3, &response.body, buf);
}

fn ws_send_raw(send: &pb::WsSend, buf: &mut impl BufMut) {
    slice_field(1, send.correlation_id.as_bytes(), buf);
    for message in &send.messages {
        nested(2, message.encoded_len(), buf);
        ws_outbound_raw(message, buf);
    }
}

fn ws_outbound_raw(message: &pb::WsOutbound, buf: &mut impl BufMut) {
    slice_field(1, message.connection_id.as_bytes(), buf);
    slice_field(2, &message.message, buf);
    if message.is_binary {
        encoding::bool::encode(3, &message.is_binary, buf);
    }
    encoding::string::encode_repeated(4, &message.inform_clients_on_loss, buf);
    slice_field(5, message.message_id.as_bytes(), buf);
    slice_field(6, message.caller.as_bytes(), buf);
    if message.wait_for_ack {
        encoding::bool::encode(7, &message.wait_for_ack, buf);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use bytes::Bytes;

    use super::*;

    fn ours(message: &HandlerMessage) -> Vec<u8> {
        let mut buf = Vec::new();
        encode(message, &mut buf);
        buf
    }

    fn same(frame: Frame) {
        let message = HandlerMessage { frame: Some(frame) };
        assert_eq!(ours(&message), message.encode_to_vec(), "{message:?}");
    }

    fn values(values: &[&str]) -> pb::Values {
        pb::Values { values: values.iter().map(|value| value.to_string()).collect() }
    }

    fn result(outcome: Option<Outcome>) -> pb::Result {
        pb::Result { id: "ev-1".into(), credit_grant: 1, outcome }
    }

    #[test]
    fn answers_are_the_bytes_prost_writes() {
        let headers = HashMap::from([
            ("content-type".to_string(), values(&["application/json"])),
            ("set-cookie".to_string(), values(&["a=1", "", "b=2"])),
            ("x-empty".to_string(), values(&[])),
        ]);
        let bodies = [Bytes::new(), Bytes::from(String::from("{\"ok\":true}")), Bytes::from(vec![7u8; 70_000])];
        for body in bodies {
            for headers in [HashMap::new(), headers.clone()] {
                for status in [0, 200, 404] {
                    let response = pb::HttpResponse { status, headers: headers.clone(), body: body.clone() };
                    same(Frame::Result(result(Some(Outcome::Http(response)))));
                }
            }
        }
        same(Frame::Result(pb::Result::default()));
        same(Frame::Result(result(None)));
        same(Frame::Result(pb::Result {
            id: String::new(),
            credit_grant: 0,
            outcome: Some(Outcome::Http(Default::default())),
        }));
        let error = pb::HandlerError { message: "no".into(), r#type: "Bad".into(), stack: String::new() };
        same(Frame::Result(result(Some(Outcome::Error(error)))));
        let batch = pb::BatchResult {
            failures: vec![pb::RecordFailure { message_id: "m-1".into(), error_message: "bad".into() }],
            ..Default::default()
        };
        same(Frame::Result(result(Some(Outcome::Consumer(batch)))));
        same(Frame::Result(result(Some(Outcome::Websocket(pb::Ack { success: true, ..Default::default() })))));
    }

    #[test]
    fn websocket_sends_are_the_bytes_prost_writes() {
        let full = pb::WsOutbound {
            connection_id: "c-1".into(),
            message: Bytes::from(String::from("{\"event\":\"hi\"}")),
            is_binary: true,
            inform_clients_on_loss: vec!["c-2".into(), String::new()],
            message_id: "m-1".into(),
            caller: "c-0".into(),
            wait_for_ack: true,
        };
        let messages =
            vec![full, pb::WsOutbound::default(), pb::WsOutbound { connection_id: "c-3".into(), ..Default::default() }];
        same(Frame::WsSend(pb::WsSend { correlation_id: "s-1".into(), messages }));
        same(Frame::WsSend(pb::WsSend::default()));
    }

    #[test]
    fn http_results_are_the_bytes_prost_writes_in_the_protocols_form() {
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
    fn every_other_frame_is_prosts_own() {
        same(Frame::Credit(pb::CreditGrant { additional: 3 }));
        same(Frame::Draining(pb::Draining::default()));
        same(Frame::Ready(pb::Ready::default()));
        let message = HandlerMessage { frame: None };
        assert_eq!(ours(&message), message.encode_to_vec());
    }
}
