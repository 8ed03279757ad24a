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
            Form::Queue => HandlerKind::Consumer,
            Form::Schedule => HandlerKind::Schedule,
            Form::Custom => HandlerKind::Custom,
        }
    }

    /// The form of `payload` (`None`: not JSON) for a function of `kind`:
    /// the kind decides, and the shape only tells an HTTP API request from
    /// a REST one. A custom handler takes whatever it is sent, even a
    /// payload shaped like an SQS batch.
    pub(crate) fn for_kind(kind: HandlerKind, payload: Option<&Value>) -> Form {
        match kind {
            HandlerKind::Http if detect(payload) == Form::HttpV1 => Form::HttpV1,
            HandlerKind::Http => Form::HttpV2,
            HandlerKind::WebSocket => Form::WebSocket,
            HandlerKind::Consumer => Form::Queue,
            HandlerKind::Schedule => Form::Schedule,
            HandlerKind::Custom => Form::Custom,
        }
    }
}

/// The form of `payload` (`None`: not JSON) when nothing else says: an HTTP
/// API request has `requestContext.http`; a WebSocket event
/// `requestContext.connectionId` and `requestContext.eventType`; an SQS
/// batch `Records[0].eventSource` of `aws:sqs`; an EventBridge event
/// `source` and `detail-type`; a REST API request `httpMethod` and
/// `requestContext`. Anything else is a custom invocation.
pub(crate) fn detect(payload: Option<&Value>) -> Form {
    let Some(payload) = payload else { return Form::Custom };
    let context = payload.get("requestContext").filter(|context| context.is_object());
    if context.is_some_and(|context| context.get("http").is_some_and(Value::is_object)) {
        Form::HttpV2
    } else if context.is_some_and(|context| context.get("connectionId").is_some() && context.get("eventType").is_some())
    {
        Form::WebSocket
    } else if payload.pointer("/Records/0/eventSource").and_then(Value::as_str) == Some("aws:sqs") {
        Form::Queue
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
            (json!({"source": "aws.events", "detail-type": "Scheduled Event", "detail": {}}), Form::Schedule),
            (json!({"httpMethod": "GET", "requestContext": {"stage": "prod"}}), Form::HttpV1),
            (json!({"Records": [{"eventSource": "aws:s3"}]}), Form::Custom),
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
    fn the_functions_kind_decides_over_the_shape() {
        let sqs = json!({"Records": [{"eventSource": "aws:sqs"}]});
        assert_eq!(Form::for_kind(HandlerKind::Custom, Some(&sqs)), Form::Custom);
        assert_eq!(Form::for_kind(HandlerKind::Schedule, Some(&json!({"olderThanSeconds": 0}))), Form::Schedule);
        let rest = json!({"httpMethod": "GET", "requestContext": {}});
        assert_eq!(Form::for_kind(HandlerKind::Http, Some(&rest)), Form::HttpV1);
        assert_eq!(Form::for_kind(HandlerKind::Http, None), Form::HttpV2);
    }
}
