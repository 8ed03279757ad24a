//! The test runtime: serves `HandlerRuntimeService` and hands each handler
//! stream to the test after its handshake.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use celerity_proto::v1::{HandlerConfig, ProtocolVersion, Ready, ReadyAck, RuntimeConfig, RuntimeMessage};
use tokio::sync::{Mutex, mpsc};
use tonic::transport::Server;

use crate::connection::{Connection, DEFAULT_WAIT_TIMEOUT};
use crate::error::Error;
use crate::handshake::Handshake;
use crate::listen::{self, Listen, Serving};
use crate::service::{Limits, RuntimeService, Streams};
use crate::settings::{AckOverride, DEFAULT_ACCEPT_TIMEOUT, DEFAULT_READY_TIMEOUT, Settings};

/// A handler's timeout when the blueprint sets none.
pub const DEFAULT_HANDLER_TIMEOUT_MS: i64 = 60_000;

/// The file name of the default socket inside its fresh temporary directory.
pub const DEFAULT_SOCKET_NAME: &str = "runtime.sock";

/// The protocol version a test runtime serves unless told otherwise.
pub const PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion { major: 1, minor: 0 };

/// Builds a [`TestRuntime`]. Start with [`TestRuntime::builder`].
pub struct TestRuntimeBuilder {
    listen: Listen,
    config: RuntimeConfig,
    first_frame: Option<RuntimeMessage>,
    ready_timeout: Duration,
    accept_timeout: Duration,
    wait_timeout: Duration,
    ack_override: Option<AckOverride>,
}

impl Default for TestRuntimeBuilder {
    fn default() -> Self {
        TestRuntimeBuilder {
            listen: Listen::TempUnix,
            config: RuntimeConfig { protocol_version: Some(PROTOCOL_VERSION), ..Default::default() },
            first_frame: None,
            ready_timeout: DEFAULT_READY_TIMEOUT,
            accept_timeout: DEFAULT_ACCEPT_TIMEOUT,
            wait_timeout: DEFAULT_WAIT_TIMEOUT,
            ack_override: None,
        }
    }
}

impl TestRuntimeBuilder {
    crate::listen::where_to_listen!();

    /// Declares a blueprint handler with the default timeout (60 s), tracing
    /// off and no published name.
    pub fn handler(self, handler_name: impl Into<String>, handler_tag: impl Into<String>) -> Self {
        self.handler_config(HandlerConfig {
            handler_name: handler_name.into(),
            handler_tag: handler_tag.into(),
            timeout_ms: DEFAULT_HANDLER_TIMEOUT_MS,
            tracing_enabled: false,
            published_name: String::new(),
        })
    }

    /// Declares a blueprint handler with every field given.
    pub fn handler_config(mut self, handler: HandlerConfig) -> Self {
        self.config.handlers.push(handler);
        self
    }

    /// Sets `RuntimeConfig.tracing_enabled`.
    pub fn tracing(mut self, enabled: bool) -> Self {
        self.config.tracing_enabled = enabled;
        self
    }

    /// Sets `RuntimeConfig.metrics_enabled`.
    pub fn metrics(mut self, enabled: bool) -> Self {
        self.config.metrics_enabled = enabled;
        self
    }

    /// Serves (and sends in the config) this protocol version; default 1.0.
    pub fn protocol_version(mut self, major: u32, minor: u32) -> Self {
        self.config.protocol_version = Some(ProtocolVersion { major, minor });
        self
    }

    /// Behaves as a runtime older than protocol 1.0: sends no
    /// `protocol_version`, ignores the handler's, and never sets
    /// `refused_reason`.
    pub fn no_protocol_version(mut self) -> Self {
        self.config.protocol_version = None;
        self
    }

    /// Replaces the whole `RuntimeConfig` (its `protocol_version` decides the
    /// version served, as with [`protocol_version`](Self::protocol_version)).
    pub fn runtime_config(mut self, config: RuntimeConfig) -> Self {
        self.config = config;
        self
    }

    /// Sends `frame` as the first frame instead of the `RuntimeConfig` (to
    /// test a handler's refusal of a wrong first frame). The handshake then
    /// proceeds as usual if the handler answers with Ready anyway.
    pub fn first_frame(mut self, frame: RuntimeMessage) -> Self {
        self.first_frame = Some(frame);
        self
    }

    /// How long a handler has from connecting to send Ready; default 30 s.
    pub fn ready_timeout(mut self, timeout: Duration) -> Self {
        self.ready_timeout = timeout;
        self
    }

    /// How long [`TestRuntime::accept`] waits; default 60 s.
    pub fn accept_timeout(mut self, timeout: Duration) -> Self {
        self.accept_timeout = timeout;
        self
    }

    /// Default timeout of every connection's wait methods; default 10 s.
    pub fn wait_timeout(mut self, timeout: Duration) -> Self {
        self.wait_timeout = timeout;
        self
    }

    /// Replaces the `ReadyAck` the runtime computes: `f` gets the handler's
    /// Ready and the computed ack and returns the ack to send (for tests of a
    /// handler's handling of a refusal it would not otherwise get). The
    /// stream is attached when the returned ack is accepted.
    pub fn ack_with(mut self, f: impl Fn(&Ready, ReadyAck) -> ReadyAck + Send + Sync + 'static) -> Self {
        self.ack_override = Some(Arc::new(f));
        self
    }

    /// Binds the listener and starts serving in a background task.
    pub async fn bind(self) -> Result<TestRuntime, Error> {
        let settings = Arc::new(Settings {
            config: self.config,
            first_frame: self.first_frame,
            ready_timeout: self.ready_timeout,
            wait_timeout: self.wait_timeout,
            ack_override: self.ack_override,
            refusing: Arc::new(AtomicBool::new(false)),
        });
        let (handshakes, queue) = mpsc::unbounded_channel();
        let service =
            RuntimeService::new(Streams::Checked { settings: Arc::clone(&settings), handshakes }, Limits::default());
        let serving = listen::serve(self.listen, Server::builder(), service).await?;
        Ok(TestRuntime { serving, settings, queue: Mutex::new(queue), accept_timeout: self.accept_timeout })
    }
}

/// The runtime side of the handler IPC protocol, for integration tests.
///
/// It serves `HandlerRuntimeService` on a Unix socket (or loopback TCP). Each
/// handler stream that opens gets the runtime's handshake at once: the
/// `RuntimeConfig` (or the configured first frame), a wait for `Ready` within
/// the Ready timeout, its validation (version, then tags) and a `ReadyAck`.
/// [`accept`](Self::accept) hands out the outcomes in order.
///
/// Dropping it stops accepting new streams and removes the socket; streams
/// already open live on with their [`Connection`]s.
pub struct TestRuntime {
    serving: Serving,
    settings: Arc<Settings>,
    queue: Mutex<mpsc::UnboundedReceiver<Result<Handshake, Error>>>,
    accept_timeout: Duration,
}

impl std::fmt::Debug for TestRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestRuntime")
            .field("address", &self.serving.address)
            .field("config", &self.settings.config)
            .finish_non_exhaustive()
    }
}

impl TestRuntime {
    /// A builder with the defaults: a fresh temporary Unix socket, protocol
    /// 1.0, no handlers, tracing and metrics off, Ready timeout 30 s.
    pub fn builder() -> TestRuntimeBuilder {
        TestRuntimeBuilder::default()
    }

    crate::listen::where_it_listens!();

    /// The `RuntimeConfig` sent to every handler.
    pub fn config(&self) -> &RuntimeConfig {
        &self.settings.config
    }

    /// Waits (default accept timeout) for the next handler stream to finish
    /// its handshake. Errors say what went wrong when the handler sent
    /// something other than Ready first, closed, or sent nothing in time.
    pub async fn accept(&self) -> Result<Handshake, Error> {
        self.accept_timeout(self.accept_timeout).await
    }

    /// [`accept`](Self::accept), waiting at most `timeout`.
    pub async fn accept_timeout(&self, timeout: Duration) -> Result<Handshake, Error> {
        self.serving.next(&self.queue, timeout, "a handler to connect and complete its handshake").await?
    }

    /// Refuses every handler stream that connects from now on (as the
    /// runtime does while it drains): the stream is closed with status
    /// UNAVAILABLE before or instead of its `ReadyAck`, and
    /// [`accept`](Self::accept) reports [`Error::RefusedDraining`].
    pub fn refuse_new_streams(&self) {
        self.settings.refusing.store(true, Ordering::SeqCst);
    }

    /// Whether new handler streams are refused.
    pub fn is_refusing(&self) -> bool {
        self.settings.refusing.load(Ordering::SeqCst)
    }

    /// Accepts the next handshake and returns its connection, or
    /// [`Error::Refused`].
    pub async fn accept_connection(&self) -> Result<Connection, Error> {
        self.accept().await?.accepted()
    }
}
