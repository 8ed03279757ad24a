//! The handlers a binary serves: registered at compile time by the attribute
//! macros, or explicitly with [`crate::App`].

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::consumer::{ConsumerBatchHandler, ConsumerHandler};
use crate::custom::CustomHandler;
use crate::handler::{Handler, HttpHandler};
use crate::schedule::ScheduleHandler;
pub use crate::session::HandlerKey;
use crate::websocket::WebSocketHandler;

/// The kind of event a handler serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HandlerKind {
    /// HTTP requests.
    Http,
    /// WebSocket messages.
    WebSocket,
    /// Batches from a queue or topic.
    Consumer,
    /// Schedule triggers.
    Schedule,
    /// Custom invocations.
    Custom,
}

impl HandlerKind {
    /// The kind's name in manifests and messages: `http`, `websocket`,
    /// `consumer`, `schedule`, `custom`.
    pub fn as_str(self) -> &'static str {
        match self {
            HandlerKind::Http => "http",
            HandlerKind::WebSocket => "websocket",
            HandlerKind::Consumer => "consumer",
            HandlerKind::Schedule => "schedule",
            HandlerKind::Custom => "custom",
        }
    }
}

impl fmt::Display for HandlerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HandlerKind::Http => "HTTP",
            HandlerKind::WebSocket => "WebSocket",
            HandlerKind::Consumer => "consumer",
            HandlerKind::Schedule => "schedule",
            HandlerKind::Custom => "custom",
        })
    }
}

/// Where a handler was registered: its Rust path and source location.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    /// The function's Rust path, such as `orders::get_order`.
    pub function: &'static str,
    /// The source file.
    pub file: &'static str,
    /// The line.
    pub line: u32,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}:{})", self.function, self.file, self.line)
    }
}

/// One handler, ready to serve: how it is bound, what it serves, where it
/// came from, and the handler itself.
#[derive(Clone)]
pub struct Registration {
    pub(crate) key: HandlerKey,
    pub(crate) kind: HandlerKind,
    pub(crate) max_concurrent: Option<u32>,
    pub(crate) origin: Origin,
    pub(crate) handler: Arc<dyn Handler>,
}

impl Registration {
    /// A registration of any kind from a ready [`Handler`].
    pub fn new(key: HandlerKey, kind: HandlerKind, origin: Origin, handler: Arc<dyn Handler>) -> Self {
        Registration { key, kind, max_concurrent: None, origin, handler }
    }

    /// An HTTP handler bound to `key` (a tag such as `GET::/orders/{id}`, or
    /// a name), registered from the caller's source location.
    ///
    /// ```
    /// use celerity::{HandlerKey, Registration};
    /// async fn hello() -> &'static str { "hello" }
    /// let registration = Registration::http(HandlerKey::Tag("GET::/hello".into()), hello);
    /// assert_eq!(registration.key(), &HandlerKey::Tag("GET::/hello".into()));
    /// ```
    #[track_caller]
    pub fn http<H, Args>(key: HandlerKey, handler: H) -> Self
    where
        H: HttpHandler<Args>,
    {
        let location = std::panic::Location::caller();
        Registration::new(
            key,
            HandlerKind::Http,
            Origin { function: short_fn_name::<H>(), file: location.file(), line: location.line() },
            handler.into_handler(),
        )
    }

    /// A WebSocket handler bound to `key` (a tag such as `event::$default`,
    /// or a name), registered from the caller's source location.
    ///
    /// ```
    /// use celerity::{HandlerKey, HandlerKind, Registration};
    /// async fn on_connect() {}
    /// let registration = Registration::websocket(HandlerKey::Tag("event::$connect".into()), on_connect);
    /// assert_eq!(registration.kind(), HandlerKind::WebSocket);
    /// ```
    #[track_caller]
    pub fn websocket<H, Args>(key: HandlerKey, handler: H) -> Self
    where
        H: WebSocketHandler<Args>,
    {
        Registration::located::<H>(key, HandlerKind::WebSocket, handler.into_handler())
    }

    /// A consumer handler bound to `key` (a tag such as
    /// `source::orders-queue::processOrders`, or a name) that runs for each
    /// record of a batch, in order, one at a time.
    ///
    /// ```
    /// use celerity::consumer::RawRecord;
    /// use celerity::{HandlerKey, HandlerKind, Registration};
    /// async fn process(_record: RawRecord) {}
    /// let registration = Registration::consumer(HandlerKey::Name("processOrders".into()), process);
    /// assert_eq!(registration.kind(), HandlerKind::Consumer);
    /// ```
    #[track_caller]
    pub fn consumer<H, Args>(key: HandlerKey, handler: H) -> Self
    where
        H: ConsumerHandler<Args>,
    {
        Registration::located::<H>(key, HandlerKind::Consumer, handler.into_handler(1))
    }

    /// A consumer handler that runs for each record of a batch, up to
    /// `concurrency` records at once.
    #[track_caller]
    pub fn consumer_concurrent<H, Args>(key: HandlerKey, concurrency: usize, handler: H) -> Self
    where
        H: ConsumerHandler<Args>,
    {
        Registration::located::<H>(key, HandlerKind::Consumer, handler.into_handler(concurrency))
    }

    /// A consumer handler that takes the whole batch.
    #[track_caller]
    pub fn consumer_batch<H, Args>(key: HandlerKey, handler: H) -> Self
    where
        H: ConsumerBatchHandler<Args>,
    {
        Registration::located::<H>(key, HandlerKind::Consumer, handler.into_handler())
    }

    /// A schedule handler bound to `key` (a tag such as
    /// `source::nightly::cleanup`, or a name).
    #[track_caller]
    pub fn schedule<H, Args>(key: HandlerKey, handler: H) -> Self
    where
        H: ScheduleHandler<Args>,
    {
        Registration::located::<H>(key, HandlerKind::Schedule, handler.into_handler())
    }

    /// A custom handler bound to `key` (a tag such as `custom::resizeImage`,
    /// or a name).
    #[track_caller]
    pub fn custom<H, Args>(key: HandlerKey, handler: H) -> Self
    where
        H: CustomHandler<Args>,
    {
        Registration::located::<H>(key, HandlerKind::Custom, handler.into_handler())
    }

    #[track_caller]
    fn located<H>(key: HandlerKey, kind: HandlerKind, handler: Arc<dyn Handler>) -> Self {
        let location = std::panic::Location::caller();
        Registration::new(
            key,
            kind,
            Origin { function: short_fn_name::<H>(), file: location.file(), line: location.line() },
            handler,
        )
    }

    /// Sets the per-tag cap: at most `max` events for this handler at once.
    pub fn max_concurrent(mut self, max: u32) -> Self {
        self.max_concurrent = Some(max.max(1));
        self
    }

    /// Sets where the handler came from.
    pub fn origin(mut self, origin: Origin) -> Self {
        self.origin = origin;
        self
    }

    /// How the handler is bound.
    pub fn key(&self) -> &HandlerKey {
        &self.key
    }

    /// What it serves.
    pub fn kind(&self) -> HandlerKind {
        self.kind
    }

    /// Where it came from.
    pub fn origin_info(&self) -> Origin {
        self.origin
    }

    /// Its per-tag cap.
    pub fn cap(&self) -> Option<u32> {
        self.max_concurrent
    }
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("key", &self.key)
            .field("kind", &self.kind)
            .field("max_concurrent", &self.max_concurrent)
            .field("origin", &self.origin)
            .finish()
    }
}

/// The function name of a handler type: a fn item's type name is its path.
fn short_fn_name<H>() -> &'static str {
    std::any::type_name::<H>()
}

/// Registrations made at compile time by the attribute macros. Each entry
/// builds its registration when the application starts.
#[linkme::distributed_slice]
pub static HANDLERS: [fn() -> Registration];

/// Two registrations bound the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateHandler {
    /// The tag or name both use.
    pub key: HandlerKey,
    /// One.
    pub first: Origin,
    /// The other.
    pub second: Origin,
}

impl fmt::Display for DuplicateHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "two handlers are registered for {}: {} and {}; a tag must have exactly one handler",
            self.key, self.first, self.second
        )
    }
}

impl std::error::Error for DuplicateHandler {}

/// Checks that no two registrations are bound the same way.
pub(crate) fn check_duplicates(registrations: &[Registration]) -> Result<(), DuplicateHandler> {
    let mut seen: HashMap<&HandlerKey, Origin> = HashMap::new();
    for registration in registrations {
        if let Some(first) = seen.insert(&registration.key, registration.origin) {
            return Err(DuplicateHandler { key: registration.key.clone(), first, second: registration.origin });
        }
    }
    Ok(())
}

/// The compile-time registrations, in a stable order (by source location).
pub(crate) fn compiled() -> Vec<Registration> {
    let mut registrations: Vec<Registration> = HANDLERS.iter().map(|make| make()).collect();
    registrations.sort_by(|a, b| (a.origin.file, a.origin.line).cmp(&(b.origin.file, b.origin.line)));
    registrations
}
