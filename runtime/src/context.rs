//! What every handler can know about the event it is running for.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::atomic::{Ordering, fence};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::error::Error;
use crate::guard::given::Identities;
use crate::handle::AppHandle;

pub use crate::session::CancelReason;

/// The event a handler runs for: its id, tag and handler, its deadline and
/// cancellation, its trace context, and the application's shared state.
///
/// Take it as an argument of any handler. Cloning is cheap.
#[derive(Clone)]
pub struct Context {
    inner: Arc<Inner>,
}

/// What every event of one handler shares: held once per handler, so that
/// an event's context takes one count of it, not one each of the tag, the
/// state and the application's handle, counts that the stream's thread
/// takes and the workers give back for every event.
pub(crate) struct Shared {
    tag: Arc<str>,
    state: Arc<StateMap>,
    app: Option<AppHandle>,
}

impl Shared {
    /// What the events of the handler bound to `tag` share.
    pub(crate) fn new(tag: Arc<str>, state: Arc<StateMap>, app: AppHandle) -> Arc<Shared> {
        Arc::new(Shared { tag, state, app: Some(app) })
    }
}

struct Inner {
    id: Arc<str>,
    shared: Arc<Shared>,
    handler_name: &'static str,
    deadline: Option<SystemTime>,
    /// Set once, when the event is cancelled: the cancellation itself.
    reason: OnceLock<CancelReason>,
    /// Wakes the handler's `cancelled()` waits.
    woken: Notify,
    /// A `tokio_util` token, made only for a handler that asks for one: it
    /// is an allocation of its own, which most events never need.
    token: OnceLock<CancellationToken>,
    trace_context: HashMap<String, String>,
    /// What the handler's guards gave when they allowed the event.
    identities: OnceLock<Identities>,
}

impl Context {
    /// A context for one event. The id and tag are shared, as the driver
    /// holds them: no copy of either per event.
    pub(crate) fn new(
        id: Arc<str>,
        tag: Arc<str>,
        handler_name: &'static str,
        deadline_unix_ms: i64,
        trace_context: HashMap<String, String>,
        state: Arc<StateMap>,
        app: AppHandle,
    ) -> Self {
        Self::of_handler(id, Shared::new(tag, state, app), handler_name, deadline_unix_ms, trace_context)
    }

    /// A context for one event of the handler whose events share `shared`.
    pub(crate) fn of_handler(
        id: Arc<str>,
        shared: Arc<Shared>,
        handler_name: &'static str,
        deadline_unix_ms: i64,
        trace_context: HashMap<String, String>,
    ) -> Self {
        let deadline = crate::session::event_deadline(deadline_unix_ms)
            .map(|at| UNIX_EPOCH + Duration::from_millis(at.max(0) as u64));
        Context {
            inner: Arc::new(Inner {
                id,
                shared,
                handler_name,
                deadline,
                reason: OnceLock::new(),
                woken: Notify::new(),
                token: OnceLock::new(),
                trace_context,
                identities: OnceLock::new(),
            }),
        }
    }

    /// A context for calling a handler directly, outside any runtime: no
    /// deadline, not cancelled, no state.
    pub fn detached(tag: impl Into<String>) -> Self {
        let shared = Arc::new(Shared { tag: Arc::from(tag.into()), state: Arc::default(), app: None });
        Context::of_handler(Arc::from(""), shared, "", 0, HashMap::new())
    }

    /// Keeps what the event's guards gave, once they all allowed it.
    pub(crate) fn give_identities(&self, identities: Identities) {
        let _ = self.inner.identities.set(identities);
    }

    /// What the event's guards gave, if it was guarded.
    pub(crate) fn identities(&self) -> Option<&Identities> {
        self.inner.identities.get()
    }

    /// The dispatch id the runtime gave this event.
    pub fn event_id(&self) -> &str {
        &self.inner.id
    }

    /// The handler tag the event was dispatched to, such as `GET::/orders/{id}`.
    pub fn tag(&self) -> &str {
        &self.inner.shared.tag
    }

    /// The Rust name of the handler function running.
    pub fn handler_name(&self) -> &str {
        self.inner.handler_name
    }

    /// When the runtime stops waiting for this event, if it set a deadline.
    /// Treat it as the handler's own: past it, the answer is no longer wanted.
    pub fn deadline(&self) -> Option<SystemTime> {
        self.inner.deadline
    }

    /// Time left until the deadline (zero once it has passed), if there is one.
    pub fn remaining(&self) -> Option<Duration> {
        self.inner.deadline.map(|d| d.duration_since(SystemTime::now()).unwrap_or(Duration::ZERO))
    }

    /// Whether the event has been cancelled: deadline passed, caller gone, or
    /// shutdown.
    pub fn is_cancelled(&self) -> bool {
        self.inner.reason.get().is_some()
    }

    /// Why the event was cancelled, once it has been.
    pub fn cancel_reason(&self) -> Option<CancelReason> {
        self.inner.reason.get().copied()
    }

    /// Waits until the event is cancelled, and says why. Use it in a
    /// `tokio::select!` beside long work to stop early.
    pub async fn cancelled(&self) -> CancelReason {
        loop {
            // Registered before the reason is read, so that a cancellation
            // between the two still wakes this wait.
            let woken = self.inner.woken.notified();
            let mut woken = std::pin::pin!(woken);
            woken.as_mut().enable();
            if let Some(reason) = self.cancel_reason() {
                return reason;
            }
            woken.await;
        }
    }

    /// A token that is cancelled with the event, to hand to code that takes
    /// a `tokio_util` cancellation token.
    pub fn cancellation_token(&self) -> CancellationToken {
        let token = self.inner.token.get_or_init(CancellationToken::new).clone();
        // Paired with the fence in `cancel`: of a cancellation and a first
        // token made at once, one always sees the other.
        fence(Ordering::SeqCst);
        if self.is_cancelled() {
            token.cancel();
        }
        token
    }

    /// The W3C trace context of the caller (`traceparent`, `tracestate`);
    /// often empty.
    pub fn trace_context(&self) -> &HashMap<String, String> {
        &self.inner.trace_context
    }

    /// The caller's W3C `traceparent`, when it sent one.
    pub fn traceparent(&self) -> Option<&str> {
        self.inner.trace_context.get("traceparent").map(String::as_str)
    }

    /// Shared state of type `T`, when the application provided one.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        self.inner.shared.state.get::<T>().map(State)
    }

    /// The running application, to withhold or resize credit or shut down;
    /// `None` for a detached context.
    pub fn app(&self) -> Option<&AppHandle> {
        self.inner.shared.app.as_ref()
    }

    /// A sender of WebSocket messages on this handler's stream. Outside a
    /// runtime (a detached context), every send ends `Disconnected`.
    pub fn ws(&self) -> crate::websocket::WsSender {
        match &self.inner.shared.app {
            Some(app) => app.ws_for(Some(Arc::clone(&self.inner.id))),
            None => crate::websocket::WsSender::disconnected(),
        }
    }

    /// Fires the cancellation with its reason; the first reason stays.
    pub(crate) fn cancel(&self, reason: CancelReason) {
        let _ = self.inner.reason.set(reason);
        self.inner.woken.notify_waiters();
        fence(Ordering::SeqCst);
        if let Some(token) = self.inner.token.get() {
            token.cancel();
        }
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("event_id", &self.inner.id)
            .field("tag", &self.inner.shared.tag)
            .field("handler", &self.inner.handler_name)
            .field("deadline", &self.inner.deadline)
            .field("cancelled", &self.cancel_reason())
            .finish()
    }
}

/// Values shared by every handler, one per type. Looked up on every event
/// a handler takes state or a resource handle in: with foldhash, not
/// SipHash, which cost a tenth of a cache get's overhead.
#[derive(Default)]
pub struct StateMap {
    values: crate::session::FastMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl StateMap {
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        self.values.insert(TypeId::of::<T>(), value);
    }

    /// Whether a value of the type `type_id` is held.
    pub(crate) fn contains(&self, type_id: TypeId) -> bool {
        self.values.contains_key(&type_id)
    }

    pub(crate) fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.values.get(&TypeId::of::<T>()).and_then(|v| Arc::clone(v).downcast::<T>().ok())
    }

    /// Another map holding the same values (the values are shared, not
    /// copied), for `celerity::testing` to add per-call entries to.
    pub(crate) fn share(&self) -> StateMap {
        StateMap { values: self.values.clone() }
    }
}

impl fmt::Debug for StateMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StateMap({} values)", self.values.len())
    }
}

/// Application state shared by every handler: take `State<T>` as an argument
/// of any handler to get the value provided with `App::state`.
///
/// ```
/// use celerity::State;
/// struct Store { name: &'static str }
/// fn use_it(store: State<Store>) -> &'static str { store.name }
/// ```
pub struct State<T>(pub Arc<T>);

impl<T> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> Clone for State<T> {
    fn clone(&self) -> Self {
        State(Arc::clone(&self.0))
    }
}

impl<T: fmt::Debug> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: Send + Sync + 'static> State<T> {
    /// Takes the state from the context, or explains what is missing.
    pub(crate) fn from_context(cx: &Context) -> Result<Self, Error> {
        cx.state::<T>().ok_or_else(|| {
            Error::typed(
                "MissingState",
                format!(
                    "the handler takes State<{}>, but the application provided no such state; add it with App::state",
                    std::any::type_name::<T>()
                ),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_wait_begun_before_the_cancellation_wakes_with_its_reason() {
        let cx = Context::detached("GET::/slow");
        let waiting = tokio::spawn({
            let cx = cx.clone();
            async move { cx.cancelled().await }
        });
        tokio::task::yield_now().await;
        assert!(!cx.is_cancelled());
        cx.cancel(CancelReason::DeadlineExceeded);
        cx.cancel(CancelReason::CallerGone);
        assert_eq!(waiting.await.unwrap(), CancelReason::DeadlineExceeded, "the first reason stays");
        assert_eq!(cx.cancelled().await, CancelReason::DeadlineExceeded, "a wait after it returns at once");
    }

    #[test]
    fn a_token_is_cancelled_with_the_event_whether_made_before_or_after() {
        let cx = Context::detached("GET::/slow");
        let before = cx.cancellation_token();
        assert!(!before.is_cancelled());
        cx.cancel(CancelReason::Shutdown);
        assert!(before.is_cancelled());
        let after = cx.cancellation_token();
        assert!(after.is_cancelled());
    }
}
