//! A consumer's outcome as SQS's partial-batch response,
//! `{"batchItemFailures": [{"itemIdentifier": "<messageId>"}]}`, naming
//! exactly the records that failed (the function is configured with
//! `ReportBatchItemFailures`). A batch failed whole, or a `HandlerError`,
//! is a Lambda error, so that every message is delivered again: an empty
//! answer would acknowledge them all.
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
            Answer::failure("BatchFailed", "the handler failed the whole batch")
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
        Some(other) => Answer::failure("WrongOutcomeShape", format!("the handler gave no batch result: {other:?}")),
        None => Answer::failure("NoAnswer", "the handler gave no answer"),
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
    fn a_batch_failed_whole_is_a_lambda_error() {
        let whole = BatchResult { success: false, failures: vec![] };
        assert_eq!(answer(Some(Outcome::Consumer(whole)), &ids()).expect_failure().error_type, "BatchFailed");
        let error =
            HandlerError { r#type: "AuditLogUnavailable".into(), message: "disk full".into(), stack: String::new() };
        let failure = answer(Some(Outcome::Error(error)), &ids()).expect_failure().clone();
        assert_eq!((failure.error_type.as_str(), failure.message.as_str()), ("AuditLogUnavailable", "disk full"));
    }
}
