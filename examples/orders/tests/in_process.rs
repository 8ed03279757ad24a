//! The application `main` serves, called in process: `orders::app()`, the
//! very value the binary hands to `#[celerity::main]`, its handlers
//! registered by their attributes, turned into a `TestApp` and driven
//! through the SDK's decoders, layers, extraction and answers without a
//! runtime or a socket. The other tests here run the binary over the real
//! protocol; these show that the application itself, built once, is what
//! both serve.
//!
//! The application takes the blueprint's datastore and bucket, and refuses
//! to serve a handler that takes one its links lack; the tests give them
//! as the SDK's in-memory stand-ins, `TestDatastore`, `TestBucket` and
//! `TestQueue`, through the application's configuration.

use celerity::HandlerKind;
use celerity::config::Configuration;
use celerity::resources::datastore::KeySchema;
use celerity::testing::{TestApp, TestBatch, TestBucket, TestDatastore, TestQueue, TestRequest};
use serde_json::{Value, json};

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
    let registrations = orders::app().into_test().registrations();
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
    let app = Resources::new().app();
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
    let resources = Resources::new();
    let app = resources.app();
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

/// The blueprint's resources, in memory: each test's own.
struct Resources {
    store: TestDatastore,
    receipts: TestBucket,
    queue: TestQueue,
}

impl Resources {
    fn new() -> Resources {
        Resources {
            store: TestDatastore::new("ordersStore", KeySchema::new("id")),
            receipts: TestBucket::new("receiptsBucket"),
            queue: TestQueue::new("order-events"),
        }
    }

    /// The application as `main` serves it, given these resources.
    fn app(&self) -> TestApp {
        let config = Configuration::builder()
            .resource("ordersStore", self.store.datastore())
            .resource("receiptsBucket", self.receipts.bucket())
            .resource("order-events", self.queue.queue())
            .build();
        orders::app().with_configuration(config).into_test()
    }

    /// The application given the datastore and the bucket, and no queue.
    fn app_without_queue(&self) -> TestApp {
        let config = Configuration::builder()
            .resource("ordersStore", self.store.datastore())
            .resource("receiptsBucket", self.receipts.bucket())
            .build();
        orders::app().with_configuration(config).into_test()
    }

    /// The order `id` as the datastore holds it.
    fn stored(&self, id: &str) -> Option<Value> {
        let items: Vec<Value> = self.store.items().expect("the datastore's items");
        items.into_iter().find(|item| item["id"] == id)
    }
}

#[tokio::test]
async fn a_placed_order_is_announced_on_the_queue_and_confirmed_when_the_announcement_comes_back() {
    let resources = Resources::new();
    let (app, queue) = (resources.app(), &resources.queue);
    let id = create(&app, "Ada").await;
    assert_eq!(id, "ord-1");
    let stored = resources.stored(&id).expect("the order is in the datastore");
    assert_eq!((&stored["customer"], &stored["status"]), (&json!("Ada"), &json!("pending")));
    // The id came from the counter the datastore keeps beside the orders.
    assert_eq!(resources.stored("#order-ids").expect("the id counter")["lastId"], 1);

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
    assert_eq!(resources.stored(&id).expect("the order is in the datastore"), confirmed);

    // Its receipt is in the bucket.
    assert_eq!(resources.receipts.keys(), [format!("receipts/{id}.txt")]);
    let receipt = resources.receipts.content(&format!("receipts/{id}.txt")).expect("a receipt");
    let receipt = String::from_utf8(receipt.to_vec()).expect("a text receipt");
    assert!(receipt.starts_with("Receipt for order ord-1\nCustomer: Ada\n"), "{receipt}");
    assert!(receipt.contains("    2 x latte        @     3.50 =      7.00\n"), "{receipt}");
    assert!(receipt.ends_with("\nTotal: 7.00\n"), "{receipt}");

    // Delivered again, it confirms nothing more, and writes the same receipt.
    let result = app.call("source::order-events::processOrderEvents", batch).await.expect_batch();
    assert!(result.failed_ids().is_empty(), "{result}");
    assert_eq!(order(&app, &id).await, confirmed);
    let again = resources.receipts.content(&format!("receipts/{id}.txt")).expect("a receipt");
    assert_eq!(String::from_utf8_lossy(&again), receipt);
}

#[tokio::test]
async fn lists_are_filtered_by_the_datastore_and_an_unreachable_one_changes_nothing() {
    let resources = Resources::new();
    let app = resources.app();
    let tagged =
        json!({"customer": "Ada Lovelace", "items": [{"sku": "latte", "quantity": 1}], "tags": ["gift", "express"]});
    let response = app.call("POST::/orders", TestRequest::post("/orders").json(&tagged)).await.expect_http();
    assert_eq!(response.status(), 201, "{response}");
    for customer in ["Grace", "Ada Lovelace"] {
        create(&app, customer).await;
    }
    let ids = |response: celerity::testing::HttpOutcome| -> Vec<String> {
        let orders: Vec<Value> = response.json();
        orders.iter().map(|order| order["id"].as_str().expect("an id").to_string()).collect()
    };
    let list = |query: &str| TestRequest::get(&format!("/orders?{query}"));
    let all = app.call("GET::/orders", TestRequest::get("/orders")).await.expect_http();
    assert_eq!(ids(all), ["ord-1", "ord-2", "ord-3"], "orders only: the id counter is not one");
    let gifts = app.call("GET::/orders", list("tag=gift&tag=express")).await.expect_http();
    assert_eq!(ids(gifts), ["ord-1"]);
    let path = "/customers/Ada%20Lovelace/orders";
    let ada = app.call("GET::/customers/{customer}/orders", TestRequest::get(path)).await.expect_http();
    assert_eq!(ids(ada), ["ord-1", "ord-3"]);

    let pay = TestRequest::patch("/orders/ord-2").json(&json!({"status": "paid"}));
    let paid = app.call("PATCH::/orders/{id}", pay).await.expect_http();
    assert_eq!(paid.status(), 200, "{paid}");
    let pending = app.call("GET::/orders", list("status=pending")).await.expect_http();
    assert_eq!(ids(pending), ["ord-1", "ord-3"]);
    let stored = resources.stored("ord-2").expect("in the datastore");
    assert_eq!((&stored["status"], &stored["version"]), (&json!("paid"), &json!(2)));

    // The datastore unreachable: reads and changes fail unhandled, and
    // nothing is changed.
    resources.store.set_unreachable(true);
    let cancel = app.call("DELETE::/orders/{id}", TestRequest::delete("/orders/ord-2")).await;
    assert!(cancel.is_error(), "{cancel:?}");
    resources.store.set_unreachable(false);
    assert_eq!(resources.stored("ord-2").expect("in the datastore")["status"], "paid");
}

#[tokio::test]
async fn without_a_queue_an_order_is_placed_unannounced() {
    let app = Resources::new().app_without_queue();
    let id = create(&app, "Ada").await;
    let fetched = order(&app, &id).await;
    assert!(fetched.get("confirmedAtMs").is_none(), "{fetched}");
}

#[tokio::test]
#[should_panic(expected = "there is no datastore named `ordersStore`")]
async fn a_handler_is_refused_where_the_links_lack_the_datastore_naming_it() {
    // The bucket and the queue, and no datastore: nothing falls back to
    // keeping orders in memory.
    let (receipts, queue) = (TestBucket::new("receiptsBucket"), TestQueue::new("order-events"));
    let config = Configuration::builder()
        .resource("receiptsBucket", receipts.bucket())
        .resource("order-events", queue.queue())
        .build();
    let app = orders::app().with_configuration(config).into_test();
    let _ = app.call("GET::/orders/{id}", TestRequest::get("/orders/ord-1")).await;
}
