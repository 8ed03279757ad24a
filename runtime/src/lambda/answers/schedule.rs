//! A schedule's outcome: `null` when it succeeded; a Lambda error when it
//! failed, so that EventBridge delivers the event again by its retry
//! policy.

use celerity_proto::v1::result::Outcome;
use serde_json::Value;

use super::{Answer, handler_failure};

pub(super) fn answer(outcome: Option<Outcome>) -> Answer {
    match outcome {
        Some(Outcome::Schedule(ack)) if ack.success => Answer::json(&Value::Null),
        Some(Outcome::Schedule(ack)) => Answer::function_error("ScheduleFailed", ack.error_message),
        Some(Outcome::Error(error)) => handler_failure(&error),
        Some(other) => {
            Answer::function_error("WrongOutcomeShape", format!("the handler gave no schedule answer: {other:?}"))
        }
        None => Answer::function_error("NoAnswer", "the handler gave no answer"),
    }
}

#[cfg(test)]
mod tests {
    use celerity_proto::v1::Ack;

    use super::*;

    #[test]
    fn a_failed_trigger_is_a_lambda_error() {
        let ok = Some(Outcome::Schedule(Ack { success: true, error_message: String::new() }));
        assert_eq!(answer(ok).response(), Value::Null);
        let failed = Some(Outcome::Schedule(Ack { success: false, error_message: "audit log unavailable".into() }));
        let failure = answer(failed).expect_failure().clone();
        assert_eq!(
            (failure.error_type.as_str(), failure.message.as_str()),
            ("Function.ScheduleFailed", "audit log unavailable")
        );
    }
}
