//! What kind of event a Lambda payload is, from its shape.

use serde_json::Value;

use crate::kind::HandlerKind;

/// The shape of one invocation's payload, which says both how it becomes a
/// dispatch and how its answer is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// An API Gateway HTTP API request, payload format 2.0.
    HttpV2,
    /// An API Gateway REST API request (payload format 1.0).
    HttpV1,
    /// An API Gateway WebSocket event.
    WebSocket,
    /// A batch of SQS messages.
    Queue,
    /// S3 event notifications, sent to the function directly.
    Bucket,
    /// A batch of DynamoDB stream records.
    Stream,
    /// An EventBridge event, or the input a schedule's rule sends in its place.
    Schedule,
    /// Anything else: a direct invocation.
    Custom,
}

impl Form {
    /// The kind of handler that serves it.
    pub(crate) fn kind(self) -> HandlerKind {
        match self {
            Form::HttpV2 | Form::HttpV1 => HandlerKind::Http,
            Form::WebSocket => HandlerKind::WebSocket,
            Form::Queue | Form::Bucket | Form::Stream => HandlerKind::Consumer,
            Form::Schedule => HandlerKind::Schedule,
            Form::Custom => HandlerKind::Custom,
        }
    }

    /// The form of `payload` (`None`: not JSON) for a function of `kind`,
    /// or `None` when it is no event of that kind: the kind decides what is
    /// accepted, the shape which of the kind's forms it is. A schedule's
    /// rule may send any constant input, and a custom handler takes
    /// whatever it is sent, even a payload shaped like an SQS batch.
    pub(crate) fn for_kind(kind: HandlerKind, payload: Option<&Value>) -> Option<Form> {
        let detected = detect(payload);
        match kind {
            HandlerKind::Schedule => Some(Form::Schedule),
            HandlerKind::Custom => Some(Form::Custom),
            _ => (detected.kind() == kind).then_some(detected),
        }
    }

    /// What a payload of this form is, for messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Form::HttpV2 => "an API Gateway HTTP API request",
            Form::HttpV1 => "an API Gateway REST API request",
            Form::WebSocket => "an API Gateway WebSocket event",
            Form::Queue => "an SQS batch",
            Form::Bucket => "an S3 event notification",
            Form::Stream => "a DynamoDB stream batch",
            Form::Schedule => "an EventBridge event",
            Form::Custom => "a payload of no AWS event source",
        }
    }
}

/// The form of `payload` (`None`: not JSON) when nothing else says: an HTTP
/// API request has `requestContext.http`; a WebSocket event
/// `requestContext.connectionId` and `requestContext.eventType`; a batch
/// `Records[0].eventSource` of `aws:sqs`, `aws:s3` or `aws:dynamodb`; an
/// EventBridge event `source` and `detail-type`; a REST API request
/// `httpMethod` and `requestContext`. Anything else is a custom invocation.
pub(crate) fn detect(payload: Option<&Value>) -> Form {
    let Some(payload) = payload else { return Form::Custom };
    let context = payload.get("requestContext").filter(|context| context.is_object());
    let source = payload.pointer("/Records/0/eventSource").and_then(Value::as_str);
    if context.is_some_and(|context| context.get("http").is_some_and(Value::is_object)) {
        Form::HttpV2
    } else if context.is_some_and(|context| context.get("connectionId").is_some() && context.get("eventType").is_some())
    {
        Form::WebSocket
    } else if source == Some("aws:sqs") {
        Form::Queue
    } else if source == Some("aws:s3") {
        Form::Bucket
    } else if source == Some("aws:dynamodb") {
        Form::Stream
    } else if payload.get("source").is_some() && payload.get("detail-type").is_some() {
        Form::Schedule
    } else if context.is_some() && payload.get("httpMethod").is_some_and(Value::is_string) {
        Form::HttpV1
    } else {
        Form::Custom
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_shape_is_told_apart() {
        let cases = [
            (json!({"version": "2.0", "requestContext": {"http": {"method": "GET"}}}), Form::HttpV2),
            (json!({"requestContext": {"connectionId": "c-1", "eventType": "MESSAGE"}}), Form::WebSocket),
            (json!({"Records": [{"eventSource": "aws:sqs", "messageId": "m-1"}]}), Form::Queue),
            (json!({"Records": [{"eventSource": "aws:s3"}]}), Form::Bucket),
            (json!({"Records": [{"eventSource": "aws:dynamodb"}]}), Form::Stream),
            (json!({"source": "aws.events", "detail-type": "Scheduled Event", "detail": {}}), Form::Schedule),
            (json!({"httpMethod": "GET", "requestContext": {"stage": "prod"}}), Form::HttpV1),
            (json!({"Records": [{"eventSource": "aws:kinesis"}]}), Form::Custom),
            (json!({"requestContext": {"connectionId": "c-1"}}), Form::Custom),
            (json!("just a string"), Form::Custom),
            (json!({"items": []}), Form::Custom),
        ];
        for (payload, form) in cases {
            assert_eq!(detect(Some(&payload)), form, "{payload}");
        }
        assert_eq!(detect(None), Form::Custom);
    }

    #[test]
    fn the_functions_kind_decides_what_it_takes() {
        let sqs = json!({"Records": [{"eventSource": "aws:sqs"}]});
        assert_eq!(Form::for_kind(HandlerKind::Custom, Some(&sqs)), Some(Form::Custom));
        assert_eq!(Form::for_kind(HandlerKind::Consumer, Some(&sqs)), Some(Form::Queue));
        let s3 = json!({"Records": [{"eventSource": "aws:s3"}]});
        assert_eq!(Form::for_kind(HandlerKind::Consumer, Some(&s3)), Some(Form::Bucket));
        assert_eq!(Form::for_kind(HandlerKind::Schedule, Some(&json!({"olderThanSeconds": 0}))), Some(Form::Schedule));
        let rest = json!({"httpMethod": "GET", "requestContext": {}});
        assert_eq!(Form::for_kind(HandlerKind::Http, Some(&rest)), Some(Form::HttpV1));
        // What is not the kind's is not read as if it were.
        assert_eq!(Form::for_kind(HandlerKind::Http, None), None);
        assert_eq!(Form::for_kind(HandlerKind::Http, Some(&sqs)), None);
        assert_eq!(Form::for_kind(HandlerKind::WebSocket, Some(&json!({"a": 1}))), None);
        assert_eq!(Form::for_kind(HandlerKind::Consumer, Some(&json!({"Records": []}))), None);
    }
}
