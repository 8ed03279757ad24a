//! The application under test, and calls to its handlers.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, SystemTime};

use celerity_proto::v1::result::Outcome as WireOutcome;
use celerity_tags::parse_tag;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::event::Event;
use super::outcome::Outcome;
use super::ws_send::WsRecorder;
use crate::app::App;
use crate::command::Command;
use crate::config::Configuration;
use crate::consumer::{ConsumerBatchHandler, ConsumerHandler};
use crate::context::{CancelReason, Context, StateMap};
use crate::custom::CustomHandler;
use crate::guard::{Guard, Guards};
use crate::handle::AppHandle;
use crate::http::{HttpHandler, HttpService};
use crate::layer::{EventLayer, HttpLayer, Layers, Step};
use crate::oneshot::{Clock, Control, run};
use crate::registry::{self, HandlerKey, HandlerKind, Registration, tag_kind};
use crate::schedule::ScheduleHandler;
use crate::session::{DEFAULT_CANCEL_GRACE_MS, DEFAULT_MAX_MESSAGE_BYTES, Input};
use crate::websocket::WebSocketHandler;

/// An application's handlers, called in-process without a runtime: each call
/// builds the `Dispatch` and the [`Context`] the runtime and the SDK would,
/// runs the handler, and gives back the outcome the runtime would receive.
///
/// Calls are answered as the SDK answers them: a panic is a `HandlerError`
/// of type `panic` (its message hidden unless [`TestApp::expose_panics`]); a
/// handler still running one cancel grace after its
/// deadline or a cancellation is answered for with `DeadlineExceeded` or
/// `Cancelled`; a tag no handler serves is `UnknownHandlerTag`.
///
/// ```
/// use celerity::testing::{TestApp, TestRequest};
/// use celerity::http::Path;
///
/// async fn get_order(Path(id): Path<u64>) -> String {
///     format!("order {id}")
/// }
///
/// let app = TestApp::empty().http("GET::/orders/{id}", get_order);
/// let response = celerity::testing::block_on(app.call("GET::/orders/{id}", TestRequest::get("/orders/7")));
/// assert_eq!(response.expect_http().text(), "order 7");
/// ```
pub struct TestApp {
    registrations: Vec<Registration>,
    state: StateMap,
    ws: WsRecorder,
    grace: Duration,
    handle: AppHandle,
    requests: Arc<Mutex<Requests>>,
    next_id: Arc<AtomicU64>,
    expose_panics: bool,
    layers: Layers,
    guards: Guards,
    configuration: Option<Configuration>,
}

/// What handlers asked of the application through [`AppHandle`].
struct Requests {
    receiver: mpsc::UnboundedReceiver<Command>,
    seen: Vec<AppRequest>,
}

impl Default for TestApp {
    fn default() -> Self {
        TestApp::new()
    }
}

impl TestApp {
    /// Every handler the attribute macros registered in this binary, as
    /// [`App::new`] serves them; more can be added.
    pub fn new() -> Self {
        TestApp::with(registry::compiled())
    }

    /// No handler: only the ones added are called.
    pub fn empty() -> Self {
        TestApp::with(Vec::new())
    }

    /// The handlers an [`App`] would serve, with the state given to it with
    /// [`App::state`].
    pub fn from_app(mut app: App) -> Self {
        let state = app.take_state();
        let mut test = TestApp::with(app.registrations());
        test.state = state;
        let (layers, guards) = app.layers_and_guards();
        test.layers = layers.clone();
        test.guards = guards.clone();
        test.configuration = Some(app.configuration().unwrap_or_else(|error| panic!("{error}")));
        test
    }

    fn with(registrations: Vec<Registration>) -> Self {
        let (sender, receiver) = mpsc::unbounded_channel();
        let ws = WsRecorder::new();
        TestApp {
            registrations,
            state: StateMap::default(),
            // Every sender reached through the handle records its sends here,
            // a handler's and a background task's alike.
            handle: AppHandle::recording(sender, Arc::new(ws.clone())),
            ws,
            grace: Duration::from_millis(DEFAULT_CANCEL_GRACE_MS),
            requests: Arc::new(Mutex::new(Requests { receiver, seen: Vec::new() })),
            next_id: Arc::new(AtomicU64::new(1)),
            expose_panics: false,
            layers: Layers::default(),
            guards: Guards::default(),
            configuration: None,
        }
    }

    /// Registers `guard` under `name`, as [`App::guard`] does.
    pub fn guard<G: Guard>(mut self, name: &str, guard: G) -> Self {
        self.guards.add(name, guard);
        self
    }

    /// Adds a layer around every handler, as [`App::layer`] does.
    pub fn layer<L: EventLayer>(mut self, layer: L) -> Self {
        self.layers.add(Step::event(layer));
        self
    }

    /// Adds a layer around every handler of `kind`, as [`App::layer_for`]
    /// does.
    pub fn layer_for<L: EventLayer>(mut self, kind: HandlerKind, layer: L) -> Self {
        self.layers.add_for(kind, Step::event(layer));
        self
    }

    /// Adds a tower layer over `http::Request`s around every HTTP handler,
    /// as [`App::http_layer`] does.
    pub fn http_layer<L: HttpLayer>(mut self, layer: L) -> Self {
        self.layers.add_http(layer);
        self
    }

    /// Adds a registration of any kind.
    pub fn register(mut self, registration: Registration) -> Self {
        self.registrations.push(registration);
        self
    }

    /// Adds an HTTP handler for a tag such as `GET::/orders/{id}`.
    #[track_caller]
    pub fn http<H, Args>(self, tag: &str, handler: H) -> Self
    where
        H: HttpHandler<Args>,
        Args: 'static,
    {
        self.register(Registration::http(HandlerKey::Tag(tag.to_string()), handler))
    }

    /// Serves the HTTP events of `tags` with one tower service, such as an
    /// axum `Router`, as [`App::service`] does.
    #[track_caller]
    pub fn service<S, T>(mut self, tags: T, service: S) -> Self
    where
        S: HttpService + Clone,
        T: IntoIterator,
        T::Item: AsRef<str>,
    {
        for registration in registry::service_registrations(tags, service, std::panic::Location::caller()) {
            self = self.register(registration);
        }
        self
    }

    /// Adds a WebSocket handler for a tag such as `event::$default`.
    #[track_caller]
    pub fn websocket<H, Args>(self, tag: &str, handler: H) -> Self
    where
        H: WebSocketHandler<Args>,
        Args: 'static,
    {
        self.register(Registration::websocket(HandlerKey::Tag(tag.to_string()), handler))
    }

    /// Adds a consumer handler run for each record, in order, for a tag such
    /// as `source::orders-queue::processOrders`.
    #[track_caller]
    pub fn consumer<H, Args>(self, tag: &str, handler: H) -> Self
    where
        H: ConsumerHandler<Args>,
        Args: 'static,
    {
        self.register(Registration::consumer(HandlerKey::Tag(tag.to_string()), handler))
    }

    /// Adds a consumer handler run for up to `concurrency` records at once.
    #[track_caller]
    pub fn consumer_concurrent<H, Args>(self, tag: &str, concurrency: usize, handler: H) -> Self
    where
        H: ConsumerHandler<Args>,
        Args: 'static,
    {
        self.register(Registration::consumer_concurrent(HandlerKey::Tag(tag.to_string()), concurrency, handler))
    }

    /// Adds a consumer handler that takes the whole batch.
    #[track_caller]
    pub fn consumer_batch<H, Args>(self, tag: &str, handler: H) -> Self
    where
        H: ConsumerBatchHandler<Args>,
        Args: 'static,
    {
        self.register(Registration::consumer_batch(HandlerKey::Tag(tag.to_string()), handler))
    }

    /// Adds a schedule handler for a tag such as `source::nightly::cleanup`.
    #[track_caller]
    pub fn schedule<H, Args>(self, tag: &str, handler: H) -> Self
    where
        H: ScheduleHandler<Args>,
        Args: 'static,
    {
        self.register(Registration::schedule(HandlerKey::Tag(tag.to_string()), handler))
    }

    /// Adds a custom handler for a tag such as `custom::resizeImage`.
    #[track_caller]
    pub fn custom<H, Args>(self, tag: &str, handler: H) -> Self
    where
        H: CustomHandler<Args>,
        Args: 'static,
    {
        self.register(Registration::custom(HandlerKey::Tag(tag.to_string()), handler))
    }

    /// Shares `value` with every handler, which takes it as `State<T>`. One
    /// value per type; a second of the same type replaces the first.
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(Arc::new(value));
        self
    }

    /// Sets how long a handler may go on after its deadline or a
    /// cancellation before the call answers for it; 1 s by default, as in
    /// the SDK (`CELERITY_CANCEL_GRACE_MS`).
    pub fn cancel_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Answers a panic as the SDK does with `CELERITY_EXPOSE_PANICS=true`:
    /// the `HandlerError` carries the panic's message and its stack, and a
    /// consumer record that panicked fails with `panicked: <message>`. Off by
    /// default, as in the SDK: the answer is then `the handler panicked` (a
    /// record's failure `panicked`), so that a test sees what the runtime,
    /// and so an HTTP caller, would. The process's own setting is left alone.
    ///
    /// ```
    /// use celerity::testing::{TestApp, TestRequest, block_on};
    ///
    /// async fn broken() -> String {
    ///     panic!("the ledger is locked")
    /// }
    ///
    /// let app = TestApp::empty().http("GET::/broken", broken);
    /// let error = block_on(app.call("GET::/broken", TestRequest::get("/broken"))).expect_error();
    /// assert_eq!((error.error_type(), error.message(), error.stack()), ("panic", "the handler panicked", ""));
    ///
    /// let app = app.expose_panics(true);
    /// let error = block_on(app.call("GET::/broken", TestRequest::get("/broken"))).expect_error();
    /// assert_eq!(error.message(), "the ledger is locked");
    /// assert!(!error.stack().is_empty());
    /// ```
    pub fn expose_panics(mut self, expose: bool) -> Self {
        self.expose_panics = expose;
        self
    }

    /// Every registration, in the order added (compiled ones first).
    pub fn registrations(&self) -> &[Registration] {
        &self.registrations
    }

    /// The WebSocket sends handlers made, and how they are answered.
    pub fn ws(&self) -> &WsRecorder {
        &self.ws
    }

    /// The application handle handlers reach through [`Context::app`]; what
    /// is asked of it is recorded in [`app_requests`](Self::app_requests).
    pub fn handle(&self) -> AppHandle {
        self.handle.clone()
    }

    /// What handlers asked of the application through [`Context::app`] (or
    /// [`TestApp::handle`]), in order.
    pub fn app_requests(&self) -> Vec<AppRequest> {
        let mut requests = self.requests.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        while let Ok(command) = requests.receiver.try_recv() {
            let request = match command {
                Command::Input(Input::Withhold) => AppRequest::Withhold,
                Command::Input(Input::Resume) => AppRequest::Resume,
                Command::Input(Input::Resize(window)) => AppRequest::SetConcurrency(window),
                Command::Input(Input::Stop) => AppRequest::Shutdown,
                _ => continue,
            };
            requests.seen.push(request);
        }
        requests.seen.clone()
    }

    /// A call of the handler bound to `tag` (or, failing that, to the
    /// blueprint name `tag`) with `event`. Await it for the outcome, or
    /// [`start`](Call::start) it to cancel it mid-flight.
    ///
    /// The tag is matched as the runtime would send it: `GET::/f/{p+}`
    /// finds the handler registered for `GET::/f/{*p}`.
    ///
    /// # Panics
    ///
    /// When a handler's tag is malformed, or two handlers are bound the same
    /// way: either stops a real application from starting, with the same
    /// message.
    pub fn call(&self, tag: &str, event: impl Into<Event>) -> Call {
        if let Err(error) = registry::check(&self.registrations).and_then(|()| self.guards.check(&self.registrations)) {
            panic!("{error}");
        }
        let registration = self
            .registrations
            .iter()
            .find(|r| match &r.key {
                HandlerKey::Tag(registered) => {
                    parse_tag(tag_kind(r.kind), tag).map_or(registered == tag, |normal| *registered == normal.tag)
                }
                HandlerKey::Name(_) => false,
            })
            .or_else(|| self.registrations.iter().find(|r| matches!(&r.key, HandlerKey::Name(n) if n == tag)))
            // Served behind the same layers as in production.
            .map(|registration| {
                registration.layered(&self.layers, self.guards.step_for(registration), DEFAULT_MAX_MESSAGE_BYTES)
            });
        // The event goes to the tag the handler is bound to, as the runtime
        // sends it.
        let tag = match &registration {
            Some(Registration { key: HandlerKey::Tag(registered), .. }) => registered.clone(),
            _ => tag.to_string(),
        };
        Call {
            tag,
            event: event.into(),
            registration,
            state: self.state.share(),
            grace: self.grace,
            handle: self.handle.clone(),
            default_id: format!("test-{}", self.next_id.fetch_add(1, Ordering::Relaxed)),
            cancel_after: None,
            expose_panics: self.expose_panics,
            configuration: self.configuration.clone(),
        }
    }
}

impl fmt::Debug for TestApp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestApp")
            .field("handlers", &self.registrations.iter().map(|r| r.key.to_string()).collect::<Vec<_>>())
            .field("state", &self.state)
            .field("cancel_grace", &self.grace)
            .field("expose_panics", &self.expose_panics)
            .finish_non_exhaustive()
    }
}

/// Something a handler asked of the application through its
/// [`AppHandle`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AppRequest {
    /// [`AppHandle::withhold`].
    Withhold,
    /// [`AppHandle::resume`].
    Resume,
    /// [`AppHandle::set_concurrency`].
    SetConcurrency(u32),
    /// [`AppHandle::shutdown`].
    Shutdown,
}

/// One call of a handler, ready to run: await it for the [`Outcome`], or
/// [`start`](Self::start) it for a [`CallHandle`] that can cancel it.
///
/// ```
/// use std::time::Duration;
/// use celerity::testing::{TestApp, TestRequest};
/// use celerity::{CancelReason, Context};
///
/// async fn slow(cx: Context) -> String {
///     match cx.cancelled().await {
///         CancelReason::CallerGone => "caller gone".to_string(),
///         other => other.to_string(),
///     }
/// }
///
/// let app = TestApp::empty().http("GET::/slow", slow);
/// celerity::testing::block_on(async {
///     let outcome = app
///         .call("GET::/slow", TestRequest::get("/slow"))
///         .cancel_after(Duration::from_millis(10), CancelReason::CallerGone)
///         .await;
///     assert_eq!(outcome.expect_http().text(), "caller gone");
/// });
/// ```
#[must_use = "a call does nothing until awaited or started"]
pub struct Call {
    tag: String,
    event: Event,
    registration: Option<Registration>,
    state: StateMap,
    grace: Duration,
    handle: AppHandle,
    default_id: String,
    cancel_after: Option<(Duration, CancelReason)>,
    expose_panics: bool,
    configuration: Option<Configuration>,
}

impl Call {
    /// Sets the dispatch id.
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.event = self.event.id(id);
        self
    }

    /// Sets the deadline to `budget` after the call starts; see
    /// [`Event::deadline_in`].
    pub fn deadline_in(mut self, budget: Duration) -> Self {
        self.event = self.event.deadline_in(budget);
        self
    }

    /// Sets the deadline to an instant.
    pub fn deadline_at(mut self, deadline: SystemTime) -> Self {
        self.event = self.event.deadline_at(deadline);
        self
    }

    /// Adds a trace context entry.
    pub fn trace_context(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.event = self.event.trace_context(name, value);
        self
    }

    /// Sets the caller's W3C `traceparent`.
    pub fn traceparent(mut self, value: impl Into<String>) -> Self {
        self.event = self.event.traceparent(value);
        self
    }

    /// Sets the cancel grace for this call.
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Shares `value` with the handler for this call only, beside (or in
    /// place of) the application's state of the same type.
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(Arc::new(value));
        self
    }

    /// Cancels the event with `reason` once `after` has passed since the call
    /// started, as a runtime `Cancel` would: the handler's cancellation fires
    /// and, if it has not finished one grace later, the call answers for it.
    pub fn cancel_after(mut self, after: Duration, reason: CancelReason) -> Self {
        self.cancel_after = Some((after, reason));
        self
    }

    /// Starts the call on the current tokio runtime, and returns a handle to
    /// cancel it while it runs and to await its outcome.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime.
    pub fn start(self) -> CallHandle {
        let (cancels, receiver) = mpsc::unbounded_channel();
        let (cx, future) = self.launch(Some(receiver));
        CallHandle { cx, cancels, task: tokio::spawn(future) }
    }

    /// Builds the dispatch and the context, and the run of the handler.
    fn launch(
        self,
        cancels: Option<mpsc::UnboundedReceiver<CancelReason>>,
    ) -> (Context, Pin<Box<dyn Future<Output = WireOutcome> + Send>>) {
        if let Some(registration) = &self.registration
            && let Err(error) = registry::check_state(std::slice::from_ref(registration), &self.state)
        {
            // What stops a real application from starting.
            panic!("{error}");
        }
        let mut state = self.state;
        if let Some(configuration) = &self.configuration {
            state.insert(Arc::new(configuration.clone()));
        }
        let now = SystemTime::now();
        let clock = Clock::starting_at(now);
        let dispatch = self.event.into_dispatch(&self.tag, self.default_id, now);
        let cx = Context::new(
            dispatch.id.as_str().into(),
            dispatch.handler_tag.as_str().into(),
            self.registration.as_ref().map_or("", |r| r.origin.function),
            dispatch.deadline_unix_ms,
            dispatch.trace_context.clone(),
            Arc::new(state),
            self.handle,
        );
        let control =
            Control { grace: self.grace, cancel_after: self.cancel_after, cancels, expose_panics: self.expose_panics };
        let configuration = self.configuration;
        let registration = self.registration;
        let context = cx.clone();
        let call = async move {
            // What the application checks and binds before it serves.
            if let (Some(configuration), Some(registration)) = (&configuration, &registration)
                && let Err(error) =
                    crate::config::startup::prepare(configuration, std::slice::from_ref(registration)).await
            {
                panic!("{error}");
            }
            run(registration, dispatch, context, clock, control).await
        };
        (cx, Box::pin(call))
    }
}

impl IntoFuture for Call {
    type Output = Outcome;
    type IntoFuture = Pin<Box<dyn Future<Output = Outcome> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        // Started when first polled, so a deadline counts from then.
        Box::pin(async move {
            let (_cx, future) = self.launch(None);
            Outcome::from_wire(future.await)
        })
    }
}

impl fmt::Debug for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Call")
            .field("tag", &self.tag)
            .field("event", &self.event)
            .field("handler", &self.registration.as_ref().map(|r| r.origin))
            .finish_non_exhaustive()
    }
}

/// A call running on its own task: cancel it with a reason while it runs,
/// look at its context, and await its [`Outcome`]. Dropping it aborts the
/// call.
///
/// ```
/// use celerity::testing::{TestApp, TestTrigger};
/// use celerity::{CancelReason, Context};
///
/// async fn forever(cx: Context) -> celerity::Result<()> {
///     cx.cancelled().await;
///     Err(celerity::Error::msg("stopped"))
/// }
///
/// let app = TestApp::empty().schedule("source::nightly::cleanup", forever);
/// celerity::testing::block_on(async {
///     let call = app.call("source::nightly::cleanup", TestTrigger::new()).start();
///     tokio::task::yield_now().await;
///     call.cancel(CancelReason::Shutdown);
///     let ack = call.await.expect_ack();
///     assert_eq!(ack.error_message(), Some("stopped"));
/// });
/// ```
pub struct CallHandle {
    cx: Context,
    cancels: mpsc::UnboundedSender<CancelReason>,
    task: JoinHandle<WireOutcome>,
}

impl CallHandle {
    /// Cancels the event with `reason`, as a runtime `Cancel` would: the
    /// handler's cancellation fires and, if it has not finished one grace
    /// later, the call answers for it (`Cancelled`, or `DeadlineExceeded`
    /// for that reason). The first cancellation stays; later ones change
    /// nothing.
    pub fn cancel(&self, reason: CancelReason) {
        let _ = self.cancels.send(reason);
    }

    /// The handler's context.
    pub fn context(&self) -> &Context {
        &self.cx
    }

    /// Whether the call has its outcome.
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }
}

impl Future for CallHandle {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Outcome> {
        match Pin::new(&mut self.task).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(outcome)) => Poll::Ready(Outcome::from_wire(outcome)),
            // Handler panics are answers; a panic here is the harness's own.
            Poll::Ready(Err(error)) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            Poll::Ready(Err(error)) => panic!("the call's task ended without an outcome: {error}"),
        }
    }
}

impl Drop for CallHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl fmt::Debug for CallHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallHandle").field("context", &self.cx).field("finished", &self.is_finished()).finish()
    }
}
