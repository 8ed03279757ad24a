//! The session's vocabulary: how handlers are bound and configured, what
//! goes in ([`Input`]) and what comes out ([`Action`]).

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use celerity_proto::v1::{self as pb, HandlerMessage, RuntimeMessage, runtime_message};

use super::{Event, HandshakeReport, SessionError, WsOutcome};
use crate::kind::HandlerKind;
use crate::reply::{HttpResult, Reply};

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

/// Whether a handler's arguments can be taken from the parameters of a route
/// (their names, in order): `Err` says why not.
pub type RouteCheck = fn(&[String]) -> Result<(), String>;

/// Whether `tag`'s route passes every one of `checks`: the first problem
/// if not. A tag that is not an HTTP tag has no route to check (its own
/// form is refused elsewhere).
pub fn route_fits(checks: &[RouteCheck], tag: &str) -> Result<(), String> {
    if checks.is_empty() {
        return Ok(());
    }
    let Ok(normalised) = celerity_tags::parse_tag(celerity_tags::TagKind::Http, tag) else { return Ok(()) };
    checks.iter().try_for_each(|check| check(&normalised.params))
}

/// What the session needs to know about one registered handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandlerSpec {
    /// How it is bound.
    pub key: HandlerKey,
    /// What it serves: an event of another kind is answered without
    /// starting it, and an answer of another shape is replaced by an error.
    pub kind: HandlerKind,
    /// Its per-tag cap, declared in `Ready` and enforced locally.
    pub max_concurrent: Option<u32>,
    /// Its Rust path, as answers for it name it.
    pub name: String,
    /// How to name it to a person: Rust path and source location.
    pub label: String,
    /// What its route must offer its arguments (a `Path<T>` that fits),
    /// checked at the handshake for a handler bound by name, whose route
    /// only the blueprint gives. `Err` says why a route does not fit.
    pub route: Vec<RouteCheck>,
}

impl HandlerSpec {
    /// A handler of `kind` bound by `key`, with no cap, named `name` both in
    /// answers and to a person.
    pub fn new(key: HandlerKey, kind: HandlerKind, name: impl Into<String>) -> Self {
        let name = name.into();
        HandlerSpec { key, kind, max_concurrent: None, label: name.clone(), name, route: Vec::new() }
    }
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

/// The largest frame accepted or sent when `CELERITY_MAX_MESSAGE_BYTES` is not set.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;
/// How long the handshake may take when `CELERITY_HANDSHAKE_TIMEOUT_MS` is
/// not set: the 30 s the runtime gives a handler to send `Ready`.
pub const DEFAULT_HANDSHAKE_TIMEOUT_MS: u64 = 30_000;
/// How long a cancelled handler may run on when `CELERITY_CANCEL_GRACE_MS` is
/// not set.
pub const DEFAULT_CANCEL_GRACE_MS: u64 = 1_000;

impl SessionConfig {
    /// A configuration with the SDK's default timings.
    pub fn new(handlers: Vec<HandlerSpec>, initial_credit: u32) -> Self {
        SessionConfig {
            handlers,
            initial_credit,
            sdk_version: crate::version::SDK_VERSION.to_string(),
            cancel_grace_ms: DEFAULT_CANCEL_GRACE_MS,
            handshake_timeout_ms: DEFAULT_HANDSHAKE_TIMEOUT_MS,
            shutdown_grace_ms: 10_000,
            draining_settle_ms: 250,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}

/// The deadline a `Dispatch` sets, from its `deadline_unix_ms`: only 0
/// means none, and a negative one is in the past.
pub fn event_deadline(deadline_unix_ms: i64) -> Option<i64> {
    (deadline_unix_ms != 0).then_some(deadline_unix_ms)
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
    pub(super) fn from_wire(reason: i32) -> Self {
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
    pub const WRONG_SOURCE: &str = crate::kind::WRONG_SOURCE;
    /// The handler answered in a shape the event's source cannot use; this
    /// error was sent instead.
    pub const WRONG_OUTCOME: &str = crate::kind::WRONG_OUTCOME;
    /// The handler's answer would not fit a frame
    /// (`CELERITY_MAX_MESSAGE_BYTES`); this error was sent instead.
    pub const RESULT_TOO_LARGE: &str = "ResultTooLarge";
    /// The event's `Dispatch` could not be decoded (a string that is not
    /// UTF-8, a message cut short); no handler ran. The message names the
    /// field.
    pub const UNDECODABLE: &str = "UndecodableDispatch";
}

/// Something that happened, fed to [`Session::handle`](super::Session::handle).
// Frames are moved through once each; boxing them would cost an allocation
// per event for no gain.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// A frame from the runtime. Boxed: a `RuntimeMessage` can hold a whole
    /// `Dispatch`, and unboxed it would make every input (and every slot of
    /// the driver's channel) that size, moved several times per event,
    /// while a `Dispatch` from the stream comes as [`Input::Dispatch`].
    Frame(Box<RuntimeMessage>),
    /// A `Dispatch` from the runtime, as the driver decodes one: its head
    /// decoded, its source not yet (see [`Event`]). The same as a
    /// [`Input::Frame`] of that `Dispatch`.
    Dispatch(Event),
    /// A frame from the runtime that did not decode: the transport's framing
    /// was intact, so this frame is all it costs. A `Dispatch` whose id can
    /// still be read is answered with a [`error_type::UNDECODABLE`] error
    /// naming the field; any other is logged and its place returned.
    Undecodable {
        /// The frame's bytes, as they arrived.
        frame: Bytes,
        /// Why it did not decode.
        error: prost::DecodeError,
    },
    /// The runtime sent a frame larger than this process accepts
    /// (`CELERITY_MAX_MESSAGE_BYTES`). It was refused unread, and the
    /// stream cannot be read past it.
    FrameTooLarge {
        /// The frame's length, from its header.
        bytes: usize,
        /// The largest frame accepted.
        limit: usize,
    },
    /// A handler finished, with the answer to send.
    Completed {
        /// The dispatch id, as [`Action::Start`] gave it.
        id: Arc<str>,
        /// What the handler produced.
        outcome: Reply,
    },
    /// A started event's source did not decode, so its handler never ran:
    /// answered with an [`error_type::UNDECODABLE`] error naming the field,
    /// as a `Dispatch` that does not decode at all is.
    Undecoded {
        /// The dispatch id, as [`Action::Start`] gave it.
        id: Arc<str>,
        /// Why it did not decode.
        error: prost::DecodeError,
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

impl From<RuntimeMessage> for Input {
    fn from(message: RuntimeMessage) -> Self {
        Input::Frame(Box::new(message))
    }
}

impl Input {
    /// How a started event ends: [`Input::Completed`] with its handler's
    /// outcome, or [`Input::Undecoded`] when its source did not decode.
    pub fn finished(id: Arc<str>, finished: Result<Reply, prost::DecodeError>) -> Input {
        match finished {
            Ok(outcome) => Input::Completed { id, outcome },
            Err(error) => Input::Undecoded { id, error },
        }
    }
}

/// Something to do, returned by [`Session::poll_action`](super::Session::poll_action).
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Write this frame to the stream.
    Send(HandlerMessage),
    /// Write this `Result`, an HTTP response of the SDK's own answer types,
    /// to the stream: the same frame as its protocol form would be.
    SendHttp(HttpResult),
    /// Run handler `handler` (an index into [`SessionConfig::handlers`]) for
    /// this dispatch. It must be answered with [`Input::Completed`].
    Start {
        /// Index of the handler.
        handler: usize,
        /// The dispatch's id, shared with the session's own tables: cheaper
        /// to keep than a copy of `dispatch.id`.
        id: Arc<str>,
        /// The event, its source still as it arrived (see [`Event`]). Its
        /// `id` is taken out, into the one above and the session's own copy
        /// for the answer.
        dispatch: Event,
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
