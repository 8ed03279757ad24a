//! The tokio driver around the protocol core: one connection, one reader,
//! one writer, a task per event in flight ([`runner`]). It holds no
//! protocol rules of its own; it carries out the session's actions.
//!
//! By default the stream is served from a thread of its own, on a
//! single-threaded tokio runtime, while handlers run on the application's
//! runtime. No user code runs on that thread (even building a handler's
//! future happens inside its task), so a handler that blocks every worker
//! thread of the application cannot stop frames being read, cancellations
//! delivered or deadlines answered, and the buffers of requests and
//! responses are allocated and freed on that one thread.
//!
//! With [`crate::App::io_thread`]`(false)` (or `CELERITY_IO_THREAD=false`)
//! the stream is served as one task on the application's runtime, beside
//! the handlers' tasks: a handler's task and the stream's wake each other on
//! the same worker, with no thread hop, which makes a small event cheaper.
//! A handler blocking one worker thread leaves the others serving the stream
//! (with the [`Watchdog`]'s help); blocking every worker stops it too.
//!
//! Either way a blocked worker thread runs no other handler. Blocking work
//! (file I/O through `std::fs`, CPU-heavy computation, a synchronous client)
//! belongs on tokio's blocking pool:
//!
//! ```ignore
//! async fn thumbnail(Path(id): Path<String>) -> Result<Vec<u8>, celerity::Error> {
//!     let bytes = tokio::task::spawn_blocking(move || render(&id)).await??;
//!     Ok(bytes)
//! }
//! ```
//!
//! Dropping a handler at its deadline cannot stop blocking code either: it
//! runs on until it returns, and only its answer is discarded.
//!
//! What it sees is also shown to [`crate::observe`]: the `RuntimeConfig`
//! (for the tracing and metrics flags) before the session takes it, every
//! frame sent (results, for outcomes and latencies), each handler's start
//! (which gives the span its task runs in), WebSocket sends ending, and the
//! stream's state after each turn (for the gauges).

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::FutureExt as _;
use tokio::signal::unix::{Signal, SignalKind};
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::ReceiverStream;

use crate::codec::{self, Inbound, Outgoing};
use crate::command::Command;
use crate::context::{Context, Shared, StateMap};
use crate::handle::AppHandle;
use crate::observe::Observer;
use crate::registry::Registration;
use crate::session::{Action, FastMap, HandlerSpec, Input, Session, SessionError, WsOutcome};
use crate::settings::Settings;
use crate::transport::{self, ConnectError, error_chain};

mod runner;

use runner::{Job, Runner, Runners};

/// Why serving stopped with a failure.
#[derive(Debug)]
pub enum ServeError {
    /// No connection to the runtime.
    Connect(ConnectError),
    /// The protocol ended in an error: a refusal, a version mismatch, the
    /// runtime going away.
    Session(SessionError),
    /// The stream could not be opened.
    Stream(String),
    /// The driver's own thread or signal handling failed.
    Internal(String),
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServeError::Connect(error) => error.fmt(f),
            ServeError::Session(error) => error.fmt(f),
            ServeError::Stream(error) => write!(f, "could not open the event stream: {error}"),
            ServeError::Internal(error) => write!(f, "the handler driver failed: {error}"),
        }
    }
}

impl std::error::Error for ServeError {}

/// How many commands are taken in one turn before the stream is looked at
/// again.
const COMMAND_BATCH: usize = 256;

/// How many frames already read in are taken in one turn before the
/// commands are looked at again.
const FRAME_BATCH: usize = 64;

struct Running {
    /// Tells this task from an earlier one for the same id, whose late
    /// completion must not be taken for this one's.
    generation: u64,
    runner: Runner,
    cx: Context,
}

struct Served {
    registrations: Vec<Registration>,
    state: Arc<StateMap>,
    app: tokio::runtime::Handle,
    handle: AppHandle,
    liveness: Option<Arc<Liveness>>,
}

/// What the watchdog reads of the stream task.
#[derive(Default)]
struct Liveness {
    turns: AtomicU64,
    in_flight: AtomicUsize,
    stop: AtomicBool,
}

/// Keeps the stream served when it shares the application's runtime and a
/// handler blocks a worker thread.
///
/// tokio's I/O driver is polled by whichever worker parks in it. When the
/// worker that last held it goes on to run a handler that blocks, the other
/// workers may be asleep on their condition variables, and nothing reads the
/// socket until the handler returns: the conformance test of one blocked
/// worker stalled in a third of its runs without this. So, every tick, when
/// events are in flight and the stream task has not turned since the last
/// tick, the watchdog spawns an empty task from outside the runtime. That
/// wakes a sleeping worker, which runs it, parks in the driver, and reads
/// what is waiting. A stalled stream is held up for a tick or two at most
/// (a few ticks more when the first event after a quiet spell blocks); a
/// stream that turns is only looked at, one with nothing in flight is looked
/// at a few times a second, and probes that bring no turn back off to that
/// pace too. Not started on a runtime with one worker, where no other worker
/// could take over.
struct Watchdog {
    liveness: Arc<Liveness>,
}

impl Watchdog {
    const TICK: Duration = Duration::from_millis(10);
    /// The pace with nothing in flight, and where the looks back off to
    /// while probes bring no turn: the stream is then simply waiting (on
    /// slow handlers, say), or every worker is blocked and no probe can help.
    const MAX_TICK: Duration = Duration::from_millis(160);

    fn start(liveness: Arc<Liveness>, app: tokio::runtime::Handle) -> Watchdog {
        let watched = Arc::clone(&liveness);
        let _ = std::thread::Builder::new().name("celerity-watchdog".to_string()).spawn(move || {
            let mut last = u64::MAX;
            let mut tick = Self::TICK;
            while !watched.stop.load(Ordering::Relaxed) {
                std::thread::sleep(tick);
                let turns = watched.turns.load(Ordering::Relaxed);
                let in_flight = watched.in_flight.load(Ordering::Relaxed);
                tick = if in_flight == 0 {
                    // Nothing a handler could be blocking: look rarely.
                    Self::MAX_TICK
                } else if turns == last {
                    drop(app.spawn(async {}));
                    (tick * 2).min(Self::MAX_TICK)
                } else {
                    Self::TICK
                };
                last = turns;
            }
        });
        Watchdog { liveness }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.liveness.stop.store(true, Ordering::Relaxed);
    }
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// Serves `registrations` until the session ends.
pub(crate) async fn serve(
    registrations: Vec<Registration>,
    state: Arc<StateMap>,
    settings: Settings,
    handle: AppHandle,
    command_rx: mpsc::UnboundedReceiver<Command>,
) -> Result<(), ServeError> {
    let app = tokio::runtime::Handle::current();
    if !settings.io_thread {
        // The watchdog can only help where another worker can take over.
        let workers = match app.runtime_flavor() {
            tokio::runtime::RuntimeFlavor::CurrentThread => 1,
            _ => app.metrics().num_workers(),
        };
        let liveness = (workers > 1).then(|| Arc::new(Liveness::default()));
        let _watchdog = liveness.clone().map(|liveness| Watchdog::start(liveness, app.clone()));
        let served = Served { registrations, state, app, handle, liveness };
        // A task rather than awaited here: `serve` is often the future of a
        // `block_on`, polled on a thread that is not a worker, and every
        // wake-up between it and the handlers would cross threads. Aborted
        // if this future is dropped (an application's own `select!`), so
        // that the stream does not go on being served by nobody's will.
        let mut task = AbortOnDrop(tokio::spawn(run_stream(served, settings, command_rx)));
        return (&mut task.0).await.unwrap_or_else(|error| {
            Err(ServeError::Internal(format!("the task serving the stream ended without a result: {error}")))
        });
    }
    let served = Served { registrations, state, app, handle, liveness: None };
    let (done_tx, done_rx) = oneshot::channel();
    std::thread::Builder::new()
        .name("celerity-io".to_string())
        .spawn(move || {
            let result = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                Ok(runtime) => runtime.block_on(run_stream(served, settings, command_rx)),
                Err(error) => Err(ServeError::Internal(format!("could not start the I/O runtime: {error}"))),
            };
            let _ = done_tx.send(result);
        })
        .map_err(|error| ServeError::Internal(format!("could not start the I/O thread: {error}")))?;
    done_rx.await.unwrap_or_else(|_| Err(ServeError::Internal("the I/O thread stopped without a result".to_string())))
}

async fn run_stream(
    served: Served,
    settings: Settings,
    mut commands: mpsc::UnboundedReceiver<Command>,
) -> Result<(), ServeError> {
    crate::panics::install(&settings);
    // Listening first: a signal while the runtime is still starting stops
    // the process cleanly rather than killing it.
    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sigint = signal(SignalKind::interrupt())?;

    let specs: Vec<HandlerSpec> = served.registrations.iter().map(Registration::spec).collect();
    let config = settings.session_config(specs);
    let handshake_timeout = Duration::from_millis(config.handshake_timeout_ms);

    let (out_tx, out_rx) = mpsc::channel::<Outgoing>(1024);
    let open = async {
        let channel =
            transport::connect(&settings.target, settings.connect_timeout).await.map_err(ServeError::Connect)?;
        tracing::debug!(target = %settings.target, "connected to the runtime");
        // The handshake's time runs from here. A gRPC server may hold the
        // stream's response headers back until its first frame (grpc-go
        // and grpcio do by default), so the stream not opening in time is,
        // from here, the RuntimeConfig not coming.
        let connected_at = now_ms();
        let open = codec::open(channel, ReceiverStream::new(out_rx), settings.max_message_bytes);
        let inbound = tokio::time::timeout(handshake_timeout, open)
            .await
            .map_err(|_| {
                ServeError::Session(SessionError::HandshakeTimeout {
                    expected: "RuntimeConfig, nor even the stream's response headers,",
                    waited_ms: handshake_timeout.as_millis() as u64,
                })
            })?
            .map_err(|status| ServeError::Stream(crate::excerpt::excerpt(&error_chain(&status)).into_owned()))?;
        Ok::<_, ServeError>((inbound, connected_at))
    };
    let (mut inbound, connected_at) = tokio::select! {
        inbound = open => inbound?,
        _ = sigterm.recv() => {
            tracing::info!("SIGTERM before the stream was open; stopping");
            return Ok(());
        }
        _ = sigint.recv() => {
            tracing::info!("SIGINT before the stream was open; stopping");
            return Ok(());
        }
    };
    let mut session = Session::new(config, connected_at);
    let mut observer = Observer::from_env();

    let mut out = Some(out_tx);
    let mut closed_our_half = false;
    let mut running: FastMap<Arc<str>, Running> = FastMap::default();
    // What each handler's events share, made at its first event.
    let mut shared: Vec<Option<Arc<Shared>>> = vec![None; served.registrations.len()];
    let mut generation: u64 = 0;
    let mut runners = Runners::new(served.app.clone(), served.handle.commands());
    // Senders waiting for their WsSendAck, by correlation id. Dropped with
    // this function, which tells every waiter the stream is gone.
    let mut ws_waiters: FastMap<String, oneshot::Sender<WsOutcome>> = FastMap::default();
    // One timer for the whole stream, re-armed only when the session's next
    // deadline comes before the one it is set for: a new timer every turn
    // costs a wake-up of the time driver per event. Armed too early (its
    // event was answered meanwhile), it only makes a turn with nothing due.
    let sleep = tokio::time::sleep(Duration::ZERO);
    tokio::pin!(sleep);
    let mut armed: Option<i64> = None;

    loop {
        while let Some(action) = session.poll_action() {
            match action {
                Action::Send(message) => {
                    observer.outbound(&message);
                    send(&mut out, Outgoing::Message(message)).await;
                }
                Action::SendHttp(result) => {
                    observer.outbound_http(&result);
                    send(&mut out, Outgoing::Http(result)).await;
                }
                Action::Start { handler, id, mut dispatch } => {
                    generation += 1;
                    let registration = &served.registrations[handler];
                    let span = observer.start(handler, registration, &id, &dispatch);
                    // A dispatch's tag is always its handler's bound tag: one
                    // copy per handler, shared by every context.
                    let shared = shared[handler]
                        .get_or_insert_with(|| {
                            let tag = Arc::from(dispatch.handler_tag.as_str());
                            Shared::new(tag, Arc::clone(&served.state), served.handle.clone())
                        })
                        .clone();
                    let cx = Context::of_handler(
                        Arc::clone(&id),
                        shared,
                        registration.origin.function,
                        dispatch.deadline_unix_ms,
                        std::mem::take(&mut dispatch.trace_context),
                    );
                    let runner = runners.start(Job {
                        endpoint: Arc::clone(&registration.endpoint),
                        source: dispatch.source.take(),
                        cx: cx.clone(),
                        id: Arc::clone(&id),
                        generation,
                        span,
                    });
                    running.insert(id, Running { generation, runner, cx });
                }
                Action::Cancel { id, reason } => {
                    if let Some(task) = running.get(id.as_str()) {
                        task.cx.cancel(reason);
                    }
                }
                Action::Abandon { id } => {
                    if let Some(task) = running.remove(id.as_str()) {
                        task.runner.abort();
                    }
                }
                // Held, and logged with the rest once the runtime accepts.
                Action::Report(report) => observer.report(report),
                Action::Serving => {
                    observer.serving(&served.registrations, settings.target.to_string(), session.credit().window())
                }
                // Said in the startup block.
                Action::UnversionedRuntime => tracing::debug!(
                    "the runtime did not say which protocol version it serves (it predates version negotiation); proceeding with protocol {}.{}",
                    crate::version::PROTOCOL_MAJOR,
                    crate::version::PROTOCOL_MINOR
                ),
                Action::Warn(message) => tracing::warn!("{message}"),
                Action::WsDone { correlation_id, outcome } => {
                    observer.ws_done(&outcome);
                    if let Some(waiter) = ws_waiters.remove(&correlation_id) {
                        let _ = waiter.send(outcome);
                    }
                }
                Action::Close => {
                    if let Some(tx) = out.take() {
                        linger(&tx).await;
                        closed_our_half = true;
                    }
                    // Dropping the sender ends our half of the stream.
                }
                Action::Exit(result) => {
                    observer.exit();
                    for (_, task) in running.drain() {
                        task.cx.cancel(crate::session::CancelReason::Shutdown);
                        task.runner.abort();
                    }
                    if closed_our_half {
                        // The frames are written by the connection's own
                        // task, which does not outlive the process (nor,
                        // with the I/O thread, that thread's runtime).
                        // The runtime ending its half in answer to ours is
                        // the sign that it has read everything; wait for
                        // that, briefly (less when stopping at once).
                        let wait = if result.is_ok() { Duration::from_secs(2) } else { Duration::from_millis(500) };
                        let _ =
                            tokio::time::timeout(wait, async { while let Ok(Some(_)) = inbound.message().await {} })
                                .await;
                    }
                    return result.map_err(ServeError::Session);
                }
            }
        }

        observer.end_of_turn(&session);
        if let Some(liveness) = &served.liveness {
            liveness.turns.fetch_add(1, Ordering::Relaxed);
            liveness.in_flight.store(session.in_flight(), Ordering::Relaxed);
        }

        let mut due = false;
        if let Some(at) = session.next_timer()
            && armed.is_none_or(|armed| at < armed)
        {
            // At most a day ahead: a deadline the runtime set further out
            // re-arms then, and `Instant` arithmetic cannot overflow.
            let wait = at.saturating_sub(now_ms()).clamp(0, 86_400_000) as u64;
            sleep.as_mut().reset(tokio::time::Instant::now() + Duration::from_millis(wait));
            armed = Some(at);
        }
        tokio::select! {
            message = inbound.message() => {
                // One reading of the clock for the turn: the session keeps
                // time in milliseconds, and a turn takes microseconds.
                let now = now_ms();
                let mut next = Some(message);
                let mut taken = 0;
                while let Some(message) = next {
                    let input = inbound_input(message, &mut observer, &served.registrations, settings.max_message_bytes);
                    let ended = matches!(input, Input::StreamEnded { .. } | Input::FrameTooLarge { .. });
                    session.handle(now, input);
                    // Frames already read in are taken in the same turn, as
                    // completions are: a burst of dispatches costs one turn,
                    // and their handlers start together.
                    taken += 1;
                    next = if ended || taken >= FRAME_BATCH { None } else { inbound.message().now_or_never() };
                }
            }
            Some(first) = commands.recv() => {
                // Take what is already waiting, in order, so the results of
                // completions go out together. One reading of the clock, as
                // for frames.
                let now = now_ms();
                let mut next = Some(first);
                let mut taken = 0;
                while let Some(command) = next {
                    match command {
                        Command::Input(input) => session.handle(now, input),
                        Command::WsSend { correlation_id, messages, timeout_ms, reply } => {
                            ws_waiters.insert(correlation_id.clone(), reply);
                            session.handle(now, Input::WsSend { correlation_id, messages, timeout_ms });
                        }
                        Command::Completed { id, generation, outcome } => {
                            match running.remove(&id) {
                                Some(task) if task.generation == generation => {
                                    runners.finished(task.runner);
                                    session.handle(now, Input::finished(id, outcome));
                                }
                                Some(task) => {
                                    running.insert(id, task);
                                }
                                None => {}
                            }
                            // Otherwise the session answered for it already
                            // (and perhaps holds a new event with that id).
                        }
                    }
                    taken += 1;
                    next = if taken < COMMAND_BATCH { commands.try_recv().ok() } else { None };
                }
            }
            _ = sigterm.recv() => {
                tracing::info!("SIGTERM: draining; a second signal stops at once");
                session.handle(now_ms(), Input::Shutdown);
            }
            _ = sigint.recv() => {
                tracing::info!("SIGINT: draining; a second signal stops at once");
                session.handle(now_ms(), Input::Shutdown);
            }
            _ = &mut sleep, if armed.is_some() => {
                armed = None;
                due = true;
            }
        }
        // Timers are fired after every turn, whichever branch woke it, so a
        // busy stream cannot hold a deadline back.
        let now = now_ms();
        if due || armed.is_some_and(|at| at <= now) {
            armed = None;
            session.handle(now, Input::Tick);
        }
    }
}

/// What the session is given for what the stream yielded.
fn inbound_input(
    message: Result<Option<Inbound>, tonic::Status>,
    observer: &mut Observer,
    registrations: &[Registration],
    max_message_bytes: usize,
) -> Input {
    match message {
        Ok(Some(Inbound::Frame(message))) => {
            // Seen before the session takes it: the RuntimeConfig says what
            // to trace and record.
            observer.inbound(&message, registrations);
            Input::Frame(message)
        }
        Ok(Some(Inbound::Dispatch(event))) => {
            observer.dispatched(&event);
            Input::Dispatch(event)
        }
        Ok(Some(Inbound::Undecodable { frame, error })) => Input::Undecodable { frame, error },
        Ok(None) => Input::StreamEnded { error: None },
        Err(status) => match codec::oversized(&status) {
            // Our own decoder's refusal, not the runtime's doing.
            Some((bytes, limit)) if limit == max_message_bytes => Input::FrameTooLarge { bytes, limit },
            _ => Input::StreamEnded { error: Some(error_chain(&status)) },
        },
    }
}

/// Aborts the task when dropped.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn signal(kind: SignalKind) -> Result<Signal, ServeError> {
    tokio::signal::unix::signal(kind)
        .map_err(|error| ServeError::Internal(format!("could not listen for signals: {error}")))
}

/// Queues `frame` to be written, waiting when the runtime stops reading
/// (backpressure rather than an unbounded queue); once the stream is gone,
/// there is nowhere to write it.
async fn send(out: &mut Option<mpsc::Sender<Outgoing>>, frame: Outgoing) {
    if let Some(tx) = out
        && tx.send(frame).await.is_err()
    {
        *out = None;
    }
}

/// Waits, briefly, for the frames already queued to be taken by the
/// connection before our half of the stream is closed.
async fn linger(tx: &mpsc::Sender<Outgoing>) {
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        while tx.capacity() < tx.max_capacity() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await;
}
