//! Golden wire vectors: the files in `proto/golden/` were written by an
//! encoder independent of prost. Each must decode to exactly the value spelled
//! out here, and encoding that value must give exactly the file's bytes.
//!
//! Map fields hold at most one entry so that prost's `HashMap` encoding order
//! cannot make the bytes vary; multiple values go in `Values.values`.

use std::collections::HashMap;
use std::path::Path;

use bytes::Bytes;
use celerity_proto::prost::Message;
use celerity_proto::v1::{
    BatchResult, Dispatch, HandlerLimit, HandlerMessage, HttpRequest, ProtocolVersion, Ready, RecordFailure,
    Result as ResultFrame, RuntimeMessage, Values, WsOutbound, WsSend, dispatch, handler_message, result,
    runtime_message,
};

/// Reads `proto/golden/<name>`: lowercase hex, `#` to end of line is a
/// comment, whitespace is ignored.
fn golden(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("golden").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
    let hex_text: String = text
        .lines()
        .map(|line| line.split_once('#').map_or(line, |(data, _)| data))
        .flat_map(str::chars)
        .filter(|c| !c.is_whitespace())
        .collect();
    assert!(hex_text.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')), "{name}: not lowercase hex");
    hex::decode(&hex_text).unwrap_or_else(|err| panic!("{name}: {err}"))
}

fn values(items: &[&str]) -> Values {
    Values { values: items.iter().map(|item| (*item).to_owned()).collect() }
}

fn one<V>(key: &str, value: V) -> HashMap<String, V> {
    HashMap::from([(key.to_owned(), value)])
}

/// Encoding `expected` must reproduce `bytes` exactly, and decoding must
/// round-trip.
fn assert_encodes_to<M: Message + Default + PartialEq + std::fmt::Debug>(name: &str, expected: &M, bytes: &[u8]) {
    let encoded = expected.encode_to_vec();
    assert_eq!(
        hex::encode(&encoded),
        hex::encode(bytes),
        "{name}: encoding the expected value does not give the golden bytes"
    );
    assert_eq!(&M::decode(encoded.as_slice()).unwrap(), expected);
}

#[test]
fn handler_ready() {
    let bytes = golden("handler_ready.hex");
    assert_eq!(bytes.len(), 85);
    let decoded = HandlerMessage::decode(bytes.as_slice()).unwrap();

    let Some(handler_message::Frame::Ready(ready)) = decoded.frame.clone() else {
        panic!("expected a Ready frame, got {decoded:?}");
    };
    let Ready { handler_tags, initial_credit, sdk_version, limits, protocol_version } = ready;
    assert_eq!(handler_tags, ["GET::/orders", "POST::/orders/{id}/items"]);
    assert_eq!(initial_credit, 16);
    assert_eq!(sdk_version, "0.1.0");
    assert_eq!(limits.len(), 1);
    assert_eq!(limits[0].handler_tag, "POST::/orders/{id}/items");
    assert_eq!(limits[0].max_concurrent, 4);
    let ProtocolVersion { major, minor } = protocol_version.expect("protocol_version");
    assert_eq!((major, minor), (1, 0));

    let expected = HandlerMessage {
        frame: Some(handler_message::Frame::Ready(Ready {
            handler_tags: vec!["GET::/orders".into(), "POST::/orders/{id}/items".into()],
            initial_credit: 16,
            sdk_version: "0.1.0".into(),
            limits: vec![HandlerLimit { handler_tag: "POST::/orders/{id}/items".into(), max_concurrent: 4 }],
            protocol_version: Some(ProtocolVersion { major: 1, minor: 0 }),
        })),
    };
    assert_eq!(decoded, expected);
    assert_encodes_to("handler_ready.hex", &expected, &bytes);
}

#[test]
fn runtime_dispatch_http() {
    let bytes = golden("runtime_dispatch_http.hex");
    assert_eq!(bytes.len(), 277);
    let decoded = RuntimeMessage::decode(bytes.as_slice()).unwrap();

    let Some(runtime_message::Frame::Dispatch(dispatch)) = decoded.frame.clone() else {
        panic!("expected a Dispatch frame, got {decoded:?}");
    };
    let Dispatch { id, handler_tag, timestamp_ms, deadline_unix_ms, trace_context, source } = dispatch;
    assert_eq!(id, "evt-0001");
    assert_eq!(handler_tag, "POST::/orders/{id}/items");
    assert_eq!(timestamp_ms, 1_767_225_600_000);
    assert_eq!(deadline_unix_ms, 1_767_225_630_000);
    assert_eq!(trace_context, one("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".to_owned()));
    let Some(dispatch::Source::Http(http)) = source else {
        panic!("expected an HTTP source, got {source:?}");
    };
    let HttpRequest { method, path, route, path_params, query_params, headers, source_ip, request_id, body } = http;
    assert_eq!(method, "POST");
    assert_eq!(path, "/orders/42/items");
    assert_eq!(route, "/orders/{id}/items");
    assert_eq!(path_params, one("id", values(&["42"])));
    assert_eq!(query_params, one("tag", values(&["a", "b"])));
    assert_eq!(headers, one("content-type", values(&["application/json"])));
    assert_eq!(source_ip, "192.0.2.10");
    assert_eq!(request_id, "req-7");
    assert_eq!(body, Bytes::from_static(br#"{"sku":"A-1","qty":2}"#));

    let expected = RuntimeMessage {
        frame: Some(runtime_message::Frame::Dispatch(Dispatch {
            id: "evt-0001".into(),
            handler_tag: "POST::/orders/{id}/items".into(),
            timestamp_ms: 1_767_225_600_000,
            deadline_unix_ms: 1_767_225_630_000,
            trace_context: one("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into()),
            source: Some(dispatch::Source::Http(HttpRequest {
                method: "POST".into(),
                path: "/orders/42/items".into(),
                route: "/orders/{id}/items".into(),
                path_params: one("id", values(&["42"])),
                query_params: one("tag", values(&["a", "b"])),
                headers: one("content-type", values(&["application/json"])),
                source_ip: "192.0.2.10".into(),
                request_id: "req-7".into(),
                body: Bytes::from_static(br#"{"sku":"A-1","qty":2}"#),
            })),
        })),
    };
    assert_eq!(decoded, expected);
    assert_encodes_to("runtime_dispatch_http.hex", &expected, &bytes);
}

#[test]
fn handler_result_batch() {
    let bytes = golden("handler_result_batch.hex");
    assert_eq!(bytes.len(), 60);
    let decoded = HandlerMessage::decode(bytes.as_slice()).unwrap();

    let Some(handler_message::Frame::Result(frame)) = decoded.frame.clone() else {
        panic!("expected a Result frame, got {decoded:?}");
    };
    let ResultFrame { id, credit_grant, outcome } = frame;
    assert_eq!(id, "evt-0002");
    assert_eq!(credit_grant, 1);
    let Some(result::Outcome::Consumer(BatchResult { success, failures })) = outcome else {
        panic!("expected a consumer outcome, got {outcome:?}");
    };
    assert!(!success);
    assert_eq!(failures.len(), 2);
    assert_eq!(failures[0].message_id, "msg-1");
    assert_eq!(failures[0].error_message, "invalid payload");
    assert_eq!(failures[1].message_id, "msg-3");
    assert_eq!(failures[1].error_message, "timeout");

    let expected = HandlerMessage {
        frame: Some(handler_message::Frame::Result(ResultFrame {
            id: "evt-0002".into(),
            credit_grant: 1,
            outcome: Some(result::Outcome::Consumer(BatchResult {
                success: false,
                failures: vec![
                    RecordFailure { message_id: "msg-1".into(), error_message: "invalid payload".into() },
                    RecordFailure { message_id: "msg-3".into(), error_message: "timeout".into() },
                ],
            })),
        })),
    };
    assert_eq!(decoded, expected);
    assert_encodes_to("handler_result_batch.hex", &expected, &bytes);
}

#[test]
fn handler_ws_send() {
    let bytes = golden("handler_ws_send.hex");
    assert_eq!(bytes.len(), 103);
    let decoded = HandlerMessage::decode(bytes.as_slice()).unwrap();

    let Some(handler_message::Frame::WsSend(ws_send)) = decoded.frame.clone() else {
        panic!("expected a WsSend frame, got {decoded:?}");
    };
    let WsSend { correlation_id, messages } = ws_send;
    assert_eq!(correlation_id, "ws-1");
    assert_eq!(messages.len(), 2);

    let first = &messages[0];
    assert_eq!(first.connection_id, "conn-a");
    assert_eq!(first.message, Bytes::from_static(br#"{"event":"hello"}"#));
    assert!(!first.is_binary);
    assert!(first.inform_clients_on_loss.is_empty());
    assert_eq!(first.message_id, "");
    assert_eq!(first.caller, "");
    assert!(!first.wait_for_ack);

    let WsOutbound { connection_id, message, is_binary, inform_clients_on_loss, message_id, caller, wait_for_ack } =
        messages[1].clone();
    assert_eq!(connection_id, "conn-b");
    assert_eq!(message, Bytes::from_static(br#"{"event":"update","id":"m-42"}"#));
    assert!(!is_binary);
    assert_eq!(inform_clients_on_loss, ["conn-a"]);
    assert_eq!(message_id, "m-42");
    assert_eq!(caller, "conn-a");
    assert!(wait_for_ack);

    let expected = HandlerMessage {
        frame: Some(handler_message::Frame::WsSend(WsSend {
            correlation_id: "ws-1".into(),
            messages: vec![
                WsOutbound {
                    connection_id: "conn-a".into(),
                    message: Bytes::from_static(br#"{"event":"hello"}"#),
                    is_binary: false,
                    inform_clients_on_loss: vec![],
                    message_id: String::new(),
                    caller: String::new(),
                    wait_for_ack: false,
                },
                WsOutbound {
                    connection_id: "conn-b".into(),
                    message: Bytes::from_static(br#"{"event":"update","id":"m-42"}"#),
                    is_binary: false,
                    inform_clients_on_loss: vec!["conn-a".into()],
                    message_id: "m-42".into(),
                    caller: "conn-a".into(),
                    wait_for_ack: true,
                },
            ],
        })),
    };
    assert_eq!(decoded, expected);
    assert_encodes_to("handler_ws_send.hex", &expected, &bytes);
}

#[test]
fn golden_parser_ignores_comments_and_whitespace() {
    // The Ready file's header comment mentions hex-like words ("bytes", "ignored");
    // they must not leak into the data.
    let bytes = golden("handler_ready.hex");
    assert_eq!(&bytes[..2], [0x0a, 0x53]);
}
