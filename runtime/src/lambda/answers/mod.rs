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
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) error_type: String,
    pub(crate) message: String,
}

impl Answer {
    fn json(value: &Value) -> Answer {
        match serde_json::value::to_raw_value(value) {
            Ok(raw) => Answer::Response(raw),
            // A `Value` always serialises; said rather than assumed.
            Err(error) => Answer::failure("ResponseError", format!("the response could not be written: {error}")),
        }
    }

    fn failure(error_type: impl Into<String>, message: impl Into<String>) -> Answer {
        Answer::Failure(Failure { error_type: error_type.into(), message: message.into() })
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
        Form::Queue => consumer::answer(outcome, records),
        Form::Schedule => schedule::answer(outcome),
        Form::Custom => custom::answer(outcome),
    }
}

/// The answer to an event of `form` that no handler of this function
/// serves: HTTP's `404 {"message":"Not Found"}`, WebSocket's
/// `{"statusCode": 404}`, otherwise a Lambda error saying `why`, so that a
/// batch or a schedule's event is not taken as handled.
pub(crate) fn unserved(form: Form, why: &str) -> Answer {
    match form {
        Form::HttpV2 | Form::HttpV1 => {
            let version = if form == Form::HttpV2 { http::Version::V2 } else { http::Version::V1 };
            http::json_response(version, 404, &serde_json::json!({"message": "Not Found"}))
        }
        Form::WebSocket => Answer::json(&serde_json::json!({"statusCode": 404})),
        Form::Queue | Form::Schedule | Form::Custom => Answer::failure("UnknownHandler", why),
    }
}

/// The answer to a payload that could not be read as an event of `form`.
pub(crate) fn refused(form: Form, refused: &Refused) -> Answer {
    match form {
        Form::HttpV2 | Form::HttpV1 => {
            let version = if form == Form::HttpV2 { http::Version::V2 } else { http::Version::V1 };
            http::json_response(version, 400, &serde_json::json!({"message": refused.0}))
        }
        Form::WebSocket => Answer::json(&serde_json::json!({"statusCode": 400, "body": refused.0})),
        Form::Queue | Form::Schedule | Form::Custom => Answer::failure("InvalidEvent", refused.0.clone()),
    }
}

/// A `HandlerError` as a Lambda error.
fn handler_failure(error: &celerity_proto::v1::HandlerError) -> Answer {
    Answer::failure(error.r#type.clone(), error.message.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_no_handler_serves_is_answered_as_the_platform_expects() {
        let http = unserved(Form::HttpV2, "no HTTP handler").response();
        assert_eq!(http["statusCode"], 404);
        assert_eq!(http["body"], r#"{"message":"Not Found"}"#);
        assert_eq!(unserved(Form::WebSocket, "none").response(), serde_json::json!({"statusCode": 404}));
        for form in [Form::Queue, Form::Schedule, Form::Custom] {
            let failure = unserved(form, "this binary has no consumer handler").expect_failure().clone();
            assert_eq!(failure.error_type, "UnknownHandler");
            assert!(failure.message.contains("no consumer handler"));
        }
    }

    #[test]
    fn a_payload_that_cannot_be_read_is_answered_clearly() {
        let why = Refused("the body is marked isBase64Encoded but is not base64".into());
        let http = refused(Form::HttpV1, &why).response();
        assert_eq!(
            (http["statusCode"].as_i64(), http["body"].as_str()),
            (Some(400), Some(r#"{"message":"the body is marked isBase64Encoded but is not base64"}"#))
        );
        assert_eq!(refused(Form::WebSocket, &why).response()["statusCode"], 400);
        assert_eq!(refused(Form::Queue, &why).expect_failure().error_type, "InvalidEvent");
    }
}
