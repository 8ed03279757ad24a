//! Building what a handler sends to WebSocket connections, and reading what
//! the runtime says became of it.
//!
//! An [`Outbound`] is one message to one connection. [`Outbound::into_wire`]
//! turns it into the protocol's `WsOutbound`, applying every rule that can be
//! checked before anything is sent: a binary message must be in the
//! [Celerity Binary Message Format](super::frame), and a message that waits for
//! its client's acknowledgement must ask the client for one in its payload.
//!
//! A batch of them goes to the runtime as one `WsSend`; the runtime answers
//! with one `WsSendAck` naming the messages that failed by index.
//! [`SendReport::from_ack`] reads that answer against the batch as it was sent,
//! and [`SendError`] is what a send that did not fully succeed returns: which
//! messages failed, on which connections and why, and the exact messages to
//! send again.
//!
//! ```
//! use celerity::websocket::outbound::Outbound;
//!
//! let wire = Outbound::text("c-1", r#"{"event":"update","data":{"n":1}}"#)
//!     .message_id("m-1")
//!     .wait_for_ack(true)
//!     .into_wire()
//!     .unwrap();
//! assert_eq!(wire.message_id, "m-1");
//! assert_eq!(&wire.message[..], br#"{"event":"update","data":{"n":1},"messageId":"m-1","ack":true}"#);
//! ```
//!
//! # Two kinds of message id
//!
//! `WsOutbound.message_id` names a message to the runtime: acknowledgements
//! between nodes refer to it, and it is the `messageId` of the loss event sent
//! to the clients in `inform_clients_on_loss`. The runtime sends the payload
//! exactly as given and never puts that id in it, so the id a client reads
//! from a payload is whatever the handler composed. This module makes the two
//! the same wherever it can: with `wait_for_ack` it writes the id into the
//! payload, and where the payload already carries an id, that id is the one
//! used (or, if a different one was set, the message is refused).

use std::borrow::Cow;
use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::ops::Range;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use celerity_proto::v1 as pb;
use serde::Serialize;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::frame::{self, BinaryMessage, FrameError};
use crate::excerpt::{excerpt, quoted};

/// The most messages one `WsSend` may carry; a larger batch is refused
/// before anything is sent ([`SendError::TooLarge`]). Split it.
pub const MAX_BATCH_MESSAGES: usize = 4096;

/// The most bytes (payloads, connection ids and message ids added up) one
/// `WsSend` may carry; a larger batch is refused before anything is sent
/// ([`SendError::TooLarge`]). Well under the largest frame by default
/// (`CELERITY_MAX_MESSAGE_BYTES`, 64 MiB); where that is set lower, a send
/// over it ends [`SendError::TooLarge`] too.
pub const MAX_BATCH_BYTES: usize = 16 * 1024 * 1024;

/// One message to one WebSocket connection, as a handler builds it.
///
/// Nothing is checked until [`into_wire`](Self::into_wire), which applies
/// every rule at once; the builder methods only record what was asked for.
///
/// ```
/// use celerity::websocket::frame::BinaryMessage;
/// use celerity::websocket::outbound::Outbound;
///
/// let wire = Outbound::binary("c-1", BinaryMessage::new("prices", vec![1, 2, 3]))
///     .wait_for_ack(true)
///     .into_wire()
///     .unwrap();
/// assert!(wire.is_binary);
/// assert!(!wire.message_id.is_empty()); // generated, and also in the frame
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outbound {
    connection_id: String,
    body: Body,
    /// Empty when the handler set none.
    message_id: String,
    inform_clients_on_loss: Vec<String>,
    caller: String,
    wait_for_ack: bool,
}

/// An outbound message's payload, in the form it was given in.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Body {
    /// Text. Always UTF-8 when built from a `String`; one rebuilt from a
    /// `WsOutbound` is checked when it is sent again.
    Text(Bytes),
    /// A binary message, framed when sent.
    Binary(BinaryMessage),
    /// Bytes already in the binary format, decoded when sent. Kept as given
    /// so a frame that needs no change goes out without being copied.
    Framed(Bytes),
}

impl Outbound {
    /// A text message.
    ///
    /// Any text may be sent, except that with
    /// [`wait_for_ack`](Self::wait_for_ack) it must be a JSON object.
    pub fn text(connection_id: impl Into<String>, text: impl Into<String>) -> Self {
        Outbound::with_body(connection_id.into(), Body::Text(Bytes::from(text.into())))
    }

    /// A text message holding `value` serialised as JSON.
    pub fn json(connection_id: impl Into<String>, value: &impl Serialize) -> Result<Self, OutboundError> {
        let text = serde_json::to_string(value).map_err(|error| OutboundError::Json(error.to_string()))?;
        Ok(Outbound::text(connection_id, text))
    }

    /// A binary message, framed in the Celerity Binary Message Format when
    /// sent.
    ///
    /// Its message id and `require_ack` are reconciled with this message's
    /// [`message_id`](Self::message_id) and
    /// [`wait_for_ack`](Self::wait_for_ack) as [`into_wire`](Self::into_wire)
    /// describes.
    pub fn binary(connection_id: impl Into<String>, message: BinaryMessage) -> Self {
        Outbound::with_body(connection_id.into(), Body::Binary(message))
    }

    /// A binary message already framed in the Celerity Binary Message Format.
    ///
    /// The frame is decoded, and refused if it does not decode, when sent. A
    /// frame that needs no change is sent as the same bytes, uncopied.
    pub fn raw_binary(connection_id: impl Into<String>, frame: impl Into<Bytes>) -> Self {
        Outbound::with_body(connection_id.into(), Body::Framed(frame.into()))
    }

    fn with_body(connection_id: String, body: Body) -> Self {
        Outbound {
            connection_id,
            body,
            message_id: String::new(),
            inform_clients_on_loss: Vec::new(),
            caller: String::new(),
            wait_for_ack: false,
        }
    }

    /// Sets the message's id. An empty id is the same as none.
    ///
    /// It is the id the runtime knows the message by, and the `messageId` of
    /// the loss event the clients in
    /// [`inform_clients_on_loss`](Self::inform_clients_on_loss) receive. Set it
    /// to an id those clients already know, ordinarily one in the payload;
    /// with [`wait_for_ack`](Self::wait_for_ack) the SDK puts it in the payload
    /// for you.
    pub fn message_id(mut self, message_id: impl Into<String>) -> Self {
        self.message_id = message_id.into();
        self
    }

    /// Adds connections to tell if this message is lost.
    ///
    /// The loss event names the message by its id. Where none is set and the
    /// payload carries none either, the SDK generates one, and that is an id
    /// the informed clients have never seen: they learn that a message was
    /// lost but not which. Set [`message_id`](Self::message_id) to an id they
    /// know, or set [`caller`](Self::caller) so they can at least tell which
    /// exchange was affected.
    pub fn inform_clients_on_loss<I, S>(mut self, connection_ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.inform_clients_on_loss.extend(connection_ids.into_iter().map(Into::into));
        self
    }

    /// Sets the connection that caused this send, reported in any loss
    /// event. Meaningful only alongside
    /// [`inform_clients_on_loss`](Self::inform_clients_on_loss).
    pub fn caller(mut self, connection_id: impl Into<String>) -> Self {
        self.caller = connection_id.into();
        self
    }

    /// Makes the message's outcome its client's acknowledgement rather than
    /// the write to the socket. The runtime sends it again while attempts
    /// remain and reports it failed when they run out.
    ///
    /// The client only acknowledges a message that asks it to, so the SDK
    /// asks: a text message must then be a JSON object, and gets top-level
    /// `"messageId"` and `"ack": true`; a binary message gets `requireAck = 1`
    /// and the id in its frame.
    pub fn wait_for_ack(mut self, wait: bool) -> Self {
        self.wait_for_ack = wait;
        self
    }

    /// The connection the message is for.
    pub fn connection_id(&self) -> &str {
        &self.connection_id
    }

    /// Whether this is a binary message.
    pub fn is_binary(&self) -> bool {
        matches!(self.body, Body::Binary(_) | Body::Framed(_))
    }

    /// The text of a text message; `None` for a binary one.
    pub fn text_payload(&self) -> Option<&str> {
        match &self.body {
            Body::Text(text) => std::str::from_utf8(text).ok(),
            Body::Binary(_) | Body::Framed(_) => None,
        }
    }

    /// The message id set with [`message_id`](Self::message_id), if any. The
    /// id actually sent may come from the payload or be generated; it is
    /// `WsOutbound.message_id` after [`into_wire`](Self::into_wire).
    pub fn chosen_message_id(&self) -> Option<&str> {
        Some(self.message_id.as_str()).filter(|id| !id.is_empty())
    }

    /// The connections to tell if the message is lost.
    pub fn clients_informed_on_loss(&self) -> &[String] {
        &self.inform_clients_on_loss
    }

    /// The connection that caused the send, if set.
    pub fn caller_connection_id(&self) -> Option<&str> {
        Some(self.caller.as_str()).filter(|id| !id.is_empty())
    }

    /// Whether the message waits for its client's acknowledgement.
    pub fn waits_for_ack(&self) -> bool {
        self.wait_for_ack
    }

    /// The `WsOutbound` to send, after applying every rule that can be
    /// checked before sending.
    ///
    /// - The connection id must not be empty.
    /// - A text message must be UTF-8 (it always is unless rebuilt from a
    ///   `WsOutbound`).
    /// - With `wait_for_ack`, a text message must be a JSON object. Its
    ///   `"messageId"` is set to the message id and `"ack"` to `true`, at the
    ///   top level; every other byte of the text is kept as it was.
    /// - A binary message must encode (or, given framed, decode) in the
    ///   Celerity Binary Message Format. With `wait_for_ack` its frame gets
    ///   `requireAck = 1` and the message id; without it, a frame that already
    ///   has `requireAck = 1` is refused, since the runtime would not wait for
    ///   the answer the client sends.
    /// - The message id is the one set with [`message_id`](Self::message_id).
    ///   Where none is set, it is the one the payload carries: a binary
    ///   frame's id, or a JSON object's string `"messageId"` (read only when
    ///   the id is needed, as below). A set id that differs from the one in
    ///   the payload is refused: the client would acknowledge, or be told of
    ///   the loss of, an id the runtime does not know.
    /// - Where the message waits for an acknowledgement or informs clients of
    ///   its loss and there is still no id, one is generated
    ///   ([`generate_id`]). Otherwise an empty id is left for the runtime to
    ///   fill in, since nothing outside it will see that id.
    ///
    /// The id used is `WsOutbound.message_id`, and the same id is in the
    /// payload wherever the payload carries one. Converting the result back
    /// with `Outbound::from` and calling this again gives the same
    /// `WsOutbound`: a message sent again keeps its id and bytes, so clients
    /// can deduplicate.
    pub fn into_wire(self) -> Result<pb::WsOutbound, OutboundError> {
        self.into_wire_or_connection().map_err(|(error, _)| error)
    }

    /// As [`into_wire`](Self::into_wire), giving the connection id back
    /// with the error, so that a batch can name a refused message without
    /// having copied the id of every message in case one is.
    fn into_wire_or_connection(self) -> Result<pb::WsOutbound, (OutboundError, String)> {
        let Outbound { connection_id, body, message_id, inform_clients_on_loss, caller, wait_for_ack } = self;
        if connection_id.is_empty() {
            return Err((OutboundError::EmptyConnectionId, connection_id));
        }
        let needs_id = wait_for_ack || !inform_clients_on_loss.is_empty();
        match wire_payload(body, message_id, wait_for_ack, needs_id) {
            Ok((message, is_binary, message_id)) => Ok(pb::WsOutbound {
                connection_id,
                message,
                is_binary,
                inform_clients_on_loss,
                message_id,
                caller,
                wait_for_ack,
            }),
            Err(error) => Err((error, connection_id)),
        }
    }
}

/// The payload, whether it is binary, and the message id, for
/// [`Outbound::into_wire`].
fn wire_payload(
    body: Body,
    message_id: String,
    wait_for_ack: bool,
    needs_id: bool,
) -> Result<(Bytes, bool, String), OutboundError> {
    match body {
        Body::Text(text) => {
            let as_str = std::str::from_utf8(&text).map_err(|_| OutboundError::TextNotUtf8)?;
            if wait_for_ack {
                let (rewritten, id) = add_ack_request(as_str, message_id)?;
                Ok((rewritten.map_or(text, Bytes::from), false, id))
            } else {
                let id = if message_id.is_empty() && needs_id {
                    json_message_id(as_str).unwrap_or_else(generate_id)
                } else {
                    message_id
                };
                Ok((text, false, id))
            }
        }
        Body::Binary(message) => {
            let (frame, id) = binary_to_wire(message, None, message_id, wait_for_ack, needs_id)?;
            Ok((frame, true, id))
        }
        Body::Framed(frame) => {
            let message = frame::decode(frame.clone()).map_err(OutboundError::InvalidBinary)?;
            let (frame, id) = binary_to_wire(message, Some(frame), message_id, wait_for_ack, needs_id)?;
            Ok((frame, true, id))
        }
    }
}

/// The message a `WsOutbound` describes, for sending it again: calling
/// [`Outbound::into_wire`] on it gives the same `WsOutbound` back, checked
/// again on the way.
impl From<pb::WsOutbound> for Outbound {
    fn from(wire: pb::WsOutbound) -> Self {
        Outbound {
            connection_id: wire.connection_id,
            body: if wire.is_binary { Body::Framed(wire.message) } else { Body::Text(wire.message) },
            message_id: wire.message_id,
            inform_clients_on_loss: wire.inform_clients_on_loss,
            caller: wire.caller,
            wait_for_ack: wire.wait_for_ack,
        }
    }
}

/// Converts a batch with [`Outbound::into_wire`], stopping at the first
/// message refused: a batch is sent whole or not at all.
///
/// The error is [`SendError::Invalid`], naming the message by index.
pub fn into_wire_batch(batch: impl IntoIterator<Item = Outbound>) -> Result<Vec<pb::WsOutbound>, SendError> {
    batch
        .into_iter()
        .enumerate()
        .map(|(index, message)| {
            message.into_wire_or_connection().map_err(|(error, connection_id)| SendError::Invalid {
                index,
                connection_id,
                error,
            })
        })
        .collect()
}

/// A new id, unique in this process and very unlikely to be used by any
/// other: a per-process random prefix and a counter, such as
/// `5f0c9a2e7d31b4c8-2a`.
///
/// The SDK uses it for message ids it has to generate. It is also fit for a
/// `WsSend` correlation id, and for ids a handler puts in its own payloads.
pub fn generate_id() -> String {
    static PREFIX: OnceLock<u64> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(0);
    // std's RandomState is seeded from the OS once per process, so hashing
    // the time and pid with it gives a prefix another process will not share,
    // without a dependency for randomness.
    let prefix = *PREFIX.get_or_init(|| {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_nanos());
        RandomState::new().hash_one((nanos, std::process::id()))
    });
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    // As `format!("{prefix:016x}-{n:x}")`, without the formatting machinery:
    // some sends make one per message.
    let mut id = String::with_capacity(33);
    push_hex(&mut id, prefix, 16);
    id.push('-');
    push_hex(&mut id, n, 1);
    id
}

/// Appends `value` in lowercase hex, zero-padded to at least `min_digits`.
fn push_hex(out: &mut String, value: u64, min_digits: u32) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let digits = (u64::BITS - value.leading_zeros()).div_ceil(4).max(min_digits);
    for digit in (0..digits).rev() {
        out.push(char::from(DIGITS[((value >> (digit * 4)) & 0xf) as usize]));
    }
}

/// Reconciles a binary message's id and `requireAck` with the outbound
/// settings, and frames it. `framed` is the frame it was decoded from, sent
/// as is when nothing changed.
fn binary_to_wire(
    mut message: BinaryMessage,
    framed: Option<Bytes>,
    chosen: String,
    wait_for_ack: bool,
    needs_id: bool,
) -> Result<(Bytes, String), OutboundError> {
    if message.require_ack && !wait_for_ack {
        return Err(OutboundError::RequireAckWithoutWaitForAck);
    }
    let mut id = match (chosen.is_empty(), message.message_id.is_empty()) {
        (false, false) if chosen != message.message_id => {
            return Err(OutboundError::MessageIdConflict { message_id: chosen, in_payload: message.message_id });
        }
        (false, _) => chosen,
        (true, _) => message.message_id.clone(),
    };
    if id.is_empty() && needs_id {
        id = generate_id();
    }
    let mut changed = false;
    if wait_for_ack && (!message.require_ack || message.message_id != id) {
        message.require_ack = true;
        message.message_id.clone_from(&id);
        changed = true;
    }
    let frame = match framed {
        // Decoding it already checked every rule.
        Some(frame) if !changed => frame,
        _ => frame::encode(&message).map_err(OutboundError::InvalidBinary)?,
    };
    Ok((frame, id))
}

/// The non-empty string `"messageId"` of a JSON object text, if it has one.
fn json_message_id(text: &str) -> Option<String> {
    match object_message_id(text) {
        Some(id) => id.filter(|id| !id.is_empty()).map(Cow::into_owned),
        // Not an object whose id is absent or a string, or one with an id
        // that is not a string before the last: read as a `Value` to be sure.
        None => match serde_json::from_str::<Value>(text).ok()? {
            Value::Object(mut object) => match object.remove("messageId")? {
                Value::String(id) if !id.is_empty() => Some(id),
                _ => None,
            },
            _ => None,
        },
    }
}

/// Asks the client to acknowledge a JSON object text: top-level `"messageId"`
/// and `"ack": true`. Returns the new text (`None` when the text already asks)
/// and the id.
///
/// The text is edited in place rather than parsed and serialised again, so
/// key order, whitespace and number formatting survive: a round trip through
/// `serde_json::Value` would sort the keys and round integers beyond 64 bits.
fn add_ack_request(text: &str, chosen: String) -> Result<(Option<Vec<u8>>, String), OutboundError> {
    let in_payload = match object_message_id(text) {
        Some(id) => id.unwrap_or_default(),
        // Whatever is wrong, reading the text as a `Value` says what.
        None => Cow::Owned(payload_message_id(text)?),
    };
    let id = match (chosen.is_empty(), in_payload.is_empty()) {
        (false, false) if chosen != *in_payload => {
            return Err(OutboundError::MessageIdConflict { message_id: chosen, in_payload: in_payload.into_owned() });
        }
        (false, _) => chosen,
        (true, false) => in_payload.into_owned(),
        (true, true) => generate_id(),
    };
    let rewritten = set_ack_keys(text, &id).ok_or_else(|| OutboundError::NotJsonObject {
        // Unreachable for text serde_json accepted as an object; reported
        // rather than panicking should the two ever disagree.
        found: "JSON the SDK could not rewrite".to_owned(),
    })?;
    Ok((rewritten, id))
}

/// The top-level `"messageId"` of a JSON object text, read into a `Value`
/// (empty when there is none), or why `wait_for_ack` cannot use the text.
fn payload_message_id(text: &str) -> Result<String, OutboundError> {
    let value: Value = serde_json::from_str(text)
        .map_err(|error| OutboundError::NotJsonObject { found: format!("not valid JSON ({error})") })?;
    let Value::Object(mut object) = value else {
        return Err(OutboundError::NotJsonObject { found: json_kind(&value).to_owned() });
    };
    // serde_json keeps the last of duplicate keys, as JavaScript does.
    match object.remove("messageId") {
        None => Ok(String::new()),
        Some(Value::String(id)) => Ok(id),
        Some(other) => Err(OutboundError::MessageIdNotString { found: json_kind(&other) }),
    }
}

/// The top-level `"messageId"` of a JSON object text, read as strictly as
/// reading the text into a `Value` would but without building one: an
/// object's keys and values are checked and dropped as they are read.
///
/// `Some(None)` where the object has no `"messageId"`, `Some(Some(id))` where
/// it is a string (the last, of duplicates, as `Value` keeps). `None` where
/// the text is not JSON, is not an object, or has a `"messageId"` that is not
/// a string: reading it into a `Value` then says which.
fn object_message_id(text: &str) -> Option<Option<Cow<'_, str>>> {
    serde_json::from_str::<ObjectMessageId<'_>>(text).ok().map(|ObjectMessageId(id)| id)
}

/// What [`object_message_id`] reads.
struct ObjectMessageId<'a>(Option<Cow<'a, str>>);

impl<'de> Deserialize<'de> for ObjectMessageId<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;

        impl<'de> Visitor<'de> for Members {
            type Value = ObjectMessageId<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut id = None;
                while let Some(IsMessageId(is_id)) = map.next_key()? {
                    if is_id {
                        id = Some(map.next_value::<JsonString<'de>>()?.0);
                    } else {
                        map.next_value::<Checked>()?;
                    }
                }
                Ok(ObjectMessageId(id))
            }
        }

        deserializer.deserialize_map(Members)
    }
}

/// An object key, read only to see whether it is `"messageId"`.
struct IsMessageId(bool);

impl<'de> Deserialize<'de> for IsMessageId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Key;

        impl Visitor<'_> for Key {
            type Value = IsMessageId;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }

            fn visit_str<E: de::Error>(self, key: &str) -> Result<IsMessageId, E> {
                Ok(IsMessageId(key == "messageId"))
            }
        }

        deserializer.deserialize_str(Key)
    }
}

/// A JSON string, borrowed from the text where it has no escapes.
struct JsonString<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for JsonString<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text;

        impl<'de> Visitor<'de> for Text {
            type Value = JsonString<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(JsonString(Cow::Borrowed(text)))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Ok(JsonString(Cow::Owned(text.to_owned())))
            }

            fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
                Ok(JsonString(Cow::Owned(text)))
            }
        }

        deserializer.deserialize_str(Text)
    }
}

/// Any JSON value, read through serde_json's `deserialize_any` exactly as a
/// `Value` is (same numbers, strings, escapes and nesting limit), and
/// dropped. Not `serde::de::IgnoredAny`, which serde_json skips more
/// leniently: it takes `1e999`, which a `Value` refuses.
struct Checked;

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Any;

        impl<'de> Visitor<'de> for Any {
            type Value = Checked;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }

            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Checked, E> {
                Ok(Checked)
            }

            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Checked, E> {
                Ok(Checked)
            }

            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Checked, E> {
                Ok(Checked)
            }

            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Checked, E> {
                Ok(Checked)
            }

            fn visit_str<E: de::Error>(self, _: &str) -> Result<Checked, E> {
                Ok(Checked)
            }

            fn visit_unit<E: de::Error>(self) -> Result<Checked, E> {
                Ok(Checked)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
                while seq.next_element::<Checked>()?.is_some() {}
                Ok(Checked)
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
                while map.next_entry::<Checked, Checked>()?.is_some() {}
                Ok(Checked)
            }
        }

        deserializer.deserialize_any(Any)
    }
}

/// Sets every top-level `"messageId"` to `id` and every `"ack"` to `true` in
/// a JSON object text, adding either where missing. `None` if the text is not
/// an object after all; `Some(None)` if it needed no change.
fn set_ack_keys(text: &str, id: &str) -> Option<Option<Vec<u8>>> {
    // Members whose value is replaced, in text order: with the id (`true`)
    // or with `true` (`false`). Allocated only when the text has either key.
    let mut edits: Vec<(Range<usize>, bool)> = Vec::new();
    let (mut has_members, mut has_id, mut has_ack) = (false, false, false);
    let insert_at = object_members(text, |member| {
        has_members = true;
        let key = text.get(member.key.clone())?;
        let value = text.get(member.value.clone())?;
        if json_string_is(key, "messageId")? {
            has_id = true;
            // Compared as JSON: an id written with escapes is still the id.
            if json_string_is(value, id) != Some(true) {
                edits.push((member.value, true));
            }
        } else if json_string_is(key, "ack")? {
            has_ack = true;
            if value != "true" {
                edits.push((member.value, false));
            }
        }
        Some(())
    })?;
    if edits.is_empty() && has_id && has_ack {
        return Some(None);
    }

    let mut out = Vec::with_capacity(text.len() + (edits.len() + 1) * (id.len() + 2) + 24);
    let mut copied = 0;
    // Edits are in text order and end at or before the insertion point.
    for (range, with_id) in edits {
        out.extend_from_slice(text.get(copied..range.start)?.as_bytes());
        if with_id {
            serde_json::to_writer(&mut out, id).ok()?;
        } else {
            out.extend_from_slice(b"true");
        }
        copied = range.end;
    }
    out.extend_from_slice(text.get(copied..insert_at)?.as_bytes());
    let mut separate = has_members;
    if !has_id {
        out.extend_from_slice(if separate { b",\"messageId\":" } else { b"\"messageId\":" });
        serde_json::to_writer(&mut out, id).ok()?;
        separate = true;
    }
    if !has_ack {
        out.extend_from_slice(if separate { b",\"ack\":true" } else { b"\"ack\":true" });
    }
    out.extend_from_slice(text.get(insert_at..)?.as_bytes());
    Some(Some(out))
}

/// Whether `raw`, a JSON string with its quotes, reads as `expected`; `None`
/// if it is not a JSON string.
fn json_string_is(raw: &str, expected: &str) -> Option<bool> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    if !inner.contains('\\') {
        // Nothing to unescape (in text serde_json accepted, there is no
        // quote inside either).
        return Some(inner == expected);
    }
    let unescaped: String = serde_json::from_str(raw).ok()?;
    Some(unescaped == expected)
}

/// One `"key": value` of a JSON object, as byte ranges of its text.
struct Member {
    /// The key, quotes included.
    key: Range<usize>,
    value: Range<usize>,
}

/// Calls `each` with the top-level members of a JSON object text in order,
/// and returns where a new member goes: just after the last value, or just
/// after `{` in an empty object. `None` where `each` gives `None`.
///
/// Meant for text serde_json has already accepted, so it only finds
/// boundaries rather than checking grammar; every index is bounds-checked,
/// so other input gives `None` rather than a panic.
fn object_members(text: &str, mut each: impl FnMut(Member) -> Option<()>) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = skip_whitespace(bytes, 0);
    if *bytes.get(i)? != b'{' {
        return None;
    }
    let mut insert_at = i + 1;
    i = skip_whitespace(bytes, i + 1);
    if *bytes.get(i)? == b'}' {
        return Some(insert_at);
    }
    loop {
        let key_start = i;
        i = skip_string(bytes, i)?;
        let key = key_start..i;
        i = skip_whitespace(bytes, i);
        if *bytes.get(i)? != b':' {
            return None;
        }
        let value_start = skip_whitespace(bytes, i + 1);
        i = skip_value(bytes, value_start)?;
        each(Member { key, value: value_start..i })?;
        insert_at = i;
        i = skip_whitespace(bytes, i);
        match *bytes.get(i)? {
            b',' => i = skip_whitespace(bytes, i + 1),
            b'}' => return Some(insert_at),
            _ => return None,
        }
    }
}

/// Past JSON whitespace (the four characters JSON allows).
fn skip_whitespace(bytes: &[u8], mut i: usize) -> usize {
    while matches!(bytes.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// Past the string starting at `i`. An escape is a backslash and one more
/// character; the hex digits of `\uXXXX` need no special case, since they are
/// never a quote or a backslash.
fn skip_string(bytes: &[u8], mut i: usize) -> Option<usize> {
    if *bytes.get(i)? != b'"' {
        return None;
    }
    i += 1;
    loop {
        match *bytes.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// Past the value starting at `i`.
fn skip_value(bytes: &[u8], mut i: usize) -> Option<usize> {
    match *bytes.get(i)? {
        b'"' => skip_string(bytes, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            loop {
                match *bytes.get(i)? {
                    b'"' => {
                        i = skip_string(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        // A number, true, false or null: up to the next delimiter.
        _ => {
            while !matches!(bytes.get(i), None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')) {
                i += 1;
            }
            Some(i)
        }
    }
}

/// What a JSON value is, for messages: "an array", "a number".
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Why a message was refused before anything was sent.
///
/// Each variant is one rule, and its message names it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutboundError {
    /// The message has no connection to go to.
    EmptyConnectionId,
    /// `wait_for_ack` on a text message that is not a JSON object.
    NotJsonObject {
        /// What the text is instead: "an array", "not valid JSON (...)".
        found: String,
    },
    /// `wait_for_ack` on a JSON object whose `"messageId"` is not a string.
    MessageIdNotString {
        /// What it is instead: "a number", "null".
        found: &'static str,
    },
    /// The message id set differs from the one the payload carries.
    MessageIdConflict {
        /// The id set with [`Outbound::message_id`].
        message_id: String,
        /// The id in the payload: a JSON object's `"messageId"` or a binary
        /// frame's message id.
        in_payload: String,
    },
    /// A binary frame asks its client to acknowledge (`requireAck = 1`) but
    /// the message does not wait for the acknowledgement.
    RequireAckWithoutWaitForAck,
    /// A binary message is not in the Celerity Binary Message Format.
    InvalidBinary(FrameError),
    /// A text message (rebuilt from a `WsOutbound`) is not UTF-8.
    TextNotUtf8,
    /// A value could not be serialised as JSON; serde_json's message.
    Json(String),
}

impl fmt::Display for OutboundError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutboundError::EmptyConnectionId => {
                f.write_str("the connection id is empty; a message needs the connection it is for")
            }
            OutboundError::NotJsonObject { found } => write!(
                f,
                "wait_for_ack needs a JSON object payload so the SDK can add messageId and ack, but the text is {found}"
            ),
            OutboundError::MessageIdNotString { found } => write!(
                f,
                "wait_for_ack needs the payload's messageId to be a string the client can echo, but it is {found}"
            ),
            OutboundError::MessageIdConflict { message_id, in_payload } => write!(
                f,
                "message_id is {message_id:?} but the payload carries message id {in_payload:?}; \
                 the client would answer about an id the runtime does not know"
            ),
            OutboundError::RequireAckWithoutWaitForAck => f.write_str(
                "the frame asks its client to acknowledge (requireAck = 1) but wait_for_ack is off, \
                 so the runtime would not wait for the answer; set wait_for_ack(true) or clear requireAck",
            ),
            OutboundError::InvalidBinary(error) => {
                write!(f, "binary message is not in the Celerity Binary Message Format: {error}")
            }
            OutboundError::TextNotUtf8 => f.write_str("text message is not valid UTF-8"),
            OutboundError::Json(error) => write!(f, "could not serialise the message as JSON: {error}"),
        }
    }
}

impl std::error::Error for OutboundError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            OutboundError::InvalidBinary(error) => Some(error),
            _ => None,
        }
    }
}

/// What the runtime's `WsSendAck` says became of a batch.
///
/// Built with [`from_ack`](Self::from_ack) from the acknowledgement and the
/// batch exactly as it was sent. It keeps a copy of each failed message (a
/// large payload is shared rather than copied), so
/// [`retry_batch`](Self::retry_batch) can send exactly those again with the
/// same ids and bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct SendReport {
    correlation_id: String,
    len: usize,
    /// Ordered by index, one per index.
    failures: Vec<Failure>,
    anomalies: Vec<AckAnomaly>,
}

impl SendReport {
    /// Reads `ack` against `sent`, the messages of the `WsSend` it answers.
    ///
    /// Whatever the acknowledgement holds, this never panics: a failure
    /// naming an index outside the batch, an index named twice, a connection
    /// that is not the one the message went to, or a `success` flag that
    /// contradicts the failures listed, is recorded as an [`AckAnomaly`].
    pub fn from_ack(ack: pb::WsSendAck, sent: &[pb::WsOutbound]) -> SendReport {
        SendReport::read(ack, sent)
    }

    /// [`from_ack`](Self::from_ack) against the batch as the sender keeps it.
    pub(crate) fn from_ack_kept(ack: pb::WsSendAck, sent: &SentBatch) -> SendReport {
        SendReport::read(ack, sent)
    }

    fn read(ack: pb::WsSendAck, sent: &(impl Sent + ?Sized)) -> SendReport {
        let mut failures = Vec::with_capacity(ack.failures.len());
        let mut anomalies = Vec::new();
        if ack.success && !ack.failures.is_empty() {
            anomalies.push(AckAnomaly::SucceededWithFailures);
        }
        if !ack.success && ack.failures.is_empty() {
            anomalies.push(AckAnomaly::FailedWithoutFailures);
        }
        for failure in ack.failures {
            let Some(index) = usize::try_from(failure.index).ok().filter(|&index| index < sent.len()) else {
                anomalies.push(AckAnomaly::IndexOutOfRange {
                    index: failure.index,
                    connection_id: failure.connection_id,
                    error: failure.error_message,
                });
                continue;
            };
            let connection_id = sent.connection_id(index);
            if !failure.connection_id.is_empty() && failure.connection_id != connection_id {
                anomalies.push(AckAnomaly::ConnectionMismatch {
                    index,
                    sent: connection_id.to_owned(),
                    reported: failure.connection_id,
                });
            }
            failures.push((index, failure.error_message));
        }
        // The runtime reports failures in send order; sorting anyway makes
        // `failed` a binary search whatever it sent. Stable, so of an index
        // named twice the first report is kept.
        failures.sort_by_key(|&(index, _)| index);
        let mut unique: Vec<Failure> = Vec::with_capacity(failures.len());
        for (index, error) in failures {
            match unique.last() {
                Some(last) if last.index == index => {
                    anomalies.push(AckAnomaly::DuplicateIndex { index, error });
                }
                _ => unique.push(Failure { index, error, message: sent.message(index) }),
            }
        }
        SendReport { correlation_id: ack.correlation_id, len: sent.len(), failures: unique, anomalies }
    }

    /// The correlation id of the acknowledgement.
    pub fn correlation_id(&self) -> &str {
        &self.correlation_id
    }

    /// How many messages the batch held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the batch was empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether every message succeeded and the acknowledgement was
    /// consistent.
    pub fn is_success(&self) -> bool {
        self.failures.is_empty() && self.anomalies.is_empty()
    }

    /// The failure of message `index`, if it failed.
    pub fn failed(&self, index: usize) -> Option<&Failure> {
        self.failures
            .binary_search_by_key(&index, |failure| failure.index)
            .ok()
            .map(|position| &self.failures[position])
    }

    /// Whether message `index` is known to have succeeded: it is in the
    /// batch, it is not among the failures, and the acknowledgement does not
    /// report a failure it could not place.
    pub fn succeeded(&self, index: usize) -> bool {
        let unplaced = self
            .anomalies
            .iter()
            .any(|anomaly| matches!(anomaly, AckAnomaly::IndexOutOfRange { .. } | AckAnomaly::FailedWithoutFailures));
        index < self.len && !unplaced && self.failed(index).is_none()
    }

    /// The failed messages, in batch order.
    pub fn failures(&self) -> &[Failure] {
        &self.failures
    }

    /// The indexes of the failed messages, in batch order.
    pub fn failed_indexes(&self) -> Vec<usize> {
        self.failures.iter().map(Failure::index).collect()
    }

    /// Where the acknowledgement did not make sense against the batch.
    pub fn anomalies(&self) -> &[AckAnomaly] {
        &self.anomalies
    }

    /// Exactly the failed messages, in batch order, to send again. Each
    /// keeps the id and bytes it was sent with, so a client that did receive
    /// it can tell the retry is the same message.
    pub fn retry_batch(&self) -> Vec<Outbound> {
        self.failures.iter().map(Failure::to_outbound).collect()
    }

    /// `Ok` when [`is_success`](Self::is_success), otherwise
    /// [`SendError::Failed`] holding this report.
    pub fn into_result(self) -> Result<SendReport, SendError> {
        if self.is_success() { Ok(self) } else { Err(SendError::Failed(self)) }
    }
}

/// A batch as sent, as [`SendReport`] reads it: how many messages, which
/// connection each went to, and each message whole (for a failure, made only
/// for the messages that failed).
trait Sent {
    fn len(&self) -> usize;
    /// The connection message `index` (< `len`) went to.
    fn connection_id(&self, index: usize) -> &str;
    /// Message `index` (< `len`) as it was sent.
    fn message(&self, index: usize) -> pb::WsOutbound;
}

impl Sent for [pb::WsOutbound] {
    fn len(&self) -> usize {
        <[pb::WsOutbound]>::len(self)
    }

    fn connection_id(&self, index: usize) -> &str {
        &self[index].connection_id
    }

    fn message(&self, index: usize) -> pb::WsOutbound {
        self[index].clone()
    }
}

/// A `WsSend` as it was sent, kept by the sender until the runtime says what
/// became of it: to read the acknowledgement against, and to give back the
/// messages to send again when it names failures or never comes.
///
/// Most sends succeed and need none of it, so it is kept cheaply rather than
/// as a copy of the messages: every id and connection id of the send in one
/// buffer, small payloads in another, and larger payloads shared with the
/// message sent (a `Bytes` clone). Messages are rebuilt from it only for a
/// failure.
#[derive(Debug)]
pub(crate) struct SentBatch {
    /// The correlation id, then for each message its connection id, message
    /// id, caller and informed connections.
    text: String,
    correlation_id: Span,
    /// The payloads of [`Payload::Copied`] messages.
    payloads: Vec<u8>,
    messages: Vec<SentMessage>,
    /// The informed connections of every message, in order.
    informed: Vec<Span>,
}

#[derive(Debug)]
struct SentMessage {
    payload: Payload,
    is_binary: bool,
    wait_for_ack: bool,
    connection_id: Span,
    message_id: Span,
    caller: Span,
    /// A range of `SentBatch::informed`.
    informed: Span,
}

/// A kept message's payload.
#[derive(Debug)]
enum Payload {
    /// A range of `SentBatch::payloads`. Copying a small payload costs less
    /// than sharing it: the first clone of a `Bytes` made from a `String` or a
    /// `Vec` allocates, and dropping it frees again.
    Copied(Span),
    Shared(Bytes),
}

/// A range of `SentBatch::text`, `payloads` or `informed`.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
}

impl SentBatch {
    /// Payloads up to this size are copied rather than shared...
    const COPIED_PAYLOAD: usize = 256;
    /// ...while the copies of a batch add up to no more than this, so that
    /// keeping a batch stays a small allocation.
    const COPIED_PAYLOADS: usize = 64 * 1024;

    /// Keeps what [`SendReport`] and [`SendError`] need of a `WsSend`.
    pub(crate) fn new(correlation_id: &str, messages: &[pb::WsOutbound]) -> SentBatch {
        let (mut text_len, mut payloads_len, mut informed_len) = (correlation_id.len(), 0, 0);
        for message in messages {
            text_len += message.connection_id.len() + message.message_id.len() + message.caller.len();
            text_len += message.inform_clients_on_loss.iter().map(String::len).sum::<usize>();
            informed_len += message.inform_clients_on_loss.len();
            if message.message.len() <= Self::COPIED_PAYLOAD {
                payloads_len += message.message.len();
            }
        }
        let mut text = String::with_capacity(text_len);
        let mut push = |s: &str| {
            let start = text.len();
            text.push_str(s);
            Span { start, end: text.len() }
        };
        let correlation_id = push(correlation_id);
        let mut payloads = Vec::with_capacity(payloads_len.min(Self::COPIED_PAYLOADS));
        let mut informed = Vec::with_capacity(informed_len);
        let messages = messages
            .iter()
            .map(|message| {
                let payload = if message.message.len() <= Self::COPIED_PAYLOAD
                    && payloads.len() + message.message.len() <= Self::COPIED_PAYLOADS
                {
                    let start = payloads.len();
                    payloads.extend_from_slice(&message.message);
                    Payload::Copied(Span { start, end: payloads.len() })
                } else {
                    Payload::Shared(message.message.clone())
                };
                let start = informed.len();
                informed.extend(message.inform_clients_on_loss.iter().map(|id| push(id)));
                SentMessage {
                    payload,
                    is_binary: message.is_binary,
                    wait_for_ack: message.wait_for_ack,
                    connection_id: push(&message.connection_id),
                    message_id: push(&message.message_id),
                    caller: push(&message.caller),
                    informed: Span { start, end: informed.len() },
                }
            })
            .collect();
        SentBatch { text, correlation_id, payloads, messages, informed }
    }

    fn str(&self, span: Span) -> &str {
        &self.text[span.start..span.end]
    }

    /// The correlation id of the `WsSend`.
    pub(crate) fn correlation_id(&self) -> String {
        self.str(self.correlation_id).to_owned()
    }

    /// How many messages the `WsSend` held.
    pub(crate) fn len(&self) -> usize {
        self.messages.len()
    }

    /// The messages, as sent.
    pub(crate) fn to_wire(&self) -> Vec<pb::WsOutbound> {
        (0..self.messages.len()).map(|index| Sent::message(self, index)).collect()
    }
}

impl Sent for SentBatch {
    fn len(&self) -> usize {
        self.messages.len()
    }

    fn connection_id(&self, index: usize) -> &str {
        self.str(self.messages[index].connection_id)
    }

    fn message(&self, index: usize) -> pb::WsOutbound {
        let message = &self.messages[index];
        let informed = &self.informed[message.informed.start..message.informed.end];
        pb::WsOutbound {
            connection_id: self.str(message.connection_id).to_owned(),
            message: match &message.payload {
                Payload::Copied(span) => Bytes::copy_from_slice(&self.payloads[span.start..span.end]),
                Payload::Shared(payload) => payload.clone(),
            },
            is_binary: message.is_binary,
            inform_clients_on_loss: informed.iter().map(|&span| self.str(span).to_owned()).collect(),
            message_id: self.str(message.message_id).to_owned(),
            caller: self.str(message.caller).to_owned(),
            wait_for_ack: message.wait_for_ack,
        }
    }
}

/// One message of a batch that the runtime reported failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    index: usize,
    error: String,
    message: pb::WsOutbound,
}

impl Failure {
    /// The message's position in the batch.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The connection the message was for.
    pub fn connection_id(&self) -> &str {
        &self.message.connection_id
    }

    /// Why it failed, as the runtime put it.
    pub fn error(&self) -> &str {
        &self.error
    }

    /// The id it was sent with; `None` where it was sent without one and
    /// the runtime generated its own.
    pub fn message_id(&self) -> Option<&str> {
        Some(self.message.message_id.as_str()).filter(|id| !id.is_empty())
    }

    /// The message as it was sent.
    pub fn message(&self) -> &pb::WsOutbound {
        &self.message
    }

    /// The message, to send again unchanged.
    pub fn to_outbound(&self) -> Outbound {
        Outbound::from(self.message.clone())
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "message {} to connection {:?}", self.index, self.message.connection_id)?;
        if let Some(id) = self.message_id() {
            write!(f, " (id {id:?})")?;
        }
        if self.error.is_empty() { f.write_str(": no reason given") } else { write!(f, ": {}", excerpt(&self.error)) }
    }
}

/// Something in a `WsSendAck` that does not fit the batch it answers.
///
/// None of these should happen; they are recorded rather than trusted or
/// panicked on, and make the send an error.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AckAnomaly {
    /// A failure names an index outside the batch: some message failed, and
    /// which one is unknown.
    IndexOutOfRange {
        /// The index reported.
        index: u32,
        /// The connection reported.
        connection_id: String,
        /// The error reported.
        error: String,
    },
    /// A failure names an index already reported; the first report is kept.
    DuplicateIndex {
        /// The index.
        index: usize,
        /// The second report's error.
        error: String,
    },
    /// A failure names a different connection from the one its message went
    /// to. The failure is kept, under the connection the message went to.
    ConnectionMismatch {
        /// The index.
        index: usize,
        /// The connection the message went to.
        sent: String,
        /// The connection the failure named.
        reported: String,
    },
    /// `success` is false but no failure is listed: which messages failed is
    /// unknown.
    FailedWithoutFailures,
    /// `success` is true but failures are listed. The failures are kept.
    SucceededWithFailures,
}

impl fmt::Display for AckAnomaly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AckAnomaly::IndexOutOfRange { index, connection_id, error } => write!(
                f,
                "a failure names message {index}, which is not in the batch (connection {}: {})",
                quoted(connection_id),
                excerpt(error)
            ),
            AckAnomaly::DuplicateIndex { index, error } => {
                write!(f, "message {index} is reported failed twice (the second time: {})", excerpt(error))
            }
            AckAnomaly::ConnectionMismatch { index, sent, reported } => {
                write!(f, "message {index} went to connection {sent:?} but its failure names {}", quoted(reported))
            }
            AckAnomaly::FailedWithoutFailures => f.write_str("the batch is reported failed with no failure listed"),
            AckAnomaly::SucceededWithFailures => f.write_str("the batch is reported successful with failures listed"),
        }
    }
}

/// Why a send did not fully succeed.
///
/// Every variant says which messages are worth sending again:
/// [`retry_batch`](Self::retry_batch).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SendError {
    /// A message was refused before anything was sent; nothing was.
    Invalid {
        /// The refused message's position in the batch.
        index: usize,
        /// The connection it was for.
        connection_id: String,
        /// Why.
        error: OutboundError,
    },
    /// The runtime reported failures, or an acknowledgement that does not
    /// fit the batch.
    Failed(SendReport),
    /// No acknowledgement came in time. The messages may or may not have
    /// been delivered.
    TimedOut {
        /// The `WsSend`'s correlation id.
        correlation_id: String,
        /// How long the send waited.
        after: Duration,
        /// The batch as sent.
        sent: Vec<pb::WsOutbound>,
    },
    /// The stream to the runtime ended before the acknowledgement came. The
    /// messages may or may not have been delivered.
    Disconnected {
        /// The `WsSend`'s correlation id.
        correlation_id: String,
        /// The batch as sent.
        sent: Vec<pb::WsOutbound>,
    },
    /// The batch is larger than one `WsSend` may be
    /// ([`MAX_BATCH_MESSAGES`], [`MAX_BATCH_BYTES`], or the largest frame);
    /// nothing was sent. Send it in smaller batches.
    TooLarge {
        /// Messages in the batch.
        messages: usize,
        /// Its size in bytes: payloads and ids, or the encoded frame when the
        /// frame limit refused it.
        bytes: usize,
        /// The limit in bytes it was measured against.
        limit: usize,
    },
}

impl SendError {
    /// The runtime's report, when it answered.
    pub fn report(&self) -> Option<&SendReport> {
        match self {
            SendError::Failed(report) => Some(report),
            _ => None,
        }
    }

    /// The failure of message `index`, when the runtime reported one.
    pub fn failed(&self, index: usize) -> Option<&Failure> {
        self.report()?.failed(index)
    }

    /// The failures the runtime reported, in batch order; empty when it did
    /// not answer.
    pub fn failures(&self) -> &[Failure] {
        self.report().map_or(&[], SendReport::failures)
    }

    /// The indexes of the failures the runtime reported.
    pub fn failed_indexes(&self) -> Vec<usize> {
        self.report().map(SendReport::failed_indexes).unwrap_or_default()
    }

    /// The messages to send again, each with the id and bytes it was sent
    /// with:
    ///
    /// - [`Failed`](Self::Failed): exactly the failed messages;
    /// - [`TimedOut`](Self::TimedOut), [`Disconnected`](Self::Disconnected):
    ///   the whole batch, since any of it may have failed. Some may then
    ///   arrive twice; a client can deduplicate those it can identify, which
    ///   is those carrying an id (`wait_for_ack` puts one in every message);
    /// - [`Invalid`](Self::Invalid): none, since sending the same batch again
    ///   would be refused again.
    pub fn retry_batch(&self) -> Vec<Outbound> {
        match self {
            SendError::Invalid { .. } | SendError::TooLarge { .. } => Vec::new(),
            SendError::Failed(report) => report.retry_batch(),
            SendError::TimedOut { sent, .. } | SendError::Disconnected { sent, .. } => {
                sent.iter().cloned().map(Outbound::from).collect()
            }
        }
    }
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        /// Failures listed in full; a larger batch is summarised.
        const LISTED: usize = 5;
        match self {
            SendError::Invalid { index, connection_id, error } => {
                write!(f, "message {index} to connection {connection_id:?} was refused, and nothing sent: {error}")
            }
            SendError::Failed(report) => {
                write!(f, "{} of {} WebSocket messages failed", report.failures.len(), report.len)?;
                for (i, failure) in report.failures.iter().take(LISTED).enumerate() {
                    f.write_str(if i == 0 { ": " } else { "; " })?;
                    write!(f, "{failure}")?;
                }
                if report.failures.len() > LISTED {
                    write!(f, "; and {} more", report.failures.len() - LISTED)?;
                }
                for anomaly in &report.anomalies {
                    write!(f, "; the acknowledgement is inconsistent: {anomaly}")?;
                }
                Ok(())
            }
            SendError::TimedOut { correlation_id, after, sent } => write!(
                f,
                "no acknowledgement for WebSocket send {correlation_id:?} ({} messages) within {after:?}; \
                 whether they were delivered is unknown",
                sent.len()
            ),
            SendError::Disconnected { correlation_id, sent } => write!(
                f,
                "the stream to the runtime ended before WebSocket send {correlation_id:?} ({} messages) was \
                 acknowledged; whether they were delivered is unknown",
                sent.len()
            ),
            SendError::TooLarge { messages, bytes, limit } => write!(
                f,
                "a WebSocket batch of {messages} messages and {bytes} bytes is larger than one send may be \
                 (at most {MAX_BATCH_MESSAGES} messages and {limit} bytes); nothing was sent, send it in smaller batches"
            ),
        }
    }
}

impl std::error::Error for SendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SendError::Invalid { error, .. } => Some(error),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
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
        let cases = [
            ("[1,2]", "an array"),
            (r#""hi""#, "a string"),
            ("42", "a number"),
            ("null", "null"),
            ("true", "a boolean"),
        ];
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
        let wire =
            Outbound::binary("c-1", BinaryMessage::new("r", Bytes::new())).wait_for_ack(true).into_wire().unwrap();
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
            OutboundError::InvalidBinary(FrameError::Truncated {
                len: 4,
                missing: FramePart::MessageIdLength,
                needed: 5
            })
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
        let report =
            SendReport::from_ack(ack(false, vec![failure(3, "c-9", "gone"), failure(u32::MAX, "", "")]), &sent);
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

        let report =
            SendReport::from_ack(ack(false, vec![failure(0, "c-1", "first"), failure(0, "c-1", "second")]), &sent);
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
        sent.push(
            Outbound::text("c-4", "x").inform_clients_on_loss(["c-5", "", "c-6"]).caller("c-0").into_wire().unwrap(),
        );
        let kept = SentBatch::new("corr-1", &sent);
        assert_eq!((kept.correlation_id(), kept.len()), ("corr-1".to_owned(), 4));
        assert_eq!(kept.to_wire(), sent);

        // Small payloads are copied, until the copies add up to the limit;
        // larger ones are shared.
        let sizes = [SentBatch::COPIED_PAYLOAD, SentBatch::COPIED_PAYLOAD + 1, 0];
        let mut sent: Vec<_> = sizes
            .iter()
            .chain(
                [SentBatch::COPIED_PAYLOAD].iter().cycle().take(SentBatch::COPIED_PAYLOADS / SentBatch::COPIED_PAYLOAD),
            )
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
}
