//! Building a schedule trigger event.

use std::time::SystemTime;

use bytes::Bytes;
use celerity_proto::v1::{self as pb, dispatch::Source};
use serde::Serialize;

use super::envelope::{Envelope, envelope_setters};
use crate::schedule::Trigger;

/// A schedule firing to call a handler with, built the way the runtime would
/// send it.
///
/// The schedule id defaults to the one in the tag the trigger is sent to
/// (`source::nightly::cleanup` gives `nightly`).
///
/// ```
/// use celerity::testing::TestTrigger;
///
/// #[derive(serde::Serialize)]
/// struct Cleanup { older_than_days: u32 }
///
/// let wire = TestTrigger::new()
///     .schedule("rate(1 day)")
///     .json_input(&Cleanup { older_than_days: 7 })
///     .into_wire(Some("source::nightly::cleanup"));
/// assert_eq!(wire.schedule_id, "nightly");
/// assert_eq!(&wire.input[..], br#"{"older_than_days":7}"#);
/// ```
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct TestTrigger {
    pub(super) envelope: Envelope,
    schedule_id: Option<String>,
    message_id: String,
    schedule: String,
    input: Bytes,
    vendor: Bytes,
}

impl TestTrigger {
    /// A firing with no input.
    pub fn new() -> Self {
        TestTrigger::default()
    }

    envelope_setters!();

    /// Sets the schedule's id.
    pub fn schedule_id(mut self, id: impl Into<String>) -> Self {
        self.schedule_id = Some(id.into());
        self
    }

    /// Sets the id of this firing.
    pub fn message_id(mut self, id: impl Into<String>) -> Self {
        self.message_id = id.into();
        self
    }

    /// Sets the schedule expression, such as `rate(1 hour)`.
    pub fn schedule(mut self, expression: impl Into<String>) -> Self {
        self.schedule = expression.into();
        self
    }

    /// Sets the input.
    pub fn input(mut self, input: impl Into<Bytes>) -> Self {
        self.input = input.into();
        self
    }

    /// Sets the input to `value` as JSON.
    ///
    /// # Panics
    ///
    /// When `value` cannot be serialized as JSON.
    pub fn json_input(self, value: &impl Serialize) -> Self {
        let input = serde_json::to_vec(value).unwrap_or_else(|error| panic!("the input is not serializable: {error}"));
        self.input(input)
    }

    /// Sets the vendor data.
    pub fn vendor(mut self, vendor: impl Into<Bytes>) -> Self {
        self.vendor = vendor.into();
        self
    }

    /// The tag of a dispatch that is built: `source::{scheduleId}::handler`
    /// (the schedule id defaulting to `test-schedule`).
    pub(crate) fn default_tag(&self) -> String {
        let schedule = self.schedule_id.as_deref().filter(|id| !id.is_empty()).unwrap_or("test-schedule");
        format!("source::{schedule}::handler")
    }

    /// The whole `Dispatch`, for the tag set with `tag` (by default
    /// `source::{scheduleId}::handler`).
    pub fn build(mut self) -> pb::Dispatch {
        let tag = self.envelope.tag().map_or_else(|| self.default_tag(), str::to_string);
        let envelope = std::mem::take(&mut self.envelope);
        let trigger = self.into_wire(Some(&tag));
        envelope.into_dispatch(tag, String::new(), SystemTime::now(), Some(Source::Schedule(trigger)))
    }

    /// The trigger a wire trigger is, every field kept.
    pub(crate) fn from_wire(trigger: pb::ScheduleTrigger) -> Self {
        TestTrigger {
            envelope: Envelope::default(),
            schedule_id: Some(trigger.schedule_id),
            message_id: trigger.message_id,
            schedule: trigger.schedule,
            input: trigger.input,
            vendor: trigger.vendor,
        }
    }

    /// The wire trigger, for the handler bound to `tag` (whose schedule id is
    /// the default).
    pub fn into_wire(self, tag: Option<&str>) -> pb::ScheduleTrigger {
        let schedule_id = self.schedule_id.or_else(|| tag.and_then(super::consumer::source_of_tag)).unwrap_or_default();
        pb::ScheduleTrigger {
            schedule_id,
            message_id: self.message_id,
            schedule: self.schedule,
            input: self.input,
            vendor: self.vendor,
        }
    }
}

/// A trigger built with [`Trigger`]'s own builders: every field is kept.
impl From<Trigger> for TestTrigger {
    fn from(trigger: Trigger) -> Self {
        TestTrigger {
            envelope: Envelope::default(),
            schedule_id: Some(trigger.schedule_id().to_string()),
            message_id: trigger.message_id().to_string(),
            schedule: trigger.schedule().to_string(),
            input: trigger.raw_input().clone(),
            vendor: trigger.vendor().clone(),
        }
    }
}

impl From<TestTrigger> for pb::Dispatch {
    fn from(trigger: TestTrigger) -> Self {
        trigger.build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trigger_from_the_sdk_builder_keeps_every_field() {
        let trigger = Trigger::new("nightly", "rate(1 day)").with_message_id("m").with_input("{}").with_vendor("v");
        assert_eq!(Trigger::from(TestTrigger::from(trigger.clone()).into_wire(Some("source::x::y"))), trigger);
        assert_eq!(TestTrigger::new().into_wire(Some("source::nightly::cleanup")).schedule_id, "nightly");
    }
}
