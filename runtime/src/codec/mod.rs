//! How frames cross the event stream.
//!
//! What this process sends is encoded as prost encodes it, as tonic's
//! generated client would, but for the `bytes` fields of answers and
//! WebSocket messages ([`outbound`]), and for the answers of the SDK's own
//! HTTP answer types, which are written from what they are
//! ([`crate::reply`]). What it receives is taken off the stream whole and only
//! then decoded: tonic's own codec ends the stream on the first frame that
//! does not decode, taking every event in flight with it, whereas the
//! stream's framing (a length before each frame) is intact and the frames
//! after it can still be read. So an undecodable frame is handed on with its
//! bytes, for the session to answer or log, and the stream goes on.
//!
//! A frame over the size limit is different: tonic refuses it from its
//! header, before reading it, and cannot skip its body. [`oversized`] tells
//! that refusal apart from the stream failing.

use bytes::{Buf, Bytes};
use celerity_proto::v1::{self as pb, HandlerMessage, RuntimeMessage, runtime_message};
use prost::Message as _;
use tokio_stream::wrappers::ReceiverStream;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::Channel;
use tonic::{Code, Status, Streaming};

use crate::reply::HttpResult;
use crate::session::Event;

mod outbound;

/// A frame this process sends.
#[derive(Debug)]
pub(crate) enum Outgoing {
    /// In the protocol's form.
    Message(HandlerMessage),
    /// A `Result` answering with an HTTP response of the SDK's own.
    Http(HttpResult),
}

/// The protocol's one method.
const SERVICE: &str = "celerity.runtime.v1.HandlerRuntimeService";
const METHOD: &str = "EventStream";
const PATH: &str = "/celerity.runtime.v1.HandlerRuntimeService/EventStream";

/// A frame from the runtime, as it came off the stream.
#[derive(Debug)]
pub(crate) enum Inbound {
    /// It decoded, and is not a `Dispatch`. Boxed as [`crate::session::Input::Frame`] is.
    Frame(Box<RuntimeMessage>),
    /// A `Dispatch`, its head decoded and its source left for the handler's
    /// task (see [`Event`]).
    Dispatch(Event),
    /// It did not: its bytes, and why.
    Undecodable {
        /// The frame, as it arrived.
        frame: Bytes,
        /// The decoder's error, naming the field.
        error: prost::DecodeError,
    },
}

/// Opens the event stream on `channel`, sending what `outbound` yields. A
/// frame of either direction may be at most `max_message_bytes` long.
pub(crate) async fn open(
    channel: Channel,
    outbound: ReceiverStream<Outgoing>,
    max_message_bytes: usize,
) -> Result<Streaming<Inbound>, Status> {
    let mut grpc = tonic::client::Grpc::new(channel)
        .max_decoding_message_size(max_message_bytes)
        .max_encoding_message_size(max_message_bytes);
    grpc.ready().await.map_err(|error| Status::unavailable(format!("the connection is not ready: {error}")))?;
    let mut request = tonic::Request::new(outbound);
    request.extensions_mut().insert(tonic::GrpcMethod::new(SERVICE, METHOD));
    let response = grpc.streaming(request, PathAndQuery::from_static(PATH), FrameCodec).await?;
    Ok(response.into_inner())
}

/// The sizes in tonic's refusal of a frame over the decoding limit, when
/// that is what `status` is: `(the frame's length, the limit)`.
pub(crate) fn oversized(status: &Status) -> Option<(usize, usize)> {
    if status.code() != Code::OutOfRange {
        return None;
    }
    // tonic 0.14's wording, from `codec/decode.rs`.
    let rest = status.message().strip_prefix("Error, decoded message length too large: found ")?;
    let (bytes, rest) = rest.split_once(" bytes, the limit is: ")?;
    let limit = rest.strip_suffix(" bytes")?;
    Some((bytes.parse().ok()?, limit.parse().ok()?))
}

/// Handler frames out, runtime frames in (see the module docs).
struct FrameCodec;

impl Codec for FrameCodec {
    type Encode = Outgoing;
    type Decode = Inbound;
    type Encoder = FrameEncoder;
    type Decoder = FrameDecoder;

    fn encoder(&mut self) -> FrameEncoder {
        FrameEncoder
    }

    fn decoder(&mut self) -> FrameDecoder {
        FrameDecoder
    }
}

struct FrameEncoder;

impl Encoder for FrameEncoder {
    type Item = Outgoing;
    type Error = Status;

    fn encode(&mut self, item: Outgoing, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        // The buffer grows as needed: `encode` would only measure the
        // message a second time to check that it fits.
        match &item {
            Outgoing::Message(message) => outbound::encode(message, buf),
            Outgoing::Http(result) => result.encode(buf),
        }
        Ok(())
    }
}

struct FrameDecoder;

impl Decoder for FrameDecoder {
    type Item = Inbound;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<Inbound>, Status> {
        // A slice of the receive buffer, not a copy: the fields of type
        // `bytes` decoded from it share it too, as they do under tonic's
        // own codec.
        let frame = buf.copy_to_bytes(buf.remaining());
        Ok(Some(match Frame::decode(frame.clone()) {
            Ok(Frame { frame: None }) => Inbound::Frame(Box::default()),
            Ok(Frame { frame: Some(kind) }) => kind.into_inbound(),
            Err(error) => Inbound::Undecodable { frame, error },
        }))
    }
}

/// `RuntimeMessage` as this process decodes it: field for field the same,
/// but for a `Dispatch`, which is an [`Event`].
#[derive(Clone, PartialEq, prost::Message)]
struct Frame {
    #[prost(oneof = "Kind", tags = "1, 2, 3, 4, 5, 6")]
    frame: Option<Kind>,
}

/// `RuntimeMessage.frame`, with [`Event`] for `Dispatch`.
#[derive(Clone, PartialEq, prost::Oneof)]
enum Kind {
    #[prost(message, tag = "1")]
    Config(pb::RuntimeConfig),
    #[prost(message, tag = "2")]
    ReadyAck(pb::ReadyAck),
    #[prost(message, tag = "3")]
    Dispatch(Event),
    #[prost(message, tag = "4")]
    Cancel(pb::Cancel),
    #[prost(message, tag = "5")]
    Drain(pb::Drain),
    #[prost(message, tag = "6")]
    WsAck(pb::WsSendAck),
}

impl Kind {
    /// The frame, as the session takes it.
    fn into_inbound(self) -> Inbound {
        let frame = match self {
            Kind::Config(config) => runtime_message::Frame::Config(config),
            Kind::ReadyAck(ack) => runtime_message::Frame::ReadyAck(ack),
            Kind::Dispatch(event) => return Inbound::Dispatch(event),
            Kind::Cancel(cancel) => runtime_message::Frame::Cancel(cancel),
            Kind::Drain(drain) => runtime_message::Frame::Drain(drain),
            Kind::WsAck(ack) => runtime_message::Frame::WsAck(ack),
        };
        Inbound::Frame(Box::new(RuntimeMessage { frame: Some(frame) }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_size_refusal_is_read_and_nothing_else_is() {
        let refusal = Status::out_of_range(
            "Error, decoded message length too large: found 2097190 bytes, the limit is: 1048576 bytes",
        );
        assert_eq!(oversized(&refusal), Some((2_097_190, 1_048_576)));
        assert_eq!(oversized(&Status::out_of_range("something else")), None);
        let other_code =
            Status::internal("Error, decoded message length too large: found 2 bytes, the limit is: 1 bytes");
        assert_eq!(oversized(&other_code), None);
    }
}
