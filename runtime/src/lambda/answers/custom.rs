//! A custom invocation's outcome: its output as the function's response
//! (JSON as written; other UTF-8 text as a JSON string; nothing as
//! `null`), or a Lambda error: the `CustomError` the handler answered with
//! (type `Function.CustomError`, its message the invoker's `error_message`), or a
//! `HandlerError`.

use celerity_proto::v1::result::Outcome;
use serde_json::Value;
use serde_json::value::RawValue;

use super::{Answer, handler_failure};

pub(super) fn answer(outcome: Option<Outcome>) -> Answer {
    match outcome {
        Some(Outcome::Custom(result)) if !result.error_message.is_empty() => {
            Answer::function_error("CustomError", result.error_message)
        }
        Some(Outcome::Custom(result)) if result.output.is_empty() => Answer::json(&Value::Null),
        Some(Outcome::Custom(result)) => match String::from_utf8(result.output.to_vec()) {
            Ok(text) => match RawValue::from_string(text) {
                Ok(json) => Answer::Response(json),
                Err(_) => Answer::json(&Value::String(String::from_utf8_lossy(&result.output).into_owned())),
            },
            Err(_) => Answer::function_error(
                "OutputNotText",
                "the handler's output is not UTF-8, and a Lambda response is JSON: answer JSON, or text",
            ),
        },
        Some(Outcome::Error(error)) => handler_failure(&error),
        Some(other) => {
            Answer::function_error("WrongOutcomeShape", format!("the handler gave no custom result: {other:?}"))
        }
        None => Answer::function_error("NoAnswer", "the handler gave no answer"),
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use celerity_proto::v1::CustomInvokeResult;
    use serde_json::json;

    use super::*;

    fn output(bytes: &'static [u8]) -> Option<Outcome> {
        Some(Outcome::Custom(CustomInvokeResult { output: Bytes::from_static(bytes), error_message: String::new() }))
    }

    #[test]
    fn the_output_is_the_response() {
        let Answer::Response(raw) = answer(output(br#"{"b": 1, "a": 2}"#)) else { panic!("expected a response") };
        assert_eq!(raw.get(), r#"{"b": 1, "a": 2}"#, "JSON goes out as written");
        assert_eq!(answer(output(b"plain words")).response(), json!("plain words"));
        assert_eq!(answer(output(b"")).response(), Value::Null);
        assert_eq!(answer(output(&[0xff, 0xfe])).expect_failure().error_type, "Function.OutputNotText");
    }

    #[test]
    fn a_custom_error_is_the_invokers_error_message() {
        let error = CustomInvokeResult { output: Bytes::new(), error_message: "unknown coupon \"X\"".into() };
        let failure = answer(Some(Outcome::Custom(error))).expect_failure().clone();
        assert_eq!(
            (failure.error_type.as_str(), failure.message.as_str()),
            ("Function.CustomError", "unknown coupon \"X\"")
        );
    }
}
