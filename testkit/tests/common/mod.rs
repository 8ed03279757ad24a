//! A minimal hand-written handler-side client, to drive the kit from the
//! other end of a real socket.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use celerity_testkit::proto::v1::handler_runtime_service_client::HandlerRuntimeServiceClient;
use celerity_testkit::proto::v1::{
    Ack, CreditGrant, HandlerLimit, HandlerMessage, ProtocolVersion, Ready, RuntimeConfig, RuntimeMessage,
    handler_message, result::Outcome, runtime_message,
};
use hyper_util::rt::TokioIo;
use tokio::sync::mpsc;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tonic::Streaming;
use tonic::transport::{Channel, Endpoint};

/// How long the fake handler waits for a frame before failing the test.
pub const RECV_TIMEOUT: Duration = Duration::from_secs(5);

/// The handler end of one EventStream.
pub struct FakeHandler {
    tx: Option<mpsc::UnboundedSender<HandlerMessage>>,
    rx: Streaming<RuntimeMessage>,
}

pub async fn unix_channel(path: &Path) -> Channel {
    let path: PathBuf = path.to_owned();
    Endpoint::from_static("http://localhost")
        .connect_with_connector(tower::service_fn(move |_| {
            let path = path.clone();
            async move { Ok::<_, std::io::Error>(TokioIo::new(tokio::net::UnixStream::connect(path).await?)) }
        }))
        .await
        .expect("connect to the test runtime's socket")
}

impl FakeHandler {
    /// Connects over the Unix socket and opens the stream.
    pub async fn connect(path: &Path) -> Self {
        Self::open(unix_channel(path).await).await
    }

    /// Connects over loopback TCP and opens the stream.
    pub async fn connect_tcp(addr: SocketAddr) -> Self {
        let channel = Endpoint::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect()
            .await
            .expect("connect to the test runtime's port");
        Self::open(channel).await
    }

    async fn open(channel: Channel) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut client = HandlerRuntimeServiceClient::new(channel);
        let rx = client.event_stream(UnboundedReceiverStream::new(rx)).await.expect("open EventStream").into_inner();
        FakeHandler { tx: Some(tx), rx }
    }

    /// Sends a frame.
    pub fn send(&self, frame: handler_message::Frame) {
        self.tx
            .as_ref()
            .expect("handler side already closed")
            .send(HandlerMessage { frame: Some(frame) })
            .expect("send frame");
    }

    /// Ends the handler's side of the stream.
    pub fn close(&mut self) {
        self.tx = None;
    }

    /// The next frame, `Ok(None)` at a clean end, `Err` at an error status.
    pub async fn recv_raw(&mut self) -> Result<Option<RuntimeMessage>, tonic::Status> {
        tokio::time::timeout(RECV_TIMEOUT, self.rx.message())
            .await
            .expect("timed out waiting for a frame from the runtime")
    }

    /// The next frame; panics on end, error or timeout.
    pub async fn recv(&mut self) -> runtime_message::Frame {
        self.recv_raw().await.expect("stream error").expect("stream ended").frame.expect("empty RuntimeMessage")
    }

    /// Receives the RuntimeConfig; panics on anything else.
    pub async fn recv_config(&mut self) -> RuntimeConfig {
        match self.recv().await {
            runtime_message::Frame::Config(c) => c,
            other => panic!("expected RuntimeConfig, got {other:?}"),
        }
    }

    /// Receives the config, sends `ready`, returns the ReadyAck.
    pub async fn handshake(&mut self, ready: Ready) -> celerity_testkit::proto::v1::ReadyAck {
        self.recv_config().await;
        self.send(handler_message::Frame::Ready(ready));
        match self.recv().await {
            runtime_message::Frame::ReadyAck(a) => a,
            other => panic!("expected ReadyAck, got {other:?}"),
        }
    }

    /// Receives a Dispatch; panics on anything else.
    pub async fn recv_dispatch(&mut self) -> celerity_testkit::proto::v1::Dispatch {
        match self.recv().await {
            runtime_message::Frame::Dispatch(d) => d,
            other => panic!("expected Dispatch, got {other:?}"),
        }
    }

    /// Sends a successful schedule Ack Result for `id` with `credit_grant`.
    pub fn answer(&self, id: &str, credit_grant: u32) {
        self.send(handler_message::Frame::Result(result(id, credit_grant)));
    }

    /// Sends a CreditGrant.
    pub fn grant(&self, additional: u32) {
        self.send(handler_message::Frame::Credit(CreditGrant { additional }));
    }
}

/// A Result with a successful Ack outcome.
pub fn result(id: &str, credit_grant: u32) -> celerity_testkit::proto::v1::Result {
    celerity_testkit::proto::v1::Result {
        id: id.to_owned(),
        credit_grant,
        outcome: Some(Outcome::Schedule(Ack { success: true, error_message: String::new() })),
    }
}

/// A Ready for `tags` with `credit`, declaring protocol 1.0.
pub fn ready(tags: &[&str], credit: u32) -> Ready {
    Ready {
        handler_tags: tags.iter().map(|t| (*t).to_owned()).collect(),
        initial_credit: credit,
        sdk_version: "fake-handler/0".to_owned(),
        limits: Vec::new(),
        protocol_version: Some(ProtocolVersion { major: 1, minor: 0 }),
    }
}

/// `ready` with per-tag caps.
pub fn with_limits(mut ready: Ready, limits: &[(&str, u32)]) -> Ready {
    ready.limits =
        limits.iter().map(|(t, n)| HandlerLimit { handler_tag: (*t).to_owned(), max_concurrent: *n }).collect();
    ready
}
