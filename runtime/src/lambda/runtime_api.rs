//! A client of the Lambda Runtime API, version 2018-06-01: what a function
//! calls at `AWS_LAMBDA_RUNTIME_API` to take its invocations and answer
//! them.
//!
//! - `GET  /runtime/invocation/next`: the next invocation, held until there
//!   is one (never timed out: the sandbox is frozen while it waits). Its
//!   body is the payload, as raw bytes; its headers say the request id
//!   (`Lambda-Runtime-Aws-Request-Id`), the deadline
//!   (`Lambda-Runtime-Deadline-Ms`), the function's ARN and the X-Ray
//!   header (`Lambda-Runtime-Trace-Id`).
//! - `POST /runtime/invocation/{id}/response`: the answer; `202` taken.
//! - `POST /runtime/invocation/{id}/error` and `POST /runtime/init/error`:
//!   a Lambda error, the body `{"errorType", "errorMessage", "stackTrace"}`
//!   as `application/vnd.aws.lambda.error+json`, and the same type in
//!   `Lambda-Runtime-Function-Error-Type`.
//!
//! A `400` (the id is not an invocation in flight) or `413` (the answer is
//! over Lambda's size limit, which Lambda then reports as the invocation's
//! error) concerns one invocation, and the function goes on; a `403` or a
//! `500` is the platform saying the sandbox cannot go on, and ends the run.

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use super::answers::Failure;
use crate::excerpt::excerpt_bytes;

/// The media type of a Lambda error's body.
pub(crate) const ERROR_CONTENT_TYPE: &str = "application/vnd.aws.lambda.error+json";

/// A client of the Runtime API at one address.
pub(crate) struct RuntimeApi {
    base: String,
    client: Client<HttpConnector, Full<Bytes>>,
}

/// One invocation, as `/next` hands it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Next {
    pub(crate) request_id: String,
    /// Unix milliseconds; 0 when the header is missing or not a number.
    pub(crate) deadline_ms: u64,
    pub(crate) trace_id: Option<String>,
    pub(crate) payload: Bytes,
}

/// Why a call to the Runtime API did not go through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ApiError {
    /// The call concerned one invocation, which the API did not take; the
    /// function goes on with the next.
    Refused(String),
    /// The API cannot be reached, or says the sandbox cannot go on.
    Fatal(String),
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApiError::Refused(why) | ApiError::Fatal(why) => f.write_str(why),
        }
    }
}

impl RuntimeApi {
    /// A client of the API at `address` (`host:port`, as
    /// `AWS_LAMBDA_RUNTIME_API` holds it).
    pub(crate) fn new(address: &str) -> Result<Self, String> {
        let base = format!("http://{address}/2018-06-01/runtime");
        base.parse::<http::Uri>()
            .map_err(|error| format!("AWS_LAMBDA_RUNTIME_API={address:?} is not an address: {error}"))?;
        Ok(RuntimeApi { base, client: Client::builder(TokioExecutor::new()).build_http() })
    }

    /// Waits for the next invocation.
    pub(crate) async fn next(&self) -> Result<Next, ApiError> {
        let (status, headers, body) = self.call(Method::GET, "/invocation/next", None, None).await?;
        if status != StatusCode::OK {
            return Err(ApiError::Fatal(format!("/invocation/next answered {status}: {}", excerpt_bytes(&body))));
        }
        let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok()).map(str::to_string);
        let Some(request_id) = header("lambda-runtime-aws-request-id").filter(|id| !id.is_empty()) else {
            return Err(ApiError::Fatal("/invocation/next gave no Lambda-Runtime-Aws-Request-Id".to_string()));
        };
        Ok(Next {
            request_id,
            deadline_ms: header("lambda-runtime-deadline-ms").and_then(|ms| ms.trim().parse().ok()).unwrap_or(0),
            trace_id: header("lambda-runtime-trace-id").filter(|trace| !trace.is_empty()),
            payload: body,
        })
    }

    /// Answers the invocation `request_id` with `response`, JSON.
    pub(crate) async fn respond(&self, request_id: &str, response: Bytes) -> Result<(), ApiError> {
        let path = format!("/invocation/{}/response", path_segment(request_id));
        let (status, _, body) =
            self.call(Method::POST, &path, Some(("application/json", None)), Some(response)).await?;
        accepted(&path, status, &body)
    }

    /// Fails the invocation `request_id` with `failure`.
    pub(crate) async fn fail(&self, request_id: &str, failure: &Failure) -> Result<(), ApiError> {
        let path = format!("/invocation/{}/error", path_segment(request_id));
        self.post_error(&path, failure).await
    }

    /// Says why the function cannot start; Lambda reports it as the cause.
    pub(crate) async fn init_failed(&self, failure: &Failure) -> Result<(), ApiError> {
        self.post_error("/init/error", failure).await
    }

    async fn post_error(&self, path: &str, failure: &Failure) -> Result<(), ApiError> {
        let body = serde_json::json!({
            "errorType": failure.error_type,
            "errorMessage": failure.message,
            "stackTrace": [],
        });
        let body = Bytes::from(body.to_string());
        let (status, _, answer) =
            self.call(Method::POST, path, Some((ERROR_CONTENT_TYPE, Some(&failure.error_type))), Some(body)).await?;
        accepted(path, status, &answer)
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        content: Option<(&str, Option<&str>)>,
        body: Option<Bytes>,
    ) -> Result<(StatusCode, http::HeaderMap, Bytes), ApiError> {
        let mut request = Request::builder().method(method).uri(format!("{}{path}", self.base));
        if let Some((content_type, error_type)) = content {
            request = request.header(http::header::CONTENT_TYPE, content_type);
            if let Some(error_type) = error_type {
                request = request.header("Lambda-Runtime-Function-Error-Type", error_type);
            }
        }
        let request = request
            .body(Full::new(body.unwrap_or_default()))
            .map_err(|error| ApiError::Refused(format!("the request to {path} could not be built: {error}")))?;
        let response = self.client.request(request).await.map_err(|error| {
            ApiError::Fatal(format!("the Lambda Runtime API could not be reached ({path}): {error}"))
        })?;
        let (parts, body) = response.into_parts();
        let body = body
            .collect()
            .await
            .map_err(|error| ApiError::Fatal(format!("the answer to {path} could not be read: {error}")))?
            .to_bytes();
        Ok((parts.status, parts.headers, body))
    }
}

fn accepted(path: &str, status: StatusCode, body: &[u8]) -> Result<(), ApiError> {
    match status.as_u16() {
        200..=299 => Ok(()),
        400 | 413 => Err(ApiError::Refused(format!("{path} answered {status}: {}", excerpt_bytes(body)))),
        _ => Err(ApiError::Fatal(format!("{path} answered {status}: {}", excerpt_bytes(body)))),
    }
}

/// A request id in a path: Lambda's are UUIDs, but nothing from outside is
/// put in a path unescaped.
fn path_segment(id: &str) -> String {
    use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
    const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');
    utf8_percent_encode(id, UNRESERVED).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_must_be_one() {
        assert!(RuntimeApi::new("127.0.0.1:9001").is_ok());
        let error = RuntimeApi::new("not an address").err().unwrap();
        assert!(error.contains("AWS_LAMBDA_RUNTIME_API=\"not an address\""), "{error}");
    }

    #[test]
    fn a_refusal_concerns_one_invocation_and_a_forbidden_call_ends_the_run() {
        assert_eq!(accepted("/x", StatusCode::ACCEPTED, b""), Ok(()));
        assert!(matches!(accepted("/x", StatusCode::BAD_REQUEST, b"{}"), Err(ApiError::Refused(_))));
        assert!(matches!(accepted("/x", StatusCode::PAYLOAD_TOO_LARGE, b"{}"), Err(ApiError::Refused(_))));
        assert!(matches!(accepted("/x", StatusCode::FORBIDDEN, b"{}"), Err(ApiError::Fatal(_))));
        assert!(matches!(accepted("/x", StatusCode::INTERNAL_SERVER_ERROR, b""), Err(ApiError::Fatal(_))));
        let long = "e".repeat(10_000);
        let Err(ApiError::Fatal(message)) = accepted("/x", StatusCode::FORBIDDEN, long.as_bytes()) else {
            panic!("a 403 ends the run")
        };
        assert!(message.starts_with("/x answered 403 Forbidden: eee"), "{message}");
        assert!(message.ends_with("... (10000 bytes)") && message.len() < 400, "the body is cut: {message}");
        assert_eq!(path_segment("8476a536-e9f4-11e8"), "8476a536-e9f4-11e8");
        assert_eq!(path_segment("a/b c"), "a%2Fb%20c");
    }
}
