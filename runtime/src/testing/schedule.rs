//! Building a schedule trigger event.

use bytes::Bytes;
use celerity_proto::v1 as pb;
use serde::Serialize;

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
pub struct TestTrigger {
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
            schedule_id: Some(trigger.schedule_id().to_string()),
            message_id: trigger.message_id().to_string(),
            schedule: trigger.schedule().to_string(),
            input: trigger.raw_input().clone(),
            vendor: trigger.vendor().clone(),
        }
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
