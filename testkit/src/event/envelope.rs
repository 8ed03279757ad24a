//! The fields every Dispatch carries besides its source.

use std::collections::HashMap;
use std::time::Duration;

use celerity_proto::v1::{Dispatch, dispatch::Source};

use crate::ids;
use crate::runtime::DEFAULT_HANDLER_TIMEOUT_MS;

#[derive(Debug, Clone)]
enum Deadline {
    In(Duration),
    At(i64),
}

/// Id, tag, timestamp, deadline and trace context of an event being built.
#[derive(Debug, Clone)]
pub(crate) struct Envelope {
    pub(crate) id: String,
    pub(crate) tag: Option<String>,
    pub(crate) timestamp_ms: Option<u64>,
    deadline: Deadline,
    pub(crate) trace_context: HashMap<String, String>,
}

impl Default for Envelope {
    fn default() -> Self {
        Envelope {
            id: String::new(),
            tag: None,
            timestamp_ms: None,
            deadline: Deadline::In(Duration::from_millis(DEFAULT_HANDLER_TIMEOUT_MS as u64)),
            trace_context: HashMap::new(),
        }
    }
}

impl Envelope {
    pub(crate) fn deadline_in(&mut self, d: Duration) {
        self.deadline = Deadline::In(d);
    }

    pub(crate) fn deadline_at(&mut self, unix_ms: i64) {
        self.deadline = Deadline::At(unix_ms);
    }

    /// The Dispatch, with `default_tag` unless a tag was set.
    pub(crate) fn into_dispatch(self, default_tag: String, source: Source) -> Dispatch {
        let now = ids::now_unix_ms();
        Dispatch {
            id: self.id,
            handler_tag: self.tag.unwrap_or(default_tag),
            timestamp_ms: self.timestamp_ms.unwrap_or(now.max(0) as u64),
            deadline_unix_ms: match self.deadline {
                Deadline::In(d) => now.saturating_add(d.as_millis() as i64),
                Deadline::At(ms) => ms,
            },
            trace_context: self.trace_context,
            source: Some(source),
        }
    }
}

/// Generates the common setters on a builder with an `envelope` field.
macro_rules! envelope_setters {
    () => {
        /// Sets the event id (default: assigned when dispatched).
        pub fn id(mut self, id: impl Into<String>) -> Self {
            self.envelope.id = id.into();
            self
        }

        /// Overrides the handler tag.
        pub fn tag(mut self, tag: impl Into<String>) -> Self {
            self.envelope.tag = Some(tag.into());
            self
        }

        /// Sets `timestamp_ms` (default: now).
        pub fn timestamp_ms(mut self, ms: u64) -> Self {
            self.envelope.timestamp_ms = Some(ms);
            self
        }

        /// Sets the deadline `d` after the moment the Dispatch is built
        /// (default 60 s).
        pub fn deadline_in(mut self, d: std::time::Duration) -> Self {
            self.envelope.deadline_in(d);
            self
        }

        /// Sets `deadline_unix_ms` exactly.
        pub fn deadline_unix_ms(mut self, unix_ms: i64) -> Self {
            self.envelope.deadline_at(unix_ms);
            self
        }

        /// Sends no deadline (`deadline_unix_ms` 0).
        pub fn no_deadline(mut self) -> Self {
            self.envelope.deadline_at(0);
            self
        }

        /// Adds a trace context entry (e.g. `traceparent`).
        pub fn trace_context(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
            self.envelope.trace_context.insert(key.into(), value.into());
            self
        }
    };
}

pub(crate) use envelope_setters;
