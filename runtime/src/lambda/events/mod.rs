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
use serde_json::{Map, Value};

use super::form::Form;
use crate::json::json_kind;

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

/// A payload read as the JSON object of an event: what the payload should
/// have been (`what`), for each refusal to name. Its fields are read from
/// the `Value` the invocation already parsed, without a typed copy of the
/// event: a field absent or `null` is `None`, and one of another type than
/// the event's is refused, naming where it is.
#[derive(Clone, Copy)]
struct Payload<'a> {
    json: &'a Value,
    what: &'a str,
}

impl<'a> Payload<'a> {
    /// `payload`, which must be a JSON object.
    fn of(payload: Option<&'a Value>, what: &'a str) -> Result<Payload<'a>, Refused> {
        let Some(json) = payload else {
            return Err(Refused(format!("the payload is not JSON, so it is not {what}")));
        };
        if !json.is_object() {
            return Err(Refused(format!("the payload is not {what}: it is {}, not an object", json_kind(json))));
        }
        Ok(Payload { json, what })
    }

    /// The refusal of the field at `pointer` (`/a/b`, named `a.b`).
    fn refused(&self, pointer: &str, why: impl fmt::Display) -> Refused {
        Refused(format!(
            "the payload is not {} at {}: {why}",
            self.what,
            pointer.trim_start_matches('/').replace('/', ".")
        ))
    }

    /// The field at `pointer`, of the type `is` checks (`expected` naming
    /// it).
    fn field(&self, pointer: &str, expected: &str, is: fn(&Value) -> bool) -> Result<Option<&'a Value>, Refused> {
        match self.json.pointer(pointer) {
            None | Some(Value::Null) => Ok(None),
            Some(value) if is(value) => Ok(Some(value)),
            Some(value) => Err(self.refused(pointer, format!("it is {}, expected {expected}", json_kind(value)))),
        }
    }

    fn text(&self, pointer: &str) -> Result<Option<&'a str>, Refused> {
        Ok(self.field(pointer, "a string", Value::is_string)?.and_then(Value::as_str))
    }

    fn flag(&self, pointer: &str) -> Result<bool, Refused> {
        Ok(self.field(pointer, "a boolean", Value::is_boolean)?.and_then(Value::as_bool).unwrap_or(false))
    }

    fn object(&self, pointer: &str) -> Result<Option<&'a Map<String, Value>>, Refused> {
        Ok(self.field(pointer, "an object", Value::is_object)?.and_then(Value::as_object))
    }

    fn array(&self, pointer: &str) -> Result<&'a [Value], Refused> {
        Ok(self.field(pointer, "an array", Value::is_array)?.and_then(Value::as_array).map_or(&[], Vec::as_slice))
    }

    /// The strings of the object at `pointer`, each value a string or, in
    /// a map of repeated values, an array of them, in order.
    fn strings(&self, pointer: &str) -> Result<Vec<(&'a str, &'a str)>, Refused> {
        let mut pairs = Vec::new();
        for (name, value) in self.object(pointer)?.into_iter().flatten() {
            match value {
                Value::String(value) => pairs.push((name.as_str(), value.as_str())),
                Value::Array(values) => {
                    for value in values {
                        let Some(value) = value.as_str() else {
                            let at = format!("{pointer}/{name}");
                            return Err(self.refused(&at, format!("it holds {}, expected strings", json_kind(value))));
                        };
                        pairs.push((name.as_str(), value));
                    }
                }
                Value::Null => {}
                other => {
                    let at = format!("{pointer}/{name}");
                    return Err(self.refused(&at, format!("it is {}, expected a string", json_kind(other))));
                }
            }
        }
        Ok(pairs)
    }
}

/// The `{id}` of a tag `source::{id}::{name}`.
pub(crate) fn source_id(tag: &str) -> Option<&str> {
    tag.strip_prefix("source::").and_then(|rest| rest.split_once("::")).map(|(id, _)| id)
}

/// Bytes of a body API Gateway sent, base64 when it says so.
fn body_bytes(body: Option<&str>, base64: bool) -> Result<Bytes, Refused> {
    use base64::Engine;

    let body = body.unwrap_or_default();
    if !base64 {
        return Ok(Bytes::copy_from_slice(body.as_bytes()));
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
        assert_eq!(body_bytes(Some("aGk="), true).unwrap(), Bytes::from_static(b"hi"));
        assert_eq!(body_bytes(Some("aGk="), false).unwrap(), Bytes::from_static(b"aGk="));
        assert_eq!(body_bytes(None, true).unwrap(), Bytes::new());
        assert!(body_bytes(Some("not base64!"), true).unwrap_err().0.contains("isBase64Encoded"));
    }

    #[test]
    fn a_field_of_another_type_is_refused_naming_where_it_is() {
        use serde_json::json;

        let event = json!({"requestContext": {"http": {"method": 7}}, "headers": {"a": "1", "b": ["2", "3"]}});
        let payload = Payload::of(Some(&event), "an event").unwrap();
        let refused = payload.text("/requestContext/http/method").unwrap_err();
        assert_eq!(
            refused.0,
            "the payload is not an event at requestContext.http.method: it is a number, expected a string"
        );
        assert_eq!(payload.text("/requestContext/http/path").unwrap(), None);
        assert_eq!(payload.strings("/headers").unwrap(), [("a", "1"), ("b", "2"), ("b", "3")]);
        assert!(payload.array("/headers").unwrap_err().0.contains("at headers: it is an object, expected an array"));
        let refused = Payload::of(Some(&json!([1])), "an event").err().unwrap();
        assert_eq!(refused.0, "the payload is not an event: it is an array, not an object");
        assert!(Payload::of(None, "an event").err().unwrap().0.contains("not JSON"));
    }
}
