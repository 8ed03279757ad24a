//! Calling handlers by tag, by name and by function.

use serde::Deserialize;

use crate::http::{HttpError, Json, Path, Query};
use crate::registry::{HandlerKey, Registration};
use crate::testing::{Event, TestApp, TestRequest, call_http};
use crate::{App, Context};

#[derive(Debug, Deserialize, serde::Serialize, PartialEq)]
struct Order {
    id: u64,
    note: Option<String>,
}

async fn get_order(Path(id): Path<u64>, Query(query): Query<NoteQuery>) -> Result<Json<Order>, HttpError> {
    if id == 0 {
        return Err(HttpError::not_found("no such order"));
    }
    Ok(Json(Order { id, note: query.note }))
}

#[derive(Deserialize)]
struct NoteQuery {
    note: Option<String>,
}

async fn echo(cx: Context, Json(order): Json<Order>) -> Json<serde_json::Value> {
    Json(serde_json::json!({ "tag": cx.tag(), "id": cx.event_id(), "order": order.id }))
}

#[tokio::test]
async fn a_handler_is_called_by_its_tag() {
    let app = App::new().without_compiled_handlers().http("GET::/orders/{id}", get_order).into_test();
    let response = app.call("GET::/orders/{id}", TestRequest::get("/orders/42?note=rush")).await.expect_http();
    assert_eq!(response.status(), 200);
    assert_eq!(response.header("content-type"), Some("application/json"));
    assert_eq!(response.json::<Order>(), Order { id: 42, note: Some("rush".into()) });

    let response = app.call("GET::/orders/{id}", TestRequest::get("/orders/0")).await.expect_http();
    assert_eq!(response.status(), 404);
    let response = app.call("GET::/orders/{id}", TestRequest::get("/orders/x")).await.expect_http();
    assert_eq!(response.status(), 400);
    assert!(response.text().contains("id"), "{}", response.text());
}

#[tokio::test]
async fn the_context_carries_the_tag_and_an_id_per_call() {
    let app = App::new().without_compiled_handlers().http("POST::/orders", echo).into_test();
    let request = || TestRequest::post("/orders").json(&Order { id: 7, note: None });
    let first: serde_json::Value = app.call("POST::/orders", request()).await.expect_http().json();
    let second: serde_json::Value = app.call("POST::/orders", request()).await.expect_http().json();
    assert_eq!(first["tag"], "POST::/orders");
    assert_eq!(first["order"], 7);
    assert_ne!(first["id"], second["id"]);
    let chosen: serde_json::Value = app.call("POST::/orders", request()).id("ev-9").await.expect_http().json();
    assert_eq!(chosen["id"], "ev-9");
}

#[tokio::test]
async fn a_handler_bound_by_name_is_called_by_that_name() {
    let app = App::new()
        .without_compiled_handlers()
        .register(Registration::http(HandlerKey::Name("getOrder".into()), get_order))
        .into_test();
    let response = app.call("getOrder", TestRequest::get("/orders/5").route("/orders/{id}")).await.expect_http();
    assert_eq!(response.json::<Order>().id, 5);
}

#[tokio::test]
async fn an_unknown_tag_is_answered_as_the_sdk_answers_it() {
    let app = App::new().without_compiled_handlers().http("GET::/orders/{id}", get_order).into_test();
    let error = app.call("GET::/nope", TestRequest::get("/nope")).await.expect_error();
    assert_eq!(error.error_type(), "UnknownHandlerTag");
    assert_eq!(error.message(), r#"no handler in this process serves tag "GET::/nope""#);
}

#[test]
#[should_panic(expected = "two handlers are registered for GET::/orders/{id}")]
fn duplicate_tags_are_refused_as_the_app_refuses_them() {
    let app = App::new()
        .without_compiled_handlers()
        .http("GET::/orders/{id}", get_order)
        .http("GET::/orders/{id}", get_order)
        .into_test();
    let _ = app.call("GET::/orders/{id}", TestRequest::get("/orders/1"));
}

#[tokio::test]
async fn an_app_s_handlers_are_taken_over() {
    let app = App::new().without_compiled_handlers().http("GET::/orders/{id}", get_order);
    let app = TestApp::from_app(app);
    assert_eq!(app.registrations().len(), 1);
    let response = app.call("GET::/orders/{id}", TestRequest::get("/orders/3")).await.expect_http();
    assert_eq!(response.json::<Order>().id, 3);
}

#[test]
fn the_compiled_registry_is_collected() {
    // This test binary registers nothing with the attributes; the doctests
    // of `celerity::testing` show `TestApp::new` with them.
    assert_eq!(TestApp::new().registrations().len(), crate::registry::compiled().len());
}

#[tokio::test]
async fn a_function_is_called_through_extraction_and_response() {
    let response = call_http(get_order, TestRequest::get("/orders/9").route("/orders/{id}")).await.expect_http();
    assert_eq!(response.json::<Order>().id, 9);
    let response = call_http(echo, TestRequest::post("/orders").body("{")).await.expect_http();
    assert_eq!(response.status(), 400);
    // The tag is made up from the request.
    let response = call_http(echo, TestRequest::post("/orders").json(&Order { id: 1, note: None })).await;
    assert_eq!(response.expect_http().json::<serde_json::Value>()["tag"], "POST::/orders");
    // The SDK's own request builders work as events.
    let request =
        crate::http::Request::new(http::Method::GET, "/orders/4").with_route("/orders/{id}").with_path_param("id", "4");
    assert_eq!(call_http(get_order, request).await.expect_http().json::<Order>().id, 4);
}

#[tokio::test]
async fn a_plain_function_can_still_be_called_directly() {
    let Json(order) = get_order(Path(2), Query(NoteQuery { note: None })).await.unwrap();
    assert_eq!(order.id, 2);
}

#[tokio::test]
async fn a_dispatch_with_no_source_is_answered_with_wrong_source() {
    let app = App::new().without_compiled_handlers().http("GET::/orders/{id}", get_order).into_test();
    let event = Event::from_dispatch(Default::default());
    let error = app.call("GET::/orders/{id}", event).await.expect_error();
    assert_eq!(error.error_type(), "WrongEventSource");
}

#[tokio::test]
async fn a_call_is_lazy_until_awaited() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&calls);
    let handler = move || {
        let seen = Arc::clone(&seen);
        async move {
            seen.fetch_add(1, Ordering::SeqCst);
        }
    };
    let app = App::new().without_compiled_handlers().http("GET::/", handler).into_test();
    let call = app.call("GET::/", TestRequest::get("/"));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!(call.await.expect_http().status(), 204);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_tag_is_matched_as_the_runtime_sends_it() {
    async fn file(Path(path): Path<Vec<String>>) -> String {
        path.join("/")
    }
    let app = App::new().without_compiled_handlers().http("GET::/files/{path+}", file).into_test();
    for tag in ["GET::/files/{path+}", "GET::/files/{*path}"] {
        let outcome = app.call(tag, TestRequest::get("/files/a%2Fb/c")).await;
        assert_eq!(outcome.expect_http().text(), "a/b/c", "called as {tag}");
    }
}

#[tokio::test]
#[should_panic(expected = "has the tag \"get::orders\": the HTTP method in a tag is upper case")]
async fn a_malformed_tag_stops_the_call_as_it_stops_the_application() {
    async fn orders() {}
    let _ = App::new()
        .without_compiled_handlers()
        .http("get::orders", orders)
        .into_test()
        .call("get::orders", TestRequest::get("/orders"))
        .await;
}
