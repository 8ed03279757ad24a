//! A faithful runtime side: a [`Dispatcher`] owns every accepted handler
//! stream of a [`TestRuntime`] and schedules events onto them the way the
//! Celerity runtime does.
//!
//! Producers (an HTTP gateway, a queue poller, a scheduler) call
//! [`Dispatcher::submit`] and await an [`EventOutcome`]: the handler's
//! `Result`, the event [shed](EventOutcome::Shed) before any handler saw it,
//! or [abandoned](EventOutcome::Abandoned) with no answer.
//!
//! The rules live in the I/O-free [`Core`], driven by explicit time: the
//! credit window of each stream and per-tag caps; places kept back for idle
//! tags (never more than half the window); round-robin selection across tag
//! queues and across the streams serving a tag; the 3 s attach grace; the
//! producer's wait for room (a quarter of the event's timeout, at most 5 s);
//! deadlines with `Cancel(DEADLINE_EXCEEDED)`; the 5 s reclaim after a
//! `Cancel` and the 60 s memory of late answers; the runtime's `Drain` and
//! the handler's `Draining`. This module is the thin driver around it: a
//! reader per stream, one timer, WebSocket delivery.
//!
//! ```no_run
//! use celerity_testkit::dispatcher::{Dispatcher, EventOutcome};
//! use celerity_testkit::{TestRuntime, event};
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let rt = TestRuntime::builder().handler("hello", "GET::/hello").bind().await?;
//! let dispatcher = Dispatcher::builder().runtime_config(rt.config().clone()).build();
//! let env = rt.env();
//! dispatcher.serve(rt);
//! // ... start the handler process with `env` ...
//! match dispatcher.submit(event::http("GET", "/hello")).await {
//!     EventOutcome::Result(result) => println!("{:?}", result.outcome),
//!     other => println!("no answer: {other:?}"),
//! }
//! dispatcher.drain().await;
//! # Ok(())
//! # }
//! ```

mod core;
mod terms;
pub mod ws;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use celerity_proto::v1::{Dispatch, RuntimeConfig, RuntimeMessage, cancel, runtime_message};
use tokio::sync::{Notify, mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tonic::Status;

pub use self::core::{
    AbandonReason, Action, CloseReason, Core, CoreConfig, DEFAULT_QUEUE_CAPACITY, ENV_DRAIN_TIMEOUT, EventOutcome,
    MAX_DERIVED_DRAIN, ShedReason, StreamId, StreamSnapshot, Timing, drain_timeout,
};
use self::ws::{ScriptedDelivery, WsDelivery};
use crate::connection::{Connection, Tapped};
use crate::error::{Error, StreamEnd};
use crate::ids;
use crate::runtime::TestRuntime;

/// Something that happened on the runtime side, for a log.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// A stream finished its handshake and was attached.
    Attached {
        /// Its id.
        stream: StreamId,
        /// The tags it serves.
        tags: Vec<String>,
        /// Its initial credit.
        initial_credit: u32,
        /// The handler's SDK version.
        sdk_version: String,
    },
    /// A stream was refused or its handshake failed.
    HandshakeFailed(String),
    /// A stream ended (or was closed by the runtime side).
    StreamEnded {
        /// Its id.
        stream: StreamId,
        /// How.
        how: String,
    },
    /// Anything else worth a line (a reclaim, a late answer, ...).
    Info(String),
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Notice::Attached { stream, tags, initial_credit, sdk_version } => write!(
                f,
                "stream {stream} attached (SDK {sdk_version}, initial credit {initial_credit}): {}",
                tags.join(", ")
            ),
            Notice::HandshakeFailed(why) => write!(f, "handler stream not attached: {why}"),
            Notice::StreamEnded { stream, how } => write!(f, "stream {stream} ended: {how}"),
            Notice::Info(text) => f.write_str(text),
        }
    }
}

type Observer = Arc<dyn Fn(&Notice) + Send + Sync>;

/// Builds a [`Dispatcher`].
#[must_use]
pub struct DispatcherBuilder {
    config: CoreConfig,
    drain_timeout: Option<Duration>,
    runtime_config: RuntimeConfig,
    delivery: Arc<dyn WsDelivery>,
    observer: Option<Observer>,
}

impl Default for DispatcherBuilder {
    fn default() -> Self {
        DispatcherBuilder {
            config: CoreConfig::default(),
            drain_timeout: None,
            runtime_config: RuntimeConfig::default(),
            delivery: Arc::new(ScriptedDelivery::new()),
            observer: None,
        }
    }
}

impl DispatcherBuilder {
    /// The `RuntimeConfig` the streams were given: its handler timeouts are
    /// the timeouts of events without a deadline, and the longest of them
    /// the default drain deadline.
    pub fn runtime_config(mut self, config: RuntimeConfig) -> Self {
        let timing = self.config.timing;
        let capacity = self.config.queue_capacity;
        self.config = CoreConfig::from_runtime_config(&config);
        self.config.timing = timing;
        self.config.queue_capacity = capacity;
        self.runtime_config = config;
        self
    }

    /// The timings (default: the specification's).
    pub fn timing(mut self, timing: Timing) -> Self {
        self.config.timing = timing;
        self
    }

    /// How many events each tag's queue holds before producers wait
    /// (default 64).
    pub fn queue_capacity(mut self, capacity: usize) -> Self {
        self.config.queue_capacity = capacity;
        self
    }

    /// The drain deadline (default: [`drain_timeout`] of
    /// `CELERITY_DRAIN_TIMEOUT` and the runtime config).
    pub fn drain_timeout(mut self, timeout: Duration) -> Self {
        self.drain_timeout = Some(timeout);
        self
    }

    /// How `WsSend` messages reach clients (default: a
    /// [`ScriptedDelivery`] that delivers everything).
    pub fn delivery(mut self, delivery: impl WsDelivery) -> Self {
        self.delivery = Arc::new(delivery);
        self
    }

    /// Called with every [`Notice`].
    pub fn on_notice(mut self, f: impl Fn(&Notice) + Send + Sync + 'static) -> Self {
        self.observer = Some(Arc::new(f));
        self
    }

    /// Starts the dispatcher (inside a Tokio runtime). The drain deadline is
    /// read from `CELERITY_DRAIN_TIMEOUT` now unless it was set; an invalid
    /// value falls back to the derived deadline, with a notice.
    pub fn build(self) -> Dispatcher {
        let mut notes = Vec::new();
        let drain = match self.drain_timeout {
            Some(d) => d,
            None => {
                let env = std::env::var(ENV_DRAIN_TIMEOUT).ok();
                drain_timeout(env.as_deref(), &self.runtime_config).unwrap_or_else(|e| {
                    notes.push(e);
                    drain_timeout(None, &self.runtime_config).unwrap_or(MAX_DERIVED_DRAIN)
                })
            }
        };
        let wake = Arc::new(Notify::new());
        let (changed, _) = watch::channel(0u64);
        let inner = Arc::new(Inner {
            state: Mutex::new(ShellState {
                core: Core::new(self.config),
                waiters: HashMap::new(),
                streams: HashMap::new(),
            }),
            wake: Arc::clone(&wake),
            changed,
            delivery: self.delivery,
            observer: self.observer,
            drain_timeout: drain,
            runtime: Mutex::new(None),
            tasks: Mutex::new(Vec::new()),
            stopped: AtomicBool::new(false),
        });
        for note in notes {
            inner.notice(&Notice::Info(note));
        }
        let timer = tokio::spawn(run_timer(Arc::downgrade(&inner), wake));
        inner.tasks().push(timer);
        Dispatcher { inner }
    }
}

struct ShellState {
    core: Core,
    waiters: HashMap<String, oneshot::Sender<EventOutcome>>,
    streams: HashMap<StreamId, Arc<Connection>>,
}

struct Inner {
    state: Mutex<ShellState>,
    wake: Arc<Notify>,
    changed: watch::Sender<u64>,
    delivery: Arc<dyn WsDelivery>,
    observer: Option<Observer>,
    drain_timeout: Duration,
    runtime: Mutex<Option<Arc<TestRuntime>>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    stopped: AtomicBool,
}

impl Drop for Inner {
    fn drop(&mut self) {
        for task in self.tasks.get_mut().unwrap_or_else(|e| e.into_inner()).drain(..) {
            task.abort();
        }
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, ShellState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn tasks(&self) -> MutexGuard<'_, Vec<JoinHandle<()>>> {
        self.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn notice(&self, notice: &Notice) {
        if let Some(observer) = &self.observer {
            observer(notice);
        }
    }

    /// Runs `f` on the state at the current time, carries out what the
    /// core asks for, and wakes the timer and the waiters.
    fn with_state<T>(self: &Arc<Self>, f: impl FnOnce(&mut ShellState, i64) -> T) -> T {
        let value = self.apply(f);
        self.wake.notify_one();
        value
    }

    /// `with_state` on the core alone.
    fn with_core<T>(self: &Arc<Self>, f: impl FnOnce(&mut Core, i64) -> T) -> T {
        self.with_state(|st, now| f(&mut st.core, now))
    }

    /// Like `with_state`, without waking the timer (for the timer itself).
    fn apply<T>(self: &Arc<Self>, f: impl FnOnce(&mut ShellState, i64) -> T) -> T {
        let mut notices = Vec::new();
        let value = {
            let mut st = self.lock();
            let value = f(&mut st, ids::now_unix_ms());
            self.run_actions(&mut st, &mut notices);
            value
        };
        for notice in &notices {
            self.notice(notice);
        }
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
        value
    }

    fn run_actions(self: &Arc<Self>, st: &mut ShellState, notices: &mut Vec<Notice>) {
        while let Some(action) = st.core.next_action() {
            match action {
                Action::Send { stream, frame } => {
                    if let Some(conn) = st.streams.get(&stream) {
                        let _ = conn.send(RuntimeMessage { frame: Some(frame) });
                    }
                }
                Action::Complete { id, outcome } => {
                    if let Some(waiter) = st.waiters.remove(&id) {
                        let _ = waiter.send(outcome);
                    }
                }
                Action::WsSend { stream, send } => {
                    let Some(conn) = st.streams.get(&stream).cloned() else { continue };
                    let delivery = Arc::clone(&self.delivery);
                    tokio::spawn(async move {
                        let ack = ws::deliver_batch(delivery.as_ref(), send).await;
                        let _ = conn.ws_ack(ack);
                    });
                }
                Action::Close { stream, reason } => {
                    if let Some(conn) = st.streams.remove(&stream) {
                        match reason {
                            CloseReason::RefusedDraining => conn.close_with_status(Status::unavailable(
                                "the runtime is draining and accepts no new handler streams",
                            )),
                            _ => conn.close(),
                        }
                    }
                    notices.push(Notice::StreamEnded { stream, how: format!("closed by the runtime: {reason}") });
                }
                Action::Note(text) => notices.push(Notice::Info(text)),
            }
        }
    }
}

async fn run_timer(inner: Weak<Inner>, wake: Arc<Notify>) {
    loop {
        let next = {
            let Some(inner) = inner.upgrade() else { return };
            inner.apply(|st, now| {
                st.core.tick(now);
                st.core.next_wakeup().map(|at| at - now)
            })
        };
        let sleep = next.map_or(Duration::from_secs(3600), |ms| Duration::from_millis(ms.max(1) as u64));
        tokio::select! {
            _ = tokio::time::sleep(sleep) => {}
            _ = wake.notified() => {}
        }
    }
}

async fn read_stream(inner: Weak<Inner>, stream: StreamId, mut tap: mpsc::UnboundedReceiver<Tapped>) {
    while let Some(tapped) = tap.recv().await {
        let Some(inner) = inner.upgrade() else { return };
        match tapped {
            Tapped::Frame(msg) => inner.with_core(|core, now| core.on_frame(now, stream, msg)),
            Tapped::End(end) => {
                let known = inner.lock().streams.remove(&stream).is_some();
                inner.with_core(|core, now| core.stream_ended(now, stream));
                if known {
                    inner.notice(&Notice::StreamEnded { stream, how: describe_end(&end) });
                }
                return;
            }
        }
    }
}

fn describe_end(end: &StreamEnd) -> String {
    end.to_string()
}

/// The runtime side of every handler stream: see the [module](self) docs.
///
/// Cloning gives another handle to the same dispatcher; it stops (its tasks
/// end and every stream it owns is closed) when the last handle is dropped.
#[derive(Clone)]
pub struct Dispatcher {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher").field("streams", &self.streams()).finish_non_exhaustive()
    }
}

impl Dispatcher {
    /// A builder with the specification's timings, no handler timeouts, and a
    /// delivery that delivers every WebSocket message.
    pub fn builder() -> DispatcherBuilder {
        DispatcherBuilder::default()
    }

    /// Takes `runtime` over: every stream it accepts from now on is attached
    /// here, and it is refused new streams once the dispatcher drains.
    pub fn serve(&self, runtime: TestRuntime) {
        let runtime = Arc::new(runtime);
        *self.inner.runtime.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::clone(&runtime));
        if self.inner.lock().core.drain_deadline().is_some() {
            runtime.refuse_new_streams();
        }
        let weak = Arc::downgrade(&self.inner);
        let task = tokio::spawn(async move {
            loop {
                let outcome = runtime.accept_timeout(Duration::from_secs(24 * 3600)).await;
                let Some(inner) = weak.upgrade() else { return };
                let dispatcher = Dispatcher { inner };
                match outcome {
                    Ok(handshake) => {
                        if !handshake.is_accepted() {
                            let ack = handshake.ack();
                            dispatcher.inner.notice(&Notice::HandshakeFailed(format!(
                                "refused ({:?}): unknown tags {:?}, unhandled tags {:?}",
                                handshake.refused_reason(),
                                ack.unknown_tags,
                                ack.unhandled_tags
                            )));
                            continue;
                        }
                        if let Some(conn) = handshake.into_connection() {
                            let _ = dispatcher.attach(conn);
                        }
                    }
                    Err(Error::Timeout { .. }) => {}
                    Err(Error::RuntimeStopped) => return,
                    Err(error) => dispatcher.inner.notice(&Notice::HandshakeFailed(error.to_string())),
                }
            }
        });
        self.inner.tasks().push(task);
    }

    /// Attaches an accepted connection and owns it from now on. During a
    /// drain it is refused: closed with status UNAVAILABLE.
    pub fn attach(&self, conn: Connection) -> Result<StreamId, Error> {
        let ready = conn.ready().clone();
        let conn = Arc::new(conn);
        let tap = conn.tap();
        let mut notices = Vec::new();
        let attached = {
            let mut st = self.inner.lock();
            let attached = st.core.attach(ids::now_unix_ms(), &ready);
            if let Ok(stream) = attached {
                st.streams.insert(stream, Arc::clone(&conn));
                self.inner.run_actions(&mut st, &mut notices);
            }
            attached
        };
        let stream = match attached {
            Ok(stream) => stream,
            Err(reason) => {
                conn.close_with_status(Status::unavailable(
                    "the runtime is draining and accepts no new handler streams",
                ));
                self.inner.notice(&Notice::HandshakeFailed(format!("stream refused: {reason}")));
                return Err(Error::RefusedDraining);
            }
        };
        self.inner.notice(&Notice::Attached {
            stream,
            tags: ready.handler_tags.clone(),
            initial_credit: ready.initial_credit,
            sdk_version: ready.sdk_version.clone(),
        });
        for notice in &notices {
            self.inner.notice(notice);
        }
        let task = tokio::spawn(read_stream(Arc::downgrade(&self.inner), stream, tap));
        self.inner.tasks().push(task);
        self.inner.wake.notify_one();
        self.inner.changed.send_modify(|n| *n = n.wrapping_add(1));
        Ok(stream)
    }

    /// Submits an event; the returned [`Submission`] resolves to its
    /// outcome. An empty id is assigned (see [`Submission::id`]).
    ///
    /// Dropping the submission before it resolves means the caller went
    /// away: the event is withdrawn if not yet dispatched, or sent
    /// `Cancel(CALLER_GONE)` (unless [`Submission::detach`] was called).
    pub fn submit(&self, dispatch: impl Into<Dispatch>) -> Submission {
        let mut dispatch = dispatch.into();
        if dispatch.id.is_empty() {
            dispatch.id = ids::next_id("evt");
        }
        let id = dispatch.id.clone();
        let (tx, rx) = oneshot::channel();
        let submitted = self.inner.with_state(|st, now| {
            if st.core.knows(&id) {
                return Err(ShedReason::DuplicateId);
            }
            // The waiter is in place before the core can decide anything.
            st.waiters.insert(id.clone(), tx);
            let submitted = st.core.submit(now, dispatch);
            if submitted.is_err() {
                st.waiters.remove(&id);
            }
            submitted
        });
        match submitted {
            Ok(id) => Submission { id, rx: Some(rx), ready: None, inner: Arc::downgrade(&self.inner), armed: true },
            Err(reason) => {
                Submission { id, rx: None, ready: Some(EventOutcome::Shed(reason)), inner: Weak::new(), armed: false }
            }
        }
    }

    /// Submits and waits for the outcome.
    pub async fn call(&self, dispatch: impl Into<Dispatch>) -> EventOutcome {
        self.submit(dispatch).await
    }

    /// Cancels event `id` on behalf of its producer (see [`Core::cancel`]).
    pub fn cancel(&self, id: &str, reason: cancel::Reason) {
        self.inner.with_core(|core, now| core.cancel(now, id, reason));
    }

    /// The drain deadline this dispatcher uses.
    pub fn drain_timeout(&self) -> Duration {
        self.inner.drain_timeout
    }

    /// Drains with the configured deadline; see [`drain_within`](Self::drain_within).
    pub fn drain(&self) -> impl Future<Output = DrainReport> + Send + 'static {
        self.drain_within(self.inner.drain_timeout)
    }

    /// The runtime is going away: refuses new streams, sends `Drain` with a
    /// deadline `timeout` from now, sheds what is queued, and waits for the
    /// events in flight until the deadline, when the rest are abandoned and
    /// the streams closed.
    ///
    /// The drain begins when this is called; the returned future waits for
    /// it to finish.
    pub fn drain_within(&self, timeout: Duration) -> impl Future<Output = DrainReport> + Send + 'static {
        if let Some(rt) = self.inner.runtime.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            rt.refuse_new_streams();
        }
        let mut changes = self.inner.changed.subscribe();
        let (in_flight_at_start, deadline) = self.inner.with_core(|core, now| {
            let in_flight = core.in_flight();
            (in_flight, core.drain(now, ids::unix_ms_in(timeout).max(now)))
        });
        let inner = Arc::clone(&self.inner);
        async move {
            loop {
                changes.borrow_and_update();
                let (left, abandoned) = {
                    let st = inner.lock();
                    (st.core.in_flight(), st.core.drain_abandoned())
                };
                if left == 0 {
                    return DrainReport { in_flight_at_start, abandoned, completed: abandoned == 0 };
                }
                // The timer closes everything at the deadline; the margin
                // only guards against a clock that jumped.
                let now = ids::now_unix_ms();
                let wait = Duration::from_millis((deadline + 1000 - now).max(0) as u64);
                if wait.is_zero() || tokio::time::timeout(wait, changes.changed()).await.is_err() {
                    inner.with_core(|core, now| core.tick(now.max(deadline)));
                }
            }
        }
    }

    /// Snapshots of the attached streams.
    pub fn streams(&self) -> Vec<StreamSnapshot> {
        self.inner.lock().core.streams()
    }

    /// Events queued for `tag`.
    pub fn queued(&self, tag: &str) -> usize {
        self.inner.lock().core.queued(tag)
    }

    /// Events in flight (dispatched, places still held).
    pub fn in_flight(&self) -> usize {
        self.inner.lock().core.in_flight()
    }

    /// Whether the dispatcher is draining.
    pub fn is_draining(&self) -> bool {
        self.inner.lock().core.drain_deadline().is_some()
    }

    /// Waits at most `timeout` until `pred` holds for the attached streams.
    pub async fn wait_for_streams(
        &self,
        timeout: Duration,
        pred: impl Fn(&[StreamSnapshot]) -> bool,
    ) -> Result<Vec<StreamSnapshot>, Error> {
        let mut changes = self.inner.changed.subscribe();
        let wait = async {
            loop {
                changes.borrow_and_update();
                let streams = self.streams();
                if pred(&streams) {
                    return streams;
                }
                if changes.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
        };
        tokio::time::timeout(timeout, wait).await.map_err(|_| Error::Timeout {
            waiting_for: "a state of the dispatcher's streams".to_owned(),
            after: timeout,
            state: format!("{:?}", self.streams()),
        })
    }

    /// Stops: every waiting producer gets [`AbandonReason::Stopped`] and every
    /// stream is closed. Also done when the last handle is dropped.
    pub fn stop(&self) {
        if self.inner.stopped.swap(true, Ordering::SeqCst) {
            return;
        }
        let mut st = self.inner.lock();
        for (_, waiter) in st.waiters.drain() {
            let _ = waiter.send(EventOutcome::Abandoned(AbandonReason::Stopped));
        }
        for (_, conn) in st.streams.drain() {
            conn.close();
        }
    }
}

/// How a drain went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrainReport {
    /// Events in flight when the drain began.
    pub in_flight_at_start: usize,
    /// Events still in flight at the deadline, abandoned.
    pub abandoned: usize,
    /// Whether everything in flight was answered before the deadline.
    pub completed: bool,
}

/// A submitted event: a future of its [`EventOutcome`].
///
/// Dropping it before it resolves tells the dispatcher the caller went away
/// (see [`Dispatcher::submit`]).
#[must_use = "dropping a Submission cancels its event"]
pub struct Submission {
    id: String,
    rx: Option<oneshot::Receiver<EventOutcome>>,
    ready: Option<EventOutcome>,
    inner: Weak<Inner>,
    armed: bool,
}

impl std::fmt::Debug for Submission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Submission").field("id", &self.id).finish_non_exhaustive()
    }
}

impl Submission {
    /// The event id (empty when the event was shed at once).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Keeps the event running when this is dropped: the caller no longer
    /// waits, but nothing is cancelled (a WebSocket message whose connection
    /// closed, an async invocation).
    pub fn detach(mut self) {
        self.armed = false;
    }

    /// Gives up on the event with `reason` (see [`Dispatcher::cancel`]).
    pub fn cancel(mut self, reason: cancel::Reason) {
        self.armed = false;
        if let Some(inner) = self.inner.upgrade() {
            inner.with_core(|core, now| core.cancel(now, &self.id, reason));
        }
    }
}

impl Future for Submission {
    type Output = EventOutcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<EventOutcome> {
        if let Some(outcome) = self.ready.take() {
            self.armed = false;
            return Poll::Ready(outcome);
        }
        let Some(rx) = self.rx.as_mut() else {
            return Poll::Ready(EventOutcome::Abandoned(AbandonReason::Stopped));
        };
        match Pin::new(rx).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(outcome) => {
                self.armed = false;
                self.rx = None;
                Poll::Ready(outcome.unwrap_or(EventOutcome::Abandoned(AbandonReason::Stopped)))
            }
        }
    }
}

impl Drop for Submission {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        if let Some(inner) = self.inner.upgrade() {
            inner.lock().waiters.remove(&self.id);
            inner.with_core(|core, now| core.cancel(now, &self.id, cancel::Reason::CallerGone));
        }
    }
}

/// The frame a runtime-side `Cancel` would be, for tests.
pub fn cancel_frame(id: &str, reason: cancel::Reason) -> runtime_message::Frame {
    runtime_message::Frame::Cancel(celerity_proto::v1::Cancel { id: id.to_owned(), reason: reason as i32 })
}
