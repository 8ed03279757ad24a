//! The other sources: custom invocations (`POST /runtime/handlers/invoke`),
//! consumer messages pushed by hand (`POST /dev/consumers/{sourceId}/{handlerName}`)
//! and schedules fired by hand (`POST /dev/schedules/{scheduleId}/{handlerName}`):
//! parsing their requests, and turning outcomes into answers the way the
//! runtime does.

use base64::Engine as _;
use bytes::Bytes;
use celerity_testkit::dispatcher::{AbandonReason, EventOutcome};
use std::time::Duration;

use celerity_testkit::proto::v1::dispatch::Source;
use celerity_testkit::proto::v1::{self as pb, ConsumerBatch, ConsumerRecord, result::Outcome};
use http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::log;

/// How a custom invocation is waited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum InvocationType {
    /// The caller waits for the output.
    #[serde(rename = "requestResponse")]
    RequestResponse,
    /// The caller is answered at once; the handler runs on.
    #[serde(rename = "async")]
    Async,
}

/// The body of `POST /runtime/handlers/invoke`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InvokeRequest {
    /// The handler's name or published name.
    pub handler_name: String,
    /// `requestResponse` or `async`.
    pub invocation_type: InvocationType,
    /// Sent to the handler as its input, as JSON (`null` when absent).
    #[serde(default)]
    pub payload: Option<Value>,
}

/// Parses an invoke request.
pub fn parse_invoke(body: &[u8]) -> Result<InvokeRequest, String> {
    serde_json::from_slice(body).map_err(|e| format!("invalid invoke request: {e}"))
}

impl InvokeRequest {
    /// The input bytes: the payload as JSON.
    pub fn input(&self) -> Bytes {
        Bytes::from(self.payload.as_ref().unwrap_or(&Value::Null).to_string())
    }
}

/// The body of the invoke endpoint's answer, its fields in the order the
/// runtime writes them: `message`, then `data` and `dataEncoding` where
/// the handler answered.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct InvokeAnswer {
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<String>,
    #[serde(rename = "dataEncoding", skip_serializing_if = "Option::is_none")]
    data_encoding: Option<&'static str>,
}

impl InvokeAnswer {
    fn message(message: String) -> Self {
        InvokeAnswer { message, data: None, data_encoding: None }
    }

    /// The JSON text, as sent.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| r#"{"message":"the answer could not be written"}"#.to_owned())
    }
}

/// The answer to a request-response invocation, as the runtime's invoke
/// endpoint gives it: `{"message", "data", "dataEncoding"?}`; output that is
/// not UTF-8 is base64 with `"dataEncoding": "base64"`.
pub fn invoke_answer(outcome: &EventOutcome) -> (StatusCode, InvokeAnswer) {
    let failed = |status, message: String| (status, InvokeAnswer::message(message));
    match outcome {
        EventOutcome::Result(result) => match &result.outcome {
            Some(Outcome::Custom(custom)) if !custom.error_message.is_empty() => {
                failed(StatusCode::INTERNAL_SERVER_ERROR, custom.error_message.clone())
            }
            Some(Outcome::Custom(custom)) => {
                let mut answer = InvokeAnswer::message("Handler invoked successfully".to_owned());
                match std::str::from_utf8(&custom.output) {
                    Ok(text) => answer.data = Some(text.to_owned()),
                    Err(_) => {
                        answer.data = Some(base64::engine::general_purpose::STANDARD.encode(&custom.output));
                        answer.data_encoding = Some("base64");
                    }
                }
                (StatusCode::OK, answer)
            }
            Some(Outcome::Error(e)) => {
                failed(StatusCode::INTERNAL_SERVER_ERROR, format!("{}: {}", e.r#type, e.message))
            }
            _ => failed(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the handler returned a result that is not a custom invocation response".to_owned(),
            ),
        },
        EventOutcome::Shed(reason) => failed(StatusCode::SERVICE_UNAVAILABLE, reason.to_string()),
        EventOutcome::Abandoned(AbandonReason::Deadline) => {
            failed(StatusCode::GATEWAY_TIMEOUT, "the handler did not respond before its deadline".to_owned())
        }
        EventOutcome::Abandoned(reason) => {
            failed(StatusCode::INTERNAL_SERVER_ERROR, format!("the handler did not return a result: {reason}"))
        }
    }
}

/// Parses pushed consumer records: a JSON array, or `{"records": [...]}`.
///
/// An element that is an object with a `body` field is a record:
/// `{"messageId"?, "body", "attributes"?, "eventType"?, "source"?}` (a
/// string body is sent as its text, anything else as JSON). Any other
/// element is itself the body. Records without an id get `msg-1`, `msg-2`, ...
pub fn parse_records(body: &[u8]) -> Result<Vec<ConsumerRecord>, String> {
    let value: Value = serde_json::from_slice(body).map_err(|e| format!("invalid JSON: {e}"))?;
    let items = match value {
        Value::Array(items) => items,
        Value::Object(mut map) => match map.remove("records") {
            Some(Value::Array(items)) => items,
            _ => return Err("expected a JSON array of records, or {\"records\": [...]}".to_owned()),
        },
        _ => return Err("expected a JSON array of records, or {\"records\": [...]}".to_owned()),
    };
    if items.is_empty() {
        return Err("no records to push".to_owned());
    }
    let mut records = Vec::with_capacity(items.len());
    for (index, item) in items.into_iter().enumerate() {
        let default_id = format!("msg-{}", index + 1);
        let record = match item {
            Value::Object(mut map) if map.contains_key("body") => {
                let text = |v: Option<Value>| match v {
                    Some(Value::String(s)) => Ok(s),
                    None | Some(Value::Null) => Ok(String::new()),
                    Some(other) => Err(format!("record {}: expected a string, got {other}", index + 1)),
                };
                let message_id = text(map.remove("messageId"))?;
                let event_type = text(map.remove("eventType"))?;
                let source = text(map.remove("source"))?;
                let attributes = map.remove("attributes").map(|a| Bytes::from(a.to_string())).unwrap_or_default();
                ConsumerRecord {
                    message_id: if message_id.is_empty() { default_id } else { message_id },
                    body: body_bytes(map.remove("body").unwrap_or(Value::Null)),
                    source,
                    event_type,
                    attributes,
                    vendor: Bytes::new(),
                }
            }
            other => ConsumerRecord { message_id: default_id, body: body_bytes(other), ..Default::default() },
        };
        if records.iter().any(|r: &ConsumerRecord| r.message_id == record.message_id) {
            return Err(format!("two records have the message id {:?}", record.message_id));
        }
        records.push(record);
    }
    Ok(records)
}

fn body_bytes(value: Value) -> Bytes {
    match value {
        Value::String(s) => Bytes::from(s),
        other => Bytes::from(other.to_string()),
    }
}

/// Which pushed records were acknowledged and which left for redelivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchSummary {
    /// Acknowledged: not delivered again.
    pub acknowledged: Vec<String>,
    /// Left on the source, with why.
    pub redelivered: Vec<(String, String)>,
    /// What the handler answered, in a few words.
    pub outcome: String,
}

/// How the runtime treats a consumer batch's outcome: records named in a
/// `BatchResult` stay on their source and the rest are acknowledged; a
/// failure naming no records, a `HandlerError`, a wrong or missing outcome,
/// and no answer at all leave the whole batch.
pub fn summarize_batch(records: &[ConsumerRecord], outcome: &EventOutcome) -> BatchSummary {
    let all = |why: String, outcome: String| BatchSummary {
        acknowledged: Vec::new(),
        redelivered: records.iter().map(|r| (r.message_id.clone(), why.clone())).collect(),
        outcome,
    };
    match outcome {
        EventOutcome::Result(pb::Result { outcome: Some(Outcome::Consumer(batch)), .. }) => {
            if batch.failures.is_empty() && !batch.success {
                return all("the batch failed".to_owned(), "batch failed, no records named".to_owned());
            }
            let mut summary = BatchSummary {
                acknowledged: Vec::new(),
                redelivered: Vec::new(),
                outcome: format!("{} record failure(s)", batch.failures.len()),
            };
            for record in records {
                match batch.failures.iter().find(|f| f.message_id == record.message_id) {
                    Some(f) => summary.redelivered.push((record.message_id.clone(), f.error_message.clone())),
                    None => summary.acknowledged.push(record.message_id.clone()),
                }
            }
            summary
        }
        EventOutcome::Result(pb::Result { outcome: Some(Outcome::Error(e)), .. }) => {
            all(format!("{}: {}", e.r#type, e.message), "HandlerError".to_owned())
        }
        EventOutcome::Result(other) => {
            all("the handler answered with no batch result".to_owned(), format!("wrong outcome {:?}", other.outcome))
        }
        EventOutcome::Shed(reason) => all(format!("shed: {reason}"), "shed".to_owned()),
        EventOutcome::Abandoned(reason) => all(format!("no answer: {reason}"), "no answer".to_owned()),
    }
}

/// A consumer batch of `records` for the handler `tag`, as the runtime
/// dispatches one: from the source `source_id` of the type `source_type`,
/// with the handler's `timeout` as its deadline.
pub fn consumer_dispatch(
    tag: &str,
    source_id: String,
    source_type: &str,
    records: Vec<ConsumerRecord>,
    timeout: Duration,
) -> pb::Dispatch {
    let now = log::unix_ms();
    pb::Dispatch {
        id: log::next_id("msg"),
        handler_tag: tag.to_owned(),
        timestamp_ms: now.max(0) as u64,
        deadline_unix_ms: now.saturating_add(i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX)),
        trace_context: Default::default(),
        source: Some(Source::Consumer(ConsumerBatch {
            records,
            source_id,
            source_type: source_type.to_owned(),
            vendor: Bytes::new(),
        })),
    }
}

impl BatchSummary {
    /// The outcome as an event's log line gives it.
    pub fn describe(&self) -> String {
        format!(
            "{}: acknowledged [{}], left for redelivery [{}]",
            self.outcome,
            self.acknowledged.join(", "),
            self.redelivered.iter().map(|(id, why)| format!("{id}: {why}")).collect::<Vec<_>>().join("; ")
        )
    }

    /// The JSON answer.
    pub fn to_json(&self) -> Value {
        json!({
            "acknowledged": self.acknowledged,
            "redelivered": self.redelivered.iter().map(|(id, why)| json!({"messageId": id, "error": why})).collect::<Vec<_>>(),
            "outcome": self.outcome,
        })
    }
}

/// The answer to a fired schedule: whether its message was acknowledged.
pub fn schedule_answer(outcome: &EventOutcome) -> (bool, String) {
    match outcome {
        EventOutcome::Result(pb::Result { outcome: Some(Outcome::Schedule(ack)), .. }) => {
            (ack.success, if ack.success { "acknowledged".to_owned() } else { ack.error_message.clone() })
        }
        EventOutcome::Result(pb::Result { outcome: Some(Outcome::Error(e)), .. }) => {
            (false, format!("HandlerError {}: {}", e.r#type, e.message))
        }
        EventOutcome::Result(_) => (false, "the handler answered with no schedule Ack".to_owned()),
        EventOutcome::Shed(reason) => (false, format!("shed: {reason}")),
        EventOutcome::Abandoned(reason) => (false, format!("no answer: {reason}")),
    }
}

/// Splits `/dev/{what}/{a}/{b}` into `(a, b)` (percent-decoded).
pub fn two_segments<'a>(path: &'a str, prefix: &str) -> Option<(String, String)> {
    let rest: &'a str = path.strip_prefix(prefix)?;
    let mut parts = rest.trim_matches('/').split('/');
    let (a, b) = (parts.next()?, parts.next()?);
    if a.is_empty() || b.is_empty() || parts.next().is_some() {
        return None;
    }
    let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
    Some((decode(a), decode(b)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use celerity_testkit::dispatcher::ShedReason;
    use celerity_testkit::proto::v1::{BatchResult, CustomInvokeResult, HandlerError, RecordFailure};

    fn answered(outcome: Outcome) -> EventOutcome {
        EventOutcome::Result(pb::Result { id: "e".into(), credit_grant: 1, outcome: Some(outcome) })
    }

    #[test]
    fn invoke_bodies() {
        let r =
            parse_invoke(br#"{"handlerName":"reindex","invocationType":"requestResponse","payload":{"full":true}}"#)
                .unwrap();
        assert_eq!(r.handler_name, "reindex");
        assert_eq!(r.invocation_type, InvocationType::RequestResponse);
        assert_eq!(&r.input()[..], br#"{"full":true}"#);
        let r = parse_invoke(br#"{"handlerName":"x","invocationType":"async"}"#).unwrap();
        assert_eq!((r.invocation_type, &r.input()[..]), (InvocationType::Async, &b"null"[..]));
        assert!(parse_invoke(br#"{"handlerName":"x","invocationType":"later"}"#).is_err());
        assert!(parse_invoke(br#"{"invocationType":"async"}"#).is_err());
    }

    #[test]
    fn invoke_answers() {
        let ok = answered(Outcome::Custom(CustomInvokeResult {
            output: Bytes::from_static(b"{\"n\":1}"),
            error_message: String::new(),
        }));
        let (status, body) = invoke_answer(&ok);
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body.to_json(), r#"{"message":"Handler invoked successfully","data":"{\"n\":1}"}"#);
        let binary = answered(Outcome::Custom(CustomInvokeResult {
            output: Bytes::from_static(&[0xff, 0x00]),
            error_message: String::new(),
        }));
        let (status, body) = invoke_answer(&binary);
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            body.to_json(),
            r#"{"message":"Handler invoked successfully","data":"/wA=","dataEncoding":"base64"}"#
        );
        let failed =
            answered(Outcome::Custom(CustomInvokeResult { output: Bytes::new(), error_message: "nope".into() }));
        let (status, body) = invoke_answer(&failed);
        assert_eq!((status, body.to_json()), (StatusCode::INTERNAL_SERVER_ERROR, r#"{"message":"nope"}"#.to_owned()));
        let error = answered(Outcome::Error(HandlerError {
            message: "boom".into(),
            r#type: "panic".into(),
            stack: String::new(),
        }));
        assert_eq!(invoke_answer(&error).1.to_json(), r#"{"message":"panic: boom"}"#);
        assert_eq!(invoke_answer(&EventOutcome::Abandoned(AbandonReason::Deadline)).0, StatusCode::GATEWAY_TIMEOUT);
        assert_eq!(invoke_answer(&EventOutcome::Shed(ShedReason::NoHandler)).0, StatusCode::SERVICE_UNAVAILABLE);
    }

    #[test]
    fn consumer_push_bodies() {
        let records = parse_records(
            br#"[{"orderId": 1}, "plain", {"messageId": "m-9", "body": {"a": 1}, "attributes": {"k": "v"}}]"#,
        )
        .unwrap();
        let ids: Vec<&str> = records.iter().map(|r| r.message_id.as_str()).collect();
        assert_eq!(ids, ["msg-1", "msg-2", "m-9"]);
        assert_eq!(&records[0].body[..], br#"{"orderId":1}"#);
        assert_eq!(&records[1].body[..], b"plain");
        assert_eq!(&records[2].body[..], br#"{"a":1}"#);
        assert_eq!(&records[2].attributes[..], br#"{"k":"v"}"#);
        let wrapped = parse_records(br#"{"records": [{"body": "x"}]}"#).unwrap();
        assert_eq!((wrapped[0].message_id.as_str(), &wrapped[0].body[..]), ("msg-1", &b"x"[..]));
        assert!(parse_records(b"[]").is_err());
        assert!(parse_records(b"{}").is_err());
        assert!(parse_records(br#"[{"messageId":"a","body":1},{"messageId":"a","body":2}]"#).is_err());
    }

    #[test]
    fn batch_outcomes_decide_what_is_acknowledged() {
        let records = parse_records(br#"[1, 2, 3]"#).unwrap();
        let partial = answered(Outcome::Consumer(BatchResult {
            success: false,
            failures: vec![
                RecordFailure { message_id: "msg-2".into(), error_message: "bad".into() },
                RecordFailure { message_id: "nope".into(), error_message: "ignored".into() },
            ],
        }));
        let s = summarize_batch(&records, &partial);
        assert_eq!(s.acknowledged, ["msg-1", "msg-3"]);
        assert_eq!(s.redelivered, [("msg-2".to_owned(), "bad".to_owned())]);
        let whole = answered(Outcome::Consumer(BatchResult { success: false, failures: vec![] }));
        assert_eq!(summarize_batch(&records, &whole).redelivered.len(), 3);
        let ok = answered(Outcome::Consumer(BatchResult { success: true, failures: vec![] }));
        assert_eq!(summarize_batch(&records, &ok).acknowledged.len(), 3);
        let wrong = answered(Outcome::Schedule(pb::Ack { success: true, error_message: String::new() }));
        assert!(summarize_batch(&records, &wrong).acknowledged.is_empty());
        assert_eq!(summarize_batch(&records, &EventOutcome::Abandoned(AbandonReason::StreamGone)).redelivered.len(), 3);
    }

    #[test]
    fn schedule_answers_and_paths() {
        let ack = answered(Outcome::Schedule(pb::Ack { success: true, error_message: String::new() }));
        assert!(schedule_answer(&ack).0);
        let failed = answered(Outcome::Schedule(pb::Ack { success: false, error_message: "later".into() }));
        assert_eq!(schedule_answer(&failed), (false, "later".to_owned()));
        assert_eq!(
            two_segments("/dev/schedules/nightly/clean%20up", "/dev/schedules/"),
            Some(("nightly".into(), "clean up".into()))
        );
        assert_eq!(two_segments("/dev/schedules/nightly", "/dev/schedules/"), None);
        assert_eq!(two_segments("/dev/schedules/a/b/c", "/dev/schedules/"), None);
    }
}
