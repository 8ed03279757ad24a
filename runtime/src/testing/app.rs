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

use super::event::{Event, arrived};
use super::outcome::Outcome;
use super::ws_send::WsRecorder;
use crate::app::App;
use crate::command::Command;
use crate::config::Configuration;
use crate::context::{CancelReason, Context, StateMap};
use crate::handle::AppHandle;
use crate::oneshot::{Clock, Control, run};
use crate::registry::{self, HandlerKey, Registration, tag_kind};
use crate::session::Input;
use crate::settings::Settings;

/// An [`App`] served in process, without a runtime: each call builds the
/// `Dispatch` the runtime would send, feeds its bytes through the decoders
/// the SDK uses in production, runs the handler behind the application's
/// layers and guards, with its state and settings, and gives back the
/// outcome the runtime would receive.
///
/// It is a view of the application, not a second way to build one: the
/// application is built with [`App`]'s own methods (or the attribute
/// macros' registrations, with [`App::new`]), exactly as `main` builds it,
/// and turned into a `TestApp` with [`App::into_test`] (or
/// [`TestApp::from`]). What the view adds is for tests only: the record of
/// WebSocket sends and of what handlers ask of their [`AppHandle`], and a
/// cancel grace or panic exposure of their own.
///
/// Calls are answered as the SDK answers them: a panic is a `HandlerError`
/// of type `panic` (its message hidden unless [`TestApp::expose_panics`]); a
/// handler still running one cancel grace after its
/// deadline or a cancellation is answered for with `DeadlineExceeded` or
/// `Cancelled`; a tag no handler serves is `UnknownHandlerTag`.
///
/// ```
/// use celerity::App;
/// use celerity::testing::TestRequest;
/// use celerity::http::Path;
///
/// async fn get_order(Path(id): Path<u64>) -> String {
///     format!("order {id}")
/// }
///
/// let app = App::new().without_compiled_handlers().http("GET::/orders/{id}", get_order).into_test();
/// let response = celerity::testing::block_on(app.call("GET::/orders/{id}", TestRequest::get("/orders/7")));
/// assert_eq!(response.expect_http().text(), "order 7");
/// ```
pub struct TestApp {
    app: App,
    ws: WsRecorder,
    handle: AppHandle,
    requests: Arc<Mutex<Requests>>,
    next_id: Arc<AtomicU64>,
    /// The application's settings (or the SDK's defaults), with what the
    /// test changed.
    settings: Settings,
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

impl App {
    /// This application, served in process for tests: see [`TestApp`].
    ///
    /// ```
    /// use celerity::App;
    /// use celerity::testing::{TestTrigger, block_on};
    ///
    /// async fn cleanup() -> celerity::Result<()> {
    ///     Ok(())
    /// }
    ///
    /// let app = App::new().without_compiled_handlers().schedule("source::nightly::cleanup", cleanup).into_test();
    /// let ack = block_on(app.call("source::nightly::cleanup", TestTrigger::new())).expect_ack();
    /// assert!(ack.is_success());
    /// ```
    pub fn into_test(self) -> TestApp {
        TestApp::from(self)
    }
}

impl From<App> for TestApp {
    fn from(mut app: App) -> Self {
        let (sender, receiver) = app.take_commands();
        let ws = WsRecorder::new();
        let settings = app.settings_or_defaults();
        TestApp {
            // Every sender reached through the handle records its sends here,
            // a handler's and a background task's alike.
            handle: AppHandle::recording(sender, Arc::new(ws.clone())),
            app,
            ws,
            requests: Arc::new(Mutex::new(Requests { receiver, seen: Vec::new() })),
            next_id: Arc::new(AtomicU64::new(1)),
            settings,
        }
    }
}

impl TestApp {
    /// Every handler the attribute macros registered in this binary, as
    /// [`App::new`] serves them: `App::new().into_test()`.
    pub fn new() -> Self {
        App::new().into_test()
    }

    /// The application `app`, as [`App::into_test`] gives it.
    pub fn from_app(app: App) -> Self {
        TestApp::from(app)
    }

    /// The application under test.
    pub fn app(&self) -> &App {
        &self.app
    }

    /// Sets how long a handler may go on after its deadline or a
    /// cancellation before the call answers for it: the application's
    /// setting ([`App::settings`]) by default, else 1 s, as in the SDK
    /// (`CELERITY_CANCEL_GRACE_MS`).
    pub fn cancel_grace(mut self, grace: Duration) -> Self {
        self.settings.cancel_grace = grace;
        self
    }

    /// Answers a panic as the SDK does with `CELERITY_EXPOSE_PANICS=true`:
    /// the `HandlerError` carries the panic's message and its stack, and a
    /// consumer record that panicked fails with `panicked: <message>`. Off by
    /// default (unless the application's [`App::settings`] turn it on), as in
    /// the SDK: the answer is then `the handler panicked` (a record's failure
    /// `panicked`), so that a test sees what the runtime, and so an HTTP
    /// caller, would. The process's own setting is left alone.
    ///
    /// ```
    /// use celerity::App;
    /// use celerity::testing::{TestRequest, block_on};
    ///
    /// async fn broken() -> String {
    ///     panic!("the ledger is locked")
    /// }
    ///
    /// let app = App::new().without_compiled_handlers().http("GET::/broken", broken).into_test();
    /// let error = block_on(app.call("GET::/broken", TestRequest::get("/broken"))).expect_error();
    /// assert_eq!((error.error_type(), error.message(), error.stack()), ("panic", "the handler panicked", ""));
    ///
    /// let app = app.expose_panics(true);
    /// let error = block_on(app.call("GET::/broken", TestRequest::get("/broken"))).expect_error();
    /// assert_eq!(error.message(), "the ledger is locked");
    /// assert!(!error.stack().is_empty());
    /// ```
    pub fn expose_panics(mut self, expose: bool) -> Self {
        self.settings.expose_panics = expose;
        self
    }

    /// Every registration, in the order added (compiled ones first).
    pub fn registrations(&self) -> Vec<Registration> {
        self.app.registrations()
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
    /// [`TestApp::handle`], or an [`App::handle`] taken before the
    /// application became a `TestApp`), in order.
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
    /// Where a real application would fail to start, with the same message:
    /// a handler's tag is malformed, two handlers are bound the same way, a
    /// guard is named but not registered, or, once the call runs, the
    /// handler takes `State<T>` of a `T` the `App` was given no value of,
    /// or configuration or a resource that its start could not prepare.
    pub fn call(&self, tag: &str, event: impl Into<Event>) -> Call {
        let registrations = self.app.checked_registrations(None).unwrap_or_else(|error| panic!("{error}"));
        let registration = registrations
            .iter()
            .find(|r| match &r.key {
                HandlerKey::Tag(registered) => {
                    parse_tag(tag_kind(r.kind), tag).map_or(registered == tag, |normal| *registered == normal.tag)
                }
                HandlerKey::Name(_) => false,
            })
            .or_else(|| registrations.iter().find(|r| matches!(&r.key, HandlerKey::Name(n) if n == tag)))
            // Served behind the same layers as in production.
            .map(|registration| self.app.served(registration, self.settings.max_message_bytes));
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
            state: self.app.shared_state().share(),
            grace: self.settings.cancel_grace,
            handle: self.handle.clone(),
            default_id: format!("test-{}", self.next_id.fetch_add(1, Ordering::Relaxed)),
            cancel_after: None,
            expose_panics: self.settings.expose_panics,
            configuration: self.app.configuration_given_or_empty(),
        }
    }
}

impl fmt::Debug for TestApp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestApp")
            .field("handlers", &self.registrations().iter().map(|r| r.key.to_string()).collect::<Vec<_>>())
            .field("state", self.app.shared_state())
            .field("cancel_grace", &self.settings.cancel_grace)
            .field("expose_panics", &self.settings.expose_panics)
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
/// use celerity::App;
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
/// let app = App::new().without_compiled_handlers().http("GET::/slow", slow).into_test();
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
    configuration: Configuration,
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
        state.insert(Arc::new(self.configuration.clone()));
        let now = SystemTime::now();
        let clock = Clock::starting_at(now);
        let dispatch = arrived(self.event.into_dispatch(&self.tag, self.default_id, now));
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
            if let Some(registration) = &registration
                && let Err(error) = crate::registry::prepare(&configuration, std::slice::from_ref(registration)).await
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
/// use celerity::App;
/// use celerity::testing::{TestApp, TestTrigger};
/// use celerity::{CancelReason, Context};
///
/// async fn forever(cx: Context) -> celerity::Result<()> {
///     cx.cancelled().await;
///     Err(celerity::Error::msg("stopped"))
/// }
///
/// let app = App::new().without_compiled_handlers().schedule("source::nightly::cleanup", forever).into_test();
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
