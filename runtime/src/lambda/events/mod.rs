//! A Lambda payload as the `Dispatch` source the runtime would have sent,
//! one module per kind.
//!
//! A payload of the kind that cannot be read (a body that is not base64
//! where the event says it is, a method that is not one, an SQS message
//! without its id) is refused with a sentence saying what is wrong, which
//! the invocation answers as a Lambda error; nothing here panics on what a
//! caller sent.

mod consumer;
mod custom;
mod http;
mod schedule;
mod websocket;

pub(crate) use consumer::source_names;
pub(crate) use http::route_template;

use std::fmt;

use bytes::Bytes;
use celerity_proto::v1::dispatch::Source;
use serde_json::Value;

use super::form::Form;

/// What an invocation carries beside its payload.
#[derive(Debug, Clone)]
pub(crate) struct Invocation<'a> {
    /// The raw payload.
    pub(crate) raw: &'a Bytes,
    /// The payload as JSON, when it is.
    pub(crate) json: Option<&'a Value>,
    /// The tag the handler is bound to.
    pub(crate) tag: &'a str,
    /// Lambda's id of the invocation.
    pub(crate) request_id: &'a str,
}

/// A payload read as an event.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Event {
    pub(crate) source: Source,
    /// Where the Management API of a WebSocket event's API is.
    pub(crate) websocket_endpoint: Option<String>,
}

impl From<Source> for Event {
    fn from(source: Source) -> Self {
        Event { source, websocket_endpoint: None }
    }
}

/// Why a payload cannot be read as the event its function serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused(pub(crate) String);

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads `invocation` as an event of `form`.
pub(crate) fn read(form: Form, invocation: &Invocation<'_>) -> Result<Event, Refused> {
    match form {
        Form::HttpV2 => http::from_v2(invocation).map(|request| Source::Http(request).into()),
        Form::HttpV1 => http::from_v1(invocation).map(|request| Source::Http(request).into()),
        Form::WebSocket => websocket::read(invocation),
        Form::Queue | Form::Bucket | Form::Stream => {
            consumer::read(form, invocation).map(|batch| Source::Consumer(batch).into())
        }
        Form::Schedule => Ok(Source::Schedule(schedule::read(invocation)).into()),
        Form::Custom => Ok(Source::Custom(custom::read(invocation)).into()),
    }
}

/// `payload` as `T`, or a refusal naming `what` it should have been and
/// the field that did not fit.
fn decode<'a, T: serde::Deserialize<'a>>(payload: Option<&'a Value>, what: &str) -> Result<T, Refused> {
    let Some(payload) = payload else {
        return Err(Refused(format!("the payload is not JSON, so it is not {what}")));
    };
    serde_path_to_error::deserialize(payload).map_err(|error| {
        let path = error.path().to_string();
        let at = if path == "." { String::new() } else { format!(" at {path}") };
        Refused(format!("the payload is not {what}{at}: {}", error.inner()))
    })
}

/// The `{id}` of a tag `source::{id}::{name}`.
pub(crate) fn source_id(tag: &str) -> Option<&str> {
    tag.strip_prefix("source::").and_then(|rest| rest.split_once("::")).map(|(id, _)| id)
}

/// Bytes of a body API Gateway sent, base64 when it says so.
fn body_bytes(body: Option<String>, base64: bool) -> Result<Bytes, Refused> {
    use base64::Engine;

    let body = body.unwrap_or_default();
    if !base64 {
        return Ok(Bytes::from(body));
    }
    base64::engine::general_purpose::STANDARD
        .decode(body.as_bytes())
        .map(Bytes::from)
        .map_err(|error| Refused(format!("the body is marked isBase64Encoded but is not base64: {error}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_source_id_is_the_tags_middle() {
        assert_eq!(source_id("source::orders-queue::processOrders"), Some("orders-queue"));
        assert_eq!(source_id("custom::quote"), None);
        assert_eq!(source_id("source::only"), None);
    }

    #[test]
    fn a_body_marked_base64_must_be_base64() {
        assert_eq!(body_bytes(Some("aGk=".into()), true).unwrap(), Bytes::from_static(b"hi"));
        assert_eq!(body_bytes(Some("aGk=".into()), false).unwrap(), Bytes::from_static(b"aGk="));
        assert_eq!(body_bytes(None, true).unwrap(), Bytes::new());
        assert!(body_bytes(Some("not base64!".into()), true).unwrap_err().0.contains("isBase64Encoded"));
    }
}
