//! The foundation, end to end: the real `hello` binary against the test
//! kit's runtime over a real socket. Transport, handshake and HTTP serving.

use std::time::Duration;

use celerity_testkit::http_answer as http_response;
use celerity_testkit::proto::v1::{
    self as pb, ProtocolVersion, RuntimeMessage, ready_ack::RefusedReason, result::Outcome, runtime_message,
};
use celerity_testkit::{Error, HandlerProcess, TestRuntime, TestRuntimeBuilder, event};

const HELLO: &str = env!("CARGO_BIN_EXE_hello");
const EXIT_WAIT: Duration = Duration::from_secs(20);

fn hello_runtime() -> TestRuntimeBuilder {
    TestRuntime::builder().handler("hello", "GET::/hello").handler("greet", "POST::/greetings/{name}")
}

/// Runs `hello` with the runtime's environment plus `extra`.
fn spawn(rt: &TestRuntime, extra: &[(&str, &str)]) -> HandlerProcess {
    HandlerProcess::command(HELLO).envs(rt.env()).envs(extra.iter().copied()).spawn().expect("spawn hello")
}

async fn exit_code(process: &mut HandlerProcess) -> i32 {
    let status = process.wait_timeout(EXIT_WAIT).await;
    let status = status.unwrap_or_else(|| panic!("hello did not exit; output:\n{}", process.output_text()));
    status.code().unwrap_or(-1)
}

#[tokio::test]
async fn hello_round_trip() {
    let rt = hello_runtime().bind().await.unwrap();
    let mut process = spawn(&rt, &[("CELERITY_HANDLER_CONCURRENCY", "8")]);
    let handshake = rt.accept().await.unwrap();
    let ready = handshake.ready().clone();
    assert_eq!(ready.handler_tags, ["GET::/hello", "POST::/greetings/{name}"]);
    assert_eq!(ready.initial_credit, 8);
    assert_eq!(ready.sdk_version, env!("CARGO_PKG_VERSION"));
    assert_eq!(ready.protocol_version, Some(ProtocolVersion { major: 1, minor: 0 }));
    let conn = handshake.accepted().unwrap();

    let result = conn.call(event::http("GET", "/hello").route("/hello")).await.unwrap();
    assert_eq!(result.credit_grant, 1);
    let response = http_response(&result);
    assert_eq!(response.status, 200);
    assert_eq!(&response.body[..], b"hello from celerity-rs");

    let result = conn
        .call(
            // The kit reads `name` from the path as the runtime does: `Ada L`.
            event::http("POST", "/greetings/Ada%20L")
                .route("/greetings/{name}")
                .query("shout", "true")
                .header("Content-Type", "application/json")
                .body(r#"{"greeting": "hi"}"#),
        )
        .await
        .unwrap();
    assert_eq!(result.credit_grant, 1);
    let response = http_response(&result);
    assert_eq!(response.status, 201);
    let body: serde_json::Value = serde_json::from_slice(&response.body).unwrap();
    assert_eq!(body, serde_json::json!({"message": "HI, ADA L!"}));
    // Two Set-Cookie headers survive as two values.
    assert_eq!(response.headers["set-cookie"].values, ["last-greeted=Ada L", "greeting=hi"]);

    conn.assert_no_violations();
    conn.drain_in(Duration::from_secs(5)).unwrap();
    assert_eq!(exit_code(&mut process).await, 0, "{}", process.output_text());
}

#[tokio::test]
async fn body_that_does_not_parse_answers_400_naming_the_field() {
    let rt = hello_runtime().bind().await.unwrap();
    let mut process = spawn(&rt, &[]);
    let conn = rt.accept_connection().await.unwrap();
    let result = conn
        .call(
            event::http("POST", "/greetings/x")
                .route("/greetings/{name}")
                .path_param("name", "x")
                .body(r#"{"greeting": 42}"#),
        )
        .await
        .unwrap();
    let response = http_response(&result);
    assert_eq!(response.status, 400);
    let body: serde_json::Value = serde_json::from_slice(&response.body).unwrap();
    assert_eq!(body["details"][0]["path"], serde_json::json!(["greeting"]));
    assert_eq!(body["details"][0]["code"], "invalid_type");
    conn.assert_no_violations();
    conn.drain_in(Duration::from_secs(5)).unwrap();
    assert_eq!(exit_code(&mut process).await, 0);
}

#[tokio::test]
async fn handler_error_becomes_handler_error_with_its_credit() {
    let rt = hello_runtime().bind().await.unwrap();
    let mut process = spawn(&rt, &[("HELLO_GREETING_FILE", "/nonexistent/greeting.txt")]);
    let conn = rt.accept_connection().await.unwrap();
    let result = conn.call(event::http("GET", "/hello").route("/hello")).await.unwrap();
    assert_eq!(result.credit_grant, 1);
    match &result.outcome {
        Some(Outcome::Error(error)) => {
            assert_eq!(error.r#type, "Error");
            assert!(error.message.contains("No such file"), "{error:?}");
            assert!(error.stack.is_empty());
        }
        other => panic!("expected a HandlerError, got {other:?}"),
    }
    // The process keeps serving.
    let again = conn.call(event::http("GET", "/hello").route("/hello")).await.unwrap();
    assert!(matches!(again.outcome, Some(Outcome::Error(_))));
    conn.assert_no_violations();
    conn.drain_in(Duration::from_secs(5)).unwrap();
    assert_eq!(exit_code(&mut process).await, 0);
}

#[tokio::test]
async fn unregistered_tag_is_answered_naming_it_with_its_credit() {
    let rt = hello_runtime().bind().await.unwrap();
    let mut process = spawn(&rt, &[]);
    let conn = rt.accept_connection().await.unwrap();
    // The runtime would never send this; the handler must still answer it.
    let id = conn.dispatch_unchecked(event::http("GET", "/nope").route("/nope")).unwrap();
    let result = conn.result(&id).await.unwrap();
    assert_eq!(result.credit_grant, 1);
    match &result.outcome {
        Some(Outcome::Error(error)) => assert!(error.message.contains("GET::/nope"), "{error:?}"),
        other => panic!("expected a HandlerError, got {other:?}"),
    }
    conn.drain_in(Duration::from_secs(5)).unwrap();
    assert_eq!(exit_code(&mut process).await, 0);
}

#[tokio::test]
async fn tag_refusal_exits_nonzero_naming_both_lists() {
    let rt = TestRuntime::builder()
        .handler("hello", "GET::/hello")
        .handler("farewell", "GET::/goodbye")
        .bind()
        .await
        .unwrap();
    let mut process = spawn(&rt, &[]);
    let handshake = rt.accept().await.unwrap();
    assert!(!handshake.is_accepted());
    assert_eq!(handshake.refused_reason(), RefusedReason::Tags);
    assert_ne!(exit_code(&mut process).await, 0);
    let output = process.output_text();
    assert!(output.contains("POST::/greetings/{name}"), "unknown tag not named:\n{output}");
    assert!(output.contains("GET::/goodbye"), "unhandled tag not named:\n{output}");
    assert!(output.contains("refused"), "{output}");
}

#[tokio::test]
async fn runtime_major_mismatch_is_refused_before_ready() {
    let rt = hello_runtime().protocol_version(2, 0).bind().await.unwrap();
    let mut process = spawn(&rt, &[]);
    match rt.accept().await {
        Err(Error::ClosedBeforeReady(_)) => {}
        other => panic!("expected the handler to close without Ready, got {other:?}"),
    }
    assert_ne!(exit_code(&mut process).await, 0);
    let output = process.output_text();
    assert!(output.contains("1.0") && output.contains("2.0"), "versions not named:\n{output}");
}

#[tokio::test]
async fn runtime_version_refusal_stops_with_the_versions() {
    let rt = hello_runtime()
        .ack_with(|_ready, _ack| pb::ReadyAck {
            accepted: false,
            unknown_tags: vec![],
            unhandled_tags: vec![],
            refused_reason: RefusedReason::ProtocolVersion as i32,
        })
        .bind()
        .await
        .unwrap();
    let mut process = spawn(&rt, &[]);
    let handshake = rt.accept().await.unwrap();
    assert!(!handshake.is_accepted());
    assert_ne!(exit_code(&mut process).await, 0);
    let output = process.output_text();
    assert!(output.contains("protocol version 1.0"), "{output}");
}

#[tokio::test]
async fn runtime_without_version_is_served() {
    let rt = hello_runtime().no_protocol_version().bind().await.unwrap();
    let mut process = spawn(&rt, &[]);
    let conn = rt.accept_connection().await.unwrap();
    let result = conn.call(event::http("GET", "/hello").route("/hello")).await.unwrap();
    assert_eq!(http_response(&result).status, 200);
    conn.drain_in(Duration::from_secs(5)).unwrap();
    assert_eq!(exit_code(&mut process).await, 0);
    let output = process.output_text();
    assert_eq!(output.matches("did not say which protocol version").count(), 1, "{output}");
}

#[tokio::test]
async fn wrong_first_frame_is_an_error() {
    let rt = hello_runtime()
        .first_frame(RuntimeMessage { frame: Some(runtime_message::Frame::Drain(pb::Drain { deadline_unix_ms: 0 })) })
        .bind()
        .await
        .unwrap();
    let mut process = spawn(&rt, &[]);
    let accepted = rt.accept().await;
    assert!(accepted.is_err(), "no Ready may follow a wrong first frame: {accepted:?}");
    assert_ne!(exit_code(&mut process).await, 0);
    let output = process.output_text();
    assert!(output.contains("first frame must be RuntimeConfig") && output.contains("Drain"), "{output}");
}

#[tokio::test]
async fn socket_that_appears_later_is_retried() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("later").join("runtime.sock");
    let mut process = HandlerProcess::command(HELLO)
        .env("CELERITY_RUNTIME_SOCKET", &path)
        .env("CELERITY_CONNECT_TIMEOUT_MS", "20000")
        .spawn()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(process.try_status().is_none(), "hello gave up too early:\n{}", process.output_text());
    let rt = hello_runtime().unix_socket(&path).bind().await.unwrap();
    let conn = rt.accept_connection().await.unwrap();
    let result = conn.call(event::http("GET", "/hello").route("/hello")).await.unwrap();
    assert_eq!(http_response(&result).status, 200);
    conn.drain_in(Duration::from_secs(5)).unwrap();
    assert_eq!(exit_code(&mut process).await, 0);
}

#[tokio::test]
async fn missing_socket_gives_up_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("never.sock");
    let mut process = HandlerProcess::command(HELLO)
        .env("CELERITY_RUNTIME_SOCKET", &path)
        .env("CELERITY_CONNECT_TIMEOUT_MS", "300")
        .spawn()
        .unwrap();
    assert_ne!(exit_code(&mut process).await, 0);
    let output = process.output_text();
    assert!(output.contains(&path.display().to_string()) && output.contains("last error"), "{output}");
}

#[tokio::test]
async fn path_that_is_not_a_socket_is_a_clear_error() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let mut process = HandlerProcess::command(HELLO).env("CELERITY_RUNTIME_SOCKET", file.path()).spawn().unwrap();
    assert_ne!(exit_code(&mut process).await, 0);
    assert!(process.output_text().contains("is not a socket"), "{}", process.output_text());
}

#[tokio::test]
async fn tcp_fallback_round_trip() {
    let rt = hello_runtime().tcp(0).bind().await.unwrap();
    let mut process = spawn(&rt, &[]);
    let conn = rt.accept_connection().await.unwrap();
    let result = conn.call(event::http("GET", "/hello").route("/hello")).await.unwrap();
    assert_eq!(http_response(&result).status, 200);
    conn.drain_in(Duration::from_secs(5)).unwrap();
    assert_eq!(exit_code(&mut process).await, 0);
}

#[tokio::test]
async fn fallback_port_zero_is_a_startup_error() {
    let mut process = HandlerProcess::command(HELLO)
        .env("CELERITY_RUNTIME_SOCKET_FALLBACK_ENABLED", "true")
        .env("CELERITY_RUNTIME_SOCKET_FALLBACK_PORT", "0")
        .spawn()
        .unwrap();
    assert_ne!(exit_code(&mut process).await, 0);
    let output = process.output_text();
    assert!(output.contains("CELERITY_RUNTIME_SOCKET_FALLBACK_PORT") && output.contains("port 0"), "{output}");
}

#[tokio::test]
async fn fallback_port_that_does_not_parse_is_a_startup_error() {
    let mut process = HandlerProcess::command(HELLO)
        .env("CELERITY_RUNTIME_SOCKET_FALLBACK_ENABLED", "true")
        .env("CELERITY_RUNTIME_SOCKET_FALLBACK_PORT", "eighty")
        .spawn()
        .unwrap();
    assert_ne!(exit_code(&mut process).await, 0);
    assert!(process.output_text().contains("1 to 65535"), "{}", process.output_text());
}

#[tokio::test]
async fn ready_is_sent_promptly() {
    let rt = hello_runtime().ready_timeout(Duration::from_secs(5)).bind().await.unwrap();
    let mut process = spawn(&rt, &[]);
    // The kit closes a stream whose Ready is later than its timeout, far
    // inside the 30 s the specification allows.
    let conn = rt.accept_connection().await.unwrap();
    conn.drain_in(Duration::from_secs(5)).unwrap();
    assert_eq!(exit_code(&mut process).await, 0);
}
