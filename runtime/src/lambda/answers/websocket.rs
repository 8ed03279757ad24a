//! A WebSocket outcome as API Gateway's response: `{"statusCode": 200}`
//! for a successful `Ack`; a 500 carrying the reason for a failed one or a
//! `HandlerError` (on `$connect`, any status but 2xx refuses the
//! connection).

use celerity_proto::v1::result::Outcome;
use serde_json::json;

use super::Answer;

pub(super) fn answer(outcome: Option<Outcome>) -> Answer {
    let failed = |body: String| Answer::json(&json!({"statusCode": 500, "body": body}));
    match outcome {
        Some(Outcome::Websocket(ack)) if ack.success => Answer::json(&json!({"statusCode": 200})),
        Some(Outcome::Websocket(ack)) => failed(ack.error_message),
        Some(Outcome::Error(error)) => failed(format!("{}: {}", error.r#type, error.message)),
        Some(other) => failed(format!("the handler gave no WebSocket answer: {other:?}")),
        None => failed("the handler gave no answer".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use celerity_proto::v1::{Ack, HandlerError};

    use super::*;

    #[test]
    fn an_ack_is_a_status() {
        let ok = Some(Outcome::Websocket(Ack { success: true, error_message: String::new() }));
        assert_eq!(answer(ok).response(), json!({"statusCode": 200}));
        let failed = Some(Outcome::Websocket(Ack { success: false, error_message: "no such order".into() }));
        assert_eq!(answer(failed).response(), json!({"statusCode": 500, "body": "no such order"}));
        let error =
            HandlerError { r#type: "panic".into(), message: "the handler panicked".into(), stack: String::new() };
        assert_eq!(answer(Some(Outcome::Error(error))).response()["body"], "panic: the handler panicked");
    }
}
