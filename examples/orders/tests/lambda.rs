//! `orders` as AWS Lambda runs it: the real binary, started with the
//! environment Lambda and a Celerity deployment give each function, served
//! by the test kit's local Lambda Runtime API, with the payloads AWS sends
//! (`tests/fixtures/lambda/`).
//!
//! Each function serves one handler, in a process of its own, so the state
//! a handler keeps in memory is that function's alone: an order created by
//! one function is unknown to another, as on Lambda.

use std::path::Path;
use std::time::Duration;

use celerity_testkit::{HandlerProcess, LambdaAnswer, LambdaError, LambdaInvocation, LambdaRuntimeApi};
use serde_json::{Value, json};

const ORDERS: &str = env!("CARGO_BIN_EXE_orders");

/// Generous: the tests run on loaded machines.
const WAIT: Duration = Duration::from_secs(60);

/// One Lambda function: `orders` serving one handler, and the Runtime API
/// it polls.
struct Function {
    api: LambdaRuntimeApi,
    process: HandlerProcess,
}

impl Function {
    /// Starts `orders` as the function of the blueprint handler `id`,
    /// bound to `tag`, of kind `kind`, with `env` besides.
    async fn start(id: &str, tag: &str, kind: &str, env: &[(&str, &str)]) -> Function {
        let api = LambdaRuntimeApi::start().await.expect("start the Lambda Runtime API");
        let process = HandlerProcess::command(ORDERS)
            .envs(api.env())
            .env_remove("CELERITY_RUNTIME_SOCKET")
            .env_remove("CELERITY_EXPOSE_PANICS")
            .env("CELERITY_HANDLER_ID", id)
            .env("CELERITY_HANDLER_TAG", tag)
            .env("CELERITY_HANDLER_TYPE", kind)
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .spawn()
            .expect("spawn orders");
        Function { api, process }
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
    let function = Function::start("createOrder", "POST::/orders", "http", &[]).await;
    let response = function.invoke(payload(&fixture("http-api-create-order.json"))).await.json();
    assert_eq!(response["statusCode"], 201, "{response}");
    assert_eq!(response["headers"]["content-type"], "application/json");
    assert_eq!(response["headers"]["location"], "/orders/ord-1");
    let order = body_json(&response);
    assert_eq!((order["customer"].as_str(), order["totalCents"].as_u64()), (Some("Ada"), Some(700)));

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
    let function = Function::start("getOrder", "GET::/orders/{id}", "http", &[("ORDERS_CHAOS", "1")]).await;
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
    let connect = Function::start("onConnect", "event::$connect", "websocket", &[]).await;
    let response = connect.invoke(payload(&fixture("websocket-connect.json"))).await.json();
    assert_eq!(response, json!({"statusCode": 200}));
    connect.finish().await;

    // This function's store is its own: the order is unknown here, and the
    // failed Ack is a 500 carrying the handler's reason.
    let subscribe = Function::start("subscribe", "event::subscribe", "websocket", &[]).await;
    let response = subscribe.invoke(payload(&fixture("websocket-subscribe.json"))).await.json();
    assert_eq!(response["statusCode"], 500, "{response}");
    assert_eq!(response["body"], "cannot subscribe to order \"ord-1\": no such order");
    subscribe.finish().await;

    let disconnect = Function::start("onDisconnect", "event::$disconnect", "websocket", &[]).await;
    let response = disconnect.invoke(payload(&fixture("websocket-disconnect.json"))).await.json();
    assert_eq!(response, json!({"statusCode": 200}));
    disconnect.finish().await;
}

#[tokio::test]
async fn an_sqs_batch_is_answered_with_exactly_its_failed_records() {
    let audit = Function::start("auditOrders", "source::order-audit::auditOrders", "consumer", &[]).await;
    let response = audit.invoke(payload(&fixture("sqs-audit-records.json"))).await.json();
    // The record without an actor fails by its message id; the others are
    // acknowledged.
    assert_eq!(response, json!({"batchItemFailures": [{"itemIdentifier": "6f1b3c2a-0002-4d7e-9a55-2c8e4b7d1f02"}]}));
    audit.finish().await;

    let events =
        Function::start("processOrderEvents", "source::order-events::processOrderEvents", "consumer", &[]).await;
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
    let audit = Function::start(
        "auditOrders",
        "source::order-audit::auditOrders",
        "consumer",
        &[("ORDERS_AUDIT_LOG", unwritable)],
    )
    .await;
    let answer = audit.invoke(payload(&fixture("sqs-audit-records.json"))).await;
    // The handler's error fails the batch as a whole: every message stays.
    assert_eq!(error(&answer).error_type, "BatchFailed", "{answer:?}");
    assert!(audit.process.wait_for_output("audit", WAIT).await);
    audit.finish().await;
}

#[tokio::test]
async fn a_schedule_succeeds_with_null_and_fails_with_a_lambda_error() {
    let tag = "source::nightly-cleanup::cleanupOrders";
    let cleanup = Function::start("cleanupOrders", tag, "schedule", &[]).await;
    let answer = cleanup.invoke(payload(&fixture("eventbridge-scheduled-event.json"))).await;
    assert_eq!(answer.json(), Value::Null);
    // The rule's constant input arrives in the event's place, and is the
    // trigger's input: one that does not fit is refused, naming the field.
    let answer = cleanup.invoke(r#"{"olderThan": 60}"#).await;
    assert!(error(&answer).error_message.contains("olderThan"), "{answer:?}");
    cleanup.finish().await;

    let dir = tempfile::tempdir().unwrap();
    let unwritable = dir.path().join("missing-dir/audit.log");
    let failing =
        Function::start("cleanupOrders", tag, "schedule", &[("ORDERS_AUDIT_LOG", unwritable.to_str().unwrap())]).await;
    let answer = failing.invoke(payload(&fixture("eventbridge-scheduled-event.json"))).await;
    assert_eq!(error(&answer).error_type, "ScheduleFailed", "{answer:?}");
    failing.finish().await;
}

#[tokio::test]
async fn a_custom_invocation_answers_its_output_or_its_error() {
    let quote = Function::start("quoteOrder", "custom::quoteOrder", "custom", &[]).await;
    let response = quote.invoke(payload(&fixture("custom-quote-order.json"))).await.json();
    assert_eq!((response["subtotalCents"].as_u64(), response["totalCents"].as_u64()), (Some(1000), Some(900)));

    let answer = quote.invoke(r#"{"items": [{"sku": "latte", "quantity": 1}], "coupon": "FREE"}"#).await;
    let error = error(&answer);
    assert_eq!((error.error_type.as_str(), error.error_message.as_str()), ("CustomError", "unknown coupon \"FREE\""));
    // A payload that is not JSON reaches the handler, which says so.
    let answer = quote.invoke("latte, twice").await;
    assert_eq!(self::error(&answer).error_type, "CustomError", "{answer:?}");
    quote.finish().await;
}

#[tokio::test]
async fn a_function_for_a_handler_the_binary_lacks_fails_its_init_naming_what_it_has() {
    let mut function = Function::start("shipOrder", "POST::/shipments", "http", &[]).await;
    let error = function.api.init_error(WAIT).await.expect("an init error");
    assert_eq!(error.header_type.as_deref(), Some("Runtime.HandlerNotFound"));
    assert!(error.error_message.contains("CELERITY_HANDLER_ID=\"shipOrder\""), "{error:?}");
    assert!(error.error_message.contains("GET::/orders/{id}"), "names what the binary has: {error:?}");
    let status = function.process.wait_timeout(WAIT).await.expect("orders exits");
    assert!(!status.success(), "{}", function.process.output_text());
}
