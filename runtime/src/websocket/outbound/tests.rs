//! The outbound builder, the acknowledgement payload and the reading of
//! `WsSendAck`s, together: what a handler builds is what it reads back.

use std::collections::HashSet;

use proptest::prelude::*;
use serde_json::json;

use std::time::Duration;

use serde_json::Value;

use super::ack_payload::*;
use super::*;
use crate::json::json_kind;
use crate::websocket::frame::{FramePart, ReservedFrame};

fn text_of(wire: &pb::WsOutbound) -> &str {
    std::str::from_utf8(&wire.message).unwrap()
}

fn parsed(wire: &pb::WsOutbound) -> Value {
    serde_json::from_slice(&wire.message).unwrap()
}

// --- text and JSON ---------------------------------------------------

#[test]
fn a_plain_text_message_passes_through() {
    let wire = Outbound::text("c-1", "hello").caller("c-0").into_wire().unwrap();
    assert_eq!(
        wire,
        pb::WsOutbound {
            connection_id: "c-1".into(),
            message: Bytes::from_static(b"hello"),
            is_binary: false,
            inform_clients_on_loss: vec![],
            message_id: String::new(),
            caller: "c-0".into(),
            wait_for_ack: false,
        }
    );
}

#[test]
fn text_without_wait_for_ack_is_sent_as_given_with_its_id() {
    let wire = Outbound::text("c-1", "[1, 2]").message_id("m-1").into_wire().unwrap();
    assert_eq!(text_of(&wire), "[1, 2]");
    assert_eq!(wire.message_id, "m-1");
}

#[test]
fn json_serialises_the_value() {
    let wire = Outbound::json("c-1", &json!({"event": "tick", "n": 1})).unwrap().into_wire().unwrap();
    assert_eq!(parsed(&wire), json!({"event": "tick", "n": 1}));
    assert!(!wire.is_binary);
}

#[test]
fn json_reports_a_serialisation_error() {
    let mut map = std::collections::HashMap::new();
    map.insert(vec![1u8], 1);
    let error = Outbound::json("c-1", &map).unwrap_err();
    assert!(matches!(error, OutboundError::Json(_)));
    assert!(error.to_string().starts_with("could not serialise the message as JSON: "), "{error}");
}

#[test]
fn wait_for_ack_adds_message_id_and_ack_keeping_everything_else() {
    let text =
        r#"{"event": "updates", "data": {"messageId": "inner", "n": 123456789012345678901234567890}, "z": 1.50}"#;
    let wire = Outbound::text("c-1", text).message_id("m-1").wait_for_ack(true).into_wire().unwrap();
    // Byte for byte: key order, spacing, nested keys and number formatting kept.
    assert_eq!(
        text_of(&wire),
        r#"{"event": "updates", "data": {"messageId": "inner", "n": 123456789012345678901234567890}, "z": 1.50,"messageId":"m-1","ack":true}"#
    );
    assert_eq!(wire.message_id, "m-1");
    assert!(wire.wait_for_ack);
}

#[test]
fn wait_for_ack_generates_an_id_and_uses_it_in_payload_and_wire() {
    let wire = Outbound::text("c-1", r#"{"event":"x"}"#).wait_for_ack(true).into_wire().unwrap();
    assert!(!wire.message_id.is_empty());
    assert_eq!(parsed(&wire), json!({"event": "x", "messageId": wire.message_id, "ack": true}));
}

#[test]
fn wait_for_ack_on_an_empty_object() {
    for text in ["{}", " { \n } "] {
        let wire = Outbound::text("c-1", text).message_id("m").wait_for_ack(true).into_wire().unwrap();
        assert_eq!(parsed(&wire), json!({"messageId": "m", "ack": true}), "{text:?}");
    }
    let wire = Outbound::text("c-1", "{}").message_id("m").wait_for_ack(true).into_wire().unwrap();
    assert_eq!(text_of(&wire), r#"{"messageId":"m","ack":true}"#);
}

#[test]
fn wait_for_ack_adopts_the_payloads_message_id() {
    let text = r#"{"event":"x","messageId":"from-payload"}"#;
    let wire = Outbound::text("c-1", text).wait_for_ack(true).into_wire().unwrap();
    assert_eq!(wire.message_id, "from-payload");
    assert_eq!(text_of(&wire), r#"{"event":"x","messageId":"from-payload","ack":true}"#);
}

#[test]
fn wait_for_ack_accepts_the_same_id_set_twice_and_changes_nothing() {
    let text = r#"{ "messageId" : "m\u002d1", "ack" : true }"#;
    let wire = Outbound::text("c-1", text).message_id("m-1").wait_for_ack(true).into_wire().unwrap();
    assert_eq!(text_of(&wire), text);
    assert_eq!(wire.message_id, "m-1");
}

#[test]
fn wait_for_ack_refuses_a_payload_id_that_differs_from_the_one_set() {
    let error =
        Outbound::text("c-1", r#"{"messageId":"b"}"#).message_id("a").wait_for_ack(true).into_wire().unwrap_err();
    assert_eq!(error, OutboundError::MessageIdConflict { message_id: "a".into(), in_payload: "b".into() });
    assert!(error.to_string().starts_with(r#"message_id is "a" but the payload carries message id "b""#));
}

#[test]
fn wait_for_ack_refuses_a_message_id_that_is_not_a_string() {
    let error = Outbound::text("c-1", r#"{"messageId":7}"#).wait_for_ack(true).into_wire().unwrap_err();
    assert_eq!(error, OutboundError::MessageIdNotString { found: "a number" });
}

#[test]
fn wait_for_ack_replaces_an_empty_message_id_and_a_false_ack() {
    let text = r#"{"messageId":"","ack":false,"keep":[1,{"ack":false}]}"#;
    let wire = Outbound::text("c-1", text).message_id("m").wait_for_ack(true).into_wire().unwrap();
    assert_eq!(text_of(&wire), r#"{"messageId":"m","ack":true,"keep":[1,{"ack":false}]}"#);
}

#[test]
fn wait_for_ack_rewrites_every_duplicate_key() {
    let text = r#"{"messageId":"x","a":1,"messageId":"m"}"#;
    let wire = Outbound::text("c-1", text).wait_for_ack(true).into_wire().unwrap();
    // serde_json, like JavaScript, keeps the last duplicate; both now agree.
    assert_eq!(wire.message_id, "m");
    assert_eq!(text_of(&wire), r#"{"messageId":"m","a":1,"messageId":"m","ack":true}"#);
}

#[test]
fn wait_for_ack_escapes_the_id_it_writes() {
    let wire = Outbound::text("c-1", "{}").message_id("a\"b\\c").wait_for_ack(true).into_wire().unwrap();
    assert_eq!(parsed(&wire)["messageId"], "a\"b\\c");
}

#[test]
fn wait_for_ack_refuses_text_that_is_not_a_json_object() {
    let cases =
        [("[1,2]", "an array"), (r#""hi""#, "a string"), ("42", "a number"), ("null", "null"), ("true", "a boolean")];
    for (text, found) in cases {
        let error = Outbound::text("c-1", text).wait_for_ack(true).into_wire().unwrap_err();
        assert_eq!(error, OutboundError::NotJsonObject { found: found.into() });
        assert_eq!(
            error.to_string(),
            format!(
                "wait_for_ack needs a JSON object payload so the SDK can add messageId and ack, but the text is {found}"
            )
        );
    }
    for text in ["hello", "", "{", r#"{"a":1} trailing"#] {
        let error = Outbound::text("c-1", text).wait_for_ack(true).into_wire().unwrap_err();
        let OutboundError::NotJsonObject { found } = &error else { panic!("{text:?}: {error:?}") };
        assert!(found.starts_with("not valid JSON ("), "{text:?}: {found}");
    }
}

#[test]
fn text_rebuilt_from_the_wire_must_be_utf8() {
    let wire =
        pb::WsOutbound { connection_id: "c-1".into(), message: Bytes::from_static(&[0xff]), ..Default::default() };
    assert_eq!(Outbound::from(wire).into_wire(), Err(OutboundError::TextNotUtf8));
}

#[test]
fn an_empty_connection_id_is_refused() {
    assert_eq!(Outbound::text("", "x").into_wire(), Err(OutboundError::EmptyConnectionId));
}

// --- ids ---------------------------------------------------------------

#[test]
fn generated_ids_are_unique_across_10k_calls() {
    let ids: HashSet<String> = (0..10_000).map(|_| generate_id()).collect();
    assert_eq!(ids.len(), 10_000);
    assert!(ids.iter().all(|id| id.len() <= 33 && id.is_ascii()));
}

#[test]
fn generated_ids_are_unique_across_threads() {
    let threads: Vec<_> =
        (0..8).map(|_| std::thread::spawn(|| (0..1_000).map(|_| generate_id()).collect::<Vec<_>>())).collect();
    let ids: HashSet<String> = threads.into_iter().flat_map(|thread| thread.join().unwrap()).collect();
    assert_eq!(ids.len(), 8_000);
}

#[test]
fn hex_is_what_format_writes() {
    for value in [0, 1, 9, 10, 15, 16, 255, 256, 0xdead_beef, u64::MAX / 3, u64::MAX] {
        let (mut short, mut padded) = (String::new(), String::new());
        push_hex(&mut short, value, 1);
        push_hex(&mut padded, value, 16);
        assert_eq!((short, padded), (format!("{value:x}"), format!("{value:016x}")));
    }
    let id = generate_id();
    let (prefix, counter) = id.split_once('-').unwrap();
    assert_eq!(prefix.len(), 16);
    assert!(u64::from_str_radix(prefix, 16).is_ok() && u64::from_str_radix(counter, 16).is_ok(), "{id}");
}

#[test]
fn informing_clients_without_an_id_generates_one() {
    let wire = Outbound::text("c-1", "not json").inform_clients_on_loss(["c-2", "c-3"]).into_wire().unwrap();
    assert!(!wire.message_id.is_empty());
    assert_eq!(wire.inform_clients_on_loss, ["c-2", "c-3"]);
    assert_eq!(text_of(&wire), "not json");
}

#[test]
fn informing_clients_adopts_an_id_the_payload_carries() {
    let wire = Outbound::text("c-1", r#"{"messageId":"known"}"#)
        .inform_clients_on_loss(["c-2"])
        .inform_clients_on_loss(vec!["c-3".to_owned()])
        .caller("c-0")
        .into_wire()
        .unwrap();
    assert_eq!(wire.message_id, "known");
    assert_eq!(wire.inform_clients_on_loss, ["c-2", "c-3"]);
    assert_eq!(wire.caller, "c-0");
    assert_eq!(text_of(&wire), r#"{"messageId":"known"}"#);
}

#[test]
fn without_ack_or_informed_clients_the_id_is_left_to_the_runtime() {
    let wire = Outbound::text("c-1", r#"{"messageId":"m"}"#).into_wire().unwrap();
    assert_eq!(wire.message_id, "");
}

// --- binary --------------------------------------------------------------

#[test]
fn binary_with_wait_for_ack_sets_require_ack_and_the_id_in_the_frame() {
    let wire = Outbound::binary("c-1", BinaryMessage::new("prices", vec![1u8, 2]))
        .message_id("m-1")
        .wait_for_ack(true)
        .into_wire()
        .unwrap();
    assert!(wire.is_binary && wire.wait_for_ack);
    assert_eq!(wire.message_id, "m-1");
    let frame = frame::decode(wire.message).unwrap();
    assert_eq!(frame, BinaryMessage::new("prices", vec![1u8, 2]).with_message_id("m-1").with_require_ack(true));
}

#[test]
fn binary_with_wait_for_ack_generates_an_id_into_the_frame() {
    let wire = Outbound::binary("c-1", BinaryMessage::new("r", Bytes::new())).wait_for_ack(true).into_wire().unwrap();
    let frame = frame::decode(wire.message).unwrap();
    assert!(frame.require_ack);
    assert!(!wire.message_id.is_empty());
    assert_eq!(frame.message_id, wire.message_id);
}

#[test]
fn binary_adopts_the_frames_id() {
    let message = BinaryMessage::new("r", Bytes::new()).with_message_id("in-frame");
    let wire = Outbound::binary("c-1", message.clone()).wait_for_ack(true).into_wire().unwrap();
    assert_eq!(wire.message_id, "in-frame");
    let wire = Outbound::binary("c-1", message).inform_clients_on_loss(["c-2"]).into_wire().unwrap();
    assert_eq!(wire.message_id, "in-frame");
    assert!(!frame::decode(wire.message).unwrap().require_ack);
}

#[test]
fn binary_refuses_a_frame_id_that_differs_from_the_one_set() {
    let error = Outbound::binary("c-1", BinaryMessage::new("r", Bytes::new()).with_message_id("b"))
        .message_id("a")
        .into_wire()
        .unwrap_err();
    assert_eq!(error, OutboundError::MessageIdConflict { message_id: "a".into(), in_payload: "b".into() });
}

#[test]
fn binary_without_ack_leaves_the_frame_alone() {
    let message = BinaryMessage::new("r", Bytes::from_static(b"p"));
    let wire = Outbound::binary("c-1", message.clone()).message_id("m").into_wire().unwrap();
    assert_eq!(wire.message_id, "m");
    assert_eq!(frame::decode(wire.message).unwrap(), message);
}

#[test]
fn a_frame_that_asks_for_ack_needs_wait_for_ack() {
    let message = BinaryMessage::new("r", Bytes::new()).with_message_id("m").with_require_ack(true);
    let error = Outbound::binary("c-1", message.clone()).into_wire().unwrap_err();
    assert_eq!(error, OutboundError::RequireAckWithoutWaitForAck);
    let framed = frame::encode(&message).unwrap();
    assert_eq!(Outbound::raw_binary("c-1", framed).into_wire(), Err(OutboundError::RequireAckWithoutWaitForAck));
    assert!(Outbound::binary("c-1", message).wait_for_ack(true).into_wire().is_ok());
}

#[test]
fn invalid_binary_messages_are_refused_with_the_rule_named() {
    let error = Outbound::binary("c-1", BinaryMessage::new("r".repeat(300), Bytes::new())).into_wire().unwrap_err();
    assert_eq!(error, OutboundError::InvalidBinary(FrameError::RouteLength { len: 300 }));
    assert_eq!(
        error.to_string(),
        "binary message is not in the Celerity Binary Message Format: \
         route is 300 bytes; the binary message format allows 1 to 255"
    );
    assert!(std::error::Error::source(&error).is_some());

    let error = Outbound::binary("c-1", BinaryMessage::new("\u{4}x", Bytes::new())).into_wire().unwrap_err();
    assert_eq!(error, OutboundError::InvalidBinary(FrameError::Reserved(ReservedFrame::Ack)));

    let error = Outbound::binary("c-1", BinaryMessage::new("r", Bytes::new()))
        .message_id("i".repeat(256))
        .wait_for_ack(true)
        .into_wire()
        .unwrap_err();
    assert_eq!(error, OutboundError::InvalidBinary(FrameError::MessageIdLength { len: 256 }));

    // Unframed bytes, as a handler might pass by mistake.
    let error = Outbound::raw_binary("c-1", Bytes::from_static(&[0x02, 0x61, 0x62, 0x00])).into_wire().unwrap_err();
    assert_eq!(
        error,
        OutboundError::InvalidBinary(FrameError::Truncated { len: 4, missing: FramePart::MessageIdLength, needed: 5 })
    );
    let error = Outbound::raw_binary("c-1", Bytes::from_static(b"PNG")).into_wire().unwrap_err();
    assert_eq!(error, OutboundError::InvalidBinary(FrameError::TooShort { len: 3 }));
}

#[test]
fn a_valid_raw_frame_is_sent_without_copying() {
    let framed = frame::encode(&BinaryMessage::new("r", Bytes::from_static(b"payload"))).unwrap();
    let wire = Outbound::raw_binary("c-1", framed.clone()).into_wire().unwrap();
    assert_eq!(wire.message.as_ptr(), framed.as_ptr());
}

#[test]
fn a_raw_frame_gets_require_ack_when_waiting() {
    let framed = frame::encode(&BinaryMessage::new("r", Bytes::from_static(b"p"))).unwrap();
    let wire = Outbound::raw_binary("c-1", framed).wait_for_ack(true).message_id("m").into_wire().unwrap();
    assert_eq!(
        frame::decode(wire.message).unwrap(),
        BinaryMessage::new("r", Bytes::from_static(b"p")).with_message_id("m").with_require_ack(true)
    );
}

// --- sending again -------------------------------------------------------

fn resent(wire: &pb::WsOutbound) -> pb::WsOutbound {
    Outbound::from(wire.clone()).into_wire().unwrap()
}

#[test]
fn a_message_sent_again_is_the_same_message() {
    let cases = [
        Outbound::text("c-1", r#"{"a":1}"#).wait_for_ack(true),
        Outbound::text("c-1", "plain").inform_clients_on_loss(["c-2"]).caller("c-3"),
        Outbound::text("c-1", "plain"),
        Outbound::binary("c-1", BinaryMessage::new("r", vec![9u8])).wait_for_ack(true),
        Outbound::binary("c-1", BinaryMessage::new("r", vec![9u8])).inform_clients_on_loss(["c-2"]),
    ];
    for outbound in cases {
        let wire = outbound.clone().into_wire().unwrap();
        assert_eq!(resent(&wire), wire, "{outbound:?}");
    }
}

// --- batches and acknowledgements ---------------------------------------

fn three_messages() -> Vec<pb::WsOutbound> {
    into_wire_batch([
        Outbound::text("c-1", r#"{"n":1}"#).wait_for_ack(true),
        Outbound::text("c-2", r#"{"n":2}"#).wait_for_ack(true),
        Outbound::binary("c-3", BinaryMessage::new("r", vec![3u8])).message_id("m-3"),
    ])
    .unwrap()
}

fn failure(index: u32, connection_id: &str, error: &str) -> pb::WsSendFailure {
    pb::WsSendFailure { index, connection_id: connection_id.into(), error_message: error.into() }
}

fn ack(success: bool, failures: Vec<pb::WsSendFailure>) -> pb::WsSendAck {
    pb::WsSendAck { correlation_id: "corr-1".into(), success, failures }
}

#[test]
fn a_batch_with_one_failure_in_the_middle() {
    let sent = three_messages();
    let report = SendReport::from_ack(ack(false, vec![failure(1, "c-2", "client did not acknowledge")]), &sent);
    assert!(!report.is_success());
    assert_eq!(report.len(), 3);
    assert_eq!(report.correlation_id(), "corr-1");
    assert!(report.failed(0).is_none() && report.failed(2).is_none() && report.failed(3).is_none());
    assert!(report.succeeded(0) && !report.succeeded(1) && report.succeeded(2) && !report.succeeded(3));
    let failed = report.failed(1).unwrap();
    assert_eq!((failed.index(), failed.connection_id(), failed.error()), (1, "c-2", "client did not acknowledge"));
    assert_eq!(failed.message_id(), Some(sent[1].message_id.as_str()));
    assert_eq!(report.failed_indexes(), [1]);

    let error = report.into_result().unwrap_err();
    assert_eq!(error.failed_indexes(), [1]);
    assert_eq!(error.failed(1).unwrap().connection_id(), "c-2");
    let retry = error.retry_batch();
    assert_eq!(retry.len(), 1);
    // Exactly the failed message, with its original id in the wire and payload.
    let again = into_wire_batch(retry).unwrap();
    assert_eq!(again, [sent[1].clone()]);
    assert_eq!(parsed(&again[0])["messageId"], sent[1].message_id.as_str());
    assert_eq!(
        error.to_string(),
        format!(
            "1 of 3 WebSocket messages failed: message 1 to connection \"c-2\" (id {:?}): client did not acknowledge",
            sent[1].message_id
        )
    );
}

#[test]
fn a_successful_batch() {
    let sent = three_messages();
    let report = SendReport::from_ack(ack(true, vec![]), &sent).into_result().unwrap();
    assert!(report.is_success() && (0..3).all(|i| report.succeeded(i)));
    assert!(report.retry_batch().is_empty() && report.failures().is_empty());
    assert!(SendReport::from_ack(ack(true, vec![]), &[]).is_empty());
}

#[test]
fn failures_are_ordered_by_index_whatever_the_ack_order() {
    let sent = three_messages();
    let report = SendReport::from_ack(ack(false, vec![failure(2, "c-3", "b"), failure(0, "c-1", "a")]), &sent);
    assert_eq!(report.failed_indexes(), [0, 2]);
    assert_eq!(into_wire_batch(report.retry_batch()).unwrap(), [sent[0].clone(), sent[2].clone()]);
    assert!(report.anomalies().is_empty());
}

#[test]
fn an_index_out_of_range_is_reported_not_panicked_on() {
    let sent = three_messages();
    let report = SendReport::from_ack(ack(false, vec![failure(3, "c-9", "gone"), failure(u32::MAX, "", "")]), &sent);
    assert!(report.failures().is_empty());
    assert_eq!(
        report.anomalies(),
        [
            AckAnomaly::IndexOutOfRange { index: 3, connection_id: "c-9".into(), error: "gone".into() },
            AckAnomaly::IndexOutOfRange { index: u32::MAX, connection_id: String::new(), error: String::new() },
        ]
    );
    assert!(!report.succeeded(0));
    let error = report.into_result().unwrap_err();
    assert!(error.to_string().contains("a failure names message 3, which is not in the batch"), "{error}");
}

#[test]
fn inconsistent_acknowledgements_are_anomalies() {
    let sent = three_messages();
    let report = SendReport::from_ack(ack(false, vec![]), &sent);
    assert_eq!(report.anomalies(), [AckAnomaly::FailedWithoutFailures]);
    assert!(!report.succeeded(0) && report.into_result().is_err());

    let report = SendReport::from_ack(ack(true, vec![failure(0, "c-1", "x")]), &sent);
    assert_eq!(report.anomalies(), [AckAnomaly::SucceededWithFailures]);
    assert_eq!(report.failed_indexes(), [0]);

    let report = SendReport::from_ack(ack(false, vec![failure(0, "c-1", "first"), failure(0, "c-1", "second")]), &sent);
    assert_eq!(report.failed(0).unwrap().error(), "first");
    assert_eq!(report.anomalies(), [AckAnomaly::DuplicateIndex { index: 0, error: "second".into() }]);

    let report = SendReport::from_ack(ack(false, vec![failure(2, "c-other", "x")]), &sent);
    assert_eq!(report.failed(2).unwrap().connection_id(), "c-3");
    assert_eq!(
        report.anomalies(),
        [AckAnomaly::ConnectionMismatch { index: 2, sent: "c-3".into(), reported: "c-other".into() }]
    );
    // An empty connection id in a failure is not a mismatch.
    let report = SendReport::from_ack(ack(false, vec![failure(2, "", "x")]), &sent);
    assert!(report.anomalies().is_empty());
}

#[test]
fn a_refused_message_in_a_batch_is_named_by_index() {
    let error =
        into_wire_batch([Outbound::text("c-1", "ok"), Outbound::text("c-2", "[not an object]").wait_for_ack(true)])
            .unwrap_err();
    let SendError::Invalid { index, connection_id, error: cause } = &error else { panic!("{error:?}") };
    assert_eq!((*index, connection_id.as_str()), (1, "c-2"));
    assert!(matches!(cause, OutboundError::NotJsonObject { .. }));
    assert!(error.to_string().starts_with("message 1 to connection \"c-2\" was refused, and nothing sent: "));
    assert!(error.retry_batch().is_empty() && error.failures().is_empty() && error.failed(1).is_none());
    assert!(std::error::Error::source(&error).is_some());
}

#[test]
fn an_unanswered_send_offers_the_whole_batch_with_its_ids() {
    let sent = three_messages();
    let error =
        SendError::TimedOut { correlation_id: "corr-1".into(), after: Duration::from_secs(30), sent: sent.clone() };
    assert!(error.failures().is_empty());
    assert_eq!(into_wire_batch(error.retry_batch()).unwrap(), sent);
    assert_eq!(
        error.to_string(),
        "no acknowledgement for WebSocket send \"corr-1\" (3 messages) within 30s; \
         whether they were delivered is unknown"
    );
    let error = SendError::Disconnected { correlation_id: "corr-1".into(), sent: sent.clone() };
    assert_eq!(into_wire_batch(error.retry_batch()).unwrap(), sent);
}

#[test]
fn a_long_failure_list_is_summarised() {
    let sent: Vec<_> = (0..8).map(|i| Outbound::text(format!("c-{i}"), "x").into_wire().unwrap()).collect();
    let failures = (0..8).map(|i| failure(i, &format!("c-{i}"), "")).collect();
    let error = SendReport::from_ack(ack(false, failures), &sent).into_result().unwrap_err();
    let text = error.to_string();
    assert!(text.starts_with("8 of 8 WebSocket messages failed: message 0 to connection \"c-0\": no reason given"));
    assert!(text.ends_with("; and 3 more"), "{text}");
}

#[test]
fn wait_for_ack_reads_json_as_strictly_as_a_value() {
    // A number out of range is not valid JSON to a `Value`, nested or not.
    for text in [r#"{"a":1e999}"#, r#"{"a":[{"b":-1e999}]}"#, r#"{"a":"\ud800"}"#] {
        let error = Outbound::text("c-1", text).wait_for_ack(true).into_wire().unwrap_err();
        assert!(matches!(&error, OutboundError::NotJsonObject { found } if found.starts_with("not valid JSON (")));
    }
    let deep = format!(r#"{{"a":{}{}}}"#, "[".repeat(200), "]".repeat(200));
    assert!(Outbound::text("c-1", deep).wait_for_ack(true).into_wire().is_err());
    // A key written with escapes is still the key.
    let wire = Outbound::text("c-1", r#"{"messag\u0065Id":"m-1"}"#).wait_for_ack(true).into_wire().unwrap();
    assert_eq!(wire.message_id, "m-1");
    assert_eq!(parsed(&wire), json!({"messageId": "m-1", "ack": true}));
    // Of duplicates, the last counts, whatever the earlier ones are.
    let wire = Outbound::text("c-1", r#"{"messageId":7,"messageId":"m-2"}"#).wait_for_ack(true).into_wire();
    assert_eq!(wire.unwrap().message_id, "m-2");
    let error = Outbound::text("c-1", r#"{"messageId":"m","messageId":null}"#).wait_for_ack(true).into_wire();
    assert_eq!(error, Err(OutboundError::MessageIdNotString { found: "null" }));
}

// --- the batch the sender keeps ------------------------------------------

#[test]
fn a_kept_batch_gives_back_the_messages_as_sent() {
    let mut sent = three_messages();
    sent.push(Outbound::text("c-4", "x").inform_clients_on_loss(["c-5", "", "c-6"]).caller("c-0").into_wire().unwrap());
    let kept = SentBatch::new("corr-1", &sent);
    assert_eq!((kept.correlation_id(), kept.len()), ("corr-1".to_owned(), 4));
    assert_eq!(kept.to_wire(), sent);

    // Small payloads are copied, until the copies add up to the limit;
    // larger ones are shared.
    let sizes = [SentBatch::COPIED_PAYLOAD, SentBatch::COPIED_PAYLOAD + 1, 0];
    let mut sent: Vec<_> = sizes
        .iter()
        .chain([SentBatch::COPIED_PAYLOAD].iter().cycle().take(SentBatch::COPIED_PAYLOADS / SentBatch::COPIED_PAYLOAD))
        .enumerate()
        .map(|(i, &size)| Outbound::text(format!("c-{i}"), "x".repeat(size)).into_wire().unwrap())
        .collect();
    sent.push(
        Outbound::raw_binary("c-last", frame::encode(&BinaryMessage::new("r", vec![7u8; 9])).unwrap())
            .into_wire()
            .unwrap(),
    );
    let kept = SentBatch::new("corr-2", &sent);
    assert_eq!(kept.to_wire(), sent);
    assert_eq!(kept.payloads.len(), SentBatch::COPIED_PAYLOADS);
    let shared: Vec<usize> = kept
        .to_wire()
        .iter()
        .zip(&sent)
        .enumerate()
        .filter(|(_, (kept, sent))| !kept.message.is_empty() && kept.message.as_ptr() == sent.message.as_ptr())
        .map(|(index, _)| index)
        .collect();
    // The one too large, the one past the limit, and the binary one after it.
    assert_eq!(shared, [1, sent.len() - 2, sent.len() - 1]);
    let empty = SentBatch::new("", &[]);
    assert_eq!((empty.correlation_id(), empty.to_wire()), (String::new(), vec![]));
}

#[test]
fn a_kept_batch_reads_an_ack_as_the_batch_does() {
    let sent = three_messages();
    let kept = SentBatch::new("corr-1", &sent);
    let acks = [
        ack(true, vec![]),
        ack(false, vec![failure(1, "c-2", "client did not acknowledge")]),
        ack(false, vec![failure(2, "c-3", "b"), failure(0, "c-1", "a")]),
        ack(false, vec![failure(3, "c-9", "gone"), failure(u32::MAX, "", "")]),
        ack(false, vec![]),
        ack(true, vec![failure(0, "c-1", "x")]),
        ack(false, vec![failure(0, "c-1", "first"), failure(0, "c-1", "second")]),
        ack(false, vec![failure(2, "c-other", "x"), failure(1, "", "y")]),
    ];
    for ack in acks {
        let report = SendReport::from_ack_kept(ack.clone(), &kept);
        assert_eq!(report, SendReport::from_ack(ack, &sent));
        assert_eq!(
            into_wire_batch(report.retry_batch()).unwrap(),
            report.failures().iter().map(|f| f.message().clone()).collect::<Vec<_>>()
        );
    }
}

// --- properties ----------------------------------------------------------

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
        "(?s).{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(json_key(), inner, 0..6)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// Keys including the two the SDK writes, and ones that need escaping.
fn json_key() -> impl Strategy<Value = String> {
    prop_oneof![Just("messageId".to_owned()), Just("ack".to_owned()), "(?s).{0,8}"]
}

/// Text that is often a JSON object, and often only nearly one.
fn json_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("{"),
        Just("}"),
        Just("["),
        Just("]"),
        Just(":"),
        Just(","),
        Just(" "),
        Just(r#""messageId""#),
        Just(r#""messag\u0065Id""#),
        Just(r#""ack""#),
        Just(r#""m-1""#),
        Just(r#""""#),
        Just(r#""a\"b""#),
        Just(r#""\ud800""#),
        Just("1"),
        Just("-0.5e3"),
        Just("1e999"),
        Just("true"),
        Just("null"),
    ];
    let object = proptest::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat());
    prop_oneof![
        object.clone(),
        object.prop_map(|inner| format!("{{{inner}}}")),
        json_object().prop_map(|object| serde_json::to_string(&object).unwrap()),
    ]
}

fn json_object() -> impl Strategy<Value = serde_json::Map<String, Value>> {
    proptest::collection::btree_map(json_key(), json_value(), 0..8).prop_map(|map| map.into_iter().collect())
}

proptest! {
    #[test]
    fn wait_for_ack_rewriting_adds_exactly_the_two_keys(
        object in json_object(),
        pretty in any::<bool>(),
        chosen in prop_oneof![Just(String::new()), "[a-z0-9-]{1,12}"],
    ) {
        let text = if pretty {
            serde_json::to_string_pretty(&object).unwrap()
        } else {
            serde_json::to_string(&object).unwrap()
        };
        let result = Outbound::text("c-1", text.clone()).message_id(chosen.clone()).wait_for_ack(true).into_wire();
        let in_payload = object.get("messageId");
        match in_payload {
            Some(Value::String(_)) | None => {}
            Some(other) => {
                prop_assert_eq!(result, Err(OutboundError::MessageIdNotString { found: json_kind(other) }));
                return Ok(());
            }
        }
        let in_payload = in_payload.and_then(Value::as_str).unwrap_or("");
        if !chosen.is_empty() && !in_payload.is_empty() && chosen != in_payload {
            prop_assert!(
                matches!(result, Err(OutboundError::MessageIdConflict { .. })),
                "expected a conflict, got {:?}",
                result
            );
            return Ok(());
        }
        let wire = result.unwrap();
        let expected_id = if !chosen.is_empty() { chosen.as_str() } else { in_payload };
        if !expected_id.is_empty() {
            prop_assert_eq!(&wire.message_id, expected_id);
        }
        // Against the text as serde_json reads it, not `object`: without
        // its float_roundtrip feature serde_json may read a float back a
        // bit off, the same way in both texts.
        let Value::Object(mut expected) = serde_json::from_str::<Value>(&text).unwrap() else { unreachable!() };
        expected.insert("messageId".into(), Value::String(wire.message_id.clone()));
        expected.insert("ack".into(), Value::Bool(true));
        prop_assert_eq!(parsed(&wire), Value::Object(expected));
        // Idempotent: sending the result again changes nothing.
        prop_assert_eq!(resent(&wire), wire);
    }

    #[test]
    fn the_quick_read_of_a_json_object_agrees_with_a_value(text in json_like()) {
        let as_value = payload_message_id(&text);
        match object_message_id(&text) {
            Some(id) => prop_assert_eq!(as_value, Ok(id.unwrap_or_default().into_owned())),
            // The quick read takes a string id only; a `Value` may find
            // one still, after an earlier id that is not a string.
            None => prop_assert!(
                as_value.as_ref().is_err() || text.matches("messageId").count() + text.matches("messag\\u0065Id").count() > 1,
                "{:?} read as {:?}", text, as_value
            ),
        }
        let reference = match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(mut object)) => match object.remove("messageId") {
                Some(Value::String(id)) if !id.is_empty() => Some(id),
                _ => None,
            },
            _ => None,
        };
        prop_assert_eq!(json_message_id(&text), reference);
    }

    #[test]
    fn object_members_never_panics(text in "(?s).{0,40}") {
        let _ = object_members(&text, |_| Some(()));
    }

    #[test]
    fn binary_messages_sent_again_are_unchanged(
        route in "[a-z]{1,20}",
        frame_id in prop_oneof![Just(String::new()), "[a-z0-9]{1,8}"],
        payload in proptest::collection::vec(any::<u8>(), 0..64),
        wait in any::<bool>(),
        inform in any::<bool>(),
    ) {
        let mut outbound = Outbound::binary("c-1", BinaryMessage::new(route, payload).with_message_id(frame_id))
            .wait_for_ack(wait);
        if inform {
            outbound = outbound.inform_clients_on_loss(["c-2"]);
        }
        let wire = outbound.into_wire().unwrap();
        let frame = frame::decode(wire.message.clone()).unwrap();
        prop_assert_eq!(frame.require_ack, wait);
        if wait || !frame.message_id.is_empty() {
            prop_assert_eq!(&frame.message_id, &wire.message_id);
        }
        prop_assert_eq!(resent(&wire), wire);
    }
}
