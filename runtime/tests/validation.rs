//! `Valid<E>` (the `validation` feature): a value breaking its rules is
//! answered before the handler runs, in the words of its kind.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use celerity::App;
use celerity::consumer::Record;
use celerity::http::{Json, Path, Query, StatusCode};
use celerity::testing::{TestApp, TestBatch, TestInvocation, TestRequest, call_http};
use celerity::validation::Valid;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use validator::Validate;

#[derive(Debug, Serialize, Deserialize, Validate)]
struct Line {
    #[validate(length(min = 1))]
    sku: String,
    #[validate(range(min = 1, max = 100))]
    quantity: u32,
}

#[derive(Debug, Serialize, Deserialize, Validate)]
struct NewOrder {
    #[validate(email)]
    email: String,
    #[validate(length(min = 1), nested)]
    lines: Vec<Line>,
}

async fn place(Valid(Json(order)): Valid<Json<NewOrder>>) -> (StatusCode, String) {
    (StatusCode::CREATED, format!("{} lines", order.lines.len()))
}

fn order(email: &str, quantity: u32) -> Value {
    json!({"email": email, "lines": [{"sku": "a", "quantity": 1}, {"sku": "b", "quantity": quantity}]})
}

#[tokio::test]
async fn a_body_that_passes_reaches_the_handler() {
    let outcome = call_http(place, TestRequest::post("/orders").json(&order("ada@example.com", 3))).await;
    let response = outcome.expect_http();
    assert_eq!((response.status(), response.text()), (StatusCode::CREATED, "2 lines"));
}

#[tokio::test]
async fn a_body_that_breaks_rules_is_a_400_with_a_detail_per_rule_naming_each_field() {
    let outcome = call_http(place, TestRequest::post("/orders").json(&order("not-an-address", 0))).await;
    let response = outcome.expect_http();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value = response.json();
    assert_eq!(
        body,
        json!({
            "message": "the request body did not pass validation: `email` must be an email address, and one more rule",
            "details": [
                {"code": "email", "path": ["email"], "message": "must be an email address"},
                {"code": "range", "path": ["lines", 1, "quantity"], "message": "must be at least 1 and at most 100"},
            ]
        })
    );
}

#[tokio::test]
async fn a_body_that_does_not_parse_is_still_the_json_error() {
    let outcome = call_http(place, TestRequest::post("/orders").body("{")).await;
    let body: Value = outcome.expect_http().json();
    assert_eq!(body["details"][0]["code"], "malformed", "{body}");
}

#[derive(Debug, Deserialize, Validate)]
struct Page {
    #[validate(range(max = 50))]
    limit: Option<usize>,
}

#[derive(Debug, Deserialize, Validate)]
struct OrderId {
    #[validate(length(equal = 8))]
    id: String,
}

#[tokio::test]
async fn query_and_path_are_checked_the_same_way() {
    async fn list(Valid(Query(page)): Valid<Query<Page>>) -> String {
        format!("{:?}", page.limit)
    }
    async fn get(Valid(Path(order)): Valid<Path<OrderId>>) -> String {
        order.id
    }
    let app =
        App::new().without_compiled_handlers().http("GET::/orders", list).http("GET::/orders/{id}", get).into_test();

    let response = app.call("GET::/orders", TestRequest::get("/orders").query("limit", "51")).await.expect_http();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value = response.json();
    assert_eq!(body["details"], json!([{"code": "range", "path": ["limit"], "message": "must be at most 50"}]));
    assert!(body["message"].as_str().unwrap().starts_with("the query did not pass validation"), "{body}");
    let response = app.call("GET::/orders", TestRequest::get("/orders").query("limit", "7")).await.expect_http();
    assert_eq!(response.text(), "Some(7)");

    let response = app.call("GET::/orders/{id}", TestRequest::get("/orders/short")).await.expect_http();
    let body: Value = response.json();
    assert_eq!(body["details"][0]["path"], json!(["id"]), "{body}");
    assert_eq!(body["details"][0]["message"], "must have a length of exactly 8");
    let response = app.call("GET::/orders/{id}", TestRequest::get("/orders/ord-0001")).await.expect_http();
    assert_eq!(response.text(), "ord-0001");
}

#[tokio::test]
async fn a_record_that_breaks_rules_fails_on_its_own_naming_the_field() {
    let handled = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&handled);
    let app = App::new()
        .without_compiled_handlers()
        .consumer("source::orders::process", move |Valid(record): Valid<Record<Line>>| {
            let seen = Arc::clone(&seen);
            async move {
                assert!(record.value().quantity >= 1);
                seen.fetch_add(1, Ordering::SeqCst);
            }
        })
        .into_test();
    let batch = TestBatch::new()
        .json_record("m-1", &json!({"sku": "a", "quantity": 2}))
        .json_record("m-2", &json!({"sku": "", "quantity": 2}))
        .json_record("m-3", &json!({"sku": "c", "quantity": 3}));
    let result = app.call("source::orders::process", batch).await.expect_batch();
    assert_eq!(result.failed_ids(), ["m-2"]);
    let failure = result.failure("m-2").unwrap();
    assert!(
        failure.contains("the record body did not pass validation: `sku` must have a length of at least 1"),
        "{failure}"
    );
    assert_eq!(handled.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_custom_invocation_that_breaks_rules_is_an_error_answer_naming_the_field() {
    async fn reserve(Valid(Json(line)): Valid<Json<Line>>) -> Json<u32> {
        Json(line.quantity)
    }
    let app = App::new().without_compiled_handlers().custom("custom::reserve", reserve).into_test();
    let outcome = app.call("custom::reserve", TestInvocation::json(&json!({"sku": "a", "quantity": 500}))).await;
    let result = outcome.expect_custom();
    let message = result.error_message().unwrap_or_default().to_string();
    assert!(
        message.contains("the input did not pass validation: `quantity` must be at least 1 and at most 100"),
        "{result:?}"
    );
}

#[derive(Debug, Deserialize, Validate)]
struct LinePath {
    #[validate(length(max = 4))]
    sku: String,
}

/// Declared with the attribute: `Valid` arguments pass the macro's checks,
/// and the body check sees through `Valid`.
#[celerity::http_handler("PUT::/lines/{sku}")]
async fn put_line(Valid(Path(path)): Valid<Path<LinePath>>, Valid(Json(line)): Valid<Json<Line>>) -> String {
    format!("{} {}", path.sku, line.quantity)
}

#[tokio::test]
async fn attribute_handlers_take_valid_arguments() {
    let app = TestApp::new();
    let call = |path: &str, body: Value| app.call("PUT::/lines/{sku}", TestRequest::put(path).json(&body));
    let response = call("/lines/ab", json!({"sku": "ab", "quantity": 4})).await.expect_http();
    assert_eq!(response.text(), "ab 4");
    let response = call("/lines/abcdef", json!({"sku": "ab", "quantity": 4})).await.expect_http();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value = response.json();
    assert!(body["message"].as_str().unwrap().starts_with("the path did not pass validation: `sku`"), "{body}");
}
