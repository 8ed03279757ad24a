//! What a handler sends to WebSocket connections, and what the runtime says
//! of it, on arbitrary input:
//! - a text message with `wait_for_ack` (the SDK writes `"messageId"` and
//!   `"ack": true` into the JSON object with a scanner of its own): when it
//!   is accepted, the result is a JSON object whose `"messageId"` is the id
//!   sent and whose `"ack"` is `true`;
//! - a framed binary message: when accepted, it decodes, and with
//!   `wait_for_ack` asks for the acknowledgement under the id sent;
//! - either way, converting the result back and again gives the same
//!   message (a retry keeps its id and bytes);
//! - an arbitrary `WsSendAck` read against the batch: never panics, every
//!   failure names a message of the batch once, in order, and a retry
//!   resends exactly the failed messages.

use celerity::proto::prost::Message as _;
use celerity::proto::v1 as pb;
use celerity::websocket::Outbound;
use celerity::websocket::frame;
use celerity::websocket::outbound::SendReport;

pub fn run(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    // The low bits pick what is under test, the others how it is set up.
    let wait = mode & 0x10 != 0;
    let id = if mode & 0x20 != 0 { "m-1" } else { "" };
    match mode % 4 {
        0 => text(rest, wait, id),
        1 => binary(rest, wait, id),
        _ => ack(mode, rest),
    }
}

fn text(data: &[u8], wait: bool, id: &str) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(wire) = Outbound::text("c-1", text).message_id(id).wait_for_ack(wait).into_wire() else {
        return;
    };
    if wait {
        assert!(!wire.message_id.is_empty(), "wait_for_ack without an id");
        let value: serde_json::Value =
            serde_json::from_slice(&wire.message).unwrap_or_else(|e| panic!("{text:?} became invalid JSON: {e}"));
        let object = value.as_object().unwrap_or_else(|| panic!("{text:?} became a non-object"));
        assert_eq!(
            object.get("messageId").and_then(|v| v.as_str()),
            Some(wire.message_id.as_str()),
            "{text:?}: the payload's messageId is not the id sent"
        );
        assert_eq!(object.get("ack"), Some(&serde_json::Value::Bool(true)), "{text:?}: no \"ack\": true");
        if !id.is_empty() {
            assert_eq!(wire.message_id, id);
        }
    } else {
        assert_eq!(&wire.message[..], data, "text without wait_for_ack is sent as given");
    }
    again(wire);
}

fn binary(data: &[u8], wait: bool, id: &str) {
    let Ok(wire) = Outbound::raw_binary("c-1", data.to_vec()).message_id(id).wait_for_ack(wait).into_wire() else {
        return;
    };
    let message = frame::decode(wire.message.clone()).expect("an accepted binary message decodes");
    if wait {
        assert!(message.require_ack, "wait_for_ack without requireAck");
        assert_eq!(message.message_id, wire.message_id, "the frame's id is not the id sent");
    } else {
        assert!(!message.require_ack, "requireAck without wait_for_ack");
    }
    again(wire);
}

/// A message sent again is the same message.
fn again(wire: pb::WsOutbound) {
    let again = Outbound::from(wire.clone()).into_wire();
    assert_eq!(again.as_ref(), Ok(&wire), "converting a sent message again changed it");
}

fn ack(mode: u8, data: &[u8]) {
    let Ok(ack) = pb::WsSendAck::decode(data) else {
        return;
    };
    let sent: Vec<pb::WsOutbound> = (0..usize::from(mode >> 4))
        .map(|i| pb::WsOutbound {
            connection_id: format!("c-{i}"),
            message: format!("{{\"n\":{i}}}").into(),
            message_id: format!("m-{i}"),
            ..Default::default()
        })
        .collect();
    let report = SendReport::from_ack(ack, &sent);
    let indexes = report.failed_indexes();
    assert!(indexes.windows(2).all(|w| w[0] < w[1]), "failures out of order or repeated: {indexes:?}");
    assert!(indexes.iter().all(|&i| i < sent.len()), "a failure outside the batch: {indexes:?}");
    let retry = report.retry_batch();
    assert_eq!(retry.len(), indexes.len(), "a retry resends exactly the failed messages");
    for (message, &index) in retry.into_iter().zip(&indexes) {
        assert_eq!(message.into_wire().as_ref(), Ok(&sent[index]), "a retry changed message {index}");
    }
    let _ = report.into_result();
}
