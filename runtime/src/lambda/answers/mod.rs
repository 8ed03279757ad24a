//! A `Result` outcome as what Lambda expects back for the invocation, one
//! module per kind.
//!
//! An invocation ends in one of two ways: a response (the function's
//! output) or a Lambda error (the invocation failed, which makes an SQS
//! batch or a schedule's event be delivered again). Each kind chooses as
//! its platform expects: an HTTP or WebSocket caller gets a status code
//! whatever happened; a consumer or schedule that failed is a Lambda error,
//! never an empty answer that would acknowledge it.

mod consumer;
mod custom;
mod http;
mod schedule;
mod websocket;

use celerity_proto::v1::result::Outcome;
use serde_json::Value;
use serde_json::value::RawValue;

pub(crate) use http::method_not_allowed;

use super::events::Refused;
use super::form::Form;

/// How an invocation ends.
#[derive(Debug)]
pub(crate) enum Answer {
    /// The function's output, JSON.
    Response(Box<RawValue>),
    /// A Lambda error.
    Failure(Failure),
}

/// A Lambda error: what Lambda reports as `errorType` and `errorMessage`.
///
/// The type is posted both in the body and as
/// `Lambda-Runtime-Function-Error-Type`, the same in each, and of the form
/// Lambda classifies: `Runtime.{Name}` for what the SDK refuses on the
/// function's behalf (a payload it cannot read, an event no handler of the
/// function fits, a function that cannot start), `Function.{Name}` for what
/// the handler's outcome says (`Function.BatchFailed`,
/// `Function.CustomError`, a `HandlerError`'s type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) error_type: String,
    pub(crate) message: String,
}

impl Failure {
    /// An error of the SDK's: `Runtime.{name}`.
    pub(crate) fn runtime(name: &str, message: impl Into<String>) -> Failure {
        Failure { error_type: format!("Runtime.{}", type_name(name)), message: message.into() }
    }

    /// An error the handler's outcome gave: `Function.{name}`.
    pub(crate) fn function(name: &str, message: impl Into<String>) -> Failure {
        Failure { error_type: format!("Function.{}", type_name(name)), message: message.into() }
    }
}

/// `name` as Lambda takes an error type's name: ASCII letters, the first
/// upper case (`panic` is `Panic`, `Not_Found2` is `NotFound`), `Unhandled`
/// when none are left.
fn type_name(name: &str) -> String {
    let mut letters: String = name.chars().filter(char::is_ascii_alphabetic).collect();
    match letters.get(..1) {
        None => "Unhandled".to_string(),
        Some(first) => {
            let upper = first.to_ascii_uppercase();
            letters.replace_range(..1, &upper);
            letters
        }
    }
}

impl Answer {
    fn json(value: &Value) -> Answer {
        match serde_json::value::to_raw_value(value) {
            Ok(raw) => Answer::Response(raw),
            // A `Value` always serialises; said rather than assumed.
            Err(error) => Answer::runtime_error("ResponseError", format!("the response could not be written: {error}")),
        }
    }

    /// A Lambda error of the SDK's (see [`Failure::runtime`]).
    pub(crate) fn runtime_error(name: &str, message: impl Into<String>) -> Answer {
        Answer::Failure(Failure::runtime(name, message))
    }

    /// A Lambda error of the handler's (see [`Failure::function`]).
    fn function_error(name: &str, message: impl Into<String>) -> Answer {
        Answer::Failure(Failure::function(name, message))
    }

    /// The response as JSON, for tests.
    #[cfg(test)]
    pub(crate) fn response(&self) -> Value {
        match self {
            Answer::Response(raw) => serde_json::from_str(raw.get()).unwrap(),
            Answer::Failure(failure) => panic!("expected a response, got the Lambda error {failure:?}"),
        }
    }

    /// The Lambda error, for tests.
    #[cfg(test)]
    pub(crate) fn expect_failure(&self) -> &Failure {
        match self {
            Answer::Failure(failure) => failure,
            Answer::Response(raw) => panic!("expected a Lambda error, got the response {}", raw.get()),
        }
    }
}

/// What the handler's outcome becomes for an event of `form`. `head`: an
/// HTTP `HEAD`, answered without a body; `records`: the ids of a batch's
/// records, the only ones a partial-batch answer may name.
pub(crate) fn answer(form: Form, outcome: Option<Outcome>, head: bool, records: &[String]) -> Answer {
    match form {
        Form::HttpV2 => http::answer(http::Version::V2, outcome, head),
        Form::HttpV1 => http::answer(http::Version::V1, outcome, head),
        Form::WebSocket => websocket::answer(outcome),
        Form::Queue | Form::Stream => consumer::answer(outcome, records),
        Form::Bucket => consumer::answer_whole(outcome, records),
        Form::Schedule => schedule::answer(outcome),
        Form::Custom => custom::answer(outcome),
    }
}

/// The answer to an event that no handler of the function fits:
/// `Runtime.UnservedEvent`, saying what arrived and what the function
/// serves. Never a made-up answer of the event's own kind: the caller
/// (API Gateway, a queue's poller) sees a failed invocation, and the
/// function's error metrics say so.
pub(crate) fn unserved(why: impl Into<String>) -> Answer {
    Answer::runtime_error("UnservedEvent", why)
}

/// The answer to a payload that could not be read as the event its
/// function serves: `Runtime.InvalidEvent`, saying why.
pub(crate) fn refused(refused: &Refused) -> Answer {
    Answer::runtime_error("InvalidEvent", refused.0.clone())
}

/// A `HandlerError` as a Lambda error.
fn handler_failure(error: &celerity_proto::v1::HandlerError) -> Answer {
    Answer::function_error(&error.r#type, error.message.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_types_are_of_the_form_lambda_classifies() {
        assert_eq!(Failure::runtime("InvalidEvent", "x").error_type, "Runtime.InvalidEvent");
        assert_eq!(Failure::function("panic", "x").error_type, "Function.Panic");
        assert_eq!(Failure::function("AuditLogUnavailable", "x").error_type, "Function.AuditLogUnavailable");
        assert_eq!(Failure::function("not_found2", "x").error_type, "Function.Notfound");
        assert_eq!(Failure::function("", "x").error_type, "Function.Unhandled");
        assert_eq!(Failure::function("42", "x").error_type, "Function.Unhandled");
    }

    #[test]
    fn an_unserved_or_unreadable_event_is_a_lambda_error_whatever_its_kind() {
        let failure =
            unserved("an SQS batch from order-events; this function serves GET::/orders").expect_failure().clone();
        assert_eq!(failure.error_type, "Runtime.UnservedEvent");
        assert!(failure.message.contains("order-events"));
        let why = Refused("the body is marked isBase64Encoded but is not base64".into());
        let failure = refused(&why).expect_failure().clone();
        assert_eq!((failure.error_type.as_str(), failure.message.as_str()), ("Runtime.InvalidEvent", why.0.as_str()));
    }
}
