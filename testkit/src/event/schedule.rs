//! Schedule trigger events.

use bytes::Bytes;
use celerity_proto::v1::{Dispatch, ScheduleTrigger, dispatch::Source};

use super::envelope::{Envelope, envelope_setters};
use crate::ids;

/// Starts a schedule trigger from schedule `schedule_id` for handler
/// `handler_name`; tag `source::{schedule_id}::{handler_name}`. The message id
/// defaults to a fresh one.
pub fn schedule(schedule_id: impl Into<String>, handler_name: impl Into<String>) -> ScheduleEvent {
    ScheduleEvent {
        envelope: Envelope::default(),
        schedule_id: schedule_id.into(),
        handler_name: handler_name.into(),
        message_id: ids::next_id("sched-msg"),
        schedule: String::new(),
        input: Bytes::new(),
        vendor: Bytes::new(),
    }
}

/// Builds a Dispatch with a `ScheduleTrigger` source.
#[derive(Debug, Clone)]
#[must_use]
pub struct ScheduleEvent {
    envelope: Envelope,
    schedule_id: String,
    handler_name: String,
    message_id: String,
    schedule: String,
    input: Bytes,
    vendor: Bytes,
}

impl ScheduleEvent {
    envelope_setters!();

    /// Sets the trigger's message id.
    pub fn message_id(mut self, id: impl Into<String>) -> Self {
        self.message_id = id.into();
        self
    }

    /// Sets the schedule expression, e.g. `rate(1 day)`.
    pub fn schedule(mut self, expression: impl Into<String>) -> Self {
        self.schedule = expression.into();
        self
    }

    /// Sets the input bytes.
    pub fn input(mut self, input: impl Into<Bytes>) -> Self {
        self.input = input.into();
        self
    }

    /// Sets the vendor bytes.
    pub fn vendor(mut self, vendor: impl Into<Bytes>) -> Self {
        self.vendor = vendor.into();
        self
    }

    /// The Dispatch.
    pub fn build(self) -> Dispatch {
        let tag = format!("source::{}::{}", self.schedule_id, self.handler_name);
        self.envelope.into_dispatch(
            tag,
            Source::Schedule(ScheduleTrigger {
                schedule_id: self.schedule_id,
                message_id: self.message_id,
                schedule: self.schedule,
                input: self.input,
                vendor: self.vendor,
            }),
        )
    }
}

impl From<ScheduleEvent> for Dispatch {
    fn from(e: ScheduleEvent) -> Dispatch {
        e.build()
    }
}
