//! A batch of records as the runtime's `ConsumerBatch`: from SQS, or sent
//! directly by S3 or a DynamoDB stream.
//!
//! A consumer bound to a bucket or a datastore may be fed either way: its
//! S3 notification or DynamoDB stream record arrives as the body of an SQS
//! message, or as the invocation's own record. Either is read the same, so
//! that the handler sees what it would under the runtime: the object event
//! or the item (as plain JSON), the event type `created`, `deleted` or
//! `metadataUpdated`, and the source type `bucket` or `datastore`. Any other
//! SQS message is a `queue` record, its body as sent.
//!
//! Each record's id is what a failure is reported by: an SQS message's
//! `messageId`, a stream record's `SequenceNumber` (what a partial-batch
//! answer names for a stream); a batch with a record lacking it cannot be
//! answered for, so it is refused (and so retried whole). An S3
//! notification has no such id, and S3 takes no partial answer: its records
//! are numbered after the invocation's id. A queue record's attributes are
//! its SQS message attributes as JSON; every record's vendor data the
//! message or record itself.

use bytes::Bytes;
use celerity_proto::v1::{ConsumerBatch, ConsumerRecord};
use serde_json::{Map, Value};

use super::{Invocation, Payload, Refused, source_id};
use crate::lambda::form::Form;

/// Reads `invocation` as a batch of `form`: `Queue`, `Bucket` or `Stream`.
pub(super) fn read(form: Form, invocation: &Invocation<'_>) -> Result<ConsumerBatch, Refused> {
    match form {
        Form::Bucket => read_records(invocation, "an S3 event notification", "bucket", |index, record| {
            let id = format!("{}:{index}", invocation.request_id);
            Ok(bucket_record(id, record, bucket(std::slice::from_ref(record))))
        }),
        Form::Stream => read_records(invocation, "a DynamoDB stream batch", "datastore", |index, record| {
            let Some(id) =
                record.pointer("/dynamodb/SequenceNumber").and_then(Value::as_str).filter(|id| !id.is_empty())
            else {
                return Err(Refused(format!(
                    "stream record {index} has no dynamodb.SequenceNumber, so the batch cannot be answered record by \
                     record"
                )));
            };
            Ok(bucket_record(id.to_string(), record, datastore(record)))
        }),
        _ => read_queue(invocation),
    }
}

/// The names of the source a batch of `form` came from, as a consumer's
/// tag names it: the queue, bucket or table; for an SQS batch also the
/// bucket or table whose event its first message carries.
pub(crate) fn source_names(form: Form, payload: Option<&Value>) -> Vec<String> {
    let Some(first) = payload.and_then(|payload| payload.pointer("/Records/0")) else { return Vec::new() };
    let arn = first.get("eventSourceARN").and_then(Value::as_str);
    let mut names: Vec<&str> = Vec::new();
    let inner;
    match form {
        Form::Queue => {
            names.extend(arn.map(queue_name));
            inner = first
                .get("body")
                .and_then(Value::as_str)
                .and_then(|body| serde_json::from_str::<Value>(body).ok())
                .and_then(|body| unwrap(&body));
            if let Some(unwrapped) = &inner {
                names.push(name_of(unwrapped.kind, &unwrapped.source));
            }
        }
        Form::Bucket => names.extend(first.pointer("/s3/bucket/name").and_then(Value::as_str)),
        Form::Stream => names.extend(arn.and_then(table_name)),
        _ => {}
    }
    names.into_iter().map(str::to_string).collect()
}

fn read_records(
    invocation: &Invocation<'_>,
    what: &str,
    source_type: &str,
    mut each: impl FnMut(usize, &Value) -> Result<ConsumerRecord, Refused>,
) -> Result<ConsumerBatch, Refused> {
    let records = invocation
        .json
        .and_then(|json| json.get("Records"))
        .and_then(Value::as_array)
        .ok_or_else(|| Refused(format!("the payload is not {what}: it has no Records")))?;
    let records =
        records.iter().enumerate().map(|(index, record)| each(index, record)).collect::<Result<Vec<_>, _>>()?;
    let named = records.first().map(|record: &ConsumerRecord| name_of(source_type, &record.source).to_string());
    Ok(ConsumerBatch {
        records,
        source_id: source_id(invocation.tag).map(str::to_string).or(named).unwrap_or_default(),
        source_type: source_type.to_string(),
        vendor: Bytes::new(),
    })
}

/// A bucket's or a datastore's record sent directly, with its vendor data.
fn bucket_record(message_id: String, record: &Value, unwrapped: Unwrapped) -> ConsumerRecord {
    ConsumerRecord {
        message_id,
        body: unwrapped.body,
        source: unwrapped.source,
        event_type: unwrapped.event_type,
        attributes: Bytes::new(),
        vendor: json_bytes(record),
    }
}

/// A source's name as a tag names it: a bucket's is its own, a table's
/// the table part of its stream ARN.
fn name_of<'a>(source_type: &str, source: &'a str) -> &'a str {
    match source_type {
        "datastore" => table_name(source).unwrap_or(source),
        _ => source,
    }
}

/// The table of a stream ARN, `arn:aws:dynamodb:{region}:{account}:table/{name}/stream/{label}`.
fn table_name(arn: &str) -> Option<&str> {
    arn.split_once(":table/").map(|(_, rest)| rest.split('/').next().unwrap_or(rest))
}

fn read_queue(invocation: &Invocation<'_>) -> Result<ConsumerBatch, Refused> {
    let event = Payload::of(invocation.json, "an SQS event")?;
    let messages = event.array("/Records")?;
    let mut source_type = None;
    let mut records = Vec::with_capacity(messages.len());
    for index in 0..messages.len() {
        let (record, kind) = record(&event, index)?;
        source_type.get_or_insert(kind);
        records.push(record);
    }
    let queue = records.first().map(|record: &ConsumerRecord| queue_name(&record.source).to_string());
    Ok(ConsumerBatch {
        records,
        source_id: source_id(invocation.tag).map(str::to_string).or(queue).unwrap_or_default(),
        source_type: source_type.unwrap_or("queue").to_string(),
        vendor: Bytes::new(),
    })
}

/// The SQS message `index` of `event`: its vendor data the message as sent,
/// its attributes its message attributes.
fn record(event: &Payload<'_>, index: usize) -> Result<(ConsumerRecord, &'static str), Refused> {
    let at = |field: &str| format!("/Records/{index}{field}");
    let Some(message) = event.object(&at(""))? else {
        return Err(event.refused(&at(""), "the record is missing"));
    };
    let Some(message_id) = event.text(&at("/messageId"))?.filter(|id| !id.is_empty()) else {
        return Err(Refused(format!(
            "SQS record {index} has no messageId, so the batch cannot be answered record by record"
        )));
    };
    let attributes = match event.object(&at("/messageAttributes"))? {
        Some(attributes) if !attributes.is_empty() => {
            serde_json::to_vec(attributes).map(Bytes::from).unwrap_or_default()
        }
        _ => Bytes::new(),
    };
    let vendor = serde_json::to_vec(message).map(Bytes::from).unwrap_or_default();
    let body = event.text(&at("/body"))?.unwrap_or_default();
    let queue_arn = event.text(&at("/eventSourceARN"))?.unwrap_or_default();
    let unwrapped = serde_json::from_str::<Value>(body).ok().and_then(|json| unwrap(&json));
    let (body, source, event_type, kind) = match unwrapped {
        Some(Unwrapped { body, source, event_type, kind }) => (body, source, event_type, kind),
        None => (Bytes::copy_from_slice(body.as_bytes()), queue_arn.to_string(), String::new(), "queue"),
    };
    Ok((ConsumerRecord { message_id: message_id.to_string(), body, source, event_type, attributes, vendor }, kind))
}

/// The queue's name, the last part of its ARN.
fn queue_name(arn: &str) -> &str {
    arn.rsplit(':').next().unwrap_or(arn)
}

/// What a bucket's or a datastore's event in a message body becomes.
struct Unwrapped {
    body: Bytes,
    source: String,
    event_type: String,
    kind: &'static str,
}

fn unwrap(body: &Value) -> Option<Unwrapped> {
    if let Some(records) = body.get("Records").and_then(Value::as_array)
        && records.first().and_then(|record| record.get("eventSource")).and_then(Value::as_str) == Some("aws:s3")
    {
        return Some(bucket(records));
    }
    if body.get("eventSource").and_then(Value::as_str) == Some("aws:dynamodb") {
        return Some(datastore(body));
    }
    None
}

/// An S3 notification: the object event (or, in the rare message holding
/// several, all of them), typed by the first.
fn bucket(records: &[Value]) -> Unwrapped {
    let first = &records[0];
    let name = first.get("eventName").and_then(Value::as_str).unwrap_or_default();
    let event_type = if name.starts_with("ObjectCreated") {
        "created"
    } else if name.starts_with("ObjectRemoved") || name.starts_with("LifecycleExpiration") {
        "deleted"
    } else {
        "metadataUpdated"
    };
    let body = if records.len() == 1 { first.clone() } else { Value::Array(records.to_vec()) };
    let source = first.pointer("/s3/bucket/name").and_then(Value::as_str).unwrap_or_default().to_string();
    Unwrapped { body: json_bytes(&body), source, event_type: event_type.to_string(), kind: "bucket" }
}

/// A DynamoDB stream record: the item as it now is (as it was, for a
/// removal), as plain JSON.
fn datastore(record: &Value) -> Unwrapped {
    let name = record.get("eventName").and_then(Value::as_str).unwrap_or_default();
    let event_type = match name {
        "INSERT" => "created",
        "REMOVE" => "deleted",
        _ => "metadataUpdated",
    };
    let image = |key: &str| record.pointer(&format!("/dynamodb/{key}")).filter(|image| image.is_object());
    let item = match name {
        "REMOVE" => image("OldImage").or_else(|| image("Keys")),
        _ => image("NewImage").or_else(|| image("Keys")),
    };
    let body = item.map_or(Value::Null, attribute_map);
    let source = record.get("eventSourceARN").and_then(Value::as_str).unwrap_or_default().to_string();
    Unwrapped { body: json_bytes(&body), source, event_type: event_type.to_string(), kind: "datastore" }
}

/// A DynamoDB map of attribute values (`{"id": {"S": "ord-1"}}`) as plain
/// JSON (`{"id": "ord-1"}`).
fn attribute_map(map: &Value) -> Value {
    let Some(map) = map.as_object() else { return Value::Null };
    Value::Object(map.iter().map(|(name, value)| (name.clone(), attribute(value))).collect::<Map<_, _>>())
}

fn attribute(value: &Value) -> Value {
    let Some((kind, inner)) = value.as_object().and_then(|typed| typed.iter().next()) else {
        return value.clone();
    };
    let number = |text: &Value| {
        text.as_str()
            .and_then(|text| serde_json::from_str::<serde_json::Number>(text).ok())
            .map_or_else(|| text.clone(), Value::Number)
    };
    match kind.as_str() {
        "S" | "B" | "BOOL" => inner.clone(),
        "NULL" => Value::Null,
        "N" => number(inner),
        "M" => attribute_map(inner),
        "L" => Value::Array(inner.as_array().map(|list| list.iter().map(attribute).collect()).unwrap_or_default()),
        "SS" | "BS" => inner.clone(),
        "NS" => Value::Array(inner.as_array().map(|list| list.iter().map(number).collect()).unwrap_or_default()),
        _ => value.clone(),
    }
}

fn json_bytes(value: &Value) -> Bytes {
    serde_json::to_vec(value).map(Bytes::from).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn batch(payload: Value, tag: &str) -> Result<ConsumerBatch, Refused> {
        let raw = Bytes::new();
        read(Form::Queue, &Invocation { raw: &raw, json: Some(&payload), tag, request_id: "lambda-1" })
    }

    fn message(id: Value, body: &str) -> Value {
        json!({
            "messageId": id, "receiptHandle": "handle", "body": body,
            "attributes": {"ApproximateReceiveCount": "1"},
            "messageAttributes": {"kind": {"stringValue": "order", "dataType": "String"}},
            "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:eu-west-1:123456789012:order-events",
            "awsRegion": "eu-west-1"
        })
    }

    #[test]
    fn queue_messages_keep_their_ids_bodies_and_attributes() {
        let payload = json!({"Records": [message(json!("m-1"), r#"{"orderId":"ord-1"}"#), message(json!("m-2"), "x")]});
        let batch = batch(payload, "source::order-events::processOrderEvents").unwrap();
        assert_eq!((batch.source_id.as_str(), batch.source_type.as_str()), ("order-events", "queue"));
        let ids: Vec<&str> = batch.records.iter().map(|r| r.message_id.as_str()).collect();
        assert_eq!(ids, ["m-1", "m-2"]);
        let first = &batch.records[0];
        assert_eq!(first.body.as_ref(), br#"{"orderId":"ord-1"}"#);
        assert_eq!(first.source, "arn:aws:sqs:eu-west-1:123456789012:order-events");
        let attributes: Value = serde_json::from_slice(&first.attributes).unwrap();
        assert_eq!(attributes["kind"]["stringValue"], "order");
        let vendor: Value = serde_json::from_slice(&first.vendor).unwrap();
        assert_eq!(vendor["receiptHandle"], "handle");
    }

    #[test]
    fn a_record_without_an_id_refuses_the_batch() {
        for id in [Value::Null, json!("")] {
            let payload = json!({"Records": [message(json!("m-1"), "a"), message(id, "b")]});
            let refused = batch(payload, "source::q::h").unwrap_err();
            assert!(refused.0.contains("SQS record 1 has no messageId"), "{refused}");
        }
        assert!(batch(json!({"Records": "no"}), "source::q::h").unwrap_err().0.contains("not an SQS event"));
    }

    #[test]
    fn a_bucket_notification_is_unwrapped() {
        let s3 = json!({"Records": [{
            "eventVersion": "2.1", "eventSource": "aws:s3", "eventName": "ObjectRemoved:Delete",
            "s3": {"bucket": {"name": "invoices"}, "object": {"key": "2026/01.pdf"}}
        }]});
        let payload = json!({"Records": [message(json!("m-1"), &s3.to_string())]});
        let batch = batch(payload, "source::invoices::archive").unwrap();
        assert_eq!(batch.source_type, "bucket");
        let record = &batch.records[0];
        assert_eq!((record.event_type.as_str(), record.source.as_str()), ("deleted", "invoices"));
        let body: Value = serde_json::from_slice(&record.body).unwrap();
        assert_eq!(body["s3"]["object"]["key"], "2026/01.pdf");
    }

    #[test]
    fn a_datastore_record_becomes_its_item() {
        let stream = |name: &str| {
            json!({
                "eventID": "e-1", "eventName": name, "eventSource": "aws:dynamodb",
                "eventSourceARN": "arn:aws:dynamodb:eu-west-1:123456789012:table/orders/stream/2026",
                "dynamodb": {
                    "Keys": {"id": {"S": "ord-1"}},
                    "NewImage": {"id": {"S": "ord-1"}, "total": {"N": "12.5"}, "paid": {"BOOL": true},
                                 "lines": {"L": [{"M": {"sku": {"S": "latte"}, "qty": {"N": "2"}}}]},
                                 "note": {"NULL": true}, "tags": {"SS": ["gift"]}},
                    "OldImage": {"id": {"S": "ord-1"}, "total": {"N": "10"}}
                }
            })
        };
        let records: Vec<Value> = ["INSERT", "MODIFY", "REMOVE"]
            .iter()
            .enumerate()
            .map(|(i, name)| message(json!(format!("m-{i}")), &stream(name).to_string()))
            .collect();
        let batch = batch(json!({"Records": records}), "source::orders-table::project").unwrap();
        assert_eq!(batch.source_type, "datastore");
        let types: Vec<&str> = batch.records.iter().map(|r| r.event_type.as_str()).collect();
        assert_eq!(types, ["created", "metadataUpdated", "deleted"]);
        let item: Value = serde_json::from_slice(&batch.records[0].body).unwrap();
        assert_eq!(
            item,
            json!({"id": "ord-1", "total": 12.5, "paid": true, "lines": [{"sku": "latte", "qty": 2}],
                   "note": null, "tags": ["gift"]})
        );
        let removed: Value = serde_json::from_slice(&batch.records[2].body).unwrap();
        assert_eq!(removed, json!({"id": "ord-1", "total": 10}));
        assert!(batch.records[0].source.contains("table/orders"));
    }
}
#[cfg(test)]
mod source_tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_batch_is_named_by_its_queue_and_the_source_its_first_message_carries() {
        let s3 = json!({"Records": [{"eventSource": "aws:s3", "eventName": "ObjectCreated:Put",
                                     "s3": {"bucket": {"name": "invoices"}, "object": {"key": "a"}}}]});
        let sqs = json!({"Records": [{"eventSource": "aws:sqs", "messageId": "m",
                                      "eventSourceARN": "arn:aws:sqs:r:1:invoices-queue", "body": s3.to_string()}]});
        assert_eq!(source_names(Form::Queue, Some(&sqs)), ["invoices-queue", "invoices"]);
        assert_eq!(source_names(Form::Bucket, Some(&s3)), ["invoices"]);
        let stream = json!({"Records": [{"eventSource": "aws:dynamodb",
                                         "eventSourceARN": "arn:aws:dynamodb:r:1:table/orders/stream/2026"}]});
        assert_eq!(source_names(Form::Stream, Some(&stream)), ["orders"]);
    }
}
