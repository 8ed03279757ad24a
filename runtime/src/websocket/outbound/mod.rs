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

use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use celerity_proto::v1 as pb;
use serde::Serialize;

use super::frame::{self, BinaryMessage, FrameError};

mod ack_payload;
mod report;

pub(crate) use report::SentBatch;
pub use report::{AckAnomaly, Failure, SendError, SendReport};

use ack_payload::{add_ack_request, json_message_id};

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

#[cfg(test)]
mod tests;
