//! An API Gateway WebSocket event as the runtime's `WebSocketMessage`.
//!
//! The route is API Gateway's route key (`$connect`, `$disconnect`,
//! `$default` or the action); `$connect` and `$disconnect` carry the body
//! `null`, as under the runtime. A text message is its body as sent; a
//! binary one (sent base64) is its bytes, with the Celerity binary framing
//! taken off when it has it. The event also says where the API's
//! Management API is, for the sends its handler makes.

use bytes::Bytes;
use celerity_proto::v1::{WebSocketMessage, dispatch::Source};

use super::{Event, Invocation, Payload, Refused, body_bytes};
use crate::websocket::frame;

pub(super) fn read(invocation: &Invocation<'_>) -> Result<Event, Refused> {
    let event = Payload::of(invocation.json, "an API Gateway WebSocket event")?;
    let context = |field: &str| event.text(&format!("/requestContext/{field}"));
    let Some(connection_id) = context("connectionId")?.filter(|id| !id.is_empty()) else {
        return Err(Refused("the WebSocket event has no requestContext.connectionId".to_string()));
    };
    let event_type = context("eventType")?.unwrap_or_default();
    let route = context("routeKey")?.unwrap_or("$default").to_string();
    let lifecycle = matches!(event_type, "CONNECT" | "DISCONNECT");
    let (message, is_binary) = if lifecycle {
        (Bytes::from_static(b"null"), false)
    } else if event.flag("/isBase64Encoded")? {
        let bytes = body_bytes(event.text("/body")?, true)?;
        let payload = frame::decode(bytes.clone()).map_or(bytes, |message| message.payload);
        (payload, true)
    } else {
        (body_bytes(event.text("/body")?, false)?, false)
    };
    let websocket_endpoint = match (context("domainName")?, context("stage")?) {
        (Some(domain), Some(stage)) if !domain.is_empty() => Some(format!("https://{domain}/{stage}")),
        _ => None,
    };
    let request_id = context("requestId")?.unwrap_or(invocation.request_id).to_string();
    let message = WebSocketMessage {
        route,
        connection_id: connection_id.to_string(),
        source_ip: context("identity/sourceIp")?.unwrap_or_default().to_string(),
        message_id: context("messageId")?.map_or_else(|| request_id.clone(), str::to_string),
        request_id,
        message,
        is_binary,
    };
    Ok(Event { source: Source::Websocket(message), websocket_endpoint })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::websocket::frame::{BinaryMessage, encode};

    fn read_payload(payload: Value) -> Result<(WebSocketMessage, Option<String>), Refused> {
        let raw = Bytes::new();
        let invocation =
            Invocation { raw: &raw, json: Some(&payload), tag: "event::subscribe", request_id: "lambda-1" };
        read(&invocation).map(|event| match event.source {
            Source::Websocket(message) => (message, event.websocket_endpoint),
            other => panic!("not a WebSocket message: {other:?}"),
        })
    }

    fn event(event_type: &str, route: &str, body: Value, base64: bool) -> Value {
        json!({
            "requestContext": {
                "routeKey": route, "eventType": event_type, "connectionId": "L0SM9cOFvHcCIhw=",
                "messageId": "msg-1", "domainName": "abc123.execute-api.eu-west-1.amazonaws.com", "stage": "prod",
                "requestId": "ws-req-1", "identity": {"sourceIp": "192.0.2.1"}, "connectedAt": 1767236400000_i64,
                "requestTimeEpoch": 1767236400100_i64
            },
            "body": body, "isBase64Encoded": base64
        })
    }

    #[test]
    fn a_message_carries_its_route_connection_and_body() {
        let body = r#"{"event":"subscribe","data":{"orderIds":["ord-1"]}}"#;
        let (message, endpoint) = read_payload(event("MESSAGE", "subscribe", json!(body), false)).unwrap();
        assert_eq!((message.route.as_str(), message.connection_id.as_str()), ("subscribe", "L0SM9cOFvHcCIhw="));
        assert_eq!((message.message_id.as_str(), message.request_id.as_str()), ("msg-1", "ws-req-1"));
        assert_eq!((message.message.as_ref(), message.is_binary), (body.as_bytes(), false));
        assert_eq!(message.source_ip, "192.0.2.1");
        assert_eq!(endpoint.as_deref(), Some("https://abc123.execute-api.eu-west-1.amazonaws.com/prod"));
    }

    #[test]
    fn connect_and_disconnect_carry_null_and_binary_loses_its_framing() {
        let (connect, _) = read_payload(event("CONNECT", "$connect", Value::Null, false)).unwrap();
        assert_eq!((connect.route.as_str(), connect.message.as_ref()), ("$connect", &b"null"[..]));
        let (disconnect, _) = read_payload(event("DISCONNECT", "$disconnect", Value::Null, false)).unwrap();
        assert_eq!(disconnect.message.as_ref(), b"null");

        use base64::Engine;
        let framed = encode(&BinaryMessage::new("orders", vec![0xde, 0xad])).unwrap();
        let body = base64::engine::general_purpose::STANDARD.encode(&framed);
        let (binary, _) = read_payload(event("MESSAGE", "$default", json!(body), true)).unwrap();
        assert_eq!((binary.message.as_ref(), binary.is_binary), (&[0xde, 0xad][..], true));
        let (unframed, _) = read_payload(event("MESSAGE", "$default", json!("AQ=="), true)).unwrap();
        assert_eq!(unframed.message.as_ref(), [1]);
    }

    #[test]
    fn an_event_without_a_connection_is_refused() {
        let mut payload = event("MESSAGE", "$default", json!("{}"), false);
        payload["requestContext"]["connectionId"] = json!("");
        assert!(read_payload(payload).unwrap_err().0.contains("connectionId"));
        assert!(read_payload(json!([1, 2])).unwrap_err().0.contains("not an API Gateway WebSocket event"));
        let mut payload = event("MESSAGE", "$default", json!("{}"), false);
        payload["requestContext"]["routeKey"] = json!(7);
        assert!(read_payload(payload).unwrap_err().0.contains("at requestContext.routeKey: it is a number"));
    }
}
