//! Layers and guards end to end: the real `gateway` binary against the test
//! kit's runtime over a real socket.

use std::time::Duration;

use celerity_testkit::http_answer as http;
use celerity_testkit::proto::v1::{self as pb, result::Outcome};
use celerity_testkit::{Connection, Error, HandlerProcess, TestRuntime, TestRuntimeBuilder, event};
use serde_json::{Value, json};

const GATEWAY: &str = env!("CARGO_BIN_EXE_gateway");
const EXIT_WAIT: Duration = Duration::from_secs(20);

fn runtime() -> TestRuntimeBuilder {
    TestRuntime::builder()
        .handler("status", "GET::/status")
        .handler("getOrder", "GET::/orders/{id}")
        .handler("placeOrder", "POST::/orders")
        .handler("track", "event::track")
        .handler("refund", "custom::refund")
        .handler("recordEvent", "source::order-events::recordEvent")
}

async fn start(extra: &[(&str, &str)]) -> (Connection, HandlerProcess) {
    let rt = runtime().bind().await.unwrap();
    let process = HandlerProcess::command(GATEWAY).envs(rt.env()).envs(extra.iter().copied()).spawn().unwrap();
    let conn = rt.accept().await.unwrap().accepted().unwrap();
    (conn, process)
}

async fn stop(conn: Connection, mut process: HandlerProcess) {
    conn.assert_no_violations();
    conn.drain_in(Duration::from_secs(5)).unwrap();
    let status = process.wait_timeout(EXIT_WAIT).await.expect("gateway exits after the drain");
    assert!(status.success(), "{}", process.output_text());
}

fn json_body(response: &pb::HttpResponse) -> Value {
    serde_json::from_slice(&response.body).unwrap()
}

fn header<'a>(response: &'a pb::HttpResponse, name: &str) -> Option<&'a str> {
    response.headers.get(name).and_then(|values| values.values.first()).map(String::as_str)
}

#[tokio::test]
async fn guards_allow_with_an_identity_and_deny_with_401_or_403() {
    let (conn, process) = start(&[]).await;
    let get = |key: Option<&str>| {
        let mut request = event::http("GET", "/orders/ord-7").route("/orders/{id}");
        if let Some(key) = key {
            request = request.header("x-api-key", key);
        }
        conn.call(request)
    };
    let response = get(None).await.unwrap();
    assert_eq!(http(&response).status, 401);
    assert_eq!(json_body(http(&response)), json!({"message": "an x-api-key header is required"}));
    let response = get(Some("k-nobody")).await.unwrap();
    assert_eq!(
        (http(&response).status, json_body(http(&response))["message"].clone()),
        (401, json!("the API key is not known"))
    );
    let response = get(Some("k-reader")).await.unwrap();
    assert_eq!(http(&response).status, 200);
    assert_eq!(json_body(http(&response)), json!({"id": "ord-7", "status": "preparing", "seen_by": "reporting"}));

    // Two guards: the reader's key passes the first and not the second.
    let place = |key: &str| conn.call(event::http("POST", "/orders").route("/orders").header("x-api-key", key));
    let response = place("k-reader").await.unwrap();
    assert_eq!(http(&response).status, 403);
    assert_eq!(json_body(http(&response))["message"], "this API key may read orders, not place them");
    let response = place("k-writer").await.unwrap();
    assert_eq!((http(&response).status, json_body(http(&response))["seen_by"].clone()), (201, json!("checkout")));
    stop(conn, process).await;
}

#[tokio::test]
async fn a_request_carrying_two_api_keys_is_401() {
    let (conn, process) = start(&[]).await;
    // Either key alone would pass; which of the two counts is not guessed.
    for (first, second) in [("k-reader", "k-writer"), ("k-writer", "k-writer")] {
        let request = event::http("GET", "/orders/ord-7")
            .route("/orders/{id}")
            .header("x-api-key", first)
            .header("x-api-key", second);
        let response = conn.call(request).await.unwrap();
        assert_eq!(http(&response).status, 401, "{first}, {second}");
        assert_eq!(
            json_body(http(&response)),
            json!({"message": "the request carries more than one `x-api-key` header"})
        );
    }
    let request =
        event::http("POST", "/orders").route("/orders").header("x-api-key", "k-writer").header("x-api-key", "k-reader");
    assert_eq!(http(&conn.call(request).await.unwrap()).status, 401);
    stop(conn, process).await;
}

#[tokio::test]
async fn a_websocket_message_from_elsewhere_is_refused_with_a_failed_ack() {
    let (conn, process) = start(&[]).await;
    let result = conn
        .call(event::websocket("track", "c-1").with_text(r#"{"event":"track"}"#).source_ip("203.0.113.9"))
        .await
        .unwrap();
    match result.outcome {
        Some(Outcome::Websocket(ack)) => {
            assert!(!ack.success);
            assert_eq!(ack.error_message, "only callers on this machine may do this");
        }
        other => panic!("expected an Ack, got {other:?}"),
    }
    let result = conn
        .call(event::websocket("track", "c-1").with_text(r#"{"event":"track"}"#).source_ip("127.0.0.1"))
        .await
        .unwrap();
    assert!(matches!(result.outcome, Some(Outcome::Websocket(pb::Ack { success: true, .. }))), "{result:?}");
    // The runtime does not always give the address: such a message is refused.
    let result = conn.call(event::websocket("track", "c-1").with_text(r#"{"event":"track"}"#)).await.unwrap();
    assert!(matches!(result.outcome, Some(Outcome::Websocket(pb::Ack { success: false, .. }))), "{result:?}");
    stop(conn, process).await;
}

fn custom(result: pb::Result) -> pb::CustomInvokeResult {
    match result.outcome {
        Some(Outcome::Custom(custom)) => custom,
        other => panic!("expected a custom result, got {other:?}"),
    }
}

/// A custom invocation, as the runtime's invoke API makes it: no caller
/// address, no headers.
#[tokio::test]
async fn refund_is_invoked_while_refunds_are_open() {
    let (conn, process) = start(&[]).await;
    let result = custom(conn.call(event::custom("refund").input(r#""ord-1""#)).await.unwrap());
    assert_eq!(result.error_message, "");
    assert_eq!(&result.output[..], br#""refunded ord-1""#);
    stop(conn, process).await;
}

#[tokio::test]
async fn refund_is_refused_while_refunds_are_paused() {
    let (conn, process) = start(&[("GATEWAY_REFUNDS_PAUSED", "1")]).await;
    let result = custom(conn.call(event::custom("refund").input(r#""ord-1""#)).await.unwrap());
    assert_eq!((result.error_message.as_str(), &result.output[..]), ("refunds are paused", &b""[..]));
    stop(conn, process).await;
}

#[tokio::test]
async fn tower_http_layers_mark_every_http_response_refusals_included() {
    let (conn, process) = start(&[]).await;
    let result =
        conn.call(event::http("GET", "/status").route("/status").header("accept-encoding", "gzip")).await.unwrap();
    let response = http(&result);
    assert_eq!((response.status, header(response, "x-served-by")), (200, Some("gateway")));
    // Too small to compress: tower-http leaves short bodies alone.
    assert_eq!(&response.body[..], b"ok");
    // A guard's refusal passes the same layers.
    let result = conn.call(event::http("GET", "/orders/x").route("/orders/{id}")).await.unwrap();
    assert_eq!((http(&result).status, header(http(&result), "x-served-by")), (401, Some("gateway")));
    stop(conn, process).await;
}

#[tokio::test]
async fn maintenance_fails_every_kind_in_its_own_way() {
    let (conn, process) = start(&[("GATEWAY_MAINTENANCE", "1")]).await;
    let result = conn.call(event::http("GET", "/status").route("/status")).await.unwrap();
    assert_eq!(
        (http(&result).status, json_body(http(&result))["message"].clone()),
        (503, json!("down for maintenance"))
    );
    let result = conn.call(event::consumer("order-events", "recordEvent").record("m-1", "{}")).await.unwrap();
    match result.outcome {
        Some(Outcome::Consumer(batch)) => assert!(!batch.success && batch.failures.is_empty(), "{batch:?}"),
        other => panic!("expected a batch result, got {other:?}"),
    }
    let result = conn.call(event::websocket("track", "c-1").with_text("{}").source_ip("127.0.0.1")).await.unwrap();
    assert!(matches!(result.outcome, Some(Outcome::Websocket(pb::Ack { success: false, .. }))), "{result:?}");
    stop(conn, process).await;
}

#[tokio::test]
async fn the_manifest_names_each_handlers_guards() {
    let rt = TestRuntime::builder().bind().await.unwrap();
    let mut process = HandlerProcess::command(GATEWAY).envs(rt.env()).arg("--manifest").spawn().unwrap();
    let status = process.wait_timeout(EXIT_WAIT).await.expect("the manifest run exits");
    assert!(status.success(), "{}", process.output_text());
    let manifest: Value = serde_json::from_str(&process.stdout_text()).unwrap();
    let guards = |tag: &str| {
        let handler = manifest["handlers"].as_array().unwrap().iter().find(|h| h["tag"] == tag).unwrap();
        handler["guards"].clone()
    };
    assert_eq!(guards("POST::/orders"), json!(["api-key", "writer"]));
    assert_eq!(guards("custom::refund"), json!(["refunds-open"]));
    assert_eq!(guards("event::track"), json!(["internal"]));
    assert_eq!(guards("GET::/status"), json!([]));
    assert!(matches!(rt.accept_timeout(Duration::from_millis(200)).await, Err(Error::Timeout { .. })));
}
