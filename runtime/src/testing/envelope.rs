//! What a `Dispatch` carries beside its source (id, tag, timestamp,
//! deadline, trace context), as every event builder holds it, and the one
//! set of setters for it.

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use celerity_proto::v1::{self as pb, dispatch::Source};

/// What a `Dispatch` carries beside its source, as an event builder holds
/// it: every builder has one, and the setters of `envelope_setters!`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Envelope {
    id: Option<String>,
    tag: Option<String>,
    timestamp_ms: Option<u64>,
    deadline: Deadline,
    trace_context: HashMap<String, String>,
}

#[derive(Debug, Clone, Copy, Default)]
enum Deadline {
    #[default]
    None,
    In(Duration),
    At(SystemTime),
    UnixMs(i64),
}

impl Envelope {
    pub(crate) fn set_id(&mut self, id: String) {
        self.id = Some(id);
    }

    pub(crate) fn set_tag(&mut self, tag: String) {
        self.tag = Some(tag);
    }

    pub(crate) fn set_timestamp_ms(&mut self, ms: u64) {
        self.timestamp_ms = Some(ms);
    }

    pub(crate) fn set_deadline_in(&mut self, budget: Duration) {
        self.deadline = Deadline::In(budget);
    }

    pub(crate) fn set_deadline_at(&mut self, deadline: SystemTime) {
        self.deadline = Deadline::At(deadline);
    }

    pub(crate) fn set_deadline_unix_ms(&mut self, unix_ms: i64) {
        self.deadline = Deadline::UnixMs(unix_ms);
    }

    pub(crate) fn set_trace_context(&mut self, name: String, value: String) {
        self.trace_context.insert(name, value);
    }

    /// The tag set on the builder, if any.
    pub(crate) fn tag(&self) -> Option<&str> {
        self.tag.as_deref()
    }

    /// The `Dispatch` of `source` for `tag`, its times counted from `now`.
    /// A deadline already past is still one (the protocol's `0` means
    /// none), unless it was set as that number.
    pub(crate) fn into_dispatch(
        self,
        tag: String,
        default_id: String,
        now: SystemTime,
        source: Option<Source>,
    ) -> pb::Dispatch {
        let deadline_unix_ms = match self.deadline {
            Deadline::None => 0,
            Deadline::In(budget) => unix_ms(now + budget).max(1),
            Deadline::At(at) => unix_ms(at).max(1),
            Deadline::UnixMs(ms) => ms,
        };
        pb::Dispatch {
            id: self.id.unwrap_or(default_id),
            handler_tag: tag,
            timestamp_ms: self.timestamp_ms.unwrap_or(unix_ms(now).max(0) as u64),
            deadline_unix_ms,
            trace_context: self.trace_context,
            source,
        }
    }
}

/// The setters of what a `Dispatch` carries beside its source, on a builder
/// with an `envelope` field: one set for every kind.
macro_rules! envelope_setters {
    () => {
        /// Sets the dispatch id (by default `test-1`, `test-2`, ... per
        /// [`TestApp`](crate::testing::TestApp); empty for a dispatch that
        /// is built, which the test kit's connection gives one).
        pub fn id(mut self, id: impl Into<String>) -> Self {
            self.envelope.set_id(id.into());
            self
        }

        /// Sets the handler tag of a dispatch that is built (by default the
        /// builder's own, in the runtime's form). A call of a
        /// [`TestApp`](crate::testing::TestApp) goes to the tag it names.
        pub fn tag(mut self, tag: impl Into<String>) -> Self {
            self.envelope.set_tag(tag.into());
            self
        }

        /// Sets `timestamp_ms` (by default, when the dispatch is made).
        pub fn timestamp_ms(mut self, ms: u64) -> Self {
            self.envelope.set_timestamp_ms(ms);
            self
        }

        /// Sets the deadline to `budget` after the dispatch is made (for a
        /// call, when it starts). When it passes, the handler's cancellation
        /// fires (reason `DeadlineExceeded`); if it has not finished one
        /// cancel grace later, the SDK answers for it with a `HandlerError`
        /// of type `DeadlineExceeded`.
        pub fn deadline_in(mut self, budget: std::time::Duration) -> Self {
            self.envelope.set_deadline_in(budget);
            self
        }

        /// Sets the deadline to an instant.
        pub fn deadline_at(mut self, deadline: std::time::SystemTime) -> Self {
            self.envelope.set_deadline_at(deadline);
            self
        }

        /// Sets `deadline_unix_ms` to exactly `unix_ms`, zero and past
        /// values included.
        pub fn deadline_unix_ms(mut self, unix_ms: i64) -> Self {
            self.envelope.set_deadline_unix_ms(unix_ms);
            self
        }

        /// Sends no deadline (`deadline_unix_ms` 0).
        pub fn no_deadline(self) -> Self {
            self.deadline_unix_ms(0)
        }

        /// Adds a trace context entry, such as `tracestate`.
        pub fn trace_context(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
            self.envelope.set_trace_context(name.into(), value.into());
            self
        }

        /// Sets the caller's W3C `traceparent`.
        pub fn traceparent(self, value: impl Into<String>) -> Self {
            self.trace_context("traceparent", value)
        }
    };
}

pub(crate) use envelope_setters;

fn unix_ms(at: SystemTime) -> i64 {
    match at.duration_since(UNIX_EPOCH) {
        Ok(since) => i64::try_from(since.as_millis()).unwrap_or(i64::MAX),
        Err(_) => 0,
    }
}
