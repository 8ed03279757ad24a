//! The tokio driver around the protocol core: one connection, one reader,
//! one writer, a task per event. It holds no protocol rules of its own; it
//! carries out the session's actions.
//!
//! The stream is served from a thread of its own, on a single-threaded tokio
//! runtime, while handlers run on the application's runtime. A handler that
//! blocks every worker thread of the application (with `std::thread::sleep`,
//! say) therefore cannot stop frames being read, cancellations delivered or
//! deadlines answered.

use std::collections::HashMap;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use celerity_proto::v1::{
    HandlerError, HandlerMessage, RuntimeMessage, handler_runtime_service_client::HandlerRuntimeServiceClient,
    result::Outcome,
};
use futures_util::FutureExt;
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;
use tokio_stream::wrappers::ReceiverStream;

use crate::context::{Context, StateMap};
use crate::handle::AppHandle;
use crate::registry::Registration;
use crate::session::{Action, HandlerSpec, Input, Session, SessionConfig, SessionError, error_type};
use crate::settings::Settings;
use crate::transport::{self, ConnectError, error_chain};

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

/// Commands from the application to the running session.
#[derive(Debug)]
pub(crate) enum Command {
    Input(Input),
}

struct Running {
    abort: AbortHandle,
    cx: Context,
}

struct Served {
    registrations: Vec<Registration>,
    state: Arc<StateMap>,
    app: tokio::runtime::Handle,
    handle: AppHandle,
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
    let (done_tx, done_rx) = oneshot::channel();
    let served = Served { registrations, state, app, handle };
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
    let channel = transport::connect(&settings.target, settings.connect_timeout).await.map_err(ServeError::Connect)?;
    tracing::debug!(target = %settings.target, "connected to the runtime");

    let specs: Vec<HandlerSpec> = served
        .registrations
        .iter()
        .map(|r| HandlerSpec { key: r.key.clone(), max_concurrent: r.max_concurrent, label: r.origin.to_string() })
        .collect();
    let mut config = SessionConfig::new(specs, settings.concurrency);
    config.cancel_grace_ms = settings.cancel_grace.as_millis() as u64;
    config.shutdown_grace_ms = settings.shutdown_grace.as_millis() as u64;
    let handshake_timeout = Duration::from_millis(config.handshake_timeout_ms);
    let mut session = Session::new(config, now_ms());

    let mut client = HandlerRuntimeServiceClient::new(channel)
        .max_decoding_message_size(settings.max_message_bytes)
        .max_encoding_message_size(settings.max_message_bytes);
    let (out_tx, out_rx) = mpsc::channel::<HandlerMessage>(1024);
    let response = tokio::time::timeout(handshake_timeout, client.event_stream(ReceiverStream::new(out_rx)))
        .await
        .map_err(|_| {
            ServeError::Session(SessionError::HandshakeTimeout {
                expected: "the event stream to open",
                waited_ms: handshake_timeout.as_millis() as u64,
            })
        })?
        .map_err(|status| ServeError::Stream(error_chain(&status)))?;
    let mut inbound = response.into_inner();

    let mut sigterm = signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut sigint = signal(tokio::signal::unix::SignalKind::interrupt())?;

    let mut out = Some(out_tx);
    let mut running: HashMap<String, Running> = HashMap::new();
    let (done_tx, mut done_rx) = mpsc::unbounded_channel::<(String, Outcome)>();

    loop {
        while let Some(action) = session.poll_action() {
            match action {
                Action::Send(message) => {
                    if let Some(tx) = &out {
                        // Waits when the runtime stops reading: backpressure
                        // rather than an unbounded queue.
                        if tx.send(message).await.is_err() {
                            out = None;
                        }
                    }
                }
                Action::Start { handler, dispatch } => {
                    let id = dispatch.id.clone();
                    let registration = &served.registrations[handler];
                    let cx = Context::new(
                        id.clone(),
                        dispatch.handler_tag.clone(),
                        registration.origin.function,
                        dispatch.deadline_unix_ms,
                        dispatch.trace_context.clone(),
                        Arc::clone(&served.state),
                        served.handle.clone(),
                    );
                    let future = registration.handler.call(dispatch, cx.clone());
                    let done = done_tx.clone();
                    let task_id = id.clone();
                    let task = served.app.spawn(async move {
                        let outcome = match AssertUnwindSafe(future).catch_unwind().await {
                            Ok(outcome) => outcome,
                            Err(panic) => panic_outcome(panic.as_ref()),
                        };
                        let _ = done.send((task_id, outcome));
                    });
                    running.insert(id, Running { abort: task.abort_handle(), cx });
                }
                Action::Cancel { id, reason } => {
                    if let Some(task) = running.get(&id) {
                        task.cx.cancel(reason);
                    }
                }
                Action::Abandon { id } => {
                    if let Some(task) = running.remove(&id) {
                        task.abort.abort();
                    }
                }
                Action::Report(report) => {
                    if report.is_complete() {
                        tracing::info!("{report}");
                    } else {
                        tracing::warn!("{report}");
                    }
                }
                Action::Serving => tracing::info!(
                    target = %settings.target,
                    credit = settings.concurrency,
                    "handshake complete; serving events"
                ),
                Action::UnversionedRuntime => tracing::info!(
                    "the runtime did not say which protocol version it serves (it predates version negotiation); proceeding with protocol {}.{}",
                    crate::version::PROTOCOL_MAJOR,
                    crate::version::PROTOCOL_MINOR
                ),
                Action::Warn(message) => tracing::warn!("{message}"),
                Action::Close => {
                    if let Some(tx) = out.take() {
                        linger(&tx).await;
                    }
                }
                Action::Exit(result) => {
                    for (_, task) in running.drain() {
                        task.abort.abort();
                    }
                    if result.is_ok() {
                        // Let the runtime see our half-close before the
                        // connection goes away with this thread.
                        let _ = tokio::time::timeout(Duration::from_secs(1), async {
                            while let Ok(Some(_)) = inbound.message().await {}
                        })
                        .await;
                    }
                    return result.map_err(ServeError::Session);
                }
            }
        }

        let timer = session.next_timer();
        let sleep = async {
            match timer {
                Some(at) => {
                    let wait = at.saturating_sub(now_ms()).max(0) as u64;
                    tokio::time::sleep(Duration::from_millis(wait)).await
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            message = inbound.message() => {
                let input = match message {
                    Ok(Some(message)) => frame_input(message),
                    Ok(None) => Input::StreamEnded { error: None },
                    Err(status) => Input::StreamEnded { error: Some(error_chain(&status)) },
                };
                session.handle(now_ms(), input);
            }
            Some((id, outcome)) = done_rx.recv() => {
                running.remove(&id);
                session.handle(now_ms(), Input::Completed { id, outcome });
                // Take every completion already waiting, so their results go
                // out together.
                while let Ok((id, outcome)) = done_rx.try_recv() {
                    running.remove(&id);
                    session.handle(now_ms(), Input::Completed { id, outcome });
                }
            }
            Some(command) = commands.recv() => match command {
                Command::Input(input) => session.handle(now_ms(), input),
            },
            _ = sigterm.recv() => {
                tracing::info!("SIGTERM: draining; a second signal stops at once");
                session.handle(now_ms(), Input::Shutdown);
            }
            _ = sigint.recv() => {
                tracing::info!("SIGINT: draining; a second signal stops at once");
                session.handle(now_ms(), Input::Shutdown);
            }
            _ = sleep => session.handle(now_ms(), Input::Tick),
        }
    }
}

fn frame_input(message: RuntimeMessage) -> Input {
    Input::Frame(message)
}

fn signal(kind: tokio::signal::unix::SignalKind) -> Result<tokio::signal::unix::Signal, ServeError> {
    tokio::signal::unix::signal(kind)
        .map_err(|error| ServeError::Internal(format!("could not listen for signals: {error}")))
}

/// Waits, briefly, for the frames already queued to be taken by the
/// connection before our half of the stream is closed.
async fn linger(tx: &mpsc::Sender<HandlerMessage>) {
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        while tx.capacity() < tx.max_capacity() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await;
}

/// The answer for a handler that panicked. The panic message goes to the
/// runtime, which shows `HandlerError` text to HTTP callers; a stack never
/// does unless the application opts in.
fn panic_outcome(panic: &(dyn std::any::Any + Send)) -> Outcome {
    let message = if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "the handler panicked".to_string()
    };
    Outcome::Error(HandlerError { message, r#type: error_type::PANIC.to_string(), stack: String::new() })
}
