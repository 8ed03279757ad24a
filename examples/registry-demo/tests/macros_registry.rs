//! The attribute macros and the compile-time registry, end to end: real
//! binaries built from `#[http_handler]` and friends, against the test kit's
//! runtime over a real socket.

use std::time::Duration;

use celerity_testkit::http_answer as http_response;
use celerity_testkit::proto::v1::{self as pb, HandlerLimit, result::Outcome};
use celerity_testkit::{Connection, Error, HandlerProcess, TestRuntime, TestRuntimeBuilder, event};
use serde_json::{Value, json};

const DEMO: &str = env!("CARGO_BIN_EXE_demo");
const DUPLICATE_TAGS: &str = env!("CARGO_BIN_EXE_duplicate_tags");
const NAME_CLASH: &str = env!("CARGO_BIN_EXE_name_clash");
const MALFORMED_TAG: &str = env!("CARGO_BIN_EXE_malformed_tag");
const MISSING_STATE: &str = env!("CARGO_BIN_EXE_missing_state");
const PATH_MISMATCH: &str = env!("CARGO_BIN_EXE_path_mismatch");
const UNKNOWN_GUARD: &str = env!("CARGO_BIN_EXE_unknown_guard");
const EXIT_WAIT: Duration = Duration::from_secs(20);

/// The blueprint of `demo`, less the handlers named in `leave_out`.
fn demo_blueprint(leave_out: &[&str]) -> TestRuntimeBuilder {
    let handlers = [
        ("getOrder", "GET::/orders/{id}"),
        ("countHits", "GET::/hits"),
        ("createOrder", "POST::/orders"),
        ("createDraft", "POST::/drafts"),
        ("getItem", "GET::/items/{id}"),
        ("search", "GET::/search"),
        ("addNote", "POST::/notes"),
        ("getFile", "GET::/files/{*path}"),
        ("sendMessage", "action::sendMessage"),
        ("processOrders", "source::orders-queue::processOrders"),
        ("nightlyCleanup", "source::nightly::cleanup"),
        ("echo", "custom::echo"),
        ("version", "GET::/version"),
    ];
    handlers
        .into_iter()
        .filter(|(name, _)| !leave_out.contains(name))
        .fold(TestRuntime::builder(), |builder, (name, tag)| builder.handler(name, tag))
}

/// `demo`, connected to a runtime declaring all of its handlers.
async fn start_demo() -> (TestRuntime, HandlerProcess, Connection) {
    let rt = demo_blueprint(&[]).bind().await.unwrap();
    let process = HandlerProcess::spawn_for(&rt, DEMO).unwrap();
    let conn = match rt.accept().await.and_then(|handshake| handshake.accepted()) {
        Ok(conn) => conn,
        Err(error) => panic!("demo was not accepted: {error}\n{}", process.output_text()),
    };
    (rt, process, conn)
}

async fn stop(conn: Connection, mut process: HandlerProcess) {
    conn.assert_no_violations();
    conn.drain_in(Duration::from_secs(5)).unwrap();
    let status = process.wait_timeout(EXIT_WAIT).await;
    assert!(status.is_some_and(|s| s.success()), "demo did not stop cleanly:\n{}", process.output_text());
}

async fn exit_code(process: &mut HandlerProcess) -> i32 {
    let status = process.wait_timeout(EXIT_WAIT).await;
    let status = status.unwrap_or_else(|| panic!("the process did not exit; output:\n{}", process.output_text()));
    status.code().unwrap_or(-1)
}

fn text(response: &pb::HttpResponse) -> &str {
    std::str::from_utf8(&response.body).unwrap()
}

fn json_body(response: &pb::HttpResponse) -> Value {
    assert_eq!(response.headers["content-type"].values, ["application/json"], "{}", text(response));
    serde_json::from_slice(&response.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(response)))
}

/// Calls, and checks the answer is a 400 whose JSON error's first detail has
/// `code` at `path`.
async fn expect_400(conn: &Connection, request: event::HttpEvent, code: &str, path: Value) -> Value {
    let result = conn.call(request).await.unwrap();
    let response = http_response(&result);
    assert_eq!(response.status, 400, "{}", text(response));
    let body = json_body(response);
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
    assert_eq!(body["details"][0]["code"], code, "{body}");
    assert_eq!(body["details"][0]["path"], path, "{body}");
    body
}

#[tokio::test]
async fn a_handler_bound_by_name_gets_its_tag_from_the_runtime() {
    let (_rt, process, conn) = start_demo().await;
    let ready = conn.ready().clone();
    assert!(ready.handler_tags.contains(&"GET::/orders/{id}".to_string()), "{:?}", ready.handler_tags);
    assert!(ready.handler_tags.contains(&"source::nightly::cleanup".to_string()), "{:?}", ready.handler_tags);
    assert!(ready.handler_tags.contains(&"GET::/files/{*path}".to_string()), "{:?}", ready.handler_tags);
    // `max_concurrent = 4` on the handler bound by name caps its resolved tag.
    assert_eq!(ready.limits, [HandlerLimit { handler_tag: "GET::/orders/{id}".into(), max_concurrent: 4 }]);

    let result = conn.call(event::http("GET", "/orders/7").route("/orders/{id}").path_param("id", "7")).await.unwrap();
    let response = http_response(&result);
    assert_eq!(response.status, 200, "{}", text(response));
    assert_eq!(json_body(response), json!({"id": 7, "store": "main-street"}));

    // A handler declared in a library crate the binary links.
    let result = conn.call(event::http("GET", "/version").route("/version")).await.unwrap();
    assert_eq!(text(http_response(&result)), env!("CARGO_PKG_VERSION"));

    let result = conn.call(event::schedule("nightly", "cleanup")).await.unwrap();
    assert_eq!(result.outcome, Some(Outcome::Schedule(pb::Ack { success: true, error_message: String::new() })));
    stop(conn, process).await;
}

#[tokio::test]
async fn state_is_shared_by_every_handler_and_event() {
    let (_rt, process, conn) = start_demo().await;
    for id in ["1", "2"] {
        let request = event::http("GET", format!("/orders/{id}")).route("/orders/{id}").path_param("id", id);
        assert_eq!(http_response(&conn.call(request).await.unwrap()).status, 200);
    }
    let record = r#"{"name": "a", "items": [{"qty": 1}]}"#;
    let batch = event::consumer("orders-queue", "processOrders").record("m-1", record);
    conn.call(batch).await.unwrap();
    let result = conn.call(event::http("GET", "/hits").route("/hits")).await.unwrap();
    assert_eq!(text(http_response(&result)), "4");
    stop(conn, process).await;
}

#[tokio::test]
async fn json_that_does_not_fit_answers_400_naming_the_field() {
    let (_rt, process, conn) = start_demo().await;
    let post = |body: &str| event::http("POST", "/orders").route("/orders").json_text(body.to_string());

    let body = expect_400(
        &conn,
        post(r#"{"name": "a", "items": [{"qty": "x"}]}"#),
        "invalid_type",
        json!(["items", 0, "qty"]),
    )
    .await;
    assert!(body["message"].as_str().unwrap().contains("items[0].qty"), "{body}");
    let body = expect_400(&conn, post(r#"{"items": []}"#), "missing", json!([])).await;
    assert!(body["details"][0]["message"].as_str().unwrap().contains("`name`"), "{body}");
    expect_400(&conn, post("{\"name\""), "malformed", json!([])).await;

    // A body that parses is served.
    let result = conn.call(post(r#"{"name": "a", "items": [{"qty": 2}]}"#)).await.unwrap();
    let response = http_response(&result);
    assert_eq!(response.status, 201);
    assert_eq!(json_body(response), json!({"name": "a", "items": [{"qty": 2}]}));

    // Another media type is refused before parsing.
    let request = event::http("POST", "/orders").route("/orders").header("content-type", "text/plain").body("{}");
    assert_eq!(http_response(&conn.call(request).await.unwrap()).status, 415);
    stop(conn, process).await;
}

#[tokio::test]
async fn optional_json_allows_no_body_but_not_a_wrong_one() {
    let (_rt, process, conn) = start_demo().await;
    let result = conn.call(event::http("POST", "/drafts").route("/drafts")).await.unwrap();
    assert_eq!(text(http_response(&result)), "empty draft");
    let request = event::http("POST", "/drafts").route("/drafts").json_text(r#"{"name": 5, "items": []}"#);
    expect_400(&conn, request, "invalid_type", json!(["name"])).await;
    stop(conn, process).await;
}

#[tokio::test]
async fn path_and_query_that_do_not_fit_answer_400_naming_the_parameter() {
    let (_rt, process, conn) = start_demo().await;
    let request = event::http("GET", "/items/seven").route("/items/{id}").path_param("id", "seven");
    let body = expect_400(&conn, request, "invalid_type", json!(["id"])).await;
    assert!(body["message"].as_str().unwrap().contains("id"), "{body}");
    let result = conn.call(event::http("GET", "/items/7").route("/items/{id}").path_param("id", "7")).await.unwrap();
    assert_eq!(text(http_response(&result)), "item 7");

    let request = event::http("GET", "/search").route("/search").query("page", "two");
    expect_400(&conn, request, "invalid_type", json!(["page"])).await;
    let request = event::http("GET", "/search").route("/search").query("tag", "a");
    let body = expect_400(&conn, request, "missing", json!(["page"])).await;
    assert!(body["message"].as_str().unwrap().contains("page"), "{body}");
    let request = event::http("GET", "/search").route("/search").query("page", "2").query("tag", "a").query("tag", "b");
    assert_eq!(text(http_response(&conn.call(request).await.unwrap())), "page 2 tags a,b");
    stop(conn, process).await;
}

#[tokio::test]
async fn a_string_body_that_is_not_utf8_answers_400() {
    let (_rt, process, conn) = start_demo().await;
    let request = event::http("POST", "/notes").route("/notes").body(vec![0x66, 0xff, 0xfe]);
    let body = expect_400(&conn, request, "malformed", json!([])).await;
    assert!(body["message"].as_str().unwrap().contains("UTF-8"), "{body}");
    let request = event::http("POST", "/notes").route("/notes").body("remember the milk");
    assert_eq!(text(http_response(&conn.call(request).await.unwrap())), "remember the milk");
    stop(conn, process).await;
}

#[tokio::test]
async fn a_catch_all_route_is_declared_in_the_router_form() {
    let (_rt, process, conn) = start_demo().await;
    let request = event::http("GET", "/files/a/b.txt")
        .route("/files/{*path}")
        .path_param("path", "a")
        .path_param("path", "b.txt");
    let result = conn.call(request).await.unwrap();
    assert_eq!(text(http_response(&result)), "a/b.txt via GET::/files/{*path}");

    // Split on the raw path's `/`, then each segment decoded once, as the
    // runtime sends it: the SDK does not decode again.
    let request = event::http("GET", "/files/a%2520b/c").route("/files/{*path}");
    let result = conn.call(request).await.unwrap();
    assert_eq!(text(http_response(&result)), "a%20b/c via GET::/files/{*path}");
    stop(conn, process).await;
}

#[tokio::test]
async fn handlers_of_other_kinds_are_served_from_the_registry() {
    let (_rt, process, conn) = start_demo().await;
    let batch = event::consumer("orders-queue", "processOrders")
        .record("good", r#"{"name": "a", "items": [{"qty": 1}]}"#)
        .record("empty", r#"{"name": "b", "items": []}"#)
        .record("broken", r#"{"name": "c"}"#);
    let result = conn.call(batch).await.unwrap();
    let Some(Outcome::Consumer(batch)) = result.outcome else { panic!("expected a batch result: {result:?}") };
    let mut failed: Vec<&str> = batch.failures.iter().map(|f| f.message_id.as_str()).collect();
    failed.sort();
    assert_eq!(failed, ["broken", "empty"], "{batch:?}");

    let result = conn.call(event::custom("echo").input(r#"{"name": "x", "items": []}"#)).await.unwrap();
    let Some(Outcome::Custom(custom)) = result.outcome else { panic!("expected a custom result: {result:?}") };
    assert_eq!(serde_json::from_slice::<Value>(&custom.output).unwrap(), json!({"name": "x", "items": []}));

    let message = event::websocket("sendMessage", "conn-1").route_key("action").with_text(r#"{"text": "hi"}"#);
    let result = conn.call(message).await.unwrap();
    assert_eq!(result.outcome, Some(Outcome::Websocket(pb::Ack { success: true, error_message: String::new() })));
    stop(conn, process).await;
}

#[tokio::test]
async fn an_unknown_name_is_a_startup_error_listing_the_declared_names() {
    let rt = demo_blueprint(&["getOrder"]).bind().await.unwrap();
    let mut process = HandlerProcess::spawn_for(&rt, DEMO).unwrap();
    assert_ne!(exit_code(&mut process).await, 0, "{}", process.output_text());
    let output = process.stderr_text();
    assert!(output.contains(r#"bound to name "getOrder", which the blueprint does not declare"#), "{output}");
    assert!(output.contains("demo::get_order (examples/registry-demo/src/bin/demo.rs:"), "{output}");
    assert!(output.contains("it declares: addNote, countHits, createDraft, createOrder, echo,"), "{output}");
}

#[tokio::test]
async fn a_name_whose_tag_does_not_fit_its_path_stops_the_application_before_ready() {
    // `getOrder` takes one `Path` value; this blueprint gives its name a
    // route of two parameters.
    let rt = demo_blueprint(&["getOrder"]).handler("getOrder", "GET::/orders/{id}/lines/{line}").bind().await.unwrap();
    let mut process = HandlerProcess::spawn_for(&rt, DEMO).unwrap();
    assert_ne!(exit_code(&mut process).await, 0, "{}", process.output_text());
    let output = process.stderr_text();
    assert!(
        output.contains(r#"bound to name "getOrder", whose tag in the blueprint is GET::/orders/{id}/lines/{line}, and cannot serve it"#),
        "{output}"
    );
    assert!(output.contains("demo::get_order (examples/registry-demo/src/bin/demo.rs:"), "{output}");
}

#[tokio::test]
async fn two_functions_with_one_tag_are_a_startup_error_naming_both() {
    let rt = TestRuntime::builder().handler("listOrders", "GET::/orders").bind().await.unwrap();
    let mut process = HandlerProcess::spawn_for(&rt, DUPLICATE_TAGS).unwrap();
    assert_ne!(exit_code(&mut process).await, 0, "{}", process.output_text());
    let output = process.stderr_text();
    let file = "examples/registry-demo/src/bin/duplicate_tags.rs";
    let expected = format!(
        "two handlers are registered for GET::/orders: duplicate_tags::list_orders ({file}:7) and duplicate_tags::list_orders_again ({file}:12)"
    );
    assert!(output.contains(&expected), "expected {expected:?} in:\n{output}");
    // Refused before connecting.
    match rt.accept_timeout(Duration::from_millis(300)).await {
        Err(Error::Timeout { .. }) => {}
        other => panic!("duplicate_tags should not have connected: {other:?}"),
    }
}

#[tokio::test]
async fn a_malformed_tag_given_to_the_explicit_api_is_refused_before_connecting_with_the_attributes_words() {
    // The sentence `#[http_handler("get::orders")]` fails to compile with.
    let attribute = celerity_tags::parse_tag(celerity_tags::TagKind::Http, "get::orders").unwrap_err();
    let file = "examples/registry-demo/src/bin/malformed_tag.rs";
    let expected = format!("handler malformed_tag::list_orders ({file}:12) has the tag \"get::orders\": {attribute}");

    let rt = TestRuntime::builder().handler("listOrders", "GET::/orders").bind().await.unwrap();
    let mut process = HandlerProcess::spawn_for(&rt, MALFORMED_TAG).unwrap();
    assert_ne!(exit_code(&mut process).await, 0, "{}", process.output_text());
    let output = process.stderr_text();
    assert!(output.contains(&expected), "expected {expected:?} in:\n{output}");
    match rt.accept_timeout(Duration::from_millis(300)).await {
        Err(Error::Timeout { .. }) => {}
        other => panic!("malformed_tag should not have connected: {other:?}"),
    }

    // Nor does it print a manifest declaring a tag the runtime would refuse.
    let mut process = HandlerProcess::command(MALFORMED_TAG).envs(rt.env()).arg("--manifest").spawn().unwrap();
    assert_ne!(exit_code(&mut process).await, 0, "{}", process.output_text());
    assert!(process.stdout_text().is_empty(), "{}", process.output_text());
    assert!(process.stderr_text().contains(&expected), "{}", process.output_text());
}

/// Runs `binary` against a runtime, then with `--manifest`: both must exit
/// non-zero before connecting, saying `expected` on stderr.
async fn refused_at_startup(binary: &str, expected: &str) {
    let rt = TestRuntime::builder().handler("h", "GET::/h").bind().await.unwrap();
    let mut process = HandlerProcess::spawn_for(&rt, binary).unwrap();
    assert_ne!(exit_code(&mut process).await, 0, "{}", process.output_text());
    assert!(process.stderr_text().contains(expected), "expected {expected:?} in:\n{}", process.output_text());
    match rt.accept_timeout(Duration::from_millis(300)).await {
        Err(Error::Timeout { .. }) => {}
        other => panic!("{binary} should not have connected: {other:?}"),
    }
    let mut process = HandlerProcess::command(binary).envs(rt.env()).arg("--manifest").spawn().unwrap();
    assert_ne!(exit_code(&mut process).await, 0, "{}", process.output_text());
    assert!(process.stdout_text().is_empty(), "{}", process.output_text());
    assert!(process.stderr_text().contains(expected), "expected {expected:?} in:\n{}", process.output_text());
}

#[tokio::test]
async fn state_the_application_never_provided_stops_it_at_startup_naming_the_handler_and_type() {
    let file = "examples/registry-demo/src/bin/missing_state.rs";
    let expected = format!(
        "handler missing_state::count_hits ({file}:11) takes State<missing_state::Hits>, which the application never provided: give it with App::state"
    );
    refused_at_startup(MISSING_STATE, &expected).await;
}

#[tokio::test]
async fn a_guard_never_registered_stops_the_application_at_startup_naming_the_guards_there_are() {
    let file = "examples/registry-demo/src/bin/unknown_guard.rs";
    let expected = format!(
        "handler unknown_guard::reports ({file}:9) (GET::/reports) is protected by the guard \"jwt\", which the application never registered: its guards are \"api-key\""
    );
    refused_at_startup(UNKNOWN_GUARD, &expected).await;
}

#[tokio::test]
async fn a_path_that_does_not_fit_its_route_stops_the_application_at_startup() {
    let file = "examples/registry-demo/src/bin/path_mismatch.rs";
    let expected = format!(
        "handler path_mismatch::get_line ({file}:15) cannot serve GET::/orders/{{order}}/lines/{{line}}: `Path<path_mismatch::LinePath>` reads the field(s) `item`, which the route does not have: it has 2 parameters, `order`, `line`"
    );
    refused_at_startup(PATH_MISMATCH, &expected).await;
}

#[tokio::test]
async fn a_name_that_resolves_to_a_tag_already_served_is_a_startup_error_naming_both() {
    let rt = TestRuntime::builder().handler("listOrders", "GET::/orders").bind().await.unwrap();
    let mut process = HandlerProcess::spawn_for(&rt, NAME_CLASH).unwrap();
    assert_ne!(exit_code(&mut process).await, 0, "{}", process.output_text());
    let output = process.stderr_text();
    let file = "examples/registry-demo/src/bin/name_clash.rs";
    let expected = format!(
        "two handlers serve tag GET::/orders: name_clash::list_orders ({file}:7) and name_clash::list_orders_by_name ({file}:12)"
    );
    assert!(output.contains(&expected), "expected {expected:?} in:\n{output}");
}

#[tokio::test]
async fn the_manifest_lists_tags_and_names() {
    let rt = TestRuntime::builder().bind().await.unwrap();
    let mut process = HandlerProcess::command(DEMO).envs(rt.env()).arg("--manifest").spawn().unwrap();
    assert_eq!(exit_code(&mut process).await, 0, "{}", process.output_text());
    let manifest: Value = serde_json::from_str(&process.stdout_text()).unwrap();
    let handlers = manifest["handlers"].as_array().unwrap();
    assert_eq!(handlers.len(), 13, "{manifest:#}");
    let by_name: Vec<&Value> = handlers.iter().filter(|h| h.get("name").is_some()).collect();
    assert_eq!(by_name.len(), 2, "{manifest:#}");
    assert_eq!(by_name[0]["name"], "getOrder");
    assert_eq!(by_name[0]["kind"], "http");
    assert_eq!(by_name[0]["function"], "demo::get_order");
    assert_eq!(by_name[0]["maxConcurrent"], 4);
    assert!(by_name[0].get("tag").is_none(), "{manifest:#}");
    assert_eq!(by_name[1]["name"], "nightlyCleanup");
    assert_eq!(by_name[1]["kind"], "schedule");
    let version = handlers.iter().find(|h| h["tag"] == "GET::/version").expect("the library's handler");
    assert_eq!(version["function"], "registry_demo::version");
    assert_eq!(version["file"], "examples/registry-demo/src/lib.rs");
    let tags: Vec<&str> = handlers.iter().filter_map(|h| h["tag"].as_str()).collect();
    assert!(tags.contains(&"GET::/files/{*path}"), "{tags:?}");
    assert!(tags.contains(&"source::orders-queue::processOrders"), "{tags:?}");
    assert!(tags.is_sorted(), "{tags:?}");
    assert!(rt.accept_timeout(Duration::from_millis(300)).await.is_err(), "the manifest run connected");
}

#[test]
fn the_manifest_piped_into_a_reader_that_stops_early_exits_quietly() {
    // The reading end is closed before the binary writes, as `| head -0` would.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let output = std::process::Command::new(DEMO)
        .arg("--manifest")
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{:?}: {stderr}", output.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[tokio::test]
async fn started_by_hand_without_a_runtime_it_says_at_once_what_it_waits_for() {
    let socket = std::env::temp_dir().join(format!("celerity-absent-{}.sock", std::process::id()));
    let mut process = HandlerProcess::command(DEMO)
        .env("CELERITY_RUNTIME_SOCKET", &socket)
        .env("CELERITY_CONNECT_TIMEOUT_MS", "60000")
        .spawn()
        .unwrap();
    let expected = format!(
        "waiting up to 60.0 s (CELERITY_CONNECT_TIMEOUT_MS) for the Celerity runtime at unix:{}",
        socket.display()
    );
    // Well inside the connect timeout: the notice comes at the first failed attempt.
    assert!(process.wait_for_output(&expected, EXIT_WAIT).await, "{}", process.output_text());
    assert!(process.stderr_text().contains("`celerity-dev run "), "{}", process.output_text());
    assert!(process.stdout_text().is_empty(), "{}", process.output_text());
    process.kill().await.unwrap();
}
