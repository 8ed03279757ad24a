//! The protocol core: every rule of the handler IPC protocol, with no I/O.
//!
//! A [`Session`] takes what happens ([`Input`]: frames from the runtime,
//! handler completions, the passing of time, a shutdown request, the stream
//! ending) and answers with what to do ([`Action`]: frames to send, handlers
//! to start, cancel or abandon, and when to stop). It never reads a clock or
//! touches a socket: time arrives as milliseconds since the Unix epoch with
//! each input, which is what lets its rules be tested with a fake clock and
//! driven by a fuzzer.
//!
//! The rules it keeps:
//! - the handshake order: `RuntimeConfig` first, then `Ready`, then `ReadyAck`;
//! - the credit window: one grant on every result, zero only to withhold;
//! - per-tag caps, enforced here as well as declared;
//! - every dispatch is answered exactly once: by the handler, or by the
//!   session when the handler overruns its deadline or a cancellation, or
//!   cannot be started;
//! - drain in both directions, and nothing sent after the stream closes.

mod credit;
mod handshake;
mod ws;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::fmt;
use std::sync::Arc;

use celerity_proto::v1::{
    self as pb, CreditGrant, Dispatch, Draining, HandlerMessage, RuntimeMessage, handler_message, result::Outcome,
    runtime_message,
};

pub use credit::Credit;
pub use handshake::HandshakeReport;
pub use ws::WsOutcome;

use prost::Message as _;

use crate::version::{PROTOCOL_MAJOR, PROTOCOL_MINOR};

/// The maps keyed by event ids and tags, looked up several times per event.
/// foldhash rather than SipHash: it is several times faster on short
/// strings and still seeded per process, so ids chosen by the runtime
/// cannot be aimed at one bucket without knowing the seed.
pub(crate) type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// How a handler is bound to the blueprint.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HandlerKey {
    /// By its handler tag, such as `GET::/orders/{id}`.
    Tag(String),
    /// By the blueprint's `handler_name` or `published_name`; the tag comes
    /// from `RuntimeConfig` at the handshake.
    Name(String),
}

impl fmt::Display for HandlerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandlerKey::Tag(tag) => f.write_str(tag),
            HandlerKey::Name(name) => write!(f, "name = {name:?}"),
        }
    }
}

/// What the session needs to know about one registered handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandlerSpec {
    /// How it is bound.
    pub key: HandlerKey,
    /// Its per-tag cap, declared in `Ready` and enforced locally.
    pub max_concurrent: Option<u32>,
    /// How to name it to a person: Rust path and source location.
    pub label: String,
}

/// Settings of the protocol core.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionConfig {
    /// The handlers registered in code, in registration order. [`Action::Start`]
    /// refers to them by index.
    pub handlers: Vec<HandlerSpec>,
    /// The credit declared in `Ready`: the worker pool size.
    pub initial_credit: u32,
    /// Declared in `Ready`.
    pub sdk_version: String,
    /// How long a handler may go on after its cancellation fires (deadline
    /// or `Cancel`) before it is abandoned and the event answered for it.
    pub cancel_grace_ms: u64,
    /// How long to wait for `RuntimeConfig` and then `ReadyAck`.
    pub handshake_timeout_ms: u64,
    /// The deadline put on `Draining` when this process is asked to stop.
    pub shutdown_grace_ms: u64,
    /// After `Draining` is sent with nothing held, how long to keep reading
    /// before closing: a dispatch the runtime sent before it read `Draining`
    /// crosses it on the wire, and is served rather than lost. Never past
    /// the `Draining` deadline.
    pub draining_settle_ms: u64,
    /// The largest frame the transport sends (`CELERITY_MAX_MESSAGE_BYTES`),
    /// at least [`MIN_MESSAGE_BYTES`]. A `Result` or `WsSend` that would
    /// encode larger is never handed to the transport, whose encoder would
    /// fail the whole stream on it: a result is answered with a
    /// [`error_type::RESULT_TOO_LARGE`] error instead, and a send ends
    /// [`WsOutcome::TooLarge`].
    pub max_message_bytes: usize,
}

/// The smallest [`SessionConfig::max_message_bytes`]: room for an error
/// answering any dispatch id the session accepts ([`MAX_ID_BYTES`]).
pub const MIN_MESSAGE_BYTES: usize = 64 * 1024;

/// The longest dispatch id the session answers. The runtime's ids are short
/// (UUIDs); a longer one is dropped as unanswerable, like an empty one, so
/// that every answer the session composes fits a frame.
pub const MAX_ID_BYTES: usize = 4096;

/// How much of a runtime-supplied string (a tag, an id, a correlation id)
/// is quoted in a log line or error message.
pub const QUOTED_BYTES: usize = 256;

impl SessionConfig {
    /// A configuration with the SDK's default timings.
    pub fn new(handlers: Vec<HandlerSpec>, initial_credit: u32) -> Self {
        SessionConfig {
            handlers,
            initial_credit,
            sdk_version: crate::version::SDK_VERSION.to_string(),
            cancel_grace_ms: crate::settings::DEFAULT_CANCEL_GRACE_MS,
            handshake_timeout_ms: crate::settings::DEFAULT_HANDSHAKE_TIMEOUT_MS,
            shutdown_grace_ms: 10_000,
            draining_settle_ms: 250,
            max_message_bytes: crate::settings::DEFAULT_MAX_MESSAGE_BYTES,
        }
    }

    /// A configuration taking every setting the core uses from `settings`:
    /// the pool size, the cancellation and shutdown graces, the handshake
    /// timeout and the largest frame.
    pub fn from_settings(handlers: Vec<HandlerSpec>, settings: &crate::settings::Settings) -> Self {
        let mut config = SessionConfig::new(handlers, settings.concurrency);
        config.cancel_grace_ms = u64::try_from(settings.cancel_grace.as_millis()).unwrap_or(u64::MAX);
        config.shutdown_grace_ms = u64::try_from(settings.shutdown_grace.as_millis()).unwrap_or(u64::MAX);
        config.handshake_timeout_ms = u64::try_from(settings.handshake_timeout.as_millis()).unwrap_or(u64::MAX);
        config.max_message_bytes = settings.max_message_bytes;
        config
    }
}

/// `text` quoted for a message, cut to at most [`QUOTED_BYTES`] bytes (at a
/// character boundary) with its full length noted: what the runtime sends
/// may be up to a frame long, and is never echoed whole.
pub fn quoted(text: &str) -> String {
    if text.len() <= QUOTED_BYTES {
        return format!("{text:?}");
    }
    let mut end = QUOTED_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:?}... ({} bytes)", &text[..end], text.len())
}

/// Why a handler's cancellation fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CancelReason {
    /// The event's deadline passed; the runtime has answered the caller.
    DeadlineExceeded,
    /// The caller went away (an HTTP client disconnected).
    CallerGone,
    /// The runtime, or this process, is stopping.
    Shutdown,
    /// The runtime gave no reason.
    Unspecified,
}

impl CancelReason {
    fn from_wire(reason: i32) -> Self {
        match pb::cancel::Reason::try_from(reason) {
            Ok(pb::cancel::Reason::DeadlineExceeded) => CancelReason::DeadlineExceeded,
            Ok(pb::cancel::Reason::CallerGone) => CancelReason::CallerGone,
            Ok(pb::cancel::Reason::Shutdown) => CancelReason::Shutdown,
            _ => CancelReason::Unspecified,
        }
    }

    /// The `HandlerError.type` used when the session answers for a handler
    /// abandoned for this reason.
    pub fn error_type(self) -> &'static str {
        match self {
            CancelReason::DeadlineExceeded => error_type::DEADLINE_EXCEEDED,
            _ => error_type::CANCELLED,
        }
    }
}

impl fmt::Display for CancelReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CancelReason::DeadlineExceeded => "deadline exceeded",
            CancelReason::CallerGone => "caller gone",
            CancelReason::Shutdown => "shutdown",
            CancelReason::Unspecified => "cancelled by the runtime",
        })
    }
}

/// The `HandlerError.type` values the SDK itself produces.
pub mod error_type {
    /// The handler ran past its deadline and was abandoned.
    pub const DEADLINE_EXCEEDED: &str = "DeadlineExceeded";
    /// The handler did not finish within the grace after a `Cancel`.
    pub const CANCELLED: &str = "Cancelled";
    /// The handler panicked.
    pub const PANIC: &str = "panic";
    /// No handler in this process serves the event's tag.
    pub const UNKNOWN_TAG: &str = "UnknownHandlerTag";
    /// The runtime dispatched beyond the credit window or a per-tag cap.
    pub const OVER_CAPACITY: &str = "OverCapacity";
    /// The event arrived after the runtime's `Drain`, or before the handshake
    /// completed.
    pub const NOT_ACCEPTING: &str = "NotAccepting";
    /// The event's source does not fit the handler it was sent to.
    pub const WRONG_SOURCE: &str = "WrongEventSource";
    /// The handler's answer would not fit a frame
    /// (`CELERITY_MAX_MESSAGE_BYTES`); this error was sent instead.
    pub const RESULT_TOO_LARGE: &str = "ResultTooLarge";
}

/// Something that happened, fed to [`Session::handle`].
// Frames are moved through once each; boxing them would cost an allocation
// per event for no gain.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// A frame from the runtime.
    Frame(RuntimeMessage),
    /// A handler finished, with the outcome to send.
    Completed {
        /// The dispatch id, as [`Action::Start`] gave it.
        id: Arc<str>,
        /// What the handler produced.
        outcome: Outcome,
    },
    /// Time passed; fire whatever timers are due.
    Tick,
    /// This process was asked to stop (SIGTERM or SIGINT). A second one stops
    /// at once.
    Shutdown,
    /// The application asks to stop gracefully, as on a first signal
    /// ([`crate::AppHandle::shutdown`]). Asking again changes nothing.
    Stop,
    /// The runtime's half of the stream ended, cleanly or with an error.
    StreamEnded {
        /// The transport's error, if it failed rather than ended.
        error: Option<String>,
    },
    /// The application asks the runtime to stop dispatching.
    Withhold,
    /// The application ends its withhold.
    Resume,
    /// The application sets the credit window.
    Resize(u32),
    /// Send messages to WebSocket connections and wait, at most
    /// `timeout_ms`, for the runtime's acknowledgement. Answered with
    /// [`Action::WsDone`] of the same correlation id. Sends made before the
    /// handshake completes go out once it has.
    WsSend {
        /// Unique in the process; the acknowledgement carries it back.
        correlation_id: String,
        /// The messages, validated already.
        messages: Vec<pb::WsOutbound>,
        /// How long to wait for the acknowledgement once sent.
        timeout_ms: u64,
    },
}

/// Something to do, returned by [`Session::poll_action`].
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Write this frame to the stream.
    Send(HandlerMessage),
    /// Run handler `handler` (an index into [`SessionConfig::handlers`]) for
    /// this dispatch. It must be answered with [`Input::Completed`].
    Start {
        /// Index of the handler.
        handler: usize,
        /// The dispatch's id, shared with the session's own tables: cheaper
        /// to keep than a copy of `dispatch.id`.
        id: Arc<str>,
        /// The event. Boxed: actions are moved several times on their way
        /// to a handler's task, and a `Dispatch` is 400 bytes.
        dispatch: Box<Dispatch>,
    },
    /// Fire the handler's cancellation; it is still running.
    Cancel {
        /// The dispatch id.
        id: String,
        /// Why.
        reason: CancelReason,
    },
    /// Stop polling the handler's future: the session has answered for it.
    Abandon {
        /// The dispatch id.
        id: String,
    },
    /// The handshake compared code and blueprint; log the report.
    Report(HandshakeReport),
    /// The runtime accepted `Ready`: events may now arrive.
    Serving,
    /// The runtime sent no protocol version: it predates version
    /// negotiation. Proceeding; worth one line in the log.
    UnversionedRuntime,
    /// End our half of the stream; nothing more will be sent.
    Close,
    /// Stop serving: `Ok` for a graceful end, `Err` for a failure.
    Exit(Result<(), SessionError>),
    /// Something the runtime did that breaks the protocol but was answered
    /// safely; worth a warning in the log.
    Warn(String),
    /// A WebSocket send ended: acknowledged, timed out, or cut off.
    WsDone {
        /// The send's correlation id.
        correlation_id: String,
        /// How it ended.
        outcome: WsOutcome,
    },
}

/// Why a session ended with a failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionError {
    /// The first frame was not `RuntimeConfig`.
    UnexpectedFirstFrame(&'static str),
    /// A frame other than `ReadyAck` arrived before it.
    UnexpectedFrame {
        /// What arrived.
        frame: &'static str,
        /// What the handshake was waiting for.
        expected: &'static str,
    },
    /// The stream ended before the handshake completed.
    EndedDuringHandshake {
        /// What the handshake was waiting for.
        expected: &'static str,
        /// The transport's error, if any.
        error: Option<String>,
    },
    /// The handshake did not progress in time.
    HandshakeTimeout {
        /// What it was waiting for.
        expected: &'static str,
        /// How long it waited.
        waited_ms: u64,
    },
    /// The runtime serves a protocol major this SDK does not speak.
    VersionMismatch {
        /// Ours.
        ours: (u32, u32),
        /// The runtime's.
        theirs: (u32, u32),
    },
    /// A handler bound by name names nothing the blueprint declares.
    UnknownHandlerName {
        /// The name asked for.
        name: String,
        /// The handler that asked.
        handler: String,
        /// The names the blueprint does declare.
        declared: Vec<String>,
    },
    /// Two handlers resolved to one tag.
    DuplicateTag {
        /// The tag.
        tag: String,
        /// One handler.
        first: String,
        /// The other.
        second: String,
    },
    /// The runtime refused `Ready`.
    Refused {
        /// The reason it gave (`UNSPECIFIED` from runtimes that predate it).
        reason: pb::ready_ack::RefusedReason,
        /// Tags we declared that the blueprint does not.
        unknown_tags: Vec<String>,
        /// Tags the blueprint declares that we did not.
        unhandled_tags: Vec<String>,
    },
    /// The stream ended without a drain: the runtime went away.
    StreamEnded {
        /// Events that were still in flight and are lost.
        in_flight: usize,
        /// The transport's error, if any.
        error: Option<String>,
    },
    /// A second shutdown request arrived while draining.
    Interrupted,
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::UnexpectedFirstFrame(frame) => {
                write!(f, "protocol error: the runtime's first frame must be RuntimeConfig, but it sent {frame}")
            }
            SessionError::UnexpectedFrame { frame, expected } => {
                write!(f, "protocol error: expected {expected} from the runtime, but it sent {frame}")
            }
            SessionError::EndedDuringHandshake { expected, error } => {
                write!(f, "the runtime closed the stream while the handshake waited for {expected}")?;
                if let Some(error) = error {
                    write!(f, ": {error}")?;
                }
                Ok(())
            }
            SessionError::HandshakeTimeout { expected, waited_ms } => {
                write!(f, "the runtime sent no {expected} within {:.1} s of connecting", *waited_ms as f64 / 1000.0)
            }
            SessionError::VersionMismatch { ours, theirs } => write!(
                f,
                "protocol version mismatch: this handler speaks protocol {}.{} (celerity SDK {}), the runtime serves {}.{}; \
                 a different major version cannot be served, so Ready was not sent. Rebuild the handler with an SDK for protocol {}.x",
                ours.0,
                ours.1,
                crate::version::SDK_VERSION,
                theirs.0,
                theirs.1,
                theirs.0
            ),
            SessionError::UnknownHandlerName { name, handler, declared } => {
                write!(f, "handler {handler} is bound to name {name:?}, which the blueprint does not declare; ")?;
                if declared.is_empty() {
                    write!(f, "the blueprint declares no handlers")
                } else {
                    write!(f, "it declares: {}", declared.join(", "))
                }
            }
            SessionError::DuplicateTag { tag, first, second } => {
                write!(f, "two handlers serve tag {tag}: {first} and {second}; a tag must have exactly one handler")
            }
            SessionError::Refused { reason, unknown_tags, unhandled_tags } => {
                let version_refusal = *reason == pb::ready_ack::RefusedReason::ProtocolVersion;
                if version_refusal {
                    write!(
                        f,
                        "the runtime refused this handler's protocol version {PROTOCOL_MAJOR}.{PROTOCOL_MINOR} (celerity SDK {})",
                        crate::version::SDK_VERSION
                    )?;
                } else {
                    write!(f, "the runtime refused this handler's tags")?;
                }
                if !unknown_tags.is_empty() {
                    write!(f, "; registered here but not declared by the blueprint: {}", unknown_tags.join(", "))?;
                }
                if !unhandled_tags.is_empty() {
                    write!(f, "; declared by the blueprint but not registered here: {}", unhandled_tags.join(", "))?;
                }
                if !version_refusal && unknown_tags.is_empty() && unhandled_tags.is_empty() {
                    write!(f, " (it gave no reason)")?;
                }
                Ok(())
            }
            SessionError::StreamEnded { in_flight, error } => {
                write!(f, "the runtime closed the stream without draining")?;
                if let Some(error) = error {
                    write!(f, " ({error})")?;
                }
                if *in_flight > 0 {
                    write!(f, "; {in_flight} event(s) in flight were abandoned")?;
                }
                Ok(())
            }
            SessionError::Interrupted => write!(f, "stopped by a second shutdown signal while draining"),
        }
    }
}

impl std::error::Error for SessionError {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    AwaitingConfig,
    AwaitingAck,
    Serving,
    /// The runtime sent `Drain`: no new work; stop at the deadline.
    Drained {
        deadline: i64,
    },
    /// We sent `Draining`: work already dispatched is still run; stop at the
    /// deadline, or once nothing is held and dispatches that crossed
    /// `Draining` have had until `settle_until` to arrive.
    Draining {
        deadline: i64,
        settle_until: i64,
    },
    Closed,
}

#[derive(Debug)]
struct InFlight {
    handler: usize,
    deadline: i64,
    cancelled: Option<CancelReason>,
    /// When the next timer of this event is due: its deadline, or the end of
    /// its cancellation grace. Stale heap entries are told apart by this.
    timer: Option<i64>,
}

/// The protocol state machine of one handler stream. See the module docs.
#[derive(Debug)]
pub struct Session {
    config: SessionConfig,
    phase: Phase,
    started_at: i64,
    /// Tag → handler index, set at the handshake.
    by_tag: FastMap<String, usize>,
    in_flight: FastMap<Arc<str>, InFlight>,
    in_flight_per_handler: Vec<u32>,
    credit: Credit,
    timers: BinaryHeap<Reverse<(i64, Arc<str>)>>,
    actions: VecDeque<Action>,
    /// A `CreditGrant` asked for before the runtime accepted `Ready`; sent
    /// once it has (nothing but `Ready` may go before `ReadyAck`).
    pending_grant: Option<u32>,
    /// A shutdown signal has arrived: the next one stops at once.
    signalled: bool,
    /// `Draining` has been sent.
    draining_sent: bool,
    /// A signal or stop arrived while waiting for `ReadyAck`: drain once it
    /// comes.
    stop_after_ack: bool,
    /// The time of the input being handled.
    now: i64,
    /// Dispatches refused for coming beyond the credit window, for logging
    /// them without flooding the log.
    over_credit: u64,
    /// WebSocket sends awaiting their acknowledgement.
    ws_pending: ws::PendingSends,
    /// WebSocket sends asked for before the handshake completed, sent once
    /// it has: (correlation id, messages, timeout).
    ws_queued: Vec<(String, Vec<pb::WsOutbound>, u64)>,
}

impl Session {
    /// A session that has just connected at `now` (Unix ms) and waits for
    /// `RuntimeConfig`.
    pub fn new(config: SessionConfig, now: i64) -> Self {
        let handlers = config.handlers.len();
        let mut config = config;
        // The pool has at least one worker: a window of zero would never be
        // dispatched to.
        config.initial_credit = config.initial_credit.max(1);
        config.max_message_bytes = config.max_message_bytes.max(MIN_MESSAGE_BYTES);
        let credit = Credit::new(config.initial_credit);
        Session {
            config,
            phase: Phase::AwaitingConfig,
            started_at: now,
            by_tag: FastMap::default(),
            in_flight: FastMap::default(),
            in_flight_per_handler: vec![0; handlers],
            credit,
            timers: BinaryHeap::new(),
            actions: VecDeque::new(),
            pending_grant: None,
            signalled: false,
            draining_sent: false,
            stop_after_ack: false,
            now,
            over_credit: 0,
            ws_pending: ws::PendingSends::default(),
            ws_queued: Vec::new(),
        }
    }

    /// Feeds one input at time `now` (Unix ms). Actions it produces are read
    /// with [`Session::poll_action`].
    pub fn handle(&mut self, now: i64, input: Input) {
        if self.phase == Phase::Closed {
            if let Input::WsSend { correlation_id, .. } = input {
                self.actions.push_back(Action::WsDone { correlation_id, outcome: WsOutcome::Disconnected });
            }
            return;
        }
        self.now = now;
        self.apply(now, input);
        if self.phase == Phase::Closed {
            // Nothing more will be read: sends still waiting never will be
            // acknowledged.
            let waiting = self.ws_pending.take_all().into_iter().chain(self.ws_queued.drain(..).map(|(id, _, _)| id));
            let done: Vec<Action> = waiting
                .map(|correlation_id| Action::WsDone { correlation_id, outcome: WsOutcome::Disconnected })
                .collect();
            self.actions.extend(done);
        }
    }

    fn apply(&mut self, now: i64, input: Input) {
        match input {
            Input::Frame(message) => self.on_frame(now, message),
            Input::Completed { id, outcome } => self.on_completed(now, id, outcome),
            Input::Tick => self.on_tick(now),
            Input::Shutdown => self.on_shutdown(now),
            Input::Stop => self.on_stop(now),
            Input::StreamEnded { error } => self.on_stream_ended(error),
            Input::Withhold => self.credit.withhold(),
            Input::Resume => {
                if let Some(additional) = self.credit.resume() {
                    self.send_grant(additional);
                }
                // A shrink's pause may be over now.
                self.after_answers();
            }
            Input::Resize(window) => {
                if self.phase == Phase::AwaitingConfig {
                    // Ready is not sent yet: it declares the new size.
                    self.config.initial_credit = window.max(1);
                    self.credit.declare(self.config.initial_credit);
                } else if let Some(additional) = self.credit.resize(window) {
                    self.send_grant(additional);
                }
                self.after_answers();
            }
            Input::WsSend { correlation_id, messages, timeout_ms } => {
                if matches!(self.phase, Phase::AwaitingConfig | Phase::AwaitingAck) {
                    self.ws_queued.push((correlation_id, messages, timeout_ms));
                } else {
                    self.send_ws(now, correlation_id, messages, timeout_ms);
                }
            }
        }
    }

    fn send_ws(&mut self, now: i64, correlation_id: String, messages: Vec<pb::WsOutbound>, timeout_ms: u64) {
        let message = HandlerMessage {
            frame: Some(handler_message::Frame::WsSend(pb::WsSend {
                correlation_id: correlation_id.clone(),
                messages,
            })),
        };
        let bytes = message.encoded_len();
        let limit = self.config.max_message_bytes;
        if bytes > limit {
            // The transport's encoder would fail the whole stream on it.
            self.warn(format!(
                "a WebSocket send of {bytes} bytes is over the largest frame of {limit} bytes \
                 (CELERITY_MAX_MESSAGE_BYTES); it was not sent"
            ));
            self.actions.push_back(Action::WsDone { correlation_id, outcome: WsOutcome::TooLarge { bytes, limit } });
            return;
        }
        let deadline = now.saturating_add(i64::try_from(timeout_ms).unwrap_or(i64::MAX));
        if !self.ws_pending.insert(correlation_id.clone(), deadline) {
            self.warn(format!("a WebSocket send reused correlation id {}; it was not sent", quoted(&correlation_id)));
            self.actions.push_back(Action::WsDone { correlation_id, outcome: WsOutcome::Disconnected });
            return;
        }
        self.actions.push_back(Action::Send(message));
    }

    fn on_ws_ack(&mut self, ack: pb::WsSendAck) {
        if self.ws_pending.remove(&ack.correlation_id) {
            let correlation_id = ack.correlation_id.clone();
            self.actions.push_back(Action::WsDone { correlation_id, outcome: WsOutcome::Acked(ack) });
            // The last thing a drain waited for may have been this.
            self.after_answers();
        } else {
            // Given up on already (timed out), or never sent by us.
            self.warn(format!(
                "the runtime acknowledged WebSocket send {}, which is not awaited (it timed out, or this process did not make it); ignored",
                quoted(&ack.correlation_id)
            ));
        }
    }

    /// The next action to carry out, in order.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// When [`Input::Tick`] should next be fed, if any timer is set.
    pub fn next_timer(&mut self) -> Option<i64> {
        match self.phase {
            Phase::AwaitingConfig | Phase::AwaitingAck => {
                Some(self.started_at.saturating_add(self.config.handshake_timeout_ms as i64))
            }
            Phase::Closed => None,
            Phase::Serving | Phase::Drained { .. } | Phase::Draining { .. } => {
                self.drop_stale_timers();
                let events = self.timers.peek().map(|Reverse((at, _))| *at);
                let sends = self.ws_pending.next_deadline();
                let next = match (events, sends) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                let (deadline, settle_until) = match self.phase {
                    Phase::Drained { deadline } => (deadline, None),
                    Phase::Draining { deadline, settle_until } => (deadline, Some(settle_until)),
                    _ => return next,
                };
                let mut end = deadline;
                // Held work is told to stop one grace before the deadline.
                let warn_at = self.drain_cancel_at(deadline);
                if warn_at > self.now && !self.in_flight.is_empty() {
                    end = end.min(warn_at);
                }
                if let Some(settle) = settle_until.filter(|&at| at > self.now) {
                    end = end.min(settle);
                }
                Some(next.map_or(end, |at| at.min(end)))
            }
        }
    }

    /// Whether the session has ended; it then ignores every input.
    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    /// Events dispatched and not yet answered.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// The credit window.
    pub fn credit(&self) -> &Credit {
        &self.credit
    }

    /// Whether the handshake has completed and the session has not closed.
    pub fn is_serving(&self) -> bool {
        matches!(self.phase, Phase::Serving | Phase::Drained { .. } | Phase::Draining { .. })
    }

    /// Whether every table that tracks events is empty: nothing in flight,
    /// no per-handler count, no timer left once stale ones are dropped. For
    /// tests: it must hold whenever all work has been answered.
    #[doc(hidden)]
    pub fn tables_empty(&mut self) -> bool {
        self.drop_stale_timers();
        self.in_flight.is_empty()
            && self.in_flight_per_handler.iter().all(|&n| n == 0)
            && self.timers.is_empty()
            && self.ws_pending.is_empty()
            && self.ws_queued.is_empty()
    }

    /// WebSocket sends awaiting their acknowledgement.
    pub fn ws_pending(&self) -> usize {
        self.ws_pending.len()
    }

    /// Timer entries held, stale ones included. For tests of the bound on
    /// them.
    #[doc(hidden)]
    pub fn timer_entries(&self) -> usize {
        self.timers.len()
    }

    fn on_frame(&mut self, now: i64, message: RuntimeMessage) {
        let Some(frame) = message.frame else {
            if self.phase == Phase::AwaitingConfig {
                return self.fail(SessionError::UnexpectedFirstFrame("an empty frame"));
            }
            return self.warn("the runtime sent a frame with nothing in it; ignored".to_string());
        };
        match self.phase {
            Phase::AwaitingConfig => match frame {
                runtime_message::Frame::Config(config) => self.on_config(config),
                other => self.fail(SessionError::UnexpectedFirstFrame(frame_name(&other))),
            },
            Phase::AwaitingAck => match frame {
                runtime_message::Frame::ReadyAck(ack) => self.on_ready_ack(ack),
                runtime_message::Frame::Dispatch(dispatch) if dispatch.id.is_empty() => {
                    self.unanswerable(&dispatch, "it has no id");
                }
                runtime_message::Frame::Dispatch(dispatch) if dispatch.id.len() > MAX_ID_BYTES => {
                    self.unanswerable(&dispatch, "its id is longer than any answer may carry");
                }
                runtime_message::Frame::Dispatch(dispatch) => {
                    // Never leave an event unanswered, even one that breaks
                    // the handshake order.
                    self.answer_unstarted(
                        dispatch.id,
                        error_type::NOT_ACCEPTING,
                        "the runtime dispatched before acknowledging Ready".to_string(),
                    );
                }
                other => self.fail(SessionError::UnexpectedFrame { frame: frame_name(&other), expected: "ReadyAck" }),
            },
            Phase::Serving | Phase::Drained { .. } | Phase::Draining { .. } => match frame {
                runtime_message::Frame::Dispatch(dispatch) => self.on_dispatch(now, dispatch),
                runtime_message::Frame::Cancel(cancel) => {
                    self.on_cancel(now, &cancel.id, CancelReason::from_wire(cancel.reason))
                }
                runtime_message::Frame::Drain(drain) => self.on_drain(now, drain.deadline_unix_ms),
                runtime_message::Frame::WsAck(ack) => self.on_ws_ack(ack),
                other => self.warn(format!("the runtime sent {} after the handshake; ignored", frame_name(&other))),
            },
            Phase::Closed => {}
        }
    }

    fn on_config(&mut self, config: pb::RuntimeConfig) {
        if let Err(error) = handshake::check_version(&config) {
            return self.fail(error);
        }
        let binding = match handshake::bind(&self.config.handlers, &config) {
            Ok(binding) => binding,
            Err(error) => return self.fail(error),
        };
        if config.protocol_version.is_none() {
            self.actions.push_back(Action::UnversionedRuntime);
        }
        let ready = handshake::ready(&self.config.handlers, &binding, self.credit.window(), &self.config.sdk_version);
        self.actions.push_back(Action::Report(binding.report));
        self.by_tag = binding.by_tag;
        self.send(handler_message::Frame::Ready(ready));
        self.phase = Phase::AwaitingAck;
    }

    fn on_ready_ack(&mut self, ack: pb::ReadyAck) {
        if ack.accepted {
            self.phase = Phase::Serving;
            self.actions.push_back(Action::Serving);
            if let Some(additional) = self.pending_grant.take() {
                self.send_grant(additional);
            }
            for (correlation_id, messages, timeout_ms) in std::mem::take(&mut self.ws_queued) {
                self.send_ws(self.now, correlation_id, messages, timeout_ms);
            }
            if self.stop_after_ack {
                self.begin_draining(self.now);
            }
            return;
        }
        let reason = pb::ready_ack::RefusedReason::try_from(ack.refused_reason)
            .unwrap_or(pb::ready_ack::RefusedReason::Unspecified);
        self.fail(SessionError::Refused { reason, unknown_tags: ack.unknown_tags, unhandled_tags: ack.unhandled_tags });
    }

    fn on_dispatch(&mut self, now: i64, dispatch: Dispatch) {
        if dispatch.id.is_empty() {
            return self.unanswerable(&dispatch, "it has no id");
        }
        if dispatch.id.len() > MAX_ID_BYTES {
            return self.unanswerable(&dispatch, "its id is longer than any answer may carry");
        }
        if self.in_flight.contains_key(dispatch.id.as_str()) {
            // A second answer for the id would be taken as the first one's.
            return self.unanswerable(&dispatch, "its id is still in flight");
        }
        if let Phase::Drained { .. } = self.phase {
            return self.answer_unstarted(
                dispatch.id,
                error_type::NOT_ACCEPTING,
                "the runtime dispatched after asking this handler to drain".to_string(),
            );
        }
        if !self.credit.has_room(self.in_flight.len()) {
            // Answered at once, never queued. Logged with a count, at
            // doubling intervals, so a runtime that keeps doing it cannot
            // flood the log.
            self.over_credit += 1;
            if self.over_credit.is_power_of_two() {
                self.warn(format!(
                    "the runtime dispatched {} beyond the credit window of {} ({} such dispatch(es) so far); \
                     answered OverCapacity without running it",
                    quoted(&dispatch.id),
                    self.credit.window(),
                    self.over_credit
                ));
            }
            return self.answer_over_credit(dispatch.id);
        }
        let Some(&handler) = self.by_tag.get(&dispatch.handler_tag) else {
            let message = format!("no handler in this process serves tag {}", quoted(&dispatch.handler_tag));
            return self.answer_unstarted(dispatch.id, error_type::UNKNOWN_TAG, message);
        };
        if let Some(cap) = self.config.handlers[handler].max_concurrent
            && self.in_flight_per_handler[handler] >= cap
        {
            let message = format!(
                "tag {} already has {cap} event(s) in flight, its max_concurrent",
                quoted(&dispatch.handler_tag)
            );
            self.warn(format!("the runtime exceeded a per-tag cap: {message}"));
            return self.answer_unstarted(dispatch.id, error_type::OVER_CAPACITY, message);
        }

        let deadline = dispatch.deadline_unix_ms.max(0);
        let timer = (deadline > 0).then_some(deadline);
        // One allocation for the id, shared by the table, the timer and the
        // driver, instead of a copy for each.
        let id: Arc<str> = Arc::from(dispatch.id.as_str());
        if let Some(at) = timer {
            self.timers.push(Reverse((at, Arc::clone(&id))));
        }
        self.in_flight.insert(Arc::clone(&id), InFlight { handler, deadline, cancelled: None, timer });
        self.in_flight_per_handler[handler] += 1;
        self.actions.push_back(Action::Start { handler, id, dispatch: Box::new(dispatch) });
        // A deadline already passed fires at once rather than on the next tick.
        if timer.is_some_and(|at| at <= now) {
            self.on_tick(now);
        }
    }

    fn on_completed(&mut self, _now: i64, id: Arc<str>, outcome: Outcome) {
        if self.in_flight.contains_key(&id) {
            self.answer(id.to_string(), outcome);
            self.after_answers();
        }
        // Otherwise the session already answered for it (deadline or
        // cancellation grace); the late outcome is dropped.
    }

    fn on_cancel(&mut self, now: i64, id: &str, reason: CancelReason) {
        let grace = self.config.cancel_grace_ms as i64;
        let Some((key, event)) = self.in_flight.get_key_value(id) else {
            // Crossed with our result on the wire: nothing to do.
            return;
        };
        if event.cancelled.is_some() {
            return;
        }
        let key = Arc::clone(key);
        let Some(event) = self.in_flight.get_mut(id) else {
            return;
        };
        if event.cancelled.is_some() {
            return;
        }
        event.cancelled = Some(reason);
        let abandon_at = now.saturating_add(grace);
        event.timer = Some(abandon_at);
        self.timers.push(Reverse((abandon_at, key)));
        self.actions.push_back(Action::Cancel { id: id.to_string(), reason });
    }

    fn on_tick(&mut self, now: i64) {
        match self.phase {
            Phase::AwaitingConfig | Phase::AwaitingAck => {
                let waited = now.saturating_sub(self.started_at);
                if waited >= self.config.handshake_timeout_ms as i64 {
                    let expected = if self.phase == Phase::AwaitingConfig { "RuntimeConfig" } else { "ReadyAck" };
                    self.fail(SessionError::HandshakeTimeout { expected, waited_ms: waited.max(0) as u64 });
                }
                return;
            }
            Phase::Closed => return,
            _ => {}
        }
        for correlation_id in self.ws_pending.expire(now) {
            self.actions.push_back(Action::WsDone { correlation_id, outcome: WsOutcome::TimedOut });
        }
        let grace = self.config.cancel_grace_ms as i64;
        while let Some(Reverse((at, _))) = self.timers.peek() {
            if *at > now {
                break;
            }
            let Some(Reverse((at, id))) = self.timers.pop() else {
                break;
            };
            let Some(event) = self.in_flight.get_mut(&id) else {
                continue;
            };
            if event.timer != Some(at) {
                continue;
            }
            match event.cancelled {
                None => {
                    // The deadline passed: cancel, and abandon after the grace.
                    event.cancelled = Some(CancelReason::DeadlineExceeded);
                    let abandon_at = event.deadline.saturating_add(grace).max(now);
                    event.timer = Some(abandon_at);
                    self.timers.push(Reverse((abandon_at, Arc::clone(&id))));
                    self.actions
                        .push_back(Action::Cancel { id: id.to_string(), reason: CancelReason::DeadlineExceeded });
                }
                Some(reason) => self.abandon(&id, reason, "did not finish"),
            }
        }
        if let Phase::Drained { deadline } | Phase::Draining { deadline, .. } = self.phase {
            if now >= self.drain_cancel_at(deadline) {
                // One grace before the deadline: what is still held is told
                // to stop, so a handler that honours it answers for itself
                // in time. Dropped at the deadline, not before.
                let mut ids: Vec<Arc<str>> =
                    self.in_flight.iter().filter(|(_, e)| e.cancelled.is_none()).map(|(id, _)| id.clone()).collect();
                ids.sort();
                for id in ids {
                    if let Some(event) = self.in_flight.get_mut(&id) {
                        event.cancelled = Some(CancelReason::Shutdown);
                        event.timer = None;
                    }
                    self.actions.push_back(Action::Cancel { id: id.to_string(), reason: CancelReason::Shutdown });
                }
            }
            if now >= deadline {
                let ids: Vec<Arc<str>> = self.in_flight.keys().cloned().collect();
                for id in ids {
                    self.abandon(&id, CancelReason::Shutdown, "was still running at the drain deadline");
                }
            }
        }
        self.after_answers();
    }

    /// When held work is cancelled ahead of a drain deadline.
    fn drain_cancel_at(&self, deadline: i64) -> i64 {
        deadline.saturating_sub(self.config.cancel_grace_ms as i64)
    }

    /// Answers for a handler that will not: fires its cancellation if that
    /// has not happened, drops its future, and sends the error.
    fn abandon(&mut self, id: &str, reason: CancelReason, what: &str) {
        let Some(event) = self.in_flight.get(id) else {
            return;
        };
        if event.cancelled.is_none() {
            self.actions.push_back(Action::Cancel { id: id.to_string(), reason });
        }
        self.actions.push_back(Action::Abandon { id: id.to_string() });
        let message = match reason {
            CancelReason::DeadlineExceeded => format!("the handler ran past its deadline and {what}"),
            other => format!("the handler was cancelled ({other}) and {what}"),
        };
        let outcome =
            Outcome::Error(pb::HandlerError { message, r#type: reason.error_type().to_string(), stack: String::new() });
        self.answer(id.to_string(), outcome);
    }

    fn on_drain(&mut self, now: i64, deadline: i64) {
        let mut deadline = if deadline <= 0 { now } else { deadline };
        // Draining first (a signal), or a second Drain: the earlier deadline
        // holds; the runtime closes the stream at either.
        if let Phase::Drained { deadline: earlier } | Phase::Draining { deadline: earlier, .. } = self.phase {
            deadline = deadline.min(earlier);
        }
        self.phase = Phase::Drained { deadline };
        // Fires what is due already: the early cancellation when the
        // deadline is within a grace, everything when it has passed.
        self.on_tick(now);
    }

    /// A signal (SIGTERM, SIGINT). The first drains; the second stops now.
    fn on_shutdown(&mut self, now: i64) {
        match self.phase {
            Phase::AwaitingConfig => self.stop_before_serving(),
            // Ready is out: the runtime may be dispatching already. Drain
            // once it acknowledges, unless a second signal says stop now.
            Phase::AwaitingAck if !self.signalled => {
                self.signalled = true;
                self.stop_after_ack = true;
            }
            Phase::AwaitingAck => {
                self.phase = Phase::Closed;
                self.actions.push_back(Action::Close);
                self.actions.push_back(Action::Exit(Err(SessionError::Interrupted)));
            }
            Phase::Closed => {}
            _ if !self.signalled => {
                // The runtime may signal before Drain, after it, or instead
                // of it: only a second signal interrupts.
                self.signalled = true;
                self.begin_draining(now);
            }
            _ => {
                // A second signal: stop now, answering for what is held.
                let ids: Vec<Arc<str>> = self.in_flight.keys().cloned().collect();
                for id in ids {
                    self.abandon(&id, CancelReason::Shutdown, "the process was interrupted");
                }
                self.phase = Phase::Closed;
                self.timers.clear();
                self.actions.push_back(Action::Close);
                self.actions.push_back(Action::Exit(Err(SessionError::Interrupted)));
            }
        }
    }

    /// The application asks to stop: drains as on a first signal, once.
    fn on_stop(&mut self, now: i64) {
        match self.phase {
            Phase::AwaitingConfig => self.stop_before_serving(),
            Phase::AwaitingAck => self.stop_after_ack = true,
            Phase::Closed => {}
            _ => self.begin_draining(now),
        }
    }

    fn stop_before_serving(&mut self) {
        self.phase = Phase::Closed;
        self.actions.push_back(Action::Close);
        self.actions.push_back(Action::Exit(Ok(())));
    }

    /// Tells the runtime this process is going away, with a deadline of now
    /// plus the shutdown grace (or the runtime's own drain deadline, when
    /// that is earlier), and finishes what it holds. Only once.
    fn begin_draining(&mut self, now: i64) {
        if self.draining_sent {
            return;
        }
        self.draining_sent = true;
        let mut deadline = now.saturating_add(self.config.shutdown_grace_ms as i64);
        if let Phase::Drained { deadline: drain } = self.phase {
            deadline = deadline.min(drain);
            self.phase = Phase::Drained { deadline };
        } else {
            let settle_until = now.saturating_add(self.config.draining_settle_ms as i64).min(deadline);
            self.phase = Phase::Draining { deadline, settle_until };
        }
        self.send(handler_message::Frame::Draining(Draining { deadline_unix_ms: deadline }));
        self.on_tick(now);
    }

    fn on_stream_ended(&mut self, error: Option<String>) {
        let expected = match self.phase {
            Phase::AwaitingConfig => Some("RuntimeConfig"),
            Phase::AwaitingAck => Some("ReadyAck"),
            _ => None,
        };
        let ids: Vec<Arc<str>> = self.in_flight.keys().cloned().collect();
        let lost = ids.len();
        for id in ids {
            // Nothing can be sent any more: cancel and drop, no answer.
            self.actions.push_back(Action::Cancel { id: id.to_string(), reason: CancelReason::Shutdown });
            self.actions.push_back(Action::Abandon { id: id.to_string() });
            self.forget(&id);
        }
        let result = match (expected, self.phase) {
            (Some(expected), _) => Err(SessionError::EndedDuringHandshake { expected, error }),
            (None, Phase::Drained { .. } | Phase::Draining { .. }) if lost == 0 => Ok(()),
            (None, Phase::Drained { .. } | Phase::Draining { .. }) => {
                // The runtime gave up on what was held; that is its call
                // during a drain, and not a failure of this process.
                self.actions.push_back(Action::Warn(format!(
                    "the runtime closed the stream while {lost} event(s) were still running; they were abandoned"
                )));
                Ok(())
            }
            _ => Err(SessionError::StreamEnded { in_flight: lost, error }),
        };
        self.phase = Phase::Closed;
        self.actions.push_back(Action::Exit(result));
    }

    /// Sends the result for an in-flight event and releases its place.
    fn answer(&mut self, id: String, outcome: Outcome) {
        self.forget(&id);
        let credit_grant = self.credit.grant_for_result();
        self.send_result(id, credit_grant, outcome);
    }

    /// Sends a `Result`, unless it would not fit a frame: then an error
    /// saying so goes in its place, since the transport's encoder would
    /// fail the whole stream on it. Ids are at most [`MAX_ID_BYTES`] and
    /// frames at least [`MIN_MESSAGE_BYTES`], so that error always fits.
    fn send_result(&mut self, id: String, credit_grant: u32, outcome: Outcome) {
        let mut message = HandlerMessage {
            frame: Some(handler_message::Frame::Result(pb::Result { id, credit_grant, outcome: Some(outcome) })),
        };
        let bytes = message.encoded_len();
        let limit = self.config.max_message_bytes;
        if bytes > limit
            && let Some(handler_message::Frame::Result(result)) = &mut message.frame
        {
            let text = format!(
                "the handler's answer is {bytes} bytes encoded, over the largest frame of {limit} bytes \
                 (CELERITY_MAX_MESSAGE_BYTES); this error was sent instead"
            );
            self.actions.push_back(Action::Warn(format!("event {}: {text}", quoted(&result.id))));
            result.outcome = Some(Outcome::Error(pb::HandlerError {
                message: text,
                r#type: error_type::RESULT_TOO_LARGE.to_string(),
                stack: String::new(),
            }));
        }
        self.actions.push_back(Action::Send(message));
    }

    fn forget(&mut self, id: &str) {
        if let Some(event) = self.in_flight.remove(id) {
            self.in_flight_per_handler[event.handler] -= 1;
        }
        // An answered event leaves its timers in the heap until they come
        // due, which for a long deadline is long after. Rebuilding the heap
        // when stale entries outnumber live ones keeps it bounded by the
        // events in flight, at amortised constant cost.
        if self.timers.len() > 2 * self.in_flight.len() + 64 {
            let in_flight = &self.in_flight;
            self.timers.retain(|Reverse((at, id))| in_flight.get(id).is_some_and(|e| e.timer == Some(*at)));
        }
    }

    /// A dispatch that cannot be answered with a `Result`: run nothing, and
    /// give its place back with a `CreditGrant` when that can be done without
    /// ending a withhold (see [`Credit::return_unanswered`]).
    fn unanswerable(&mut self, dispatch: &Dispatch, why: &str) {
        self.warn(format!(
            "the runtime dispatched id {} for tag {}, which cannot be answered because {why}; it was dropped",
            quoted(&dispatch.id),
            quoted(&dispatch.handler_tag)
        ));
        if let Some(additional) = self.credit.return_unanswered() {
            self.send_grant(additional);
        }
        // Keeping the place may have completed a shrink.
        self.after_answers();
    }

    /// Answers an event that was never started: it still takes its place in
    /// the window's accounting, so it is answered like any other result.
    fn answer_unstarted(&mut self, id: String, r#type: &str, message: String) {
        let credit_grant = self.credit.grant_for_result();
        let outcome = Outcome::Error(pb::HandlerError { message, r#type: r#type.to_string(), stack: String::new() });
        self.send_result(id, credit_grant, outcome);
        self.after_answers();
    }

    /// Answers a dispatch that came beyond the window. It is outside our
    /// accounting, so it gives back exactly the place the runtime spent on it.
    fn answer_over_credit(&mut self, id: String) {
        self.send(handler_message::Frame::Result(pb::Result {
            id,
            credit_grant: 1,
            outcome: Some(Outcome::Error(pb::HandlerError {
                message: format!(
                    "the handler process is at its credit window of {} event(s) in flight",
                    self.credit.window()
                ),
                r#type: error_type::OVER_CAPACITY.to_string(),
                stack: String::new(),
            })),
        }));
    }

    /// Work to do once results have been sent: end a shrink's withhold, and
    /// finish a drain when nothing is left.
    fn after_answers(&mut self) {
        if let Some(additional) = self.credit.resume_after_shrink(self.in_flight.len()) {
            self.send_grant(additional);
        }
        let (finished, past_deadline) = match self.phase {
            Phase::Drained { deadline } => (true, self.now >= deadline),
            Phase::Draining { settle_until, deadline } => (self.now >= settle_until, self.now >= deadline),
            _ => (false, false),
        };
        // Sends still awaiting acknowledgement are waited for too, until the
        // deadline: a handler that sent before finishing gets its answer.
        if finished && self.in_flight.is_empty() && (self.ws_pending.is_empty() || past_deadline) {
            self.phase = Phase::Closed;
            self.timers.clear();
            self.actions.push_back(Action::Close);
            self.actions.push_back(Action::Exit(Ok(())));
        }
    }

    fn send_grant(&mut self, additional: u32) {
        if matches!(self.phase, Phase::AwaitingConfig | Phase::AwaitingAck) {
            *self.pending_grant.get_or_insert(0) += additional;
            return;
        }
        self.send(handler_message::Frame::Credit(CreditGrant { additional }));
    }

    fn send(&mut self, frame: handler_message::Frame) {
        self.actions.push_back(Action::Send(HandlerMessage { frame: Some(frame) }));
    }

    fn warn(&mut self, message: String) {
        self.actions.push_back(Action::Warn(message));
    }

    fn fail(&mut self, error: SessionError) {
        self.phase = Phase::Closed;
        self.actions.push_back(Action::Close);
        self.actions.push_back(Action::Exit(Err(error)));
    }

    fn drop_stale_timers(&mut self) {
        while let Some(Reverse((at, id))) = self.timers.peek() {
            let live = self.in_flight.get(id).is_some_and(|e| e.timer == Some(*at));
            if live {
                break;
            }
            self.timers.pop();
        }
    }
}

/// The name of a runtime frame, for messages.
pub fn frame_name(frame: &runtime_message::Frame) -> &'static str {
    match frame {
        runtime_message::Frame::Config(_) => "RuntimeConfig",
        runtime_message::Frame::ReadyAck(_) => "ReadyAck",
        runtime_message::Frame::Dispatch(_) => "Dispatch",
        runtime_message::Frame::Cancel(_) => "Cancel",
        runtime_message::Frame::Drain(_) => "Drain",
        runtime_message::Frame::WsAck(_) => "WsSendAck",
    }
}

#[cfg(test)]
mod tests;
