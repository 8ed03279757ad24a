//! Reading what a handler answered, for tests that expect one kind of
//! answer and fail, saying what came instead, on any other.

use celerity_proto::v1::{self as pb, result::Outcome};

/// The HTTP response `result` carries.
///
/// # Panics
///
/// When it carries anything else (an error, another kind's outcome,
/// nothing), naming what it carries: this is an assertion for tests.
pub fn http_answer(result: &pb::Result) -> &pb::HttpResponse {
    match &result.outcome {
        Some(Outcome::Http(response)) => response,
        other => panic!("expected an HTTP response, got {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http_answer_is_read_and_anything_else_named() {
        let response = pb::HttpResponse { status: 201, ..Default::default() };
        let result = pb::Result { outcome: Some(Outcome::Http(response.clone())), ..Default::default() };
        assert_eq!(http_answer(&result), &response);

        let error = pb::Result {
            outcome: Some(Outcome::Error(pb::HandlerError { message: "boom".into(), ..Default::default() })),
            ..Default::default()
        };
        let panic = std::panic::catch_unwind(|| http_answer(&error).status).unwrap_err();
        let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            message.starts_with("expected an HTTP response, got Some(Error(") && message.contains("boom"),
            "{message}"
        );
    }
}
