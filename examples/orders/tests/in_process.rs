//! The application `main` serves, called in process: `orders::app()`, the
//! very value the binary hands to `#[celerity::main]`, its handlers
//! registered by their attributes, turned into a `TestApp` and driven
//! through the SDK's decoders, layers, extraction and answers without a
//! runtime or a socket. The other tests here run the binary over the real
//! protocol; these show that the application itself, built once, is what
//! both serve.

use celerity::HandlerKind;
use celerity::config::Configuration;
use celerity::testing::{TestApp, TestBatch, TestQueue, TestRequest};
use serde_json::{Value, json};

/// The application as `main` serves it, for one test.
fn orders() -> TestApp {
    orders::app().into_test()
}

/// Creates an order for `customer` over HTTP, and gives back its id.
async fn create(app: &TestApp, customer: &str) -> String {
    let order = json!({"customer": customer, "items": [{"sku": "latte", "quantity": 2}]});
    let response = app.call("POST::/orders", TestRequest::post("/orders").json(&order)).await.expect_http();
    assert_eq!(response.status(), 201, "{response}");
    response.json::<Value>()["id"].as_str().expect("an id").to_string()
}

/// The order `id`, as `GET /orders/{id}` reads it.
async fn order(app: &TestApp, id: &str) -> Value {
    let response = app.call("GET::/orders/{id}", TestRequest::get(&format!("/orders/{id}"))).await.expect_http();
    assert_eq!(response.status(), 200, "{response}");
    response.json()
}

/// The status of the order `id`, as `GET /orders/{id}` reads it.
async fn status_of(app: &TestApp, id: &str) -> String {
    let response = app.call("GET::/orders/{id}", TestRequest::get(&format!("/orders/{id}"))).await.expect_http();
    assert_eq!(response.status(), 200, "{response}");
    response.json::<Value>()["status"].as_str().expect("a status").to_string()
}

#[test]
fn the_application_serves_every_handler_its_attributes_declare() {
    let registrations = orders().registrations();
    let count = |kind| registrations.iter().filter(|registration| registration.kind() == kind).count();
    assert_eq!(registrations.len(), 13, "every attribute's handler, and nothing else");
    assert_eq!(
        [HandlerKind::Http, HandlerKind::Consumer, HandlerKind::Schedule, HandlerKind::Custom, HandlerKind::WebSocket]
            .map(count),
        [6, 2, 1, 1, 3]
    );
}

#[tokio::test]
async fn an_order_created_over_http_is_read_back_and_a_bad_one_is_refused_naming_its_fields() {
    let app = orders();
    let order = json!({"customer": "Ada", "items": [{"sku": "latte", "quantity": 2}], "tags": ["gift"]});
    let created = app.call("POST::/orders", TestRequest::post("/orders").json(&order)).await.expect_http();
    assert_eq!(created.status(), 201, "{created}");
    assert_eq!(created.header("location"), Some("/orders/ord-1"));
    let body: Value = created.json();
    assert_eq!((body["status"].clone(), body["totalCents"].clone()), (json!("pending"), json!(700)));

    // The same application, and so the same store, answers the read.
    let fetched = app.call("GET::/orders/{id}", TestRequest::get("/orders/ord-1")).await.expect_http();
    assert_eq!(fetched.status(), 200, "{fetched}");
    assert_eq!(fetched.json::<Value>(), body);

    let bad = json!({"customer": "", "items": [{"sku": "tea", "quantity": 0}]});
    let refused = app.call("POST::/orders", TestRequest::post("/orders").json(&bad)).await.expect_http();
    assert_eq!(refused.status(), 400, "{refused}");
    let text = refused.text();
    for field in ["customer", "sku", "quantity"] {
        assert!(text.contains(field), "the 400 names {field}: {text}");
    }
    let missing = app.call("GET::/orders/{id}", TestRequest::get("/orders/ord-2")).await.expect_http();
    assert_eq!(missing.status(), 404, "nothing but ord-1 was created: {missing}");
}

#[tokio::test]
async fn order_events_change_what_the_http_api_reads_and_a_bad_record_fails_alone() {
    let app = orders();
    let first = create(&app, "Ada").await;
    let second = create(&app, "Grace").await;
    let event = |id: &str, kind: &str| json!({"orderId": id, "type": kind});
    let batch = TestBatch::new()
        .source_id("order-events")
        .json_record("m-1", &event(&first, "paid"))
        .json_record("m-2", &event("ord-404", "paid"))
        .json_record("m-3", &event(&second, "cancelled"))
        .record("m-4", "not json");
    let result = app.call("source::order-events::processOrderEvents", batch).await.expect_batch();
    assert_eq!(result.failed_ids(), ["m-2", "m-4"], "{result}");
    assert!(result.failure("m-2").expect("m-2 failed").contains("ord-404"), "{result}");

    assert_eq!(status_of(&app, &first).await, "paid");
    assert_eq!(status_of(&app, &second).await, "cancelled");
}

#[tokio::test]
async fn a_placed_order_is_announced_on_the_queue_and_confirmed_when_the_announcement_comes_back() {
    let queue = TestQueue::new("order-events");
    let config = Configuration::builder().resource("order-events", queue.queue()).build();
    let app = orders::app().with_configuration(config).into_test();
    let id = create(&app, "Ada").await;

    let sent = queue.take();
    assert_eq!(sent.len(), 1, "one announcement per order");
    let body: Value = serde_json::from_slice(sent[0].body()).expect("a JSON announcement");
    assert_eq!(body, json!({"orderId": id, "type": "placed"}));
    assert_eq!(sent[0].attributes().get("type").map(String::as_str), Some("placed"));

    // What the queue's consumer is given, the announcement as it was sent.
    assert!(order(&app, &id).await.get("confirmedAtMs").is_none());
    let batch = TestBatch::new().source_id("order-events").record("m-1", sent[0].body().clone());
    let result = app.call("source::order-events::processOrderEvents", batch.clone()).await.expect_batch();
    assert!(result.failed_ids().is_empty(), "{result}");
    let confirmed = order(&app, &id).await;
    assert!(confirmed["confirmedAtMs"].is_u64(), "{confirmed}");
    assert_eq!(confirmed["version"], 2, "{confirmed}");

    // Delivered again, it confirms nothing more.
    let result = app.call("source::order-events::processOrderEvents", batch).await.expect_batch();
    assert!(result.failed_ids().is_empty(), "{result}");
    assert_eq!(order(&app, &id).await, confirmed);
}

#[tokio::test]
async fn without_a_queue_an_order_is_placed_unannounced() {
    let app = orders();
    let id = create(&app, "Ada").await;
    let fetched = order(&app, &id).await;
    assert!(fetched.get("confirmedAtMs").is_none(), "{fetched}");
}
