//! The names of the SDK's metrics (see the table in [`crate::observe`]).
//!
//! The names are here whether or not the `metrics` feature is on, so that
//! dashboards and tests can refer to them.

/// Counter: events answered, by `tag` and `outcome`.
pub const EVENTS: &str = "celerity_events_total";
/// Histogram, seconds: from a handler's start to its event's answer, by
/// `tag` and `outcome`.
pub const EVENT_DURATION: &str = "celerity_event_duration_seconds";
/// Gauge: events dispatched to this process and not yet answered.
pub const IN_FLIGHT: &str = "celerity_events_in_flight";
/// Gauge: the credit window: how many events may be in flight at once.
pub const CREDIT_WINDOW: &str = "celerity_credit_window";
/// Gauge: 1 while the runtime has been asked to withhold dispatches, else 0.
pub const CREDIT_WITHHELD: &str = "celerity_credit_withheld";
/// Counter: `WsSend` frames sent to the runtime.
pub const WS_SENDS: &str = "celerity_ws_sends_total";
/// Counter: WebSocket messages in them.
pub const WS_MESSAGES: &str = "celerity_ws_messages_total";
/// Counter: `WsSendAck`s received for them.
pub const WS_ACKS: &str = "celerity_ws_acks_total";
/// Counter: WebSocket failures, by `reason`: `message` (a message the
/// acknowledgement names as not delivered), `timed_out` (no acknowledgement
/// within the send's timeout), `disconnected` (the stream ended first),
/// `too_large` (the send would not fit in one frame, so was not sent).
pub const WS_FAILURES: &str = "celerity_ws_failures_total";
/// Counter: consumer records in batches answered, by `tag`.
pub const CONSUMER_RECORDS: &str = "celerity_consumer_records_total";
/// Counter: consumer records left on their source, by `tag`: the ones a
/// `BatchResult` names, or the whole batch when it failed whole.
pub const CONSUMER_RECORDS_FAILED: &str = "celerity_consumer_records_failed_total";

/// Label: the handler tag.
pub const LABEL_TAG: &str = "tag";
/// Label: the [`super::EventOutcome`].
pub const LABEL_OUTCOME: &str = "outcome";
/// Label: why a WebSocket send or message failed.
pub const LABEL_REASON: &str = "reason";
