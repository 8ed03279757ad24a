//! The WebSocket side channel, runtime side: the Celerity Binary Message
//! Format, pluggable delivery of `WsSend` batches, and the `WsSendAck` that
//! answers each batch with per-message outcomes.
//!
//! The binary format is written here again, apart from the SDK's own
//! (`celerity::websocket`'s frames), on purpose: this is the runtime's side,
//! and the dev runtime and the tests read what a handler sends with it, so
//! that a mistake in the SDK's encoding is caught against an independent
//! reading of the format rather than agreed with.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use bytes::{BufMut, Bytes, BytesMut};
use celerity_proto::v1::{WsOutbound, WsSend, WsSendAck, WsSendFailure};

/// One binary message in the Celerity Binary Message Format:
/// `<routeLength u8><route><requireAck u8><messageIdLength u8><messageId><payload>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryFrame {
    /// The route, 1 to 255 bytes, not starting with a byte from 0x01 to 0x05.
    pub route: String,
    /// Whether the receiver must acknowledge it.
    pub require_ack: bool,
    /// The message id (empty for none).
    pub message_id: String,
    /// The payload.
    pub payload: Bytes,
}

/// The kinds of reserved binary frame (`01 0N 00 00 ...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReservedFrame {
    /// `01 01 00 00`.
    Ping,
    /// `01 02 00 00`.
    Pong,
    /// `01 03 00 00 {json}`.
    LostMessage,
    /// `01 04 00 00 {json}`.
    Ack,
    /// `01 05 00 00`.
    Capabilities,
}

impl ReservedFrame {
    /// The four-byte header of this reserved frame.
    pub fn header(self) -> [u8; 4] {
        let kind = match self {
            ReservedFrame::Ping => 1,
            ReservedFrame::Pong => 2,
            ReservedFrame::LostMessage => 3,
            ReservedFrame::Ack => 4,
            ReservedFrame::Capabilities => 5,
        };
        [1, kind, 0, 0]
    }

    /// Recognises a reserved frame and returns it with its body.
    pub fn parse(bytes: &[u8]) -> Option<(ReservedFrame, &[u8])> {
        if bytes.len() < 4 || bytes[0] != 1 || bytes[2] != 0 || bytes[3] != 0 {
            return None;
        }
        let kind = match bytes[1] {
            1 => ReservedFrame::Ping,
            2 => ReservedFrame::Pong,
            3 => ReservedFrame::LostMessage,
            4 => ReservedFrame::Ack,
            5 => ReservedFrame::Capabilities,
            _ => return None,
        };
        Some((kind, &bytes[4..]))
    }
}

/// Why bytes are not a binary message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// Fewer than 4 bytes.
    TooShort,
    /// The route length is 0.
    EmptyRoute,
    /// The route starts with a reserved byte (0x01 to 0x05).
    ReservedRoute,
    /// Fewer bytes than the header declares.
    Truncated,
    /// `requireAck` is neither 0 nor 1.
    BadRequireAck(u8),
    /// `requireAck` is 1 with no message id.
    AckWithoutId,
    /// The route or id is not UTF-8.
    NotUtf8,
    /// The route or id is longer than 255 bytes.
    TooLong,
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::TooShort => f.write_str("a binary message has at least 4 bytes"),
            FrameError::EmptyRoute => f.write_str("the route is empty"),
            FrameError::ReservedRoute => f.write_str("the route starts with a reserved byte (0x01 to 0x05)"),
            FrameError::Truncated => f.write_str("the frame is shorter than its header declares"),
            FrameError::BadRequireAck(b) => write!(f, "requireAck is {b}, not 0 or 1"),
            FrameError::AckWithoutId => f.write_str("requireAck is 1 but the message id is empty"),
            FrameError::NotUtf8 => f.write_str("the route or message id is not UTF-8"),
            FrameError::TooLong => f.write_str("the route or message id is longer than 255 bytes"),
        }
    }
}

impl std::error::Error for FrameError {}

impl BinaryFrame {
    /// Reads a binary message.
    pub fn decode(bytes: &[u8]) -> Result<BinaryFrame, FrameError> {
        if bytes.len() < 4 {
            return Err(FrameError::TooShort);
        }
        let route_len = usize::from(bytes[0]);
        if route_len == 0 {
            return Err(FrameError::EmptyRoute);
        }
        if (1..=5).contains(&bytes[1]) {
            return Err(FrameError::ReservedRoute);
        }
        let route = bytes.get(1..1 + route_len).ok_or(FrameError::Truncated)?;
        let require_ack = match *bytes.get(1 + route_len).ok_or(FrameError::Truncated)? {
            0 => false,
            1 => true,
            b => return Err(FrameError::BadRequireAck(b)),
        };
        let id_len = usize::from(*bytes.get(2 + route_len).ok_or(FrameError::Truncated)?);
        let start = 3 + route_len;
        let id = bytes.get(start..start + id_len).ok_or(FrameError::Truncated)?;
        if require_ack && id.is_empty() {
            return Err(FrameError::AckWithoutId);
        }
        Ok(BinaryFrame {
            route: std::str::from_utf8(route).map_err(|_| FrameError::NotUtf8)?.to_owned(),
            require_ack,
            message_id: std::str::from_utf8(id).map_err(|_| FrameError::NotUtf8)?.to_owned(),
            payload: Bytes::copy_from_slice(&bytes[start + id_len..]),
        })
    }

    /// Writes a binary message, refusing what [`decode`](Self::decode) would
    /// refuse.
    pub fn encode(&self) -> Result<Bytes, FrameError> {
        if self.route.is_empty() {
            return Err(FrameError::EmptyRoute);
        }
        if self.route.len() > 255 || self.message_id.len() > 255 {
            return Err(FrameError::TooLong);
        }
        if (1..=5).contains(&self.route.as_bytes()[0]) {
            return Err(FrameError::ReservedRoute);
        }
        if self.require_ack && self.message_id.is_empty() {
            return Err(FrameError::AckWithoutId);
        }
        let mut out = BytesMut::with_capacity(3 + self.route.len() + self.message_id.len() + self.payload.len());
        out.put_u8(self.route.len() as u8);
        out.put_slice(self.route.as_bytes());
        out.put_u8(u8::from(self.require_ack));
        out.put_u8(self.message_id.len() as u8);
        out.put_slice(self.message_id.as_bytes());
        out.put_slice(&self.payload);
        Ok(out.freeze())
    }
}

/// The outcome of one outbound message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WsOutcome {
    /// Written to the socket (or, for `wait_for_ack`, acknowledged by the
    /// client).
    Delivered,
    /// Not delivered, with why.
    Failed(String),
}

/// A boxed delivery future.
pub type DeliveryFuture = Pin<Box<dyn Future<Output = Vec<WsOutcome>> + Send>>;

/// Delivers the messages of `WsSend` batches to WebSocket clients.
///
/// [`deliver`](Self::deliver) gets the batch's messages (binary ones already
/// checked to be framed) and returns one outcome per message, in order.
pub trait WsDelivery: Send + Sync + 'static {
    /// Delivers `messages`; one outcome each, in the same order.
    fn deliver(&self, messages: Vec<WsOutbound>) -> DeliveryFuture;
}

/// Checks each message of `send` (a binary one must be in the Celerity
/// Binary Message Format), has the valid ones delivered, and builds the
/// `WsSendAck`: failures by index, in the order the messages were listed.
pub async fn deliver_batch(delivery: &dyn WsDelivery, send: WsSend) -> WsSendAck {
    let mut outcomes: Vec<Option<WsOutcome>> = vec![None; send.messages.len()];
    let mut valid = Vec::new();
    let mut valid_index = Vec::new();
    for (index, message) in send.messages.iter().enumerate() {
        if message.is_binary
            && let Err(e) = BinaryFrame::decode(&message.message)
        {
            outcomes[index] = Some(WsOutcome::Failed(format!("not a Celerity binary message: {e}")));
            continue;
        }
        valid.push(message.clone());
        valid_index.push(index);
    }
    if !valid.is_empty() {
        let delivered = delivery.deliver(valid).await;
        for (k, index) in valid_index.into_iter().enumerate() {
            outcomes[index] =
                Some(delivered.get(k).cloned().unwrap_or_else(|| WsOutcome::Failed("no outcome reported".to_owned())));
        }
    }
    ack_for(&send, outcomes.into_iter().map(|o| o.unwrap_or(WsOutcome::Delivered)).collect())
}

/// The `WsSendAck` for `send` given one outcome per message.
pub fn ack_for(send: &WsSend, outcomes: Vec<WsOutcome>) -> WsSendAck {
    let failures: Vec<WsSendFailure> = outcomes
        .into_iter()
        .enumerate()
        .filter_map(|(index, outcome)| match outcome {
            WsOutcome::Delivered => None,
            WsOutcome::Failed(error_message) => Some(WsSendFailure {
                index: index as u32,
                connection_id: send.messages.get(index).map(|m| m.connection_id.clone()).unwrap_or_default(),
                error_message,
            }),
        })
        .collect();
    WsSendAck { correlation_id: send.correlation_id.clone(), success: failures.is_empty(), failures }
}

/// A delivery for tests: every message is delivered unless its connection
/// is scripted to fail; every message handed over is recorded.
#[derive(Debug, Clone, Default)]
pub struct ScriptedDelivery {
    inner: Arc<Mutex<Scripted>>,
}

#[derive(Debug, Default)]
struct Scripted {
    failing: HashMap<String, String>,
    delivered: Vec<WsOutbound>,
}

impl ScriptedDelivery {
    /// Delivers everything.
    pub fn new() -> Self {
        ScriptedDelivery::default()
    }

    /// Messages for `connection_id` fail with `error`.
    pub fn fail_connection(&self, connection_id: impl Into<String>, error: impl Into<String>) -> &Self {
        self.lock().failing.insert(connection_id.into(), error.into());
        self
    }

    /// Every message handed to this delivery so far, failed ones included.
    pub fn messages(&self) -> Vec<WsOutbound> {
        self.lock().delivered.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Scripted> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl WsDelivery for ScriptedDelivery {
    fn deliver(&self, messages: Vec<WsOutbound>) -> DeliveryFuture {
        let mut st = self.lock();
        let outcomes = messages
            .iter()
            .map(|m| match st.failing.get(&m.connection_id) {
                Some(e) => WsOutcome::Failed(e.clone()),
                None => WsOutcome::Delivered,
            })
            .collect();
        st.delivered.extend(messages);
        Box::pin(std::future::ready(outcomes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_frame_round_trip_and_test_vector() {
        let frame = BinaryFrame {
            route: "orders".into(),
            require_ack: true,
            message_id: "m-1".into(),
            payload: Bytes::from_static(&[0xde, 0xad]),
        };
        let bytes = frame.encode().unwrap();
        assert_eq!(&bytes[..], b"\x06orders\x01\x03m-1\xde\xad");
        assert_eq!(BinaryFrame::decode(&bytes).unwrap(), frame);
    }

    #[test]
    fn binary_frame_refusals() {
        assert_eq!(BinaryFrame::decode(b"\x01a\x00"), Err(FrameError::TooShort));
        assert_eq!(BinaryFrame::decode(b"\x00a\x00\x00"), Err(FrameError::EmptyRoute));
        assert_eq!(BinaryFrame::decode(b"\x01\x02\x00\x00"), Err(FrameError::ReservedRoute));
        assert_eq!(BinaryFrame::decode(b"\x05ab\x00\x00"), Err(FrameError::Truncated));
        assert_eq!(BinaryFrame::decode(b"\x01a\x02\x00"), Err(FrameError::BadRequireAck(2)));
        assert_eq!(BinaryFrame::decode(b"\x01a\x01\x00"), Err(FrameError::AckWithoutId));
        assert_eq!(BinaryFrame::decode(b"\x01a\x00\x05ab"), Err(FrameError::Truncated));
        let ok = BinaryFrame::decode(b"\x01a\x00\x00xyz").unwrap();
        assert_eq!((ok.route.as_str(), &ok.payload[..]), ("a", &b"xyz"[..]));
    }

    #[test]
    fn reserved_frames() {
        assert_eq!(ReservedFrame::parse(b"\x01\x04\x00\x00{}"), Some((ReservedFrame::Ack, &b"{}"[..])));
        assert_eq!(ReservedFrame::parse(b"\x01\x01\x00\x00"), Some((ReservedFrame::Ping, &b""[..])));
        assert_eq!(ReservedFrame::parse(b"\x01\x09\x00\x00"), None);
        assert_eq!(ReservedFrame::parse(b"\x06orders"), None);
        assert_eq!(ReservedFrame::Pong.header(), [1, 2, 0, 0]);
    }

    fn outbound(conn: &str, binary: bool, message: &'static [u8]) -> WsOutbound {
        WsOutbound {
            connection_id: conn.into(),
            message: Bytes::from_static(message),
            is_binary: binary,
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn batch_failures_are_per_message_by_index() {
        let delivery = ScriptedDelivery::new();
        delivery.fail_connection("gone", "no such connection");
        let send = WsSend {
            correlation_id: "c-1".into(),
            messages: vec![
                outbound("a", false, b"{}"),
                outbound("gone", false, b"{}"),
                outbound("a", true, b"\x01\x01\x00\x00"),
                outbound("a", true, b"\x01r\x00\x00p"),
            ],
        };
        let ack = deliver_batch(&delivery, send).await;
        assert_eq!(ack.correlation_id, "c-1");
        assert!(!ack.success);
        let failed: Vec<(u32, &str)> = ack.failures.iter().map(|f| (f.index, f.connection_id.as_str())).collect();
        assert_eq!(failed, vec![(1, "gone"), (2, "a")]);
        assert!(ack.failures[1].error_message.contains("binary"));
        assert_eq!(delivery.messages().len(), 3, "the unframed binary message is never handed over");

        let ok = deliver_batch(&delivery, WsSend { correlation_id: "c-2".into(), messages: vec![] }).await;
        assert!(ok.success && ok.failures.is_empty());
    }
}
