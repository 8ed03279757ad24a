//! An SQS batch as the runtime's `ConsumerBatch`.
//!
//! Every consumer of a Celerity application on Lambda is fed by SQS, those
//! bound to a bucket or a datastore included: their S3 notification or
//! DynamoDB stream record arrives as the body of a message. Such a body is
//! unwrapped, so that the handler sees what it would under the runtime: the
//! object event or the item (as plain JSON), the event type `created`,
//! `deleted` or `metadataUpdated`, and the source type `bucket` or
//! `datastore`. Any other message is a `queue` record, its body as sent.
//!
//! Each record keeps its SQS message id, which the partial-batch answer
//! names; a message without one cannot be answered for, so the batch is
//! refused (and so retried whole). A record's attributes are its SQS message
//! attributes as JSON; its vendor data the SQS message itself.

use aws_lambda_events::sqs::{SqsEvent, SqsMessage};
use bytes::Bytes;
use celerity_proto::v1::{ConsumerBatch, ConsumerRecord};
use serde_json::{Map, Value};

use super::{Invocation, Refused, decode, source_id};

pub(super) fn read(invocation: &Invocation<'_>) -> Result<ConsumerBatch, Refused> {
    let event: SqsEvent = decode(invocation.json, "an SQS event")?;
    let mut source_type = None;
    let mut records = Vec::with_capacity(event.records.len());
    for (index, message) in event.records.into_iter().enumerate() {
        let (record, kind) = record(index, message)?;
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

fn record(index: usize, message: SqsMessage) -> Result<(ConsumerRecord, &'static str), Refused> {
    let Some(message_id) = message.message_id.clone().filter(|id| !id.is_empty()) else {
        return Err(Refused(format!(
            "SQS record {index} has no messageId, so the batch cannot be answered record by record"
        )));
    };
    let vendor = serde_json::to_vec(&message).map(Bytes::from).unwrap_or_default();
    let attributes = if message.message_attributes.is_empty() {
        Bytes::new()
    } else {
        serde_json::to_vec(&message.message_attributes).map(Bytes::from).unwrap_or_default()
    };
    let body = message.body.unwrap_or_default();
    let queue_arn = message.event_source_arn.unwrap_or_default();
    let unwrapped = serde_json::from_str::<Value>(&body).ok().and_then(|json| unwrap(&json));
    let (body, source, event_type, kind) = match unwrapped {
        Some(Unwrapped { body, source, event_type, kind }) => (body, source, event_type, kind),
        None => (Bytes::from(body), queue_arn, String::new(), "queue"),
    };
    Ok((ConsumerRecord { message_id, body, source, event_type, attributes, vendor }, kind))
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
        read(&Invocation { raw: &raw, json: Some(&payload), tag, request_id: "lambda-1" })
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
