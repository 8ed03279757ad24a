//! What became of an event, in one word, from the `Result` sent for it.

use celerity_proto::v1::{HandlerError, result::Outcome};

use crate::session::error_type;

/// How an event was answered: the `outcome` of the event's span and the
/// `outcome` label of the event metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EventOutcome {
    /// `ok`: the handler answered with success. Any HTTP response below 500
    /// counts (a 404 is the application's answer, not a failure), as does a
    /// successful `Ack`, a `BatchResult` naming no failed record, and a custom
    /// result without an error message.
    Ok,
    /// `partial_failure`: a `BatchResult` naming failed records; the rest of
    /// the batch was acknowledged.
    PartialFailure,
    /// `handler_error`: the handler reported a failure: it returned an error
    /// (a `HandlerError`), an `Ack` with `success: false`, a `BatchResult`
    /// failing the whole batch, a custom result with an error message, or an
    /// HTTP response of 500 or above.
    HandlerError,
    /// `panic`: the handler panicked.
    Panic,
    /// `deadline`: the handler ran past its deadline and the grace after it,
    /// and the SDK answered for it (`DeadlineExceeded`).
    Deadline,
    /// `cancelled`: the handler did not finish within the grace after a
    /// cancellation or shutdown, and the SDK answered for it (`Cancelled`).
    Cancelled,
    /// `refused`: answered without running a handler: no handler serves the
    /// tag, the event came beyond the credit window or a per-tag cap, during
    /// a drain, or with a source the handler does not serve.
    Refused,
}

impl EventOutcome {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            EventOutcome::Ok => "ok",
            EventOutcome::PartialFailure => "partial_failure",
            EventOutcome::HandlerError => "handler_error",
            EventOutcome::Panic => "panic",
            EventOutcome::Deadline => "deadline",
            EventOutcome::Cancelled => "cancelled",
            EventOutcome::Refused => "refused",
        }
    }

    /// Every outcome, in the order of the table in [`crate::observe`].
    pub const ALL: [EventOutcome; 7] = [
        EventOutcome::Ok,
        EventOutcome::PartialFailure,
        EventOutcome::HandlerError,
        EventOutcome::Panic,
        EventOutcome::Deadline,
        EventOutcome::Cancelled,
        EventOutcome::Refused,
    ];

    /// Classifies an HTTP response by its status: a server error is the
    /// handler's failure.
    pub(crate) fn of_http(status: u32) -> EventOutcome {
        if status >= 500 { EventOutcome::HandlerError } else { EventOutcome::Ok }
    }

    /// Classifies the outcome of a `Result`; a `Result` with no outcome at
    /// all is a failure of the handler's.
    pub fn of(outcome: Option<&Outcome>) -> EventOutcome {
        match outcome {
            None => EventOutcome::HandlerError,
            Some(Outcome::Error(error)) => Self::of_error(error),
            Some(Outcome::Http(response)) => Self::of_http(response.status),
            Some(Outcome::Websocket(ack) | Outcome::Schedule(ack)) => {
                if ack.success {
                    EventOutcome::Ok
                } else {
                    EventOutcome::HandlerError
                }
            }
            Some(Outcome::Consumer(batch)) if !batch.failures.is_empty() => EventOutcome::PartialFailure,
            Some(Outcome::Consumer(batch)) if batch.success => EventOutcome::Ok,
            Some(Outcome::Consumer(_)) => EventOutcome::HandlerError,
            Some(Outcome::Custom(result)) if result.error_message.is_empty() => EventOutcome::Ok,
            Some(Outcome::Custom(_)) => EventOutcome::HandlerError,
        }
    }

    fn of_error(error: &HandlerError) -> EventOutcome {
        match error.r#type.as_str() {
            error_type::PANIC => EventOutcome::Panic,
            error_type::DEADLINE_EXCEEDED => EventOutcome::Deadline,
            error_type::CANCELLED => EventOutcome::Cancelled,
            error_type::UNKNOWN_TAG
            | error_type::OVER_CAPACITY
            | error_type::NOT_ACCEPTING
            | error_type::WRONG_SOURCE => EventOutcome::Refused,
            _ => EventOutcome::HandlerError,
        }
    }

    /// Whether the outcome is a failure of the event as a whole (the span's
    /// status is an error).
    pub fn is_failure(self) -> bool {
        !matches!(self, EventOutcome::Ok | EventOutcome::PartialFailure)
    }
}

impl std::fmt::Display for EventOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How many records of a consumer batch of `records` stay on their source
/// after this outcome: the ones a `BatchResult` names, or all of them when
/// the batch failed whole (or the event was answered with an error).
pub(crate) fn records_failed(outcome: Option<&Outcome>, records: usize) -> usize {
    match outcome {
        Some(Outcome::Consumer(batch)) if !batch.failures.is_empty() => batch.failures.len().min(records),
        Some(Outcome::Consumer(batch)) if batch.success => 0,
        _ => records,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celerity_proto::v1::{Ack, BatchResult, CustomInvokeResult, HttpResponse, RecordFailure};

    fn error(r#type: &str) -> Outcome {
        Outcome::Error(HandlerError { message: "m".into(), r#type: r#type.into(), stack: String::new() })
    }

    fn http(status: u32) -> Outcome {
        Outcome::Http(HttpResponse { status, ..Default::default() })
    }

    fn batch(success: bool, failed: &[&str]) -> Outcome {
        Outcome::Consumer(BatchResult {
            success,
            failures: failed
                .iter()
                .map(|id| RecordFailure { message_id: id.to_string(), error_message: "bad".into() })
                .collect(),
        })
    }

    #[test]
    fn every_shape_has_its_outcome() {
        let of = |outcome: Outcome| EventOutcome::of(Some(&outcome));
        assert_eq!(of(http(200)), EventOutcome::Ok);
        assert_eq!(of(http(404)), EventOutcome::Ok);
        assert_eq!(of(http(503)), EventOutcome::HandlerError);
        assert_eq!(of(Outcome::Websocket(Ack { success: true, error_message: String::new() })), EventOutcome::Ok);
        assert_eq!(
            of(Outcome::Schedule(Ack { success: false, error_message: "x".into() })),
            EventOutcome::HandlerError
        );
        assert_eq!(of(batch(true, &[])), EventOutcome::Ok);
        assert_eq!(of(batch(false, &["m1"])), EventOutcome::PartialFailure);
        assert_eq!(of(batch(false, &[])), EventOutcome::HandlerError);
        assert_eq!(of(Outcome::Custom(CustomInvokeResult::default())), EventOutcome::Ok);
        let failed = CustomInvokeResult { output: Default::default(), error_message: "no".into() };
        assert_eq!(of(Outcome::Custom(failed)), EventOutcome::HandlerError);
        assert_eq!(of(error("Error")), EventOutcome::HandlerError);
        assert_eq!(of(error("panic")), EventOutcome::Panic);
        assert_eq!(of(error("DeadlineExceeded")), EventOutcome::Deadline);
        assert_eq!(of(error("Cancelled")), EventOutcome::Cancelled);
        for refused in ["UnknownHandlerTag", "OverCapacity", "NotAccepting", "WrongEventSource"] {
            assert_eq!(of(error(refused)), EventOutcome::Refused, "{refused}");
        }
        assert_eq!(EventOutcome::of(None), EventOutcome::HandlerError);
    }

    #[test]
    fn failed_records_are_the_named_ones_or_the_whole_batch() {
        assert_eq!(records_failed(Some(&batch(true, &[])), 3), 0);
        assert_eq!(records_failed(Some(&batch(false, &["a", "b"])), 3), 2);
        assert_eq!(records_failed(Some(&batch(false, &[])), 3), 3);
        assert_eq!(records_failed(Some(&error("panic")), 3), 3);
        assert_eq!(records_failed(None, 3), 3);
    }

    #[test]
    fn labels_are_distinct() {
        let labels: std::collections::HashSet<&str> = EventOutcome::ALL.iter().map(|o| o.as_str()).collect();
        assert_eq!(labels.len(), EventOutcome::ALL.len());
    }
}
