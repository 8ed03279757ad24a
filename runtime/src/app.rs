//! The application: its handlers and shared state, and serving them.

use std::future::Future;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};

use tokio::sync::mpsc;

use crate::command::Command;
use crate::config::{ConfigError, Configuration};
use crate::consumer::{ConsumerBatchHandler, ConsumerHandler};
use crate::context::StateMap;
use crate::custom::CustomHandler;
use crate::driver;
use crate::error::Error;
use crate::guard::{Guard, Guards};
use crate::handle::AppHandle;
use crate::http::{HttpHandler, HttpService};
use crate::layer::{EventLayer, HttpLayer, Layers, Step};
use crate::registry::{self, HandlerKey, HandlerKind, Registration};
use crate::schedule::ScheduleHandler;
use crate::settings::Settings;
use crate::websocket::WebSocketHandler;

/// A handler application: the handlers to serve, the state they share, and
/// how to reach the runtime.
///
/// ```no_run
/// use celerity::App;
///
/// async fn hello() -> &'static str {
///     "hello"
/// }
///
/// # async fn run() -> celerity::Result<()> {
/// App::new().http("GET::/hello", hello).run().await
/// # }
/// ```
pub struct App {
    commands: mpsc::UnboundedSender<Command>,
    command_rx: mpsc::UnboundedReceiver<Command>,
    registrations: Vec<Registration>,
    state: StateMap,
    include_compiled: bool,
    settings: Option<Settings>,
    io_thread: Option<bool>,
    layers: Layers,
    guards: Guards,
    configuration: OnceLock<Configuration>,
}

impl Default for App {
    fn default() -> Self {
        App::new()
    }
}

/// An application with every handler the attribute macros registered.
pub fn app() -> App {
    App::new()
}

impl App {
    /// An application with every handler the attribute macros registered in
    /// this binary, to which more can be added.
    pub fn new() -> Self {
        let (commands, command_rx) = mpsc::unbounded_channel();
        App {
            commands,
            command_rx,
            registrations: Vec::new(),
            state: StateMap::default(),
            include_compiled: true,
            settings: None,
            io_thread: None,
            layers: Layers::default(),
            guards: Guards::default(),
            configuration: OnceLock::new(),
        }
    }

    /// The application's configuration and resources (see
    /// [`crate::config`]): what the environment describes, made on the
    /// first call (which reads the resource links file and nothing else),
    /// or what [`App::with_configuration`] gave. Read it in `main` before
    /// serving; handlers take it, or [`Config<T>`](crate::config::Config),
    /// as an argument.
    ///
    /// ```no_run
    /// # async fn run() -> celerity::Result<()> {
    /// let app = celerity::App::new();
    /// let secret = app.configuration()?.require("JWT_SECRET").await?;
    /// # let _ = secret;
    /// app.run().await
    /// # }
    /// ```
    pub fn configuration(&self) -> Result<Configuration, ConfigError> {
        if let Some(configuration) = self.configuration.get() {
            return Ok(configuration.clone());
        }
        let configuration = Configuration::from_env()?;
        Ok(self.configuration.get_or_init(|| configuration).clone())
    }

    /// The configuration given with [`App::with_configuration`] (or read
    /// already), else an empty one: what an application serves in process
    /// for a test, which reads nothing of the test process's environment.
    pub(crate) fn configuration_given_or_empty(&self) -> Configuration {
        self.configuration.get().cloned().unwrap_or_else(Configuration::empty)
    }

    /// Serves with `configuration` rather than what the environment
    /// describes: for tests, and for stores of the application's own.
    pub fn with_configuration(self, configuration: Configuration) -> Self {
        let cell = OnceLock::new();
        let _ = cell.set(configuration);
        App { configuration: cell, ..self }
    }

    /// Leaves out the handlers the attribute macros registered: only the ones
    /// added to this `App` are served. For tests and for binaries that
    /// assemble handlers from libraries.
    pub fn without_compiled_handlers(mut self) -> Self {
        self.include_compiled = false;
        self
    }

    /// Adds a layer around every handler, of every kind (see
    /// [`crate::layer`]): the outermost, in the order added.
    ///
    /// ```
    /// use celerity::layer::{self, Answer, Event, Next};
    ///
    /// // While the application is paused, every event fails in its kind's own way.
    /// let paused = std::env::var_os("PAUSED").is_some();
    /// let pause = layer::from_fn(move |event: Event, next: Next| async move {
    ///     if paused {
    ///         return Answer::failure(event.kind(), "the application is paused");
    ///     }
    ///     next.run(event).await
    /// });
    /// let app = celerity::App::new().layer(pause);
    /// # drop(app);
    /// ```
    pub fn layer<L: EventLayer>(mut self, layer: L) -> Self {
        self.layers.add(Step::event(layer));
        self
    }

    /// Adds a layer around every handler of `kind`, inside the
    /// application's own layers (see [`crate::layer`]).
    pub fn layer_for<L: EventLayer>(mut self, kind: HandlerKind, layer: L) -> Self {
        self.layers.add_for(kind, Step::event(layer));
        self
    }

    /// Adds a tower layer over `http::Request`s around every HTTP handler,
    /// such as `tower-http`'s (see [`crate::layer`]); it is a layer of the
    /// HTTP kind, beside those of [`App::layer_for`], in the order added.
    pub fn http_layer<L: HttpLayer>(mut self, layer: L) -> Self {
        self.layers.add_http(layer);
        self
    }

    /// Registers `guard` under `name`, for handlers to name (see
    /// [`crate::guard`]). A name registered twice stops the application at
    /// startup.
    pub fn guard<G: Guard>(mut self, name: &str, guard: G) -> Self {
        self.guards.add(name, guard);
        self
    }

    /// Shares `value` with every handler, which takes it as `State<T>`. One
    /// value per type; a second of the same type replaces the first.
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(Arc::new(value));
        self
    }

    /// Adds an HTTP handler for a tag such as `GET::/orders/{id}`.
    #[track_caller]
    pub fn http<H, Args>(self, tag: &str, handler: H) -> Self
    where
        H: HttpHandler<Args>,
        Args: 'static,
    {
        let registration = Registration::http(HandlerKey::Tag(tag.to_string()), handler);
        self.register(registration)
    }

    /// Serves the HTTP events of `tags` with one tower service of
    /// `http::Request`s, such as an axum `Router`: the tags go into `Ready`
    /// and the manifest like any handler's, and each request reaches the
    /// service as it came (see [`HttpService`](crate::http::HttpService)),
    /// so the service's own routing and extractors work as they would
    /// behind hyper. The application's layers, and its HTTP layers, wrap
    /// the service as they wrap handlers.
    ///
    /// ```no_run
    /// use axum::{Json, Router, extract::Path, routing::get};
    ///
    /// async fn get_order(Path(id): Path<u64>) -> Json<u64> {
    ///     Json(id)
    /// }
    ///
    /// #[celerity::main]
    /// async fn main() -> celerity::App {
    ///     let router = Router::new().route("/orders/{id}", get(get_order));
    ///     celerity::App::new().service(["GET::/orders/{id}"], router)
    /// }
    /// ```
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

    /// Adds an HTTP handler bound by the blueprint handler name (or published
    /// name) `name`; its tag comes from the runtime at the handshake.
    #[track_caller]
    pub fn http_named<H, Args>(self, name: &str, handler: H) -> Self
    where
        H: HttpHandler<Args>,
        Args: 'static,
    {
        let registration = Registration::http(HandlerKey::Name(name.to_string()), handler);
        self.register(registration)
    }

    /// Adds a WebSocket handler for a tag such as `event::$default`,
    /// `event::$connect` or `action::sendMessage`. See [`crate::websocket`].
    ///
    /// ```
    /// use celerity::websocket::Message;
    /// async fn on_message(message: Message) -> celerity::Result<()> {
    ///     println!("{:?}", message.text());
    ///     Ok(())
    /// }
    /// let app = celerity::App::new().websocket("event::$default", on_message);
    /// assert_eq!(app.registrations().last().unwrap().kind(), celerity::HandlerKind::WebSocket);
    /// ```
    #[track_caller]
    pub fn websocket<H, Args>(self, tag: &str, handler: H) -> Self
    where
        H: WebSocketHandler<Args>,
        Args: 'static,
    {
        let registration = Registration::websocket(HandlerKey::Tag(tag.to_string()), handler);
        self.register(registration)
    }

    /// Adds a WebSocket handler bound by the blueprint handler name (or
    /// published name) `name`; its tag comes from the runtime at the handshake.
    #[track_caller]
    pub fn websocket_named<H, Args>(self, name: &str, handler: H) -> Self
    where
        H: WebSocketHandler<Args>,
        Args: 'static,
    {
        let registration = Registration::websocket(HandlerKey::Name(name.to_string()), handler);
        self.register(registration)
    }

    /// Adds a consumer handler for a tag such as
    /// `source::orders-queue::processOrders` that runs for each record of a
    /// batch, in order, one at a time; the SDK names the records that fail.
    /// See [the `consumer` module](mod@crate::consumer).
    ///
    /// ```
    /// use celerity::consumer::Record;
    /// #[derive(serde::Deserialize)]
    /// struct OrderPlaced { id: u64 }
    /// async fn process(order: Record<OrderPlaced>) -> celerity::Result<()> {
    ///     println!("order {}", order.id);
    ///     Ok(())
    /// }
    /// let app = celerity::App::new().consumer("source::orders-queue::processOrders", process);
    /// # drop(app);
    /// ```
    #[track_caller]
    pub fn consumer<H, Args>(self, tag: &str, handler: H) -> Self
    where
        H: ConsumerHandler<Args>,
        Args: 'static,
    {
        let registration = Registration::consumer(HandlerKey::Tag(tag.to_string()), handler);
        self.register(registration)
    }

    /// Adds a per-record consumer handler bound by the blueprint handler name
    /// (or published name) `name`.
    #[track_caller]
    pub fn consumer_named<H, Args>(self, name: &str, handler: H) -> Self
    where
        H: ConsumerHandler<Args>,
        Args: 'static,
    {
        let registration = Registration::consumer(HandlerKey::Name(name.to_string()), handler);
        self.register(registration)
    }

    /// Adds a per-record consumer handler for a tag that runs up to
    /// `concurrency` records of a batch at once. A record's handler is
    /// polled first on the batch's own task; only one that waits (on I/O,
    /// a timer) is moved to a task of its own, to run beside the others, so
    /// records that finish at once cost no task each.
    #[track_caller]
    pub fn consumer_concurrent<H, Args>(self, tag: &str, concurrency: usize, handler: H) -> Self
    where
        H: ConsumerHandler<Args>,
        Args: 'static,
    {
        let registration = Registration::consumer_concurrent(HandlerKey::Tag(tag.to_string()), concurrency, handler);
        self.register(registration)
    }

    /// Adds a consumer handler for a tag that takes the whole
    /// [`crate::consumer::Batch`] and answers with a
    /// [`crate::consumer::BatchOutcome`].
    ///
    /// ```
    /// use celerity::consumer::{Batch, BatchOutcome};
    /// async fn process(batch: Batch) -> BatchOutcome {
    ///     batch.outcome()
    /// }
    /// let app = celerity::App::new().consumer_batch("source::orders-queue::processOrders", process);
    /// # drop(app);
    /// ```
    #[track_caller]
    pub fn consumer_batch<H, Args>(self, tag: &str, handler: H) -> Self
    where
        H: ConsumerBatchHandler<Args>,
        Args: 'static,
    {
        let registration = Registration::consumer_batch(HandlerKey::Tag(tag.to_string()), handler);
        self.register(registration)
    }

    /// Adds a whole-batch consumer handler bound by the blueprint handler
    /// name (or published name) `name`.
    #[track_caller]
    pub fn consumer_batch_named<H, Args>(self, name: &str, handler: H) -> Self
    where
        H: ConsumerBatchHandler<Args>,
        Args: 'static,
    {
        let registration = Registration::consumer_batch(HandlerKey::Name(name.to_string()), handler);
        self.register(registration)
    }

    /// Adds a schedule handler for a tag such as `source::nightly::cleanup`.
    /// See [`crate::schedule`].
    #[track_caller]
    pub fn schedule<H, Args>(self, tag: &str, handler: H) -> Self
    where
        H: ScheduleHandler<Args>,
        Args: 'static,
    {
        let registration = Registration::schedule(HandlerKey::Tag(tag.to_string()), handler);
        self.register(registration)
    }

    /// Adds a schedule handler bound by the blueprint handler name (or
    /// published name) `name`.
    #[track_caller]
    pub fn schedule_named<H, Args>(self, name: &str, handler: H) -> Self
    where
        H: ScheduleHandler<Args>,
        Args: 'static,
    {
        let registration = Registration::schedule(HandlerKey::Name(name.to_string()), handler);
        self.register(registration)
    }

    /// Adds a custom handler for a tag such as `custom::resizeImage`. See
    /// [`crate::custom`].
    #[track_caller]
    pub fn custom<H, Args>(self, tag: &str, handler: H) -> Self
    where
        H: CustomHandler<Args>,
        Args: 'static,
    {
        let registration = Registration::custom(HandlerKey::Tag(tag.to_string()), handler);
        self.register(registration)
    }

    /// Adds a custom handler bound by the blueprint handler name (or
    /// published name) `name`.
    #[track_caller]
    pub fn custom_named<H, Args>(self, name: &str, handler: H) -> Self
    where
        H: CustomHandler<Args>,
        Args: 'static,
    {
        let registration = Registration::custom(HandlerKey::Name(name.to_string()), handler);
        self.register(registration)
    }

    /// Adds a registration of any kind.
    pub fn register(mut self, registration: Registration) -> Self {
        self.registrations.push(registration);
        self
    }

    /// Uses these settings instead of reading them from the environment.
    pub fn settings(mut self, settings: Settings) -> Self {
        self.settings = Some(settings);
        self
    }

    /// Serves the event stream from a thread of its own (`true`, the
    /// default) or as a task on the application's runtime (`false`),
    /// whatever `CELERITY_IO_THREAD` says.
    ///
    /// On its own thread, handlers that block *every* worker thread of the
    /// runtime (with `std::thread::sleep` or a synchronous client, say)
    /// still cannot hold back frames, cancellations or deadline answers, and
    /// request and response buffers are allocated and freed on one thread.
    /// As a task, a small event served one or a few at a time costs less
    /// (no thread hop each way); many at once and large bodies cost more
    /// (buffers allocated on one worker and freed on another), and blocking
    /// handlers can hold the stream back (a watchdog covers a single
    /// blocked worker). The README's Architecture section gives the
    /// measured trade. Handlers that keep blocking work on
    /// `tokio::task::spawn_blocking` and serve small events one or a few at
    /// a time can turn it off.
    ///
    /// [`run_main`] (and so `#[celerity::main]`) sizes its runtime before
    /// the application is built, leaving a core to the stream's thread
    /// unless `CELERITY_IO_THREAD=false`. Turned off here instead, the
    /// stream runs on a runtime one worker short (a warning says so): turn
    /// it off through the variable, or size the runtime with
    /// `#[celerity::main(worker_threads = N)]` or [`run_main_on`].
    ///
    /// ```
    /// # async fn run() -> celerity::Result<()> {
    /// celerity::App::new().io_thread(false).run().await
    /// # }
    /// ```
    pub fn io_thread(mut self, on: bool) -> Self {
        self.io_thread = Some(on);
        self
    }

    /// A handle on the application once it runs, for background tasks: to
    /// withhold or resize credit, or to shut down.
    pub fn handle(&self) -> AppHandle {
        AppHandle::new(self.commands.clone())
    }

    /// The state given with [`App::state`].
    pub(crate) fn shared_state(&self) -> &StateMap {
        &self.state
    }

    /// The settings given with [`App::settings`], or the SDK's defaults:
    /// what an application is served with in process, where the
    /// environment is the test process's and not the runtime's.
    pub(crate) fn settings_or_defaults(&self) -> Settings {
        self.settings.clone().unwrap_or_else(Settings::defaults)
    }

    /// The channel behind [`App::handle`], taken for serving the
    /// application in process: its sender, and the receiver of what is
    /// asked through it (the application keeps a closed one).
    pub(crate) fn take_commands(&mut self) -> (mpsc::UnboundedSender<Command>, mpsc::UnboundedReceiver<Command>) {
        let (_, closed) = mpsc::unbounded_channel();
        (self.commands.clone(), std::mem::replace(&mut self.command_rx, closed))
    }

    /// Every registration, checked as at startup for what stops an
    /// application whatever it is asked: a malformed tag, two handlers
    /// bound the same way, a `State<T>` that `state` does not hold (when
    /// given), a guard named twice or not at all.
    pub(crate) fn checked_registrations(&self, state: Option<&StateMap>) -> Result<Vec<Registration>, Error> {
        let registrations = self.registrations();
        registry::check(&registrations).map_err(Error::from)?;
        if let Some(state) = state {
            registry::check_state(&registrations, state).map_err(Error::from)?;
        }
        self.guards.check(&registrations).map_err(Error::from)?;
        Ok(registrations)
    }

    /// `registration` as it is served: behind the application's layers,
    /// its kind's, its own and its guards, answering within messages of at
    /// most `max_message_bytes`.
    pub(crate) fn served(&self, registration: &Registration, max_message_bytes: usize) -> Registration {
        registration.layered(&self.layers, self.guards.step_for(registration), max_message_bytes)
    }

    /// Every registration this application would serve, compiled ones first.
    pub fn registrations(&self) -> Vec<Registration> {
        let mut all = if self.include_compiled { registry::compiled() } else { Vec::new() };
        all.extend(self.registrations.iter().cloned());
        all
    }

    /// Connects to the runtime and serves until it drains, the process is
    /// asked to stop, or something fails. Must be called inside a tokio
    /// runtime; handlers run on it.
    ///
    /// Started by AWS Lambda (`AWS_LAMBDA_RUNTIME_API` set, no
    /// `CELERITY_RUNTIME_SOCKET`), it serves the function's invocations
    /// instead, with the `aws-lambda` feature, and fails saying so without.
    pub async fn run(self) -> Result<(), Error> {
        crate::logging::init_default();
        // A binary with a malformed tag, or two handlers for one tag, is
        // broken whatever is asked of it, manifest included.
        let registrations = self.checked_registrations(Some(&self.state))?;
        // The manifest needs nothing from the environment the runtime sets.
        if crate::manifest::requested() {
            return crate::manifest::print(&registrations);
        }
        let mut settings = match self.settings.clone() {
            Some(settings) => settings,
            None => Settings::from_env().map_err(|e| Error::typed("SettingsError", e))?,
        };
        if std::env::var_os("CELERITY_EXPOSE_STACK").is_some() {
            // The old name of the opt-in: said once, since it no longer does
            // anything and a stack the operator expects would just be missing.
            tracing::warn!(
                "CELERITY_EXPOSE_STACK is no longer read: set CELERITY_EXPOSE_PANICS=true to send a panic's message \
                 and stack to the runtime"
            );
        }
        if let Some(on) = self.io_thread {
            settings.io_thread = on;
        }
        if !settings.io_thread && crate::workers::core_left_to_the_stream() {
            tracing::warn!(
                "the event stream is served as a task (io_thread off in code) on run_main's default runtime, which \
                 left a core to the stream's own thread: set CELERITY_IO_THREAD=false instead, which run_main reads, \
                 or size the runtime (#[celerity::main(worker_threads = N)])"
            );
        }
        // Resources and typed configuration are checked before the runtime
        // is reached, so that a missing one is said once, at the start: here
        // for every handler, on Lambda in the function's init for those the
        // function serves.
        let configuration = self.configuration().map_err(|error| Error::typed("ConfigError", error))?;
        tracing::debug!("configuration: {}", configuration.describe());
        let on_lambda = crate::lambda::detect(|name| std::env::var(name).ok()) == crate::lambda::Platform::Lambda;
        if !on_lambda {
            crate::registry::prepare(&configuration, &registrations).await?;
        }
        let registrations: Vec<Registration> =
            registrations.iter().map(|registration| self.served(registration, settings.max_message_bytes)).collect();
        let mut state = self.state;
        state.insert(Arc::new(configuration.clone()));
        if on_lambda {
            let state = Arc::new(state);
            return crate::lambda::serve(
                registrations,
                state,
                &configuration,
                settings,
                self.commands,
                self.command_rx,
            )
            .await;
        }
        let handle = AppHandle::new(self.commands);
        let served = driver::serve(registrations, Arc::new(state), settings, handle, self.command_rx).await;
        // After the drain: the handlers in flight have finished.
        configuration.close().await;
        served.map_err(Error::from)
    }
}

/// Serves every handler the attribute macros registered, for applications
/// that build their own tokio runtime: `App::new().run()` with nothing added.
///
/// ```no_run
/// // Inside a runtime the application built itself, e.g. under `#[tokio::main]`:
/// async fn serve() -> celerity::Result<()> {
///     celerity::run().await
/// }
/// ```
pub async fn run() -> Result<(), Error> {
    App::new().run().await
}

/// Runs an application's `main`: builds a multi-threaded tokio runtime, runs
/// `main` on it, logs an error it returns, and gives the process's exit code.
/// This is what `#[celerity::main]` expands to; [`run_main_on`] does the same
/// on a runtime of another shape.
///
/// The runtime has one worker thread fewer than the process may use cores,
/// and at least one: the event stream's own thread takes the last core. On
/// two cores that is one worker, so a handler that blocks it holds the
/// other handlers back until it returns (never the stream: frames,
/// deadlines and cancellations go on). With `CELERITY_IO_THREAD=false`, on
/// AWS Lambda, or with `TOKIO_WORKER_THREADS` set, tokio sizes it (a worker
/// per core, or that many). [`run_main_on`] sizes it any other way.
///
/// ```no_run
/// use std::process::ExitCode;
///
/// async fn hello() -> &'static str { "hello" }
///
/// fn main() -> ExitCode {
///     celerity::run_main(|| async { celerity::App::new().http("GET::/hello", hello).run().await })
/// }
/// ```
pub fn run_main<F, Fut>(main: F) -> ExitCode
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<(), Error>>,
{
    run_main_on(crate::workers::runtime(), main)
}

/// [`run_main`] on the tokio runtime `runtime` builds: a current-thread
/// runtime, or a multi-threaded one sized or tuned as the application wants.
/// Every driver (I/O, time, signals) is enabled on it, as serving needs them.
/// `#[celerity::main(flavor = "current_thread")]` and
/// `#[celerity::main(worker_threads = N)]` expand to this, and need no tokio
/// dependency of the application's own.
///
/// On a current-thread runtime everything runs on the thread that called
/// `run_main_on` (the event stream apart, on its own thread unless
/// [`App::io_thread`] is off), so a handler that blocks (a synchronous
/// client, CPU-heavy work) stops every other handler: move such work to
/// `tokio::task::spawn_blocking`, or stay on the multi-threaded runtime. It
/// costs no less CPU per event than [`run_main`]'s runtime, which leaves a
/// core to the stream's thread (measured on 2 cores, BENCHMARKS.md); a
/// multi-threaded runtime with a worker per core costs up to twice as much
/// on 2 cores, since its scheduler wakes another worker on nearly every
/// event.
///
/// ```no_run
/// use std::process::ExitCode;
///
/// use tokio::runtime::Builder;
///
/// fn main() -> ExitCode {
///     celerity::run_main_on(Builder::new_current_thread(), || async { celerity::run().await })
/// }
/// ```
///
/// ```no_run
/// # use std::process::ExitCode;
/// # use tokio::runtime::Builder;
/// fn main() -> ExitCode {
///     let mut runtime = Builder::new_multi_thread();
///     runtime.worker_threads(4).thread_name("handlers");
///     celerity::run_main_on(runtime, || async { celerity::run().await })
/// }
/// ```
// tokio's own `Builder` rather than an enum of the SDK's: it is the
// vocabulary tokio users know, tokio 1 keeps it stable, and it carries every
// knob (thread names and stack size, `event_interval`,
// `global_queue_interval`, thread hooks), the scheduling ones being what an
// application tuning its cost per event reaches for. An enum would copy a
// subset and lag behind.
pub fn run_main_on<F, Fut>(mut runtime: tokio::runtime::Builder, main: F) -> ExitCode
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<(), Error>>,
{
    crate::logging::init_default();
    let runtime = match runtime.enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            tracing::error!("could not start the tokio runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(main());
    // Handlers that block their threads must not hold the exit up.
    runtime.shutdown_background();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error}");
            exit_code_for(&error)
        }
    }
}

fn exit_code_for(error: &Error) -> ExitCode {
    match error.source_error().and_then(|e| e.downcast_ref::<driver::ServeError>()) {
        Some(driver::ServeError::Session(crate::session::SessionError::Interrupted)) => ExitCode::from(130),
        _ => ExitCode::FAILURE,
    }
}
