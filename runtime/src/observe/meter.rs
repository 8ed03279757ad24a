//! Recording the SDK's metrics on the `metrics` facade (feature `metrics`).

use std::sync::Once;
use std::time::Duration;

use metrics::{Counter, Gauge, Unit, counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram};

use super::metric::*;
use super::outcome::EventOutcome;
use crate::session::WsOutcome;

/// The metrics of one stream, with handles on the ones without labels.
pub(crate) struct Meter {
    in_flight: Gauge,
    window: Gauge,
    withheld: Gauge,
    ws_sends: Counter,
    ws_messages: Counter,
    ws_acks: Counter,
    /// The gauges' last values, so that they are set only on a change.
    last: Option<(usize, u32, bool)>,
}

static DESCRIBED: Once = Once::new();

impl Meter {
    /// Handles on the metrics, through the recorder installed now.
    pub(crate) fn new() -> Meter {
        DESCRIBED.call_once(describe);
        Meter {
            in_flight: gauge!(IN_FLIGHT),
            window: gauge!(CREDIT_WINDOW),
            withheld: gauge!(CREDIT_WITHHELD),
            ws_sends: counter!(WS_SENDS),
            ws_messages: counter!(WS_MESSAGES),
            ws_acks: counter!(WS_ACKS),
            last: None,
        }
    }

    /// An event was answered; `elapsed` since its handler started, when one
    /// did, and `(records, failed)` for a consumer batch.
    pub(crate) fn event(
        &self,
        tag: &str,
        outcome: EventOutcome,
        elapsed: Option<Duration>,
        records: Option<(usize, usize)>,
    ) {
        let labels = [(LABEL_TAG, tag.to_string()), (LABEL_OUTCOME, outcome.as_str().to_string())];
        counter!(EVENTS, &labels).increment(1);
        if let Some(elapsed) = elapsed {
            histogram!(EVENT_DURATION, &labels).record(elapsed.as_secs_f64());
        }
        if let Some((records, failed)) = records {
            let labels = [(LABEL_TAG, tag.to_string())];
            counter!(CONSUMER_RECORDS, &labels).increment(records as u64);
            // Registered even at zero, so that a rate of failures has a
            // series to start from.
            counter!(CONSUMER_RECORDS_FAILED, &labels).increment(failed as u64);
        }
    }

    /// The stream's state after a turn of the driver.
    pub(crate) fn gauges(&mut self, in_flight: usize, window: u32, withheld: bool) {
        let now = (in_flight, window, withheld);
        if self.last == Some(now) {
            return;
        }
        self.last = Some(now);
        self.in_flight.set(in_flight as f64);
        self.window.set(f64::from(window));
        self.withheld.set(if withheld { 1.0 } else { 0.0 });
    }

    /// A `WsSend` of `messages` messages went out.
    pub(crate) fn ws_sent(&self, messages: usize) {
        self.ws_sends.increment(1);
        self.ws_messages.increment(messages as u64);
    }

    /// A WebSocket send ended.
    pub(crate) fn ws_done(&self, outcome: &WsOutcome) {
        match outcome {
            // The runtime's answer is counted alike whether or not it can
            // speak for the clients; the send's own result tells them apart.
            WsOutcome::Acked(ack) | WsOutcome::Written(ack) => {
                self.ws_acks.increment(1);
                if !ack.failures.is_empty() {
                    counter!(WS_FAILURES, LABEL_REASON => "message").increment(ack.failures.len() as u64);
                }
            }
            WsOutcome::TimedOut => counter!(WS_FAILURES, LABEL_REASON => "timed_out").increment(1),
            WsOutcome::Disconnected => counter!(WS_FAILURES, LABEL_REASON => "disconnected").increment(1),
            WsOutcome::TooLarge { .. } => counter!(WS_FAILURES, LABEL_REASON => "too_large").increment(1),
        }
    }
}

fn describe() {
    describe_counter!(EVENTS, Unit::Count, "Events answered, by handler tag and outcome.");
    describe_histogram!(EVENT_DURATION, Unit::Seconds, "From a handler's start to its event's answer.");
    describe_gauge!(IN_FLIGHT, Unit::Count, "Events dispatched to this process and not yet answered.");
    describe_gauge!(CREDIT_WINDOW, Unit::Count, "How many events may be in flight to this process at once.");
    describe_gauge!(CREDIT_WITHHELD, "1 while the runtime has been asked to withhold dispatches.");
    describe_counter!(WS_SENDS, Unit::Count, "WsSend frames sent to the runtime.");
    describe_counter!(WS_MESSAGES, Unit::Count, "WebSocket messages sent to the runtime.");
    describe_counter!(WS_ACKS, Unit::Count, "WsSendAcks received.");
    describe_counter!(
        WS_FAILURES,
        Unit::Count,
        "WebSocket failures: messages not delivered, sends timed out or cut off."
    );
    describe_counter!(CONSUMER_RECORDS, Unit::Count, "Consumer records in batches answered.");
    describe_counter!(CONSUMER_RECORDS_FAILED, Unit::Count, "Consumer records left on their source.");
}
