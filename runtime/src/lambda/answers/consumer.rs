//! A consumer's outcome as the partial-batch response SQS and DynamoDB
//! streams take, `{"batchItemFailures": [{"itemIdentifier": "<id>"}]}`,
//! naming exactly the records that failed by their ids (an SQS message's
//! `messageId`, a stream record's `SequenceNumber`; the event source
//! mapping is configured with `ReportBatchItemFailures`). A batch failed
//! whole, or a `HandlerError`, is a Lambda error, so that every record is
//! delivered again: an empty answer would acknowledge them all.
//!
//! S3 invokes a function with its notifications asynchronously and takes no
//! partial answer: a record that failed fails the invocation, which Lambda
//! retries, and then hands to the function's on-failure destination.
//!
//! A failure naming an id that is no record of the batch leaves nothing
//! behind under the runtime; SQS would take such an identifier as failing
//! the whole batch, so it is left out.

use celerity_proto::v1::result::Outcome;
use serde_json::json;

use super::{Answer, handler_failure};

pub(super) fn answer(outcome: Option<Outcome>, records: &[String]) -> Answer {
    match outcome {
        Some(Outcome::Consumer(result)) if !result.success && result.failures.is_empty() => {
            Answer::function_error("BatchFailed", "the handler failed the whole batch")
        }
        Some(Outcome::Consumer(result)) => {
            let failures: Vec<_> = result
                .failures
                .iter()
                .filter(|failure| records.contains(&failure.message_id))
                .map(|failure| json!({"itemIdentifier": failure.message_id}))
                .collect();
            for failure in &result.failures {
                tracing::info!(message_id = %failure.message_id, "record failed: {}", failure.error_message);
            }
            Answer::json(&json!({"batchItemFailures": failures}))
        }
        Some(Outcome::Error(error)) => handler_failure(&error),
        Some(other) => {
            Answer::function_error("WrongOutcomeShape", format!("the handler gave no batch result: {other:?}"))
        }
        None => Answer::function_error("NoAnswer", "the handler gave no answer"),
    }
}

/// The outcome of a batch that is answered whole: `null` when every
/// record succeeded, else a Lambda error naming the failed records.
pub(super) fn answer_whole(outcome: Option<Outcome>, records: &[String]) -> Answer {
    match outcome {
        Some(Outcome::Consumer(result)) if result.success && result.failures.is_empty() => {
            Answer::json(&serde_json::Value::Null)
        }
        Some(Outcome::Consumer(result)) if !result.failures.is_empty() => {
            let each: Vec<String> = result
                .failures
                .iter()
                .map(|failure| format!("{}: {}", failure.message_id, failure.error_message))
                .collect();
            let message = format!("{} of {} records failed ({})", each.len(), records.len(), each.join("; "));
            Answer::function_error("RecordsFailed", message)
        }
        other => answer(other, records),
    }
}

#[cfg(test)]
mod tests {
    use celerity_proto::v1::{BatchResult, HandlerError, RecordFailure};

    use super::*;

    fn ids() -> Vec<String> {
        vec!["m-1".into(), "m-2".into(), "m-3".into()]
    }

    fn failed(ids: &[&str]) -> RecordFailure {
        RecordFailure { message_id: ids[0].into(), error_message: "bad".into() }
    }

    #[test]
    fn the_failed_records_are_named_and_only_those_of_the_batch() {
        let result =
            BatchResult { success: false, failures: vec![failed(&["m-1"]), failed(&["m-3"]), failed(&["zz"])] };
        let answer = answer(Some(Outcome::Consumer(result)), &ids()).response();
        assert_eq!(answer, json!({"batchItemFailures": [{"itemIdentifier": "m-1"}, {"itemIdentifier": "m-3"}]}));
        let ok = BatchResult { success: true, failures: vec![] };
        assert_eq!(super::answer(Some(Outcome::Consumer(ok)), &ids()).response(), json!({"batchItemFailures": []}));
    }

    #[test]
    fn a_batch_answered_whole_fails_for_any_record() {
        let ok = BatchResult { success: true, failures: vec![] };
        assert_eq!(answer_whole(Some(Outcome::Consumer(ok)), &ids()).response(), serde_json::Value::Null);
        let one = BatchResult { success: false, failures: vec![failed(&["m-2"])] };
        let failure = answer_whole(Some(Outcome::Consumer(one)), &ids()).expect_failure().clone();
        assert_eq!(
            (failure.error_type.as_str(), failure.message.as_str()),
            ("Function.RecordsFailed", "1 of 3 records failed (m-2: bad)")
        );
        let whole = BatchResult { success: false, failures: vec![] };
        assert_eq!(
            answer_whole(Some(Outcome::Consumer(whole)), &ids()).expect_failure().error_type,
            "Function.BatchFailed"
        );
    }

    #[test]
    fn a_batch_failed_whole_is_a_lambda_error() {
        let whole = BatchResult { success: false, failures: vec![] };
        assert_eq!(answer(Some(Outcome::Consumer(whole)), &ids()).expect_failure().error_type, "Function.BatchFailed");
        let error =
            HandlerError { r#type: "AuditLogUnavailable".into(), message: "disk full".into(), stack: String::new() };
        let failure = answer(Some(Outcome::Error(error)), &ids()).expect_failure().clone();
        assert_eq!(
            (failure.error_type.as_str(), failure.message.as_str()),
            ("Function.AuditLogUnavailable", "disk full")
        );
    }
}
