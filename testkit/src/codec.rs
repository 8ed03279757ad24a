//! How the kit's runtime encodes what it sends and decodes what it reads.
//!
//! Frames it sends are either messages, encoded by prost as tonic's
//! generated server would encode them, or bytes sent as they are: a frame
//! no encoder of `RuntimeMessage` would produce (a string that is not
//! UTF-8, a message cut short), to see what a handler makes of it. Frames
//! it reads are decoded by prost, as the generated server decodes them.
//!
//! It is apart from the SDK's own codec (`celerity`'s frame codec, which
//! writes answers with encoders of its own and decodes a `Dispatch` lazily)
//! on purpose: it is the oracle those are held against. A handler's frame
//! that this decoder, prost's generated one, does not read as the SDK meant
//! is a fault of the SDK's encoder, which sharing the code would hide.

use bytes::{BufMut, Bytes};
use celerity_proto::prost::Message as _;
use celerity_proto::v1::{HandlerMessage, RuntimeMessage};
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

/// One frame the runtime side sends.
// Large only for the message, which is moved once, to the encoder; boxing
// it would cost an allocation per frame on the load generator's path.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    /// A message, encoded.
    Message(RuntimeMessage),
    /// Bytes sent as one frame, exactly as given.
    Bytes(Bytes),
}

impl From<RuntimeMessage> for Outgoing {
    fn from(message: RuntimeMessage) -> Self {
        Outgoing::Message(message)
    }
}

/// Runtime frames out, handler frames in.
pub(crate) struct KitCodec;

impl Codec for KitCodec {
    type Encode = Outgoing;
    type Decode = HandlerMessage;
    type Encoder = OutgoingEncoder;
    type Decoder = HandlerDecoder;

    fn encoder(&mut self) -> OutgoingEncoder {
        OutgoingEncoder
    }

    fn decoder(&mut self) -> HandlerDecoder {
        HandlerDecoder
    }
}

/// What a frame the runtime side sends travels as.
pub(crate) type Frame = Result<Outgoing, Status>;

pub(crate) struct OutgoingEncoder;

impl Encoder for OutgoingEncoder {
    type Item = Outgoing;
    type Error = Status;

    #[inline(always)]
    fn encode(&mut self, item: Outgoing, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        match item {
            // The buffer grows as needed: `encode` would only measure the
            // message a second time to check that it fits.
            Outgoing::Message(message) => message.encode_raw(buf),
            Outgoing::Bytes(bytes) => put_bytes(bytes, buf),
        }
        Ok(())
    }
}

/// Kept out of line: the hot path encodes messages.
#[cold]
fn put_bytes(bytes: Bytes, buf: &mut EncodeBuf<'_>) {
    buf.put(bytes);
}

pub(crate) struct HandlerDecoder;

impl Decoder for HandlerDecoder {
    type Item = HandlerMessage;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<HandlerMessage>, Status> {
        // As tonic's own prost codec answers a frame that does not decode.
        HandlerMessage::decode(buf).map(Some).map_err(|error| Status::internal(error.to_string()))
    }
}
