//! `orders` as AWS Lambda runs it: the real binary, started with exactly
//! the environment Lambda and a Celerity deployment give each function (the
//! deploy transformer's variables, `DeployedFunction`), served by the test
//! kit's local Lambda Runtime API, with the payloads AWS sends (the
//! fixtures `aws_lambda_events` ships, and `tests/fixtures/lambda/`).
//!
//! Each function is given the blueprint's datastore and bucket as a local
//! session serves them ([`common::Storage`]: a JSON file and a folder), in
//! a temporary folder of its own, so that what one function stores is
//! unknown to another, and the functions' handlers run against a datastore
//! and a bucket that keep what they write, as on AWS.

mod common;

use std::path::Path;
use std::time::Duration;

use celerity_testkit::{
    DeployedFunction, HandlerProcess, LambdaAnswer, LambdaError, LambdaInvocation, LambdaRuntimeApi, fixtures,
    lambda_fixture,
};
use serde_json::{Value, json};

use common::Storage;

const ORDERS: &str = env!("CARGO_BIN_EXE_orders");

/// Generous: the tests run on loaded machines.
const WAIT: Duration = Duration::from_secs(60);

/// One Lambda function: `orders` serving one handler, the Runtime API it
/// polls, and its datastore and bucket.
struct Function {
    api: LambdaRuntimeApi,
    process: HandlerProcess,
    storage: Storage,
}

impl Function {
    /// Starts `orders` as the function `deployed`, with `env` besides.
    async fn start(deployed: DeployedFunction, env: &[(&str, &str)]) -> Function {
        Function::start_with(deployed.env(), env).await
    }

    /// Starts `orders` as a function given `variables` of a deployment's,
    /// with a datastore and a bucket of its own: the local session's
    /// variables replace the deployment's platform (`aws`) and resources
    /// store, so that its resources are the folders rather than DynamoDB
    /// and S3.
    async fn start_with(variables: Vec<(String, String)>, env: &[(&str, &str)]) -> Function {
        let api = LambdaRuntimeApi::start().await.expect("start the Lambda Runtime API");
        let storage = Storage::new();
        let mut command = HandlerProcess::command(ORDERS).envs(api.env()).env("RUST_LOG", "info");
        for name in DeployedFunction::unset().iter().chain(Storage::unset()) {
            command = command.env_remove(name);
        }
        let process =
            command.envs(variables).envs(storage.env()).envs(env.iter().copied()).spawn().expect("spawn orders");
        Function { api, process, storage }
    }

    /// Invokes the function with `payload`, and gives back its answer.
    async fn invoke(&self, payload: impl Into<LambdaInvocation>) -> LambdaAnswer {
        match self.api.invoke(payload.into().wait(WAIT)).await {
            Some(answer) => answer,
            None => panic!("the function did not answer\n{}", self.process.output_text()),
        }
    }

    /// Checks that every invocation was answered exactly once, and stops it
    /// (a sandbox is frozen, then ended, by the platform).
    async fn finish(mut self) {
        assert_eq!(self.api.violations(), Vec::<String>::new(), "{}", self.process.output_text());
        let _ = self.process.kill().await;
    }
}

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lambda").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn payload(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).expect("JSON")
}

fn error(answer: &LambdaAnswer) -> &LambdaError {
    answer.error().unwrap_or_else(|| panic!("expected a Lambda error, got {answer:?}"))
}

fn body_json(response: &Value) -> Value {
    serde_json::from_str(response["body"].as_str().expect("a body")).expect("a JSON body")
}

#[tokio::test]
async fn an_http_api_request_is_answered_as_api_gateway_expects() {
    let function = Function::start(DeployedFunction::new("orders::http::create_order", "http"), &[]).await;
    let response = function.invoke(payload(&fixture("http-api-create-order.json"))).await.json();
    assert_eq!(response["statusCode"], 201, "{response}");
    assert_eq!(response["headers"]["content-type"], "application/json");
    assert_eq!(response["headers"]["location"], "/orders/ord-1");
    let order = body_json(&response);
    assert_eq!((order["customer"].as_str(), order["totalCents"].as_u64()), (Some("Ada"), Some(700)));
    // Kept in the function's datastore, not in its memory.
    let stored = function.storage.stored_order("ord-1").expect("the order is in the datastore");
    assert_eq!(stored["customer"], json!({"S": "Ada"}), "{stored}");

    // Validation is the handler's, answered as under the runtime.
    let mut empty = fixture("http-api-create-order.json");
    empty["body"] = json!(r#"{"customer": "Ada", "items": []}"#);
    empty["isBase64Encoded"] = json!(false);
    let response = function.invoke(payload(&empty)).await.json();
    assert_eq!(response["statusCode"], 400, "{response}");
    assert_eq!(body_json(&response)["details"][0]["path"], json!(["items"]));

    // A method the route does not serve never reaches the handler.
    let mut wrong = fixture("http-api-create-order.json");
    wrong["requestContext"]["http"]["method"] = json!("PUT");
    let response = function.invoke(payload(&wrong)).await.json();
    assert_eq!((response["statusCode"].as_u64(), response["headers"]["allow"].as_str()), (Some(405), Some("POST")));
    function.finish().await;
}

#[tokio::test]
async fn a_rest_api_request_a_missing_order_and_a_panic() {
    let function = Function::start(DeployedFunction::new("getOrder", "http"), &[("ORDERS_CHAOS", "1")]).await;
    let response = function.invoke(payload(&fixture("rest-api-get-order.json"))).await.json();
    assert_eq!(response["statusCode"], 404, "{response}");
    assert_eq!(response["multiValueHeaders"]["content-type"], json!(["application/json"]));
    assert!(body_json(&response)["message"].as_str().unwrap().contains("ord-404"), "{response}");

    // A panic is a 500, its message kept in the function's log.
    let mut chaos = fixture("rest-api-get-order.json");
    chaos["pathParameters"]["id"] = json!("chaos:panic");
    let response = function.invoke(payload(&chaos)).await.json();
    assert_eq!(
        (response["statusCode"].as_u64(), response["body"].as_str()),
        (Some(500), Some("panic: the handler panicked"))
    );
    assert!(function.process.wait_for_output("get_order was asked to panic", WAIT).await);
    // And the function goes on serving.
    let response = function.invoke(payload(&fixture("rest-api-get-order.json"))).await.json();
    assert_eq!(response["statusCode"], 404);
    function.finish().await;
}

#[tokio::test]
async fn websocket_routes_answer_with_a_status() {
    let connect = Function::start(DeployedFunction::new("onConnect", "websocket"), &[]).await;
    let response = connect.invoke(payload(&fixture("websocket-connect.json"))).await.json();
    assert_eq!(response, json!({"statusCode": 200}));
    connect.finish().await;

    // This function's datastore is its own: the order is unknown here, and
    // the failed Ack is a 500 carrying the handler's reason.
    let subscribe = Function::start(DeployedFunction::new("orders::live::subscribe", "websocket"), &[]).await;
    let response = subscribe.invoke(payload(&fixture("websocket-subscribe.json"))).await.json();
    assert_eq!(response["statusCode"], 500, "{response}");
    assert_eq!(response["body"], "cannot subscribe to order \"ord-1\": no such order");
    subscribe.finish().await;

    let disconnect = Function::start(DeployedFunction::new("live::on_disconnect", "websocket"), &[]).await;
    let response = disconnect.invoke(payload(&fixture("websocket-disconnect.json"))).await.json();
    assert_eq!(response, json!({"statusCode": 200}));
    disconnect.finish().await;
}

#[tokio::test]
async fn an_sqs_batch_is_answered_with_exactly_its_failed_records() {
    let audit =
        Function::start(DeployedFunction::new("auditOrders", "consumer").consumer_route("order-audit"), &[]).await;
    let response = audit.invoke(payload(&fixture("sqs-audit-records.json"))).await.json();
    // The record without an actor fails by its message id; the others are
    // acknowledged.
    assert_eq!(response, json!({"batchItemFailures": [{"itemIdentifier": "6f1b3c2a-0002-4d7e-9a55-2c8e4b7d1f02"}]}));
    audit.finish().await;

    let deployed =
        DeployedFunction::new("orders::events::process_order_event", "consumer").consumer_route("order-events");
    let events = Function::start(deployed, &[]).await;
    let response = events.invoke(payload(&fixture("sqs-order-events.json"))).await.json();
    let mut failed: Vec<&str> = response["batchItemFailures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["itemIdentifier"].as_str().unwrap())
        .collect();
    failed.sort();
    assert_eq!(failed, ["9c0d7e4f-0001-4b2a-8e6f-1d3c5a7b9e01", "9c0d7e4f-0002-4b2a-8e6f-1d3c5a7b9e02"]);
    events.finish().await;
}

#[tokio::test]
async fn a_batch_failed_whole_is_a_lambda_error_so_that_sqs_delivers_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let unwritable = dir.path().join("missing-dir/audit.log");
    let unwritable = unwritable.to_str().unwrap();
    let deployed = DeployedFunction::new("orders::events::audit_orders", "consumer").consumer_route("order-audit");
    let audit = Function::start(deployed, &[("ORDERS_AUDIT_LOG", unwritable)]).await;
    let answer = audit.invoke(payload(&fixture("sqs-audit-records.json"))).await;
    // The handler's error fails the batch as a whole: every message stays.
    assert_eq!(error(&answer).error_type, "Function.BatchFailed", "{answer:?}");
    assert!(audit.process.wait_for_output("audit", WAIT).await);
    audit.finish().await;
}

#[tokio::test]
async fn a_schedule_succeeds_with_null_and_fails_with_a_lambda_error() {
    let cleanup = Function::start(DeployedFunction::new("cleanupOrders", "schedule"), &[]).await;
    let answer = cleanup.invoke(payload(&fixture("eventbridge-scheduled-event.json"))).await;
    assert_eq!(answer.json(), Value::Null);
    // The rule's constant input arrives in the event's place, and is the
    // trigger's input: one that does not fit is refused, naming the field.
    let answer = cleanup.invoke(r#"{"olderThan": 60}"#).await;
    assert!(error(&answer).error_message.contains("olderThan"), "{answer:?}");
    cleanup.finish().await;

    let dir = tempfile::tempdir().unwrap();
    let unwritable = dir.path().join("missing-dir/audit.log");
    let deployed = DeployedFunction::new("orders::cleanup::cleanup_orders", "schedule");
    let failing = Function::start(deployed, &[("ORDERS_AUDIT_LOG", unwritable.to_str().unwrap())]).await;
    let answer = failing.invoke(payload(&fixture("eventbridge-scheduled-event.json"))).await;
    assert_eq!(error(&answer).error_type, "Function.ScheduleFailed", "{answer:?}");
    failing.finish().await;
}

#[tokio::test]
async fn a_custom_invocation_answers_its_output_or_its_error() {
    let quote = Function::start(DeployedFunction::new("quoteOrder", "custom"), &[]).await;
    let response = quote.invoke(payload(&fixture("custom-quote-order.json"))).await.json();
    assert_eq!((response["subtotalCents"].as_u64(), response["totalCents"].as_u64()), (Some(1000), Some(900)));

    let answer = quote.invoke(r#"{"items": [{"sku": "latte", "quantity": 1}], "coupon": "FREE"}"#).await;
    let error = error(&answer);
    assert_eq!(
        (error.error_type.as_str(), error.error_message.as_str()),
        ("Function.CustomError", "unknown coupon \"FREE\"")
    );
    // A payload that is not JSON reaches the handler, which says so.
    let answer = quote.invoke("latte, twice").await;
    assert_eq!(self::error(&answer).error_type, "Function.CustomError", "{answer:?}");
    quote.finish().await;
}

/// Every handler of `app.blueprint.yaml`: its resource name, its
/// `spec.handler` (the handlerId `orders --manifest` prints), its type and,
/// for a consumer, the route its function is given, with the tag it serves.
const BLUEPRINT: [(&str, &str, &str, Option<&str>, &str); 13] = [
    ("createOrder", "orders::http::create_order", "http", None, "POST::/orders"),
    ("listOrders", "orders::http::list_orders", "http", None, "GET::/orders"),
    ("getOrder", "orders::http::get_order", "http", None, "GET::/orders/{id}"),
    ("updateOrder", "orders::http::update_order", "http", None, "PATCH::/orders/{id}"),
    ("cancelOrder", "orders::http::cancel_order", "http", None, "DELETE::/orders/{id}"),
    ("customerOrders", "orders::http::customer_orders", "http", None, "GET::/customers/{customer}/orders"),
    ("onConnect", "orders::live::on_connect", "websocket", None, "event::$connect"),
    ("onDisconnect", "orders::live::on_disconnect", "websocket", None, "event::$disconnect"),
    ("subscribe", "orders::live::subscribe", "websocket", None, "event::subscribe"),
    (
        "processOrderEvents",
        "orders::events::process_order_event",
        "consumer",
        Some("order-events"),
        "source::order-events::processOrderEvents",
    ),
    (
        "auditOrders",
        "orders::events::audit_orders",
        "consumer",
        Some("order-audit"),
        "source::order-audit::auditOrders",
    ),
    ("cleanupOrders", "orders::cleanup::cleanup_orders", "schedule", None, "source::nightly-cleanup::cleanupOrders"),
    ("quoteOrder", "orders::quote::quote_order", "custom", None, "custom::quoteOrder"),
];

#[tokio::test]
async fn one_binary_deployed_as_every_function_serves_each_its_handler() {
    let blueprint = include_str!("../app.blueprint.yaml");
    for (name, handler_id, kind, route, tag) in BLUEPRINT {
        assert!(blueprint.contains(&format!("handler: \"{handler_id}\"")), "{name}: the blueprint has {handler_id}");
        // By the blueprint's spec.handler, and by the resource's name.
        for id in [handler_id, name] {
            let mut deployed = DeployedFunction::new(id, kind).linking_resources_of("orders");
            if let Some(route) = route {
                deployed = deployed.consumer_route(route);
            }
            let function = Function::start(deployed, &[]).await;
            assert!(function.api.wait_for_polls(1, WAIT).await, "{id}: {}", function.process.output_text());
            assert!(
                function
                    .process
                    .wait_for_output(&format!("serving on AWS Lambda: {tag} ({kind} handler {handler_id})"), WAIT)
                    .await,
                "{id}: {}",
                function.process.output_text()
            );
            function.finish().await;
        }
    }
}

#[test]
fn the_manifest_prints_each_handlers_id_as_the_blueprint_has_it() {
    let output = std::process::Command::new(ORDERS)
        .env("CELERITY_EXTRACT_MANIFEST", "1")
        .env("RUST_LOG", "error")
        .output()
        .expect("run orders");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let manifest: Value = serde_json::from_slice(&output.stdout).expect("a JSON manifest");
    let handlers = manifest["handlers"].as_array().expect("handlers");
    assert_eq!(handlers.len(), BLUEPRINT.len(), "{manifest}");
    for (name, handler_id, kind, _, tag) in BLUEPRINT {
        let entry =
            handlers.iter().find(|h| h["tag"] == tag).unwrap_or_else(|| panic!("{name}: no {tag} in {manifest}"));
        assert_eq!((entry["handlerId"].as_str(), entry["kind"].as_str()), (Some(handler_id), Some(kind)), "{name}");
    }
}

#[tokio::test]
async fn a_function_whose_id_names_no_handler_fails_its_init_listing_them() {
    // `orders` itself, as a blueprint sharing one spec.handler would say,
    // and a handler the binary lacks.
    for id in ["orders", "shipOrder"] {
        let mut function = Function::start(DeployedFunction::new(id, "http"), &[]).await;
        let error = function.api.init_error(WAIT).await.expect("an init error");
        assert_eq!(error.error_type, "Runtime.HandlerNotFound", "{error:?}");
        assert_eq!(error.header_type.as_deref(), Some("Runtime.HandlerNotFound"));
        assert!(
            error.error_message.starts_with(&format!("CELERITY_HANDLER_ID=\"{id}\" names no handler")),
            "{error:?}"
        );
        assert!(error.error_message.contains("GET::/orders/{id} (http handler orders::http::get_order)"), "{error:?}");
        let status = function.process.wait_timeout(WAIT).await.expect("orders exits");
        assert!(!status.success(), "{}", function.process.output_text());
        assert_eq!(function.api.violations(), Vec::<String>::new());
    }
}

#[tokio::test]
async fn a_function_whose_links_lack_a_resource_its_handler_takes_fails_its_init_naming_it() {
    // Links with the bucket alone: `getOrder` takes the datastore. Links
    // with the datastore alone: `processOrderEvents` takes the bucket too.
    let link = |name: &str, kind: &str| json!({name: {"type": kind, "configKey": name}}).to_string();
    let cases = [
        (DeployedFunction::new("getOrder", "http"), link("receiptsBucket", "bucket"), "ordersStore"),
        (
            DeployedFunction::new("processOrderEvents", "consumer").consumer_route("order-events"),
            link("ordersStore", "datastore"),
            "receiptsBucket",
        ),
    ];
    for (deployed, links, missing) in cases {
        let api = LambdaRuntimeApi::start().await.expect("start the Lambda Runtime API");
        let mut command = HandlerProcess::command(ORDERS).envs(api.env()).env("RUST_LOG", "info");
        for name in DeployedFunction::unset().iter().chain(Storage::unset()) {
            command = command.env_remove(name);
        }
        let mut process =
            command.env("CELERITY_RESOURCE_LINKS", links).envs(deployed.env()).spawn().expect("spawn orders");
        let error = api.init_error(WAIT).await;
        let error = error.unwrap_or_else(|| panic!("no init error\n{}", process.output_text()));
        assert_eq!(error.error_type, "Runtime.ResourceError", "{error:?}");
        assert!(error.error_message.contains(&format!("`{missing}`")), "{missing}: {error:?}");
        let status = process.wait_timeout(WAIT).await.expect("orders exits");
        assert!(!status.success(), "{}", process.output_text());
        assert_eq!(api.violations(), Vec::<String>::new());
    }
}

fn http_request(route_key: &str, method: &str, path: &str, body: Option<&Value>) -> Value {
    let mut request = lambda_fixture(fixtures::HTTP_API);
    request["routeKey"] = json!(route_key);
    request["rawPath"] = json!(path);
    request["requestContext"]["routeKey"] = json!(route_key);
    request["requestContext"]["http"]["method"] = json!(method);
    request["requestContext"]["http"]["path"] = json!(path);
    if let Some(body) = body {
        request["body"] = json!(body.to_string());
        request["headers"]["content-type"] = json!("application/json");
    }
    request
}

#[tokio::test]
async fn with_no_handler_variables_each_payload_finds_its_handler() {
    let function = Function::start_with(Vec::new(), &[]).await;
    // HTTP: by the route key, else by the method and path.
    let order = json!({"customer": "Ada", "items": [{"sku": "latte", "quantity": 1}]});
    let created = function.invoke(payload(&http_request("$default", "POST", "/orders", Some(&order)))).await.json();
    assert_eq!(created["statusCode"], 201, "{created}");
    let listed = function.invoke(payload(&http_request("GET /orders", "GET", "/orders", None))).await.json();
    assert_eq!(body_json(&listed).as_array().map(Vec::len), Some(1), "{listed}");
    let got = function.invoke(payload(&http_request("$default", "GET", "/orders/ord-1", None))).await.json();
    assert_eq!(body_json(&got)["id"], "ord-1", "{got}");
    let wrong = function.invoke(payload(&http_request("$default", "PUT", "/orders", None))).await.json();
    assert_eq!((wrong["statusCode"].as_u64(), wrong["headers"]["allow"].as_str()), (Some(405), Some("GET, POST")));
    let nowhere = function.invoke(payload(&http_request("$default", "GET", "/invoices", None))).await;
    let nowhere = error(&nowhere);
    assert_eq!(nowhere.error_type, "Runtime.UnservedEvent");
    assert!(nowhere.error_message.starts_with("an API Gateway HTTP API request GET /invoices"), "{nowhere:?}");
    assert!(nowhere.error_message.contains("POST::/orders (http)"), "{nowhere:?}");

    // WebSocket: by the route, a `$default` message by its own `event`.
    let connect = function.invoke(payload(&lambda_fixture(fixtures::WEBSOCKET_CONNECT))).await.json();
    assert_eq!(connect, json!({"statusCode": 200}));
    let mut subscribe = fixture("websocket-subscribe.json");
    subscribe["requestContext"]["routeKey"] = json!("$default");
    let subscribed = function.invoke(payload(&subscribe)).await.json();
    assert_eq!(subscribed, json!({"statusCode": 200}), "the order exists in this function");
    assert!(function.process.wait_for_output("subscribed", WAIT).await);
    let disconnect = function.invoke(payload(&lambda_fixture(fixtures::WEBSOCKET_DISCONNECT))).await.json();
    assert_eq!(disconnect, json!({"statusCode": 200}));

    // A consumer by the queue its batch came from.
    let mut audit = fixture("sqs-audit-records.json");
    for record in audit["Records"].as_array_mut().unwrap() {
        record["eventSourceARN"] = json!("arn:aws:sqs:eu-west-1:123456789012:order-audit");
    }
    let audited = function.invoke(payload(&audit)).await.json();
    assert_eq!(audited["batchItemFailures"].as_array().map(Vec::len), Some(1), "{audited}");
    let elsewhere = function.invoke(payload(&lambda_fixture(fixtures::SQS))).await;
    assert!(error(&elsewhere).error_message.starts_with("an SQS batch from \"SQSQueue\""), "{elsewhere:?}");

    // A schedule: the one there is (several would go by the event's rule).
    let mut tick = lambda_fixture(fixtures::EVENTBRIDGE_SCHEDULE);
    tick["resources"] = json!(["arn:aws:events:eu-west-1:123456789012:rule/nightly-cleanup"]);
    assert_eq!(function.invoke(payload(&tick)).await.json(), Value::Null);

    // A custom handler by the handlerName of the runtime's invoke body.
    let envelope = json!({"handlerName": "quoteOrder", "payload": {"items": [{"sku": "latte", "quantity": 2}]}});
    let quoted = function.invoke(payload(&envelope)).await.json();
    assert_eq!(quoted["subtotalCents"], 700, "{quoted}");
    // Without one, the one custom handler there is takes the payload itself.
    let unnamed = function.invoke(r#"{"items": []}"#).await;
    assert!(error(&unnamed).error_message.contains("an order has at least one item"), "{unnamed:?}");
    function.finish().await;
}

#[tokio::test]
async fn a_type_without_an_id_serves_its_handlers_of_that_type_only() {
    let variables = vec![("CELERITY_HANDLER_TYPE".to_string(), "http".to_string())];
    let function = Function::start_with(variables, &[]).await;
    let listed = function.invoke(payload(&http_request("$default", "GET", "/orders", None))).await.json();
    assert_eq!(listed["statusCode"], 200, "{listed}");
    // A payload of another kind is no event of this function's.
    let refused = function.invoke(payload(&lambda_fixture(fixtures::SQS))).await;
    let refused = error(&refused);
    assert_eq!(refused.error_type, "Runtime.InvalidEvent");
    assert!(refused.error_message.contains("serves HTTP events, and the payload is an SQS batch"), "{refused:?}");
    function.finish().await;
}

#[tokio::test]
async fn an_unknown_payload_is_a_lambda_error_never_a_made_up_http_answer() {
    let function = Function::start(DeployedFunction::new("getOrder", "http"), &[]).await;
    for unknown in [&br#"{"orderId": "ord-1"}"#[..], b"not json at all"] {
        let answer = function.invoke(unknown.to_vec()).await;
        let refused = error(&answer);
        assert_eq!(refused.error_type, "Runtime.InvalidEvent", "{answer:?}");
        assert_eq!(refused.header_type.as_deref(), Some("Runtime.InvalidEvent"));
        assert!(refused.error_message.contains("the payload is a payload of no AWS event source"), "{refused:?}");
    }
    // A REST API request is one, and is served.
    let mut rest = lambda_fixture(fixtures::REST_API);
    rest["httpMethod"] = json!("GET");
    rest["pathParameters"] = json!({"id": "ord-9"});
    let answer = function.invoke(payload(&rest)).await.json();
    assert_eq!(answer["statusCode"], 404, "{answer}");
    function.finish().await;
}

#[tokio::test]
async fn an_event_past_its_deadline_is_answered_as_timed_out_without_running() {
    let function = Function::start(DeployedFunction::new("createOrder", "http"), &[]).await;
    let late = LambdaInvocation::new(payload(&fixture("http-api-create-order.json"))).deadline_in(Duration::ZERO);
    let answer = function.invoke(late).await.json();
    assert_eq!((answer["statusCode"].as_u64(), answer["body"].as_str()), (Some(504), Some("handler timed out")));
    // Nothing was created: the next order is the first.
    let created = function.invoke(payload(&fixture("http-api-create-order.json"))).await.json();
    assert_eq!(created["headers"]["location"], "/orders/ord-1", "{created}");
    function.finish().await;

    let audit =
        Function::start(DeployedFunction::new("auditOrders", "consumer").consumer_route("order-audit"), &[]).await;
    let late = LambdaInvocation::new(payload(&fixture("sqs-audit-records.json"))).deadline_in(Duration::ZERO);
    let answer = audit.invoke(late).await;
    assert_eq!(error(&answer).error_type, "Function.DeadlineExceeded", "{answer:?}");
    audit.finish().await;
}
