//! The gRPC service the kit's runtimes serve: `HandlerRuntimeService`'s one
//! method, `EventStream`, written out by hand rather than generated, so
//! that its codec can also send bytes as they are (see [`crate::codec`]).
//!
//! Each stream that opens goes one of two ways. A [`TestRuntime`] runs the
//! runtime's handshake on it at once (the Ready timeout runs from
//! connecting) and queues the outcome for
//! [`TestRuntime::accept`](crate::TestRuntime::accept). A [`RawRuntime`]
//! hands it out as it is.
//!
//! [`TestRuntime`]: crate::TestRuntime
//! [`RawRuntime`]: crate::RawRuntime

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use celerity_proto::v1::HandlerMessage;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_stream::Stream;
use tonic::codegen::{Body, BoxFuture, StdError, http};
use tonic::server::{Grpc, StreamingService};
use tonic::{Request, Response, Status, Streaming};

use crate::codec::{Frame, KitCodec, Outgoing};
use crate::error::Error;
use crate::handshake::{self, Handshake};
use crate::raw_stream::RawStream;
use crate::settings::Settings;

/// The path of `HandlerRuntimeService.EventStream`.
const EVENT_STREAM: &str = "/celerity.runtime.v1.HandlerRuntimeService/EventStream";

/// Handshake outcomes, in the order the streams completed them.
pub(crate) type HandshakeQueue = mpsc::UnboundedSender<Result<Handshake, Error>>;

/// What becomes of each stream that opens.
pub(crate) enum Streams {
    /// The test runtime's handshake, then a [`Connection`](crate::Connection).
    Checked {
        /// How the runtime behaves.
        settings: Arc<Settings>,
        /// Where the handshakes' outcomes go.
        handshakes: HandshakeQueue,
    },
    /// Handed out as they are.
    Raw {
        /// Where the streams go.
        streams: mpsc::UnboundedSender<RawStream>,
        /// Frames queued for sending before a send waits.
        capacity: usize,
        /// Whether the response headers wait for the first frame.
        hold_headers: bool,
    },
}

/// The largest frames each way; tonic's defaults when `None` (4 MiB read,
/// no limit sent).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Limits {
    pub(crate) decoding: Option<usize>,
    pub(crate) encoding: Option<usize>,
}

/// The service, as the server takes it.
#[derive(Clone)]
pub(crate) struct RuntimeService {
    streams: Arc<Streams>,
    limits: Limits,
}

impl RuntimeService {
    pub(crate) fn new(streams: Streams, limits: Limits) -> Self {
        RuntimeService { streams: Arc::new(streams), limits }
    }
}

impl<B> tonic::codegen::Service<http::Request<B>> for RuntimeService
where
    B: Body + Send + 'static,
    B::Error: Into<StdError> + Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        if request.uri().path() != EVENT_STREAM {
            return Box::pin(async { Ok(Status::unimplemented("the runtime serves only EventStream").into_http()) });
        }
        let streams = Arc::clone(&self.streams);
        let limits = self.limits;
        Box::pin(async move {
            let mut grpc = Grpc::new(KitCodec).apply_max_message_size_config(limits.decoding, limits.encoding);
            Ok(grpc.streaming(EventStream(streams), request).await)
        })
    }
}

/// One call of `EventStream`.
struct EventStream(Arc<Streams>);

impl StreamingService<HandlerMessage> for EventStream {
    type Response = Outgoing;
    type ResponseStream = Outbound;
    type Future = BoxFuture<Response<Outbound>, Status>;

    fn call(&mut self, request: Request<Streaming<HandlerMessage>>) -> Self::Future {
        let streams = Arc::clone(&self.0);
        Box::pin(async move {
            let inbound = request.into_inner();
            match &*streams {
                Streams::Checked { settings, handshakes } => {
                    if settings.refusing.load(std::sync::atomic::Ordering::SeqCst) {
                        // A stream connecting during a drain would be given
                        // no work; refusing it tells the handler to stop.
                        let _ = handshakes.send(Err(Error::RefusedDraining));
                        return Err(Status::unavailable("the runtime is draining and accepts no new handler streams"));
                    }
                    let connected_at = Instant::now();
                    let (outbound, rx) = mpsc::unbounded_channel();
                    let settings = Arc::clone(settings);
                    let handshakes = handshakes.clone();
                    tokio::spawn(async move {
                        let outcome = handshake::run(settings, inbound, outbound, connected_at).await;
                        let _ = handshakes.send(outcome);
                    });
                    Ok(Response::new(Outbound::Unbounded(rx)))
                }
                Streams::Raw { streams, capacity, hold_headers } => {
                    let (outbound, mut rx) = mpsc::channel((*capacity).max(1));
                    let _ = streams.send(RawStream::new(inbound, outbound));
                    let first = if *hold_headers {
                        // As grpc-go and grpcio do by default: the response
                        // headers go with the first frame, not before it.
                        match rx.recv().await {
                            Some(first) => Some(Box::new(first)),
                            None => return Err(Status::cancelled("the raw stream was dropped before its first frame")),
                        }
                    } else {
                        None
                    };
                    Ok(Response::new(Outbound::Bounded { first, rx }))
                }
            }
        })
    }
}

/// What the runtime side sends on one stream.
pub(crate) enum Outbound {
    /// A test runtime's connection: never waits.
    Unbounded(mpsc::UnboundedReceiver<Frame>),
    /// A raw stream: sends wait once `capacity` frames are queued.
    Bounded {
        /// A frame taken before the headers went out, sent first.
        first: Option<Box<Frame>>,
        rx: mpsc::Receiver<Frame>,
    },
}

impl Stream for Outbound {
    type Item = Frame;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Frame>> {
        match self.get_mut() {
            Outbound::Unbounded(rx) => rx.poll_recv(cx),
            Outbound::Bounded { first, rx } => match first.take() {
                Some(frame) => Poll::Ready(Some(*frame)),
                None => rx.poll_recv(cx),
            },
        }
    }
}
