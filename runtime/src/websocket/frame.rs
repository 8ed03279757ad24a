//! The Celerity Binary Message Format: how a binary WebSocket message names
//! its route, its id and whether its receiver must acknowledge it.
//!
//! ```text
//! <routeLength: u8><route: UTF-8><requireAck: u8, 0 or 1><messageIdLength: u8><messageId: UTF-8><payload: rest>
//! ```
//!
//! A Celerity client reads every binary frame that is not a reserved one as a
//! framed message, and the runtime passes a handler's binary message to the
//! socket exactly as given. A payload sent unframed is therefore not an
//! error anyone reports: the client reads its first bytes as a route and an id
//! and hands the application the rest under a route nothing serves. Worse,
//! the runtime does not always check, and some malformed frames crash its
//! parser. So the SDK validates every binary message it sends with the same
//! decoder it would read one with ([`encode`] refuses exactly what [`decode`]
//! refuses), and never sends a frame it cannot decode itself.
//!
//! The rules, each of which has its own [`FrameError`]:
//!
//! - a frame has at least 4 bytes;
//! - the route is 1 to 255 bytes of UTF-8, and does not start with a byte
//!   from `0x01` to `0x05`: those open the [reserved frames](ReservedFrame);
//! - `requireAck` is 0 or 1;
//! - the message id is 0 to 255 bytes of UTF-8, and is not empty where
//!   `requireAck` is 1;
//! - the frame holds every byte its header declares.
//!
//! ```
//! use celerity::Bytes;
//! use celerity::websocket::frame::{self, BinaryMessage};
//!
//! let message = BinaryMessage::new("orders", Bytes::from_static(&[0xde, 0xad]))
//!     .with_message_id("m-1")
//!     .with_require_ack(true);
//! let bytes = frame::encode(&message).unwrap();
//! assert_eq!(&bytes[..], b"\x06orders\x01\x03m-1\xde\xad");
//! assert_eq!(frame::decode(bytes).unwrap(), message);
//! ```

use std::fmt;

use bytes::{BufMut, Bytes, BytesMut};

/// The longest route a frame can carry, in bytes.
pub const MAX_ROUTE_LEN: usize = 255;

/// The longest message id a frame can carry, in bytes.
pub const MAX_MESSAGE_ID_LEN: usize = 255;

/// The shortest valid frame: a one-byte route, `requireAck` and an empty id.
pub const MIN_FRAME_LEN: usize = 4;

/// One binary message in the Celerity Binary Message Format.
///
/// The fields are public so a message can be built and taken apart freely;
/// the rules are checked where it meets the wire, by [`encode`] and
/// [`decode`]. Route and id are small and owned; the payload is a [`Bytes`],
/// which [`decode`] slices out of the frame rather than copying.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct BinaryMessage {
    /// The route the message is for: 1 to 255 bytes, not starting with a
    /// byte from `0x01` to `0x05`.
    pub route: String,
    /// The message's id, 0 to 255 bytes; empty for a message without one.
    pub message_id: String,
    /// Whether the receiver must acknowledge the message. Needs a non-empty
    /// [`message_id`](Self::message_id), since the acknowledgement names it.
    pub require_ack: bool,
    /// Everything after the header, as is.
    pub payload: Bytes,
}

impl BinaryMessage {
    /// A message on `route` carrying `payload`, with no id and no
    /// acknowledgement asked for.
    pub fn new(route: impl Into<String>, payload: impl Into<Bytes>) -> Self {
        BinaryMessage { route: route.into(), message_id: String::new(), require_ack: false, payload: payload.into() }
    }

    /// Sets the message id.
    pub fn with_message_id(mut self, message_id: impl Into<String>) -> Self {
        self.message_id = message_id.into();
        self
    }

    /// Sets whether the receiver must acknowledge the message.
    pub fn with_require_ack(mut self, require_ack: bool) -> Self {
        self.require_ack = require_ack;
        self
    }

    /// The length of the encoded frame, header and payload.
    pub fn encoded_len(&self) -> usize {
        3 + self.route.len() + self.message_id.len() + self.payload.len()
    }

    /// Checks the message against every rule of the format without encoding
    /// it.
    pub fn validate(&self) -> Result<(), FrameError> {
        check_route(self.route.as_bytes())?;
        let id_len = self.message_id.len();
        if id_len > MAX_MESSAGE_ID_LEN {
            return Err(FrameError::MessageIdLength { len: id_len });
        }
        if self.require_ack && id_len == 0 {
            return Err(FrameError::AckWithoutMessageId);
        }
        Ok(())
    }
}

/// The frames a Celerity client and runtime exchange for their own purposes.
///
/// Each is `01 <kind> 00 00`, optionally followed by a body: a frame that, read
/// as a message, has the one-byte route `<kind>`. That is why no route may
/// start with a byte from `0x01` to `0x05`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReservedFrame {
    /// `01 01 00 00`: heartbeat from the client.
    Ping,
    /// `01 02 00 00`: heartbeat answer.
    Pong,
    /// `01 03 00 00`: a message was lost; JSON body `{"messageId", "caller"}`.
    LostMessage,
    /// `01 04 00 00`: a message was acknowledged; JSON body
    /// `{"messageId", "timestamp"}`.
    Ack,
    /// `01 05 00 00`: capability negotiation.
    Capabilities,
}

impl ReservedFrame {
    /// The reserved frame a route's first byte opens, if it opens one.
    pub fn from_byte(byte: u8) -> Option<ReservedFrame> {
        match byte {
            0x01 => Some(ReservedFrame::Ping),
            0x02 => Some(ReservedFrame::Pong),
            0x03 => Some(ReservedFrame::LostMessage),
            0x04 => Some(ReservedFrame::Ack),
            0x05 => Some(ReservedFrame::Capabilities),
            _ => None,
        }
    }

    /// The byte that identifies this frame (its one-byte "route").
    pub fn byte(self) -> u8 {
        match self {
            ReservedFrame::Ping => 0x01,
            ReservedFrame::Pong => 0x02,
            ReservedFrame::LostMessage => 0x03,
            ReservedFrame::Ack => 0x04,
            ReservedFrame::Capabilities => 0x05,
        }
    }

    /// The four bytes this frame starts with.
    pub fn header(self) -> [u8; 4] {
        [0x01, self.byte(), 0x00, 0x00]
    }

    /// The frame's name, as used in messages: `ping`, `pong`, `lost message`,
    /// `ack`, `capabilities`.
    pub fn name(self) -> &'static str {
        match self {
            ReservedFrame::Ping => "ping",
            ReservedFrame::Pong => "pong",
            ReservedFrame::LostMessage => "lost message",
            ReservedFrame::Ack => "ack",
            ReservedFrame::Capabilities => "capabilities",
        }
    }
}

impl fmt::Display for ReservedFrame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A part of a frame's header, for naming where a truncated frame ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FramePart {
    /// The route bytes.
    Route,
    /// The `requireAck` byte.
    RequireAck,
    /// The `messageIdLength` byte.
    MessageIdLength,
    /// The message id bytes.
    MessageId,
}

impl fmt::Display for FramePart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FramePart::Route => "route",
            FramePart::RequireAck => "requireAck byte",
            FramePart::MessageIdLength => "message id length",
            FramePart::MessageId => "message id",
        })
    }
}

/// Why a message is not in the Celerity Binary Message Format.
///
/// Each variant is one rule of the format, and its message names the rule,
/// such as "route is 300 bytes; the binary message format allows 1 to 255".
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrameError {
    /// The frame is shorter than [`MIN_FRAME_LEN`].
    TooShort {
        /// The frame's length.
        len: usize,
    },
    /// The route is empty or longer than [`MAX_ROUTE_LEN`].
    RouteLength {
        /// The route's length in bytes.
        len: usize,
    },
    /// The route starts with a byte from `0x01` to `0x05`. Decoding, this is
    /// a reserved frame rather than a message; encoding, a route that a
    /// client would take for one.
    Reserved(ReservedFrame),
    /// The route is not valid UTF-8.
    RouteNotUtf8,
    /// The `requireAck` byte is neither 0 nor 1.
    RequireAckFlag {
        /// The byte found.
        value: u8,
    },
    /// The message id is longer than [`MAX_MESSAGE_ID_LEN`].
    MessageIdLength {
        /// The id's length in bytes.
        len: usize,
    },
    /// The message id is not valid UTF-8.
    MessageIdNotUtf8,
    /// `requireAck` is 1 but the message id is empty.
    AckWithoutMessageId,
    /// The frame ends before the header it declares does.
    Truncated {
        /// The frame's length.
        len: usize,
        /// The first part of the header the frame does not hold in full.
        missing: FramePart,
        /// The length the frame needs to hold that part.
        needed: usize,
    },
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::TooShort { len } => {
                write!(f, "frame is {len} bytes; the binary message format needs at least {MIN_FRAME_LEN}")
            }
            FrameError::RouteLength { len } => {
                write!(f, "route is {len} bytes; the binary message format allows 1 to {MAX_ROUTE_LEN}")
            }
            FrameError::Reserved(kind) => write!(
                f,
                "route starts with byte {:#04x}, which opens the reserved {kind} frame; \
                 the binary message format does not allow a route to start with 0x01 to 0x05",
                kind.byte()
            ),
            FrameError::RouteNotUtf8 => f.write_str("route is not valid UTF-8; the binary message format requires it"),
            FrameError::RequireAckFlag { value } => {
                write!(f, "requireAck byte is {value:#04x}; the binary message format allows only 0 or 1")
            }
            FrameError::MessageIdLength { len } => {
                write!(f, "message id is {len} bytes; the binary message format allows 0 to {MAX_MESSAGE_ID_LEN}")
            }
            FrameError::MessageIdNotUtf8 => {
                f.write_str("message id is not valid UTF-8; the binary message format requires it")
            }
            FrameError::AckWithoutMessageId => f.write_str(
                "requireAck is 1 but the message id is empty; \
                 the binary message format needs an id for the receiver to acknowledge",
            ),
            FrameError::Truncated { len, missing, needed } => write!(
                f,
                "frame is {len} bytes and ends inside its {missing}; the header it declares needs at least {needed}"
            ),
        }
    }
}

impl std::error::Error for FrameError {}

/// Encodes a message as a frame, after checking it against every rule.
///
/// A message [`decode`] would refuse is refused here with the same error, so
/// a frame this returns always decodes back to `message`.
pub fn encode(message: &BinaryMessage) -> Result<Bytes, FrameError> {
    message.validate()?;
    let mut frame = BytesMut::with_capacity(message.encoded_len());
    // Both lengths fit in a byte: validate checked them.
    frame.put_u8(message.route.len() as u8);
    frame.put_slice(message.route.as_bytes());
    frame.put_u8(u8::from(message.require_ack));
    frame.put_u8(message.message_id.len() as u8);
    frame.put_slice(message.message_id.as_bytes());
    frame.put_slice(&message.payload);
    Ok(frame.freeze())
}

/// Decodes a frame, checking every rule. The payload is a slice of `frame`,
/// not a copy.
///
/// Never panics, whatever the input. A frame whose route starts with a byte
/// from `0x01` to `0x05` is reported as [`FrameError::Reserved`] with the
/// reserved frame it is, rather than as a message.
pub fn decode(frame: Bytes) -> Result<BinaryMessage, FrameError> {
    let header = parse(&frame)?;
    Ok(BinaryMessage {
        route: header.route.to_owned(),
        message_id: header.message_id.to_owned(),
        require_ack: header.require_ack,
        payload: frame.slice(header.len..),
    })
}

/// Decodes a frame from borrowed bytes, copying its payload. See [`decode`].
pub fn decode_slice(frame: &[u8]) -> Result<BinaryMessage, FrameError> {
    let header = parse(frame)?;
    Ok(BinaryMessage {
        route: header.route.to_owned(),
        message_id: header.message_id.to_owned(),
        require_ack: header.require_ack,
        payload: Bytes::copy_from_slice(&frame[header.len..]),
    })
}

/// A frame's header, borrowed from the frame.
struct Header<'a> {
    route: &'a str,
    require_ack: bool,
    message_id: &'a str,
    /// Where the payload starts.
    len: usize,
}

/// The checks that apply to a route wherever it comes from.
fn check_route(route: &[u8]) -> Result<(), FrameError> {
    if route.is_empty() || route.len() > MAX_ROUTE_LEN {
        return Err(FrameError::RouteLength { len: route.len() });
    }
    if let Some(kind) = ReservedFrame::from_byte(route[0]) {
        return Err(FrameError::Reserved(kind));
    }
    Ok(())
}

/// Reads and checks a frame's header. Every index is bounds-checked with
/// `get`, so no input can make this panic.
fn parse(frame: &[u8]) -> Result<Header<'_>, FrameError> {
    let len = frame.len();
    if len < MIN_FRAME_LEN {
        return Err(FrameError::TooShort { len });
    }
    let route_len = usize::from(frame[0]);
    if route_len == 0 {
        return Err(FrameError::RouteLength { len: 0 });
    }
    // Checked before the rest of the header, so a reserved frame is named as
    // one whatever its body holds, rather than as a garbled message.
    if let Some(kind) = ReservedFrame::from_byte(frame[1]) {
        return Err(FrameError::Reserved(kind));
    }

    let route_end = 1 + route_len;
    let route =
        frame.get(1..route_end).ok_or(FrameError::Truncated { len, missing: FramePart::Route, needed: route_end })?;
    let route = std::str::from_utf8(route).map_err(|_| FrameError::RouteNotUtf8)?;

    let require_ack = match frame.get(route_end) {
        Some(0) => false,
        Some(1) => true,
        Some(&value) => return Err(FrameError::RequireAckFlag { value }),
        None => return Err(FrameError::Truncated { len, missing: FramePart::RequireAck, needed: route_end + 1 }),
    };

    let id_len_at = route_end + 1;
    let id_len = match frame.get(id_len_at) {
        Some(&n) => usize::from(n),
        None => {
            return Err(FrameError::Truncated { len, missing: FramePart::MessageIdLength, needed: id_len_at + 1 });
        }
    };
    let id_start = id_len_at + 1;
    let id_end = id_start + id_len;
    let message_id = frame.get(id_start..id_end).ok_or(FrameError::Truncated {
        len,
        missing: FramePart::MessageId,
        needed: id_end,
    })?;
    let message_id = std::str::from_utf8(message_id).map_err(|_| FrameError::MessageIdNotUtf8)?;
    if require_ack && message_id.is_empty() {
        return Err(FrameError::AckWithoutMessageId);
    }

    Ok(Header { route, require_ack, message_id, len: id_end })
}

/// What must hold for any input to the decoder, written over plain bytes so
/// the fuzz target (`fuzz/`) and the property tests below run the same
/// checks: [`decode`] and [`decode_slice`] agree, and whatever decodes is
/// valid and is exactly the frame [`encode`] would produce from it. Panics
/// when one does not hold.
#[doc(hidden)]
pub fn decode_invariants(data: &[u8]) {
    let owned = decode(Bytes::copy_from_slice(data));
    assert_eq!(owned, decode_slice(data));
    match owned {
        Ok(message) => {
            assert_eq!(message.validate(), Ok(()));
            let encoded = encode(&message).expect("a decoded frame encodes");
            assert_eq!(&encoded[..], data, "a decoded frame encodes back to itself");
            assert_eq!(message.encoded_len(), data.len());
        }
        Err(error) => assert!(!error.to_string().is_empty()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The contract's vector: route `orders`, id `m-1`, requireAck 1,
    /// payload `de ad`.
    const VECTOR_BASE64: &str = "Bm9yZGVycwEDbS0x3q0=";

    /// Standard base64 (with padding), just enough for test vectors.
    fn base64_decode(text: &str) -> Vec<u8> {
        const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = Vec::new();
        let (mut acc, mut bits) = (0u32, 0u32);
        for c in text.bytes().filter(|&c| c != b'=') {
            let value = ALPHABET.iter().position(|&a| a == c).expect("base64 character") as u32;
            acc = (acc << 6) | value;
            bits += 6;
            if bits >= 8 {
                bits -= 8;
                out.push((acc >> bits) as u8);
                acc &= (1 << bits) - 1;
            }
        }
        out
    }

    fn vector_message() -> BinaryMessage {
        BinaryMessage::new("orders", Bytes::from_static(&[0xde, 0xad])).with_message_id("m-1").with_require_ack(true)
    }

    #[test]
    fn base64_helper_decodes_known_text() {
        assert_eq!(base64_decode("aGVsbG8="), b"hello");
        assert_eq!(base64_decode("aGk="), b"hi");
        assert_eq!(base64_decode("YWJj"), b"abc");
    }

    #[test]
    fn encodes_the_contract_vector() {
        let expected = base64_decode(VECTOR_BASE64);
        assert_eq!(expected, b"\x06orders\x01\x03m-1\xde\xad");
        assert_eq!(&encode(&vector_message()).unwrap()[..], &expected[..]);
        assert_eq!(vector_message().encoded_len(), expected.len());
    }

    #[test]
    fn decodes_the_contract_vector() {
        let frame = Bytes::from(base64_decode(VECTOR_BASE64));
        assert_eq!(decode(frame.clone()).unwrap(), vector_message());
        assert_eq!(decode_slice(&frame).unwrap(), vector_message());
    }

    #[test]
    fn decode_slices_the_payload_out_of_the_frame() {
        let frame = encode(&vector_message()).unwrap();
        let message = decode(frame.clone()).unwrap();
        // The payload points into the frame's own buffer: no copy was made.
        assert_eq!(message.payload.as_ptr(), frame[frame.len() - 2..].as_ptr());
    }

    #[test]
    fn a_message_without_an_id_has_zero_ack_and_id_length() {
        let frame = encode(&BinaryMessage::new("a", Bytes::new())).unwrap();
        assert_eq!(&frame[..], &[0x01, b'a', 0x00, 0x00]);
        assert_eq!(frame.len(), MIN_FRAME_LEN);
        assert_eq!(decode(frame).unwrap(), BinaryMessage::new("a", Bytes::new()));
    }

    #[test]
    fn an_id_without_require_ack_is_allowed() {
        let message = BinaryMessage::new("r", Bytes::from_static(b"x")).with_message_id("id");
        assert_eq!(decode(encode(&message).unwrap()).unwrap(), message);
    }

    #[test]
    fn frames_shorter_than_four_bytes_are_refused() {
        for frame in [&[][..], &[0x01], &[0x01, b'a'], &[0x01, b'a', 0x00]] {
            assert_eq!(decode_slice(frame), Err(FrameError::TooShort { len: frame.len() }));
        }
        assert_eq!(
            FrameError::TooShort { len: 3 }.to_string(),
            "frame is 3 bytes; the binary message format needs at least 4"
        );
    }

    #[test]
    fn route_length_must_be_1_to_255() {
        assert_eq!(encode(&BinaryMessage::new("", Bytes::new())), Err(FrameError::RouteLength { len: 0 }));
        assert_eq!(decode_slice(&[0x00, 0x00, 0x00, 0x00]), Err(FrameError::RouteLength { len: 0 }));

        let error = encode(&BinaryMessage::new("r".repeat(300), Bytes::new())).unwrap_err();
        assert_eq!(error, FrameError::RouteLength { len: 300 });
        assert_eq!(error.to_string(), "route is 300 bytes; the binary message format allows 1 to 255");

        assert_eq!(
            encode(&BinaryMessage::new("r".repeat(256), Bytes::new())),
            Err(FrameError::RouteLength { len: 256 })
        );
        let longest = BinaryMessage::new("r".repeat(255), Bytes::from_static(b"p"));
        assert_eq!(decode(encode(&longest).unwrap()).unwrap(), longest);
    }

    #[test]
    fn route_must_be_utf8() {
        let error = decode_slice(&[0x02, 0xff, 0xfe, 0x00, 0x00]).unwrap_err();
        assert_eq!(error, FrameError::RouteNotUtf8);
        assert_eq!(error.to_string(), "route is not valid UTF-8; the binary message format requires it");
        // A multi-byte character cut by the route length is invalid too.
        assert_eq!(decode_slice(&[0x01, 0xc3, 0xa9, 0x00, 0x00]), Err(FrameError::RouteNotUtf8));
        let accented = BinaryMessage::new("é", Bytes::new());
        assert_eq!(decode(encode(&accented).unwrap()).unwrap(), accented);
    }

    #[test]
    fn reserved_frames_are_recognised_on_decode() {
        let kinds = [
            ReservedFrame::Ping,
            ReservedFrame::Pong,
            ReservedFrame::LostMessage,
            ReservedFrame::Ack,
            ReservedFrame::Capabilities,
        ];
        for kind in kinds {
            assert_eq!(ReservedFrame::from_byte(kind.byte()), Some(kind));
            assert_eq!(decode_slice(&kind.header()), Err(FrameError::Reserved(kind)));
            // With a body, as the lost message and ack frames carry.
            let mut with_body = kind.header().to_vec();
            with_body.extend_from_slice(br#"{"messageId":"m-1"}"#);
            assert_eq!(decode_slice(&with_body), Err(FrameError::Reserved(kind)));
        }
        assert_eq!(ReservedFrame::from_byte(0x00), None);
        assert_eq!(ReservedFrame::from_byte(0x06), None);
        assert_eq!(
            decode_slice(&[0x01, 0x03, 0x00, 0x00]).unwrap_err().to_string(),
            "route starts with byte 0x03, which opens the reserved lost message frame; \
             the binary message format does not allow a route to start with 0x01 to 0x05"
        );
    }

    #[test]
    fn routes_starting_with_a_reserved_byte_are_refused_on_encode() {
        for byte in 0x01..=0x05u8 {
            let route = format!("{}orders", char::from(byte));
            let kind = ReservedFrame::from_byte(byte).unwrap();
            assert_eq!(encode(&BinaryMessage::new(route.clone(), Bytes::new())), Err(FrameError::Reserved(kind)));
            // And the same route, framed by hand, is refused by the decoder.
            let mut frame = vec![route.len() as u8];
            frame.extend_from_slice(route.as_bytes());
            frame.extend_from_slice(&[0, 0]);
            assert_eq!(decode_slice(&frame), Err(FrameError::Reserved(kind)));
        }
        // Only the first byte is reserved.
        let inner = BinaryMessage::new("a\u{1}", Bytes::new());
        assert_eq!(decode(encode(&inner).unwrap()).unwrap(), inner);
        let zero = BinaryMessage::new("\u{0}", Bytes::new());
        assert_eq!(decode(encode(&zero).unwrap()).unwrap(), zero);
    }

    #[test]
    fn require_ack_must_be_0_or_1() {
        let error = decode_slice(&[0x01, b'a', 0x02, 0x00]).unwrap_err();
        assert_eq!(error, FrameError::RequireAckFlag { value: 2 });
        assert_eq!(error.to_string(), "requireAck byte is 0x02; the binary message format allows only 0 or 1");
        assert_eq!(decode_slice(&[0x01, b'a', 0xff, 0x00]), Err(FrameError::RequireAckFlag { value: 0xff }));
    }

    #[test]
    fn message_id_must_be_at_most_255_bytes() {
        let error = encode(&BinaryMessage::new("a", Bytes::new()).with_message_id("i".repeat(256))).unwrap_err();
        assert_eq!(error, FrameError::MessageIdLength { len: 256 });
        assert_eq!(error.to_string(), "message id is 256 bytes; the binary message format allows 0 to 255");
        let longest = BinaryMessage::new("a", Bytes::new()).with_message_id("i".repeat(255)).with_require_ack(true);
        assert_eq!(decode(encode(&longest).unwrap()).unwrap(), longest);
    }

    #[test]
    fn message_id_must_be_utf8() {
        let error = decode_slice(&[0x01, b'a', 0x00, 0x01, 0xff]).unwrap_err();
        assert_eq!(error, FrameError::MessageIdNotUtf8);
        assert_eq!(error.to_string(), "message id is not valid UTF-8; the binary message format requires it");
    }

    #[test]
    fn require_ack_needs_a_message_id() {
        let error = encode(&BinaryMessage::new("a", Bytes::new()).with_require_ack(true)).unwrap_err();
        assert_eq!(error, FrameError::AckWithoutMessageId);
        assert_eq!(decode_slice(&[0x01, b'a', 0x01, 0x00]), Err(FrameError::AckWithoutMessageId));
        assert_eq!(
            error.to_string(),
            "requireAck is 1 but the message id is empty; \
             the binary message format needs an id for the receiver to acknowledge"
        );
    }

    #[test]
    fn the_issues_truncated_frame_is_an_error() {
        // Route "ab", requireAck 0, and then no message id length.
        let error = decode_slice(&[0x02, 0x61, 0x62, 0x00]).unwrap_err();
        assert_eq!(error, FrameError::Truncated { len: 4, missing: FramePart::MessageIdLength, needed: 5 });
        assert_eq!(
            error.to_string(),
            "frame is 4 bytes and ends inside its message id length; the header it declares needs at least 5"
        );
    }

    #[test]
    fn truncated_frames_name_the_missing_part() {
        assert_eq!(
            decode_slice(&[0x05, b'a', b'b', b'c']),
            Err(FrameError::Truncated { len: 4, missing: FramePart::Route, needed: 6 })
        );
        assert_eq!(
            decode_slice(&[0x03, b'a', b'b', b'c']),
            Err(FrameError::Truncated { len: 4, missing: FramePart::RequireAck, needed: 5 })
        );
        assert_eq!(
            decode_slice(&[0x01, b'a', 0x01, 0x03, b'm']),
            Err(FrameError::Truncated { len: 5, missing: FramePart::MessageId, needed: 7 })
        );
    }

    #[test]
    fn every_truncation_of_a_valid_frame_is_handled() {
        let message = vector_message();
        let frame = encode(&message).unwrap();
        let header_len = frame.len() - message.payload.len();
        for n in 0..=frame.len() {
            let result = decode(frame.slice(..n));
            if n < header_len {
                // Cut inside the header: refused, never a shorter message.
                assert!(result.is_err(), "prefix of {n} bytes decoded: {result:?}");
            } else {
                // Cut inside the payload: a valid frame with less payload.
                let decoded = result.unwrap();
                assert_eq!(decoded.route, message.route);
                assert_eq!(decoded.message_id, message.message_id);
                assert_eq!(decoded.payload, frame.slice(header_len..n));
            }
        }
    }

    /// Routes that are valid: 1 to 255 bytes, not starting with 0x01..=0x05.
    /// Up to 63 characters of up to 4 bytes stay under 255 bytes; the second
    /// arm reaches the limit.
    fn valid_route() -> impl Strategy<Value = String> {
        prop_oneof!["(?s).{1,63}", "[a-z]{250,255}"].prop_filter("reserved first byte", |route: &String| {
            ReservedFrame::from_byte(route.as_bytes()[0]).is_none()
        })
    }

    /// Messages that satisfy every rule of the format.
    fn valid_message() -> impl Strategy<Value = BinaryMessage> {
        (
            valid_route(),
            prop_oneof!["(?s).{0,63}", "[0-9]{255}"],
            any::<bool>(),
            proptest::collection::vec(any::<u8>(), 0..300),
        )
            .prop_map(|(route, message_id, ack, payload)| {
                let require_ack = ack && !message_id.is_empty();
                BinaryMessage { route, message_id, require_ack, payload: Bytes::from(payload) }
            })
    }

    /// Valid frames with one byte overwritten or the frame cut short: inputs
    /// that get past the first checks, which random bytes rarely do.
    fn mutated_frame() -> impl Strategy<Value = Vec<u8>> {
        (valid_message(), any::<prop::sample::Index>(), any::<u8>(), any::<prop::sample::Index>(), any::<bool>())
            .prop_map(|(message, at, byte, cut, overwrite)| {
                let mut frame = encode(&message).unwrap().to_vec();
                if overwrite {
                    let at = at.index(frame.len());
                    frame[at] = byte;
                } else {
                    frame.truncate(cut.index(frame.len() + 1));
                }
                frame
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn encode_then_decode_is_identity(message in valid_message()) {
            let frame = encode(&message).unwrap();
            prop_assert_eq!(frame.len(), message.encoded_len());
            prop_assert_eq!(decode(frame).unwrap(), message);
        }

        #[test]
        fn decode_never_panics_on_arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..600)) {
            decode_invariants(&data);
        }

        #[test]
        fn decode_never_panics_on_mutated_frames(data in mutated_frame()) {
            decode_invariants(&data);
        }
    }
}
