//! The `axum-router` binary against the test kit's runtime over a real
//! socket: axum's routing, extractors, rejections, state and layer, behind
//! the tags the application names.

use std::time::Duration;

use celerity_testkit::http_answer as http;
use celerity_testkit::proto::v1 as pb;
use celerity_testkit::{Connection, HandlerProcess, TestRuntime, event};
use serde_json::{Value, json};

const BINARY: &str = env!("CARGO_BIN_EXE_axum-router");

async fn start() -> (Connection, HandlerProcess) {
    let rt = TestRuntime::builder()
        .handler("listNotes", "GET::/notes")
        .handler("createNote", "POST::/notes")
        .handler("getNote", "GET::/notes/{id}")
        .bind()
        .await
        .unwrap();
    let process = HandlerProcess::command(BINARY).envs(rt.env()).spawn().unwrap();
    let conn = rt.accept().await.unwrap().accepted().unwrap();
    (conn, process)
}

async fn stop(conn: Connection, mut process: HandlerProcess) {
    conn.assert_no_violations();
    conn.drain_in(Duration::from_secs(5)).unwrap();
    let status = process.wait_timeout(Duration::from_secs(20)).await.expect("the binary exits after the drain");
    assert!(status.success(), "{}", process.output_text());
}

fn json_body(response: &pb::HttpResponse) -> Value {
    serde_json::from_slice(&response.body).unwrap_or_else(|e| panic!("not JSON ({e}): {response:?}"))
}

fn header<'a>(response: &'a pb::HttpResponse, name: &str) -> Option<&'a str> {
    response.headers.get(name).and_then(|values| values.values.first()).map(String::as_str)
}

#[tokio::test]
async fn the_routers_routes_extractors_and_state_answer_through_the_runtime() {
    let (conn, process) = start().await;
    let create = |text: &str| {
        conn.call(
            event::http("POST", "/notes")
                .header("content-type", "application/json")
                .json_text(json!({"text": text}).to_string()),
        )
    };
    let created = create("first").await.unwrap();
    assert_eq!((http(&created).status, json_body(http(&created))), (201, json!({"id": 1, "text": "first"})));
    create("second").await.unwrap();

    // Query parameters reach axum's `Query` from the URI the SDK writes.
    let listed = conn.call(event::http("GET", "/notes").query("limit", "1")).await.unwrap();
    assert_eq!(json_body(http(&listed)), json!([{"id": 1, "text": "first"}]));
    // The path parameter is axum's own, taken from the raw path.
    let one = conn.call(event::http("GET", "/notes/2").route("/notes/{id}").path_param("id", "2")).await.unwrap();
    assert_eq!(json_body(http(&one)), json!({"id": 2, "text": "second"}));
    let missing = conn.call(event::http("GET", "/notes/9").route("/notes/{id}").path_param("id", "9")).await.unwrap();
    assert_eq!(http(&missing).status, 404);

    // The router's layer is on every response.
    assert_eq!(header(http(&one), "cache-control"), Some("no-store"));
    assert_eq!(header(http(&listed), "content-type"), Some("application/json"));
    stop(conn, process).await;
}

#[tokio::test]
async fn axums_own_rejections_are_the_callers_answers() {
    let (conn, process) = start().await;
    let not_a_number =
        conn.call(event::http("GET", "/notes/abc").route("/notes/{id}").path_param("id", "abc")).await.unwrap();
    assert_eq!(http(&not_a_number).status, 400);
    let not_json =
        conn.call(event::http("POST", "/notes").header("content-type", "text/plain").body("hi")).await.unwrap();
    assert_eq!(http(&not_json).status, 415);
    let wrong_shape = conn
        .call(event::http("POST", "/notes").header("content-type", "application/json").json_text(r#"{"title": 1}"#))
        .await
        .unwrap();
    assert_eq!(http(&wrong_shape).status, 422);
    stop(conn, process).await;
}
