//! The raw mode: a runtime side that hands out each stream as it opens,
//! with none of the kit's bookkeeping. See [`RawRuntime`].

use std::time::Duration;

use tokio::sync::{Mutex, mpsc};
use tonic::transport::Server;

use crate::error::Error;
use crate::listen::{self, Listen, Serving};
use crate::raw_stream::RawStream;
use crate::service::{Limits, RuntimeService, Streams};
use crate::settings::DEFAULT_ACCEPT_TIMEOUT;

/// How many frames a stream queues for sending, by default, before a send
/// waits.
pub const DEFAULT_RAW_QUEUE: usize = 1024;

/// Builds a [`RawRuntime`]. Start with [`RawRuntime::builder`].
#[derive(Debug)]
pub struct RawRuntimeBuilder {
    listen: Listen,
    queue: usize,
    hold_headers: bool,
    max_message_bytes: Option<usize>,
    stream_window: Option<u32>,
    connection_window: Option<u32>,
    accept_timeout: Duration,
}

impl Default for RawRuntimeBuilder {
    fn default() -> Self {
        RawRuntimeBuilder {
            listen: Listen::TempUnix,
            queue: DEFAULT_RAW_QUEUE,
            hold_headers: false,
            max_message_bytes: None,
            stream_window: None,
            connection_window: None,
            accept_timeout: DEFAULT_ACCEPT_TIMEOUT,
        }
    }
}

impl RawRuntimeBuilder {
    crate::listen::where_to_listen!();

    /// How many frames each stream queues for sending before a send waits
    /// (at least one); default [`DEFAULT_RAW_QUEUE`]. With 1, a send waits
    /// as soon as the transport stops taking frames.
    pub fn queue(mut self, frames: usize) -> Self {
        self.queue = frames.max(1);
        self
    }

    /// Holds each stream's response headers back until its first frame is
    /// sent, as grpc-go and grpcio servers do by default (the kit otherwise
    /// sends them as soon as the stream opens).
    pub fn hold_headers_until_first_frame(mut self) -> Self {
        self.hold_headers = true;
        self
    }

    /// The largest frame read from or sent to a handler; by default tonic's
    /// (4 MiB read, no limit sent).
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = Some(bytes);
        self
    }

    /// HTTP/2 flow-control windows: per stream and per connection, in
    /// bytes; by default the transport's.
    pub fn windows(mut self, stream: u32, connection: u32) -> Self {
        self.stream_window = Some(stream);
        self.connection_window = Some(connection);
        self
    }

    /// How long [`RawRuntime::accept`] waits; default 60 s.
    pub fn accept_timeout(mut self, timeout: Duration) -> Self {
        self.accept_timeout = timeout;
        self
    }

    /// Binds the listener and starts serving in a background task.
    pub async fn bind(self) -> Result<RawRuntime, Error> {
        let (streams, queue) = mpsc::unbounded_channel();
        let service = RuntimeService::new(
            Streams::Raw { streams, capacity: self.queue, hold_headers: self.hold_headers },
            Limits { decoding: self.max_message_bytes, encoding: self.max_message_bytes },
        );
        let server = Server::builder()
            .initial_stream_window_size(self.stream_window)
            .initial_connection_window_size(self.connection_window);
        let serving = listen::serve(self.listen, server, service).await?;
        Ok(RawRuntime { serving, queue: Mutex::new(queue), accept_timeout: self.accept_timeout })
    }
}

/// A runtime side that hands out each handler stream as it opens, with no
/// handshake and no bookkeeping: the kit's raw mode.
///
/// A [`TestRuntime`](crate::TestRuntime) runs the handshake itself, keeps
/// the credit account and records every protocol violation: the right thing
/// for testing a handler against a runtime that behaves. A [`RawRuntime`]
/// does none of that. Each [`RawStream`] is the stream as the transport gave
/// it: the test sends what it likes (any `RuntimeMessage`, or bytes that no
/// encoder would produce), when it likes (never a `RuntimeConfig`, say), and
/// reads the handler's frames itself, or stops reading them. Sends wait once
/// the stream's queue is full ([`RawRuntimeBuilder::queue`]), so a test can
/// see backpressure; and nothing is done per frame but encoding it, so a
/// load generator measures the handler rather than the kit.
///
/// ```no_run
/// use celerity_testkit::RawRuntime;
/// use celerity_testkit::proto::v1::RuntimeConfig;
///
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// let rt = RawRuntime::builder().bind().await?;
/// // ... start the handler with rt.env() ...
/// let mut stream = rt.accept().await?;
/// let ready = stream.handshake(RuntimeConfig::default()).await?;
/// // A frame whose string field is not UTF-8.
/// stream.outbound.send_bytes(vec![0x1a, 0x03, 0x0a, 0x01, 0xff]).await?;
/// let answer = stream.next_message().await?;
/// # Ok(())
/// # }
/// ```
///
/// Dropping it stops accepting new streams and removes the socket; streams
/// already handed out live on.
#[derive(Debug)]
pub struct RawRuntime {
    serving: Serving,
    queue: Mutex<mpsc::UnboundedReceiver<RawStream>>,
    accept_timeout: Duration,
}

impl RawRuntime {
    /// A builder with the defaults: a fresh temporary Unix socket, a queue
    /// of [`DEFAULT_RAW_QUEUE`] frames, the transport's own limits.
    pub fn builder() -> RawRuntimeBuilder {
        RawRuntimeBuilder::default()
    }

    crate::listen::where_it_listens!();

    /// Waits (default accept timeout) for the next handler stream to open.
    pub async fn accept(&self) -> Result<RawStream, Error> {
        self.accept_timeout(self.accept_timeout).await
    }

    /// [`accept`](Self::accept), waiting at most `timeout`.
    pub async fn accept_timeout(&self, timeout: Duration) -> Result<RawStream, Error> {
        self.serving.next(&self.queue, timeout, "a handler to open its stream").await
    }

    /// The next stream if one has opened and not been taken, without
    /// waiting.
    pub fn try_accept(&self) -> Option<RawStream> {
        self.queue.try_lock().ok()?.try_recv().ok()
    }
}
