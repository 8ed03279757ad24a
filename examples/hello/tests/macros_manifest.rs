//! `hello`'s handlers are declared with the attribute macros: the manifest
//! the binary prints, instead of connecting, when asked.

use std::time::Duration;

use celerity_testkit::{Error, HandlerProcess, TestRuntime};
use serde_json::{Value, json};

const HELLO: &str = env!("CARGO_BIN_EXE_hello");
const FILE: &str = "examples/hello/src/main.rs";

/// Runs `hello` as `configure` says, with a runtime listening, and returns
/// the manifest it printed; checks it exited 0 without connecting.
async fn manifest(
    configure: impl FnOnce(celerity_testkit::HandlerCommand) -> celerity_testkit::HandlerCommand,
) -> Value {
    let rt = TestRuntime::builder().handler("hello", "GET::/hello").bind().await.unwrap();
    let mut process = configure(HandlerProcess::command(HELLO).envs(rt.env())).spawn().unwrap();
    let status = process.wait_timeout(Duration::from_secs(20)).await;
    assert!(status.is_some_and(|s| s.success()), "hello did not exit 0:\n{}", process.output_text());
    match rt.accept_timeout(Duration::from_millis(300)).await {
        Err(Error::Timeout { .. }) => {}
        other => panic!("printing the manifest must not connect, got {other:?}"),
    }
    let stdout = process.stdout_text();
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("the manifest is not JSON ({e}):\n{stdout}"))
}

fn expected() -> Value {
    json!({
        "sdk": "celerity-rs",
        "sdkVersion": env!("CARGO_PKG_VERSION"),
        "protocolVersion": "1.0",
        "handlers": [
            {"tag": "GET::/hello", "kind": "http", "handlerId": "hello::hello", "function": "hello::hello", "file": FILE, "line": line_of("async fn hello("), "maxConcurrent": null, "guards": []},
            {"tag": "POST::/greetings/{name}", "kind": "http", "handlerId": "hello::greet", "function": "hello::greet", "file": FILE, "line": line_of("async fn greet("), "maxConcurrent": null, "guards": []},
        ]
    })
}

/// The line of `hello`'s source that starts with `prefix`.
fn line_of(prefix: &str) -> usize {
    let source = include_str!("../src/main.rs");
    source.lines().position(|line| line.starts_with(prefix)).map(|index| index + 1).expect("the handler in main.rs")
}

#[tokio::test]
async fn the_manifest_flag_prints_the_handlers_and_exits_without_connecting() {
    assert_eq!(manifest(|command| command.arg("--manifest")).await, expected());
}

#[tokio::test]
async fn the_manifest_variable_prints_the_handlers_and_exits_without_connecting() {
    assert_eq!(manifest(|command| command.env("CELERITY_EXTRACT_MANIFEST", "1")).await, expected());
}

#[tokio::test]
async fn the_manifest_is_printed_without_a_runtime_socket() {
    let mut process = HandlerProcess::command(HELLO)
        .env("CELERITY_RUNTIME_SOCKET", "/nonexistent/celerity/runtime.sock")
        .env("CELERITY_EXTRACT_MANIFEST", "true")
        .spawn()
        .unwrap();
    let status = process.wait_timeout(Duration::from_secs(20)).await;
    assert!(status.is_some_and(|s| s.success()), "{}", process.output_text());
    let manifest: Value = serde_json::from_str(&process.stdout_text()).unwrap();
    assert_eq!(manifest, expected());
}

#[tokio::test]
async fn the_variable_set_to_false_serves_as_usual() {
    let rt = TestRuntime::builder()
        .handler("hello", "GET::/hello")
        .handler("greet", "POST::/greetings/{name}")
        .bind()
        .await
        .unwrap();
    let mut process =
        HandlerProcess::command(HELLO).envs(rt.env()).env("CELERITY_EXTRACT_MANIFEST", "false").spawn().unwrap();
    let conn = rt.accept().await.and_then(|handshake| handshake.accepted()).unwrap();
    conn.drain_in(Duration::from_secs(5)).unwrap();
    let status = process.wait_timeout(Duration::from_secs(20)).await;
    assert!(status.is_some_and(|s| s.success()), "{}", process.output_text());
    assert!(process.stdout_text().is_empty(), "{}", process.output_text());
}
