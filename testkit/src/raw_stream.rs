//! One handler stream of the raw mode, and its sending half: what
//! [`RawRuntime`](crate::RawRuntime) hands out as each stream opens.

use std::time::Duration;

use bytes::Bytes;
use celerity_proto::v1::{
    HandlerMessage, Ready, ReadyAck, RuntimeConfig, RuntimeMessage, handler_message, runtime_message,
};
use tokio::sync::mpsc;
use tonic::{Status, Streaming};

use crate::codec::{Frame, Outgoing};
use crate::error::{Error, StreamEnd};
use crate::settings::DEFAULT_READY_TIMEOUT;

/// One handler stream, as the transport gave it.
///
/// The two halves are fields, so that a test can read in one task and send
/// in another, or drop either half on its own: dropping `outbound` (every
/// clone of it) ends the runtime's side of the stream cleanly.
#[derive(Debug)]
pub struct RawStream {
    /// What the handler sends, read with [`Streaming::message`] (or
    /// [`RawStream::next_message`]); nothing is read unless the test reads
    /// it.
    pub inbound: Streaming<HandlerMessage>,
    /// What the runtime side sends.
    pub outbound: RawSender,
}

impl RawStream {
    pub(crate) fn new(inbound: Streaming<HandlerMessage>, outbound: mpsc::Sender<Frame>) -> Self {
        RawStream { inbound, outbound: RawSender { tx: outbound } }
    }

    /// The handler's next frame: `Ok(None)` once it ended its stream.
    pub async fn next_message(&mut self) -> Result<Option<HandlerMessage>, Status> {
        self.inbound.message().await
    }

    /// Reads the handler's first frame, which must be `Ready`, waiting at
    /// most `timeout`. Sends nothing.
    pub async fn read_ready(&mut self, timeout: Duration) -> Result<Ready, Error> {
        match tokio::time::timeout(timeout, self.inbound.message()).await {
            Err(_) => Err(Error::ReadyTimeout(timeout)),
            Ok(Ok(None)) => Err(Error::ClosedBeforeReady(StreamEnd::Clean)),
            Ok(Err(status)) => Err(Error::ClosedBeforeReady(StreamEnd::from_status(&status))),
            Ok(Ok(Some(HandlerMessage { frame: Some(handler_message::Frame::Ready(ready)) }))) => Ok(ready),
            Ok(Ok(Some(other))) => Err(Error::UnexpectedFirstFrame(Box::new(other))),
        }
    }

    /// The handshake, without the runtime's checks: sends `config`, reads
    /// `Ready` (within [`DEFAULT_READY_TIMEOUT`]) and accepts it whatever
    /// it declares. Returns the `Ready`.
    pub async fn handshake(&mut self, config: RuntimeConfig) -> Result<Ready, Error> {
        self.outbound.send_frame(runtime_message::Frame::Config(config)).await?;
        let ready = self.read_ready(DEFAULT_READY_TIMEOUT).await?;
        let ack = ReadyAck { accepted: true, ..Default::default() };
        self.outbound.send_frame(runtime_message::Frame::ReadyAck(ack)).await?;
        Ok(ready)
    }
}

/// The sending half of a [`RawStream`]. Clones send on the same stream.
#[derive(Debug, Clone)]
pub struct RawSender {
    tx: mpsc::Sender<Frame>,
}

impl RawSender {
    /// Sends a message, waiting while the stream's queue is full. Fails
    /// with [`Error::SenderClosed`] once the stream has ended.
    pub async fn send(&self, message: RuntimeMessage) -> Result<(), Error> {
        self.tx.send(Ok(Outgoing::Message(message))).await.map_err(|_| Error::SenderClosed)
    }

    /// Sends a message holding `frame`.
    pub async fn send_frame(&self, frame: runtime_message::Frame) -> Result<(), Error> {
        self.send(RuntimeMessage { frame: Some(frame) }).await
    }

    /// Sends `bytes` as one frame, exactly as given: an encoded message
    /// changed by hand, cut short, or anything else.
    pub async fn send_bytes(&self, bytes: impl Into<Bytes>) -> Result<(), Error> {
        self.tx.send(Ok(Outgoing::Bytes(bytes.into()))).await.map_err(|_| Error::SenderClosed)
    }

    /// Ends the runtime's side of the stream with an error status, after
    /// the frames already queued.
    pub async fn end_with(&self, status: Status) -> Result<(), Error> {
        self.tx.send(Err(status)).await.map_err(|_| Error::SenderClosed)
    }

    /// Whether the stream has ended, so that nothing more can be sent.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}
