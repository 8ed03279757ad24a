//! The test kit's Runtime API against AWS's published one (the Lambda
//! Runtime API's OpenAPI document, version 2018-06-01, and the Runtime
//! Interface Emulator's answers): paths, headers, status codes and the
//! error shape, spoken to as a function would, in plain HTTP/1.1 over TCP.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use celerity_testkit::{FUNCTION_ARN, LambdaAnswer, LambdaInvocation, LambdaRuntimeApi, MAX_RESPONSE_BYTES};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const WAIT: Duration = Duration::from_secs(30);

/// One HTTP exchange's answer.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }
}

/// Sends one request and reads the whole answer (the connection closes).
async fn call(api: &LambdaRuntimeApi, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Answer {
    let mut stream = TcpStream::connect(api.address()).await.expect("connect");
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n", api.address());
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(request.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(WAIT, stream.read_to_end(&mut raw)).await.expect("an answer").unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a head");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_string(), value.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers.iter().any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v == "chunked") {
        body = dechunk(&body);
    }
    Answer { status, headers, body }
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = body.windows(2).position(|w| w == b"\r\n").unwrap();
        let size = usize::from_str_radix(std::str::from_utf8(&body[..line_end]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&body[line_end + 2..line_end + 2 + size]);
        body = &body[line_end + 2 + size + 2..];
    }
}

const NEXT: &str = "/2018-06-01/runtime/invocation/next";

fn respond_path(id: &str) -> String {
    format!("/2018-06-01/runtime/invocation/{id}/response")
}

fn error_path(id: &str) -> String {
    format!("/2018-06-01/runtime/invocation/{id}/error")
}

fn assert_api_error(answer: &Answer, status: u16, error_type: &str) {
    assert_eq!(answer.status, status, "{:?}", String::from_utf8_lossy(&answer.body));
    assert_eq!(answer.header("content-type"), Some("application/json"));
    let body = answer.json();
    assert_eq!(body["errorType"], error_type, "{body}");
    assert!(body["errorMessage"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
}

#[tokio::test]
async fn next_hands_out_the_payload_with_the_published_headers_and_a_response_is_accepted() {
    let api = Arc::new(LambdaRuntimeApi::start().await.unwrap());
    let trace = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
    let invocation = LambdaInvocation::new(r#"{"hello": "world"}"#)
        .request_id("8476a536-e9f4-11e8-9739-2dfe598c3fcd")
        .deadline_in(Duration::from_secs(3))
        .trace_id(trace);
    let invoked = tokio::spawn({
        let api = Arc::clone(&api);
        async move { api.invoke(invocation).await }
    });
    let before = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
    let next = call(&api, "GET", NEXT, &[], b"").await;
    assert_eq!(next.status, 200);
    assert_eq!(next.body, br#"{"hello": "world"}"#);
    assert_eq!(next.header("content-type"), Some("application/json"));
    assert_eq!(next.header("lambda-runtime-aws-request-id"), Some("8476a536-e9f4-11e8-9739-2dfe598c3fcd"));
    assert_eq!(next.header("lambda-runtime-invoked-function-arn"), Some(FUNCTION_ARN));
    assert_eq!(next.header("lambda-runtime-trace-id"), Some(trace));
    let deadline: u64 = next.header("lambda-runtime-deadline-ms").unwrap().parse().unwrap();
    assert!((before + 2_000..=before + 4_000).contains(&deadline), "{deadline} vs {before}");

    let accepted = call(&api, "POST", &respond_path("8476a536-e9f4-11e8-9739-2dfe598c3fcd"), &[], b"\"done\"").await;
    assert_eq!((accepted.status, accepted.json()), (202, json!({"status": "OK"})));
    assert_eq!(accepted.header("content-type"), Some("application/json"));
    assert_eq!(invoked.await.unwrap(), Some(LambdaAnswer::Response("\"done\"".into())));
    assert_eq!(api.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn an_id_not_in_flight_is_an_invalid_request_id_and_a_violation() {
    let api = Arc::new(LambdaRuntimeApi::start().await.unwrap());
    let never = call(&api, "POST", &respond_path("never-handed-out"), &[], b"{}").await;
    assert_api_error(&never, 400, "InvalidRequestID");
    assert_eq!(never.json()["errorMessage"], "Invalid request ID");

    let invoked = tokio::spawn({
        let api = Arc::clone(&api);
        async move { api.invoke(LambdaInvocation::new("{}").request_id("r-1")).await }
    });
    call(&api, "GET", NEXT, &[], b"").await;
    assert_eq!(call(&api, "POST", &respond_path("r-1"), &[], b"1").await.status, 202);
    invoked.await.unwrap();
    let twice = call(&api, "POST", &respond_path("r-1"), &[], b"2").await;
    assert_api_error(&twice, 400, "InvalidRequestID");
    let violations = api.violations();
    assert_eq!(violations.len(), 2, "{violations:?}");
    assert!(violations[0].contains("never handed out") && violations[1].contains("a second time"), "{violations:?}");
}

#[tokio::test]
async fn an_error_is_taken_in_the_lambda_shape_and_checked_for_it() {
    let api = Arc::new(LambdaRuntimeApi::start().await.unwrap());
    let post_error = |id: &'static str, header: Option<&'static str>, body: &'static str| {
        let api = Arc::clone(&api);
        async move {
            let invoked = tokio::spawn({
                let api = Arc::clone(&api);
                async move { api.invoke(LambdaInvocation::new("{}").request_id(id)).await }
            });
            call(&api, "GET", NEXT, &[], b"").await;
            let mut headers = vec![("Content-Type", "application/vnd.aws.lambda.error+json")];
            headers.extend(header.map(|h| ("Lambda-Runtime-Function-Error-Type", h)));
            let posted = call(&api, "POST", &error_path(id), &headers, body.as_bytes()).await;
            assert_eq!((posted.status, posted.json()), (202, json!({"status": "OK"})));
            invoked.await.unwrap().expect("an answer")
        }
    };
    let answer = post_error(
        "e-1",
        Some("Function.BatchFailed"),
        r#"{"errorType":"Function.BatchFailed","errorMessage":"no","stackTrace":[]}"#,
    )
    .await;
    let error = answer.error().expect("a Lambda error").clone();
    assert_eq!((error.error_type.as_str(), error.error_message.as_str()), ("Function.BatchFailed", "no"));
    assert_eq!(error.content_type.as_deref(), Some("application/vnd.aws.lambda.error+json"));
    assert_eq!(api.violations(), Vec::<String>::new());

    post_error("e-2", Some("unhandled"), r#"{"errorType":"BatchFailed","errorMessage":"no"}"#).await;
    post_error("e-3", None, r#"{"errorType":"Runtime.InvalidEvent","errorMessage":"no"}"#).await;
    post_error("e-4", Some("Runtime.InvalidEvent"), "not json").await;
    let violations = api.violations();
    assert_eq!(violations.len(), 4, "{violations:?}");
    assert!(violations[0].contains(r#"the header says the error type is "unhandled" and the body "BatchFailed""#));
    assert!(violations[1].contains(r#""unhandled" is not Runtime.{Name} or Function.{Name}"#), "{violations:?}");
    assert!(violations[2].contains("e-3/error: no Lambda-Runtime-Function-Error-Type header"), "{violations:?}");
    assert!(violations[3].contains("e-4/error: the error body is not {\"errorType\", \"errorMessage\"} JSON"));
}

#[tokio::test]
async fn a_response_over_six_mebibytes_is_refused_and_fails_the_invocation() {
    let api = Arc::new(LambdaRuntimeApi::start().await.unwrap());
    let invoked = tokio::spawn({
        let api = Arc::clone(&api);
        async move { api.invoke(LambdaInvocation::new("{}").request_id("big")).await }
    });
    call(&api, "GET", NEXT, &[], b"").await;
    let big = vec![b'1'; MAX_RESPONSE_BYTES + 1];
    let refused = call(&api, "POST", &respond_path("big"), &[], &big).await;
    assert_api_error(&refused, 413, "RequestEntityTooLarge");
    let answer = invoked.await.unwrap().expect("an answer");
    assert_eq!(answer.error().map(|e| e.error_type.as_str()), Some("Function.ResponseSizeTooLarge"));
}

#[tokio::test]
async fn an_init_error_is_taken_before_the_first_invocation_only_and_other_calls_are_refused() {
    let api = Arc::new(LambdaRuntimeApi::start().await.unwrap());
    let headers = [("Lambda-Runtime-Function-Error-Type", "Runtime.HandlerNotFound")];
    let body = br#"{"errorType":"Runtime.HandlerNotFound","errorMessage":"none"}"#;
    let taken = call(&api, "POST", "/2018-06-01/runtime/init/error", &headers, body).await;
    assert_eq!((taken.status, taken.json()), (202, json!({"status": "OK"})));
    let error = api.init_error(WAIT).await.expect("the init error");
    assert_eq!(
        (error.error_type.as_str(), error.header_type.as_deref()),
        ("Runtime.HandlerNotFound", Some("Runtime.HandlerNotFound"))
    );

    let invoked = tokio::spawn({
        let api = Arc::clone(&api);
        async move { api.invoke(LambdaInvocation::new("{}").request_id("late").wait(Duration::from_millis(50))).await }
    });
    call(&api, "GET", NEXT, &[], b"").await;
    let late = call(&api, "POST", "/2018-06-01/runtime/init/error", &headers, body).await;
    assert_api_error(&late, 403, "InvalidStateTransition");
    assert!(invoked.await.unwrap().is_none());

    assert_eq!(call(&api, "GET", &respond_path("late"), &[], b"").await.status, 405);
    assert_eq!(call(&api, "POST", NEXT, &[], b"").await.status, 405);
    assert_eq!(call(&api, "GET", "/2018-06-01/runtime/elsewhere", &[], b"").await.status, 404);
    assert_eq!(call(&api, "GET", "/2020-01-01/runtime/invocation/next", &[], b"").await.status, 404);
}
