//! An HTTP outcome as API Gateway's response: `statusCode`, headers (an
//! HTTP API's `set-cookie` in `cookies`, a REST API's repeated headers in
//! `multiValueHeaders`), and the body, base64 when it is not UTF-8.
//!
//! Errors are answered as the Celerity runtime answers its callers: a
//! `HandlerError` is a 500 whose plain-text body is `{type}: {message}`
//! (so a panic's text is what `CELERITY_EXPOSE_PANICS` allows), a handler
//! that overran its deadline a 504 `handler timed out`, and a status outside
//! 100..=999 a 500.

use std::collections::BTreeMap;

use base64::Engine;
use celerity_proto::v1::HttpResponse;
use celerity_proto::v1::result::Outcome;
use serde_json::{Map, Value, json};

use super::Answer;
use crate::session::error_type;

/// Which API Gateway payload format answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Version {
    /// HTTP API, payload format 2.0.
    V2,
    /// REST API, payload format 1.0.
    V1,
}

pub(super) fn answer(version: Version, outcome: Option<Outcome>, head: bool) -> Answer {
    match outcome {
        Some(Outcome::Http(response)) if (100..=999).contains(&response.status) => respond(version, response, head),
        Some(Outcome::Http(response)) => {
            text(version, 500, &format!("the handler answered the status {}, which is not one", response.status))
        }
        Some(Outcome::Error(error)) if error.r#type == error_type::DEADLINE_EXCEEDED => {
            text(version, 504, "handler timed out")
        }
        Some(Outcome::Error(error)) => text(version, 500, &format!("{}: {}", error.r#type, error.message)),
        Some(other) => text(version, 500, &format!("the handler gave no HTTP response: {other:?}")),
        None => text(version, 500, "the handler gave no answer"),
    }
}

/// The answer to a request for a route the function serves, with a method
/// none of its handlers of that route does: `405`, with the ones they do in
/// `allow`, as under the runtime.
pub(crate) fn method_not_allowed(http_api: bool, method: &str, allowed: &[String]) -> Answer {
    let version = if http_api { Version::V2 } else { Version::V1 };
    let allow = allowed.join(", ");
    let body = json!({"message": format!("the method {method} is not served here: this route serves {allow}")});
    let mut headers = BTreeMap::new();
    headers.insert("content-type".to_string(), vec!["application/json".to_string()]);
    headers.insert("allow".to_string(), vec![allow]);
    written(version, 405, headers, body.to_string().into_bytes())
}

fn text(version: Version, status: u32, body: &str) -> Answer {
    let mut headers = BTreeMap::new();
    headers.insert("content-type".to_string(), vec!["text/plain; charset=utf-8".to_string()]);
    written(version, status, headers, body.as_bytes().to_vec())
}

fn respond(version: Version, response: HttpResponse, head: bool) -> Answer {
    let headers: BTreeMap<String, Vec<String>> =
        response.headers.into_iter().map(|(name, values)| (name.to_ascii_lowercase(), values.values)).collect();
    let body = if head { Vec::new() } else { response.body.to_vec() };
    written(version, response.status, headers, body)
}

fn written(version: Version, status: u32, mut headers: BTreeMap<String, Vec<String>>, body: Vec<u8>) -> Answer {
    let mut answer = Map::new();
    answer.insert("statusCode".into(), json!(status));
    match version {
        Version::V2 => {
            // An HTTP API joins repeated values itself only for `cookies`.
            if let Some(cookies) = headers.remove("set-cookie") {
                answer.insert("cookies".into(), json!(cookies));
            }
            let joined: Map<String, Value> =
                headers.into_iter().map(|(name, values)| (name, json!(values.join(", ")))).collect();
            answer.insert("headers".into(), Value::Object(joined));
        }
        Version::V1 => {
            answer.insert("multiValueHeaders".into(), json!(headers));
        }
    }
    let (body, base64) = match String::from_utf8(body) {
        Ok(text) => (text, false),
        Err(bytes) => (base64::engine::general_purpose::STANDARD.encode(bytes.as_bytes()), true),
    };
    answer.insert("body".into(), json!(body));
    answer.insert("isBase64Encoded".into(), json!(base64));
    Answer::json(&Value::Object(answer))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use bytes::Bytes;
    use celerity_proto::v1::{HandlerError, Values};

    use super::*;

    fn response(status: u32, headers: &[(&str, &[&str])], body: &'static [u8]) -> Option<Outcome> {
        let headers: HashMap<String, Values> = headers
            .iter()
            .map(|(name, values)| (name.to_string(), Values { values: values.iter().map(|v| v.to_string()).collect() }))
            .collect();
        Some(Outcome::Http(HttpResponse { status, headers, body: Bytes::from_static(body) }))
    }

    #[test]
    fn a_response_keeps_its_status_headers_cookies_and_body() {
        let outcome = response(
            201,
            &[("Location", &["/orders/ord-1"]), ("set-cookie", &["a=1", "b=2"]), ("vary", &["accept", "origin"])],
            br#"{"id":"ord-1"}"#,
        );
        let v2 = answer(Version::V2, outcome.clone(), false).response();
        assert_eq!(v2["statusCode"], 201);
        assert_eq!(v2["headers"], json!({"location": "/orders/ord-1", "vary": "accept, origin"}));
        assert_eq!(v2["cookies"], json!(["a=1", "b=2"]));
        assert_eq!((v2["body"].as_str(), v2["isBase64Encoded"].as_bool()), (Some(r#"{"id":"ord-1"}"#), Some(false)));
        let v1 = answer(Version::V1, outcome, true).response();
        assert_eq!(v1["multiValueHeaders"]["set-cookie"], json!(["a=1", "b=2"]));
        assert_eq!(v1["body"], "", "a HEAD is answered without the body");
    }

    #[test]
    fn a_binary_body_goes_base64() {
        let v2 = answer(Version::V2, response(200, &[], &[0xff, 0x00, 0x01]), false).response();
        assert_eq!((v2["body"].as_str(), v2["isBase64Encoded"].as_bool()), (Some("/wAB"), Some(true)));
    }

    #[test]
    fn errors_are_answered_as_the_runtime_answers_them() {
        let error = |r#type: &str, message: &str| {
            Some(Outcome::Error(HandlerError { r#type: r#type.into(), message: message.into(), stack: String::new() }))
        };
        let panic = answer(Version::V2, error("panic", "the handler panicked"), false).response();
        assert_eq!(
            (panic["statusCode"].as_i64(), panic["body"].as_str()),
            (Some(500), Some("panic: the handler panicked"))
        );
        let late = answer(Version::V2, error("DeadlineExceeded", "ran past its deadline"), false).response();
        assert_eq!((late["statusCode"].as_i64(), late["body"].as_str()), (Some(504), Some("handler timed out")));
        assert_eq!(answer(Version::V1, response(1000, &[], b""), false).response()["statusCode"], 500);
        assert_eq!(answer(Version::V2, None, false).response()["statusCode"], 500);
    }

    #[test]
    fn a_method_the_route_does_not_serve_is_a_405() {
        let refused = method_not_allowed(true, "BREW", &["GET".into(), "POST".into()]).response();
        assert_eq!(
            (refused["statusCode"].as_i64(), refused["headers"]["allow"].as_str()),
            (Some(405), Some("GET, POST"))
        );
        assert!(refused["body"].as_str().unwrap().contains("the method BREW is not served here"));
    }
}
