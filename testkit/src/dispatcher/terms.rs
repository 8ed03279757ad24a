//! The dispatcher's vocabulary: how it is timed and configured from the
//! runtime's, what it yields for its driver to carry out, and why an event
//! ends as it does.

use std::fmt;
use std::time::Duration;

use celerity_proto::v1::{self as pb, RuntimeConfig, WsSend, runtime_message};

use crate::runtime::DEFAULT_HANDLER_TIMEOUT_MS;

/// Identifies a handler stream attached to a dispatcher.
pub type StreamId = u64;

/// The specification's timings. The defaults are the specification's
/// values; tests shorten them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// How long an event for a tag no stream serves is held before it is
    /// shed ("The Attach Grace"): 3 s.
    pub attach_grace: Duration,
    /// The most a producer waits for room in a full queue; it waits a quarter
    /// of the event's timeout, never more than this ("Before Dispatch"): 5 s.
    pub max_producer_wait: Duration,
    /// How long after a `Cancel` the runtime takes the event's place back
    /// itself: 5 s.
    pub cancel_reclaim: Duration,
    /// How long the events whose places were taken back are remembered, so
    /// that their late answers are recognised: 60 s.
    pub late_memory: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            attach_grace: Duration::from_secs(3),
            max_producer_wait: Duration::from_secs(5),
            cancel_reclaim: Duration::from_secs(5),
            late_memory: Duration::from_secs(60),
        }
    }
}

/// The longest drain deadline derived from handler timeouts (5 min).
pub const MAX_DERIVED_DRAIN: Duration = Duration::from_secs(300);

/// The environment variable giving the runtime's drain deadline, in whole
/// seconds.
pub const ENV_DRAIN_TIMEOUT: &str = "CELERITY_DRAIN_TIMEOUT";

/// The default capacity of each tag's queue.
pub const DEFAULT_QUEUE_CAPACITY: usize = 64;

/// The drain deadline ("The Runtime Is Going Away"): `env` (the value of
/// `CELERITY_DRAIN_TIMEOUT`: whole seconds, or a number with an `ms` or `s`
/// suffix) where set, otherwise the longest handler timeout in `config`
/// (60 s for a handler that sets none, and when there are no handlers),
/// capped at 5 minutes.
pub fn drain_timeout(env: Option<&str>, config: &RuntimeConfig) -> Result<Duration, String> {
    if let Some(value) = env.map(str::trim).filter(|v| !v.is_empty()) {
        return parse_duration_secs(value)
            .ok_or_else(|| format!("{ENV_DRAIN_TIMEOUT}={value:?}: expected a whole number of seconds"));
    }
    let longest = config.handlers.iter().map(|h| handler_timeout(h.timeout_ms)).max();
    Ok(longest.unwrap_or(Duration::from_millis(DEFAULT_HANDLER_TIMEOUT_MS as u64)).min(MAX_DERIVED_DRAIN))
}

fn parse_duration_secs(value: &str) -> Option<Duration> {
    if let Some(ms) = value.strip_suffix("ms") {
        return ms.trim().parse().ok().map(Duration::from_millis);
    }
    value.strip_suffix('s').unwrap_or(value).trim().parse().ok().map(Duration::from_secs)
}

pub(super) fn handler_timeout(timeout_ms: i64) -> Duration {
    if timeout_ms > 0 {
        Duration::from_millis(timeout_ms as u64)
    } else {
        Duration::from_millis(DEFAULT_HANDLER_TIMEOUT_MS as u64)
    }
}

/// Why an event was shed: never dispatched, so no handler ran it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShedReason {
    /// No stream served its tag within the attach grace.
    NoHandler,
    /// Its tag's queue stayed full for the whole producer wait.
    QueueFull,
    /// The runtime is draining: the queue is closed to producers.
    Draining,
    /// Its deadline passed before it could be dispatched.
    DeadlinePassed,
    /// Another event with the same id is still known.
    DuplicateId,
}

impl fmt::Display for ShedReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ShedReason::NoHandler => "no handler stream served the tag within the attach grace",
            ShedReason::QueueFull => "the tag's queue stayed full for the whole producer wait",
            ShedReason::Draining => "the runtime is draining",
            ShedReason::DeadlinePassed => "the deadline passed before the event could be dispatched",
            ShedReason::DuplicateId => "an event with the same id is already in progress",
        })
    }
}

/// Why a dispatched event's caller was released without a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AbandonReason {
    /// Its deadline passed (and `Cancel(DEADLINE_EXCEEDED)` was sent).
    Deadline,
    /// Its stream ended, failed, or was closed at the handler's `Draining`
    /// deadline.
    StreamGone,
    /// It was still in flight at the runtime's drain deadline.
    DrainDeadline,
    /// The producer cancelled it.
    Cancelled,
    /// The dispatcher stopped.
    Stopped,
}

impl fmt::Display for AbandonReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AbandonReason::Deadline => "the deadline passed with no answer",
            AbandonReason::StreamGone => "the handler stream went away before answering",
            AbandonReason::DrainDeadline => "the drain deadline passed with no answer",
            AbandonReason::Cancelled => "cancelled",
            AbandonReason::Stopped => "the dispatcher stopped",
        })
    }
}

/// What became of a submitted event: the protocol's three answers, plus the
/// event that never reached a handler.
#[derive(Debug, Clone, PartialEq)]
pub enum EventOutcome {
    /// The handler answered.
    Result(pb::Result),
    /// The event was never dispatched.
    Shed(ShedReason),
    /// It was dispatched and no answer came in time.
    Abandoned(AbandonReason),
}

impl EventOutcome {
    /// The result, when the handler answered.
    pub fn result(&self) -> Option<&pb::Result> {
        match self {
            EventOutcome::Result(r) => Some(r),
            _ => None,
        }
    }
}

/// Why a stream was closed by the runtime side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseReason {
    /// The handler's `Draining` deadline passed.
    HandlerDrainingDeadline,
    /// The runtime's drain deadline passed.
    DrainDeadline,
    /// The stream arrived while the runtime was draining.
    RefusedDraining,
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CloseReason::HandlerDrainingDeadline => "the handler's Draining deadline passed",
            CloseReason::DrainDeadline => "the runtime's drain deadline passed",
            CloseReason::RefusedDraining => "the runtime is draining",
        })
    }
}

/// Something the driver must do.
// Actions are transient, carried out as soon as they are made: boxing the
// frames would cost an allocation per dispatch for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Send a frame on a stream.
    Send {
        /// The stream.
        stream: StreamId,
        /// The frame.
        frame: runtime_message::Frame,
    },
    /// Tell the producer of an event what became of it.
    Complete {
        /// The event id.
        id: String,
        /// The outcome.
        outcome: EventOutcome,
    },
    /// Deliver a `WsSend` and answer it with a `WsSendAck` on the stream.
    WsSend {
        /// The stream that sent it.
        stream: StreamId,
        /// The batch.
        send: WsSend,
    },
    /// Close a stream from the runtime side.
    Close {
        /// The stream.
        stream: StreamId,
        /// Why.
        reason: CloseReason,
    },
    /// Something worth a line in a log.
    Note(String),
}
