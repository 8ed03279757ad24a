//! tower-http layers around HTTP handlers, unchanged, with effects a caller
//! sees; and what crosses them: bodies, statuses, non-HTTP answers.

use std::time::Duration;

use celerity::App;
use celerity::http::{HeaderValue, Json, Method, StatusCode, header};
use celerity::testing::TestRequest;
use tower_http::auth::AddAuthorizationLayer;
use tower_http::compression::CompressionLayer;
use tower_http::cors::CorsLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::validate_request::ValidateRequestHeaderLayer;

async fn hello() -> &'static str {
    "hello"
}

#[tokio::test]
async fn set_response_header_adds_a_header_to_every_response() {
    let app = App::new()
        .without_compiled_handlers()
        .http_layer(SetResponseHeaderLayer::overriding(header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .http("GET::/hello", hello)
        .into_test();
    let response = app.call("GET::/hello", TestRequest::get("/hello")).await.expect_http();
    assert_eq!((response.text(), response.header("cache-control")), ("hello", Some("no-store")));
    assert_eq!(response.header("content-type"), Some("text/plain; charset=utf-8"));
}

#[tokio::test]
async fn a_bearer_check_answers_401_without_the_handler() {
    // Deprecated by tower-http as too simple for real use, which it is; it
    // is here as a layer that answers on its own.
    #[allow(deprecated)]
    let bearer = ValidateRequestHeaderLayer::bearer("s3cret");
    let app = App::new().without_compiled_handlers().http("GET::/hello", hello).http_layer(bearer).into_test();
    let refused = app.call("GET::/hello", TestRequest::get("/hello")).await.expect_http();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let allowed = app
        .call("GET::/hello", TestRequest::get("/hello").header("authorization", "Bearer s3cret"))
        .await
        .expect_http();
    assert_eq!((allowed.status(), allowed.text()), (StatusCode::OK, "hello"));
}

#[tokio::test]
async fn a_layer_may_change_the_request_the_handler_sees() {
    async fn echo_auth(headers: celerity::http::HeaderMap) -> String {
        headers[header::AUTHORIZATION].to_str().unwrap().to_string()
    }
    let app = App::new()
        .without_compiled_handlers()
        .http_layer(AddAuthorizationLayer::bearer("t-1"))
        .http("GET::/me", echo_auth)
        .into_test();
    assert_eq!(app.call("GET::/me", TestRequest::get("/me")).await.expect_http().text(), "Bearer t-1");
}

#[tokio::test(start_paused = true)]
async fn a_timeout_answers_before_the_events_own_deadline() {
    async fn slow() -> &'static str {
        tokio::time::sleep(Duration::from_secs(5)).await;
        "late"
    }
    let app = App::new()
        .without_compiled_handlers()
        .http_layer(TimeoutLayer::with_status_code(StatusCode::SERVICE_UNAVAILABLE, Duration::from_millis(200)))
        .http("GET::/slow", slow)
        .into_test();
    let response =
        app.call("GET::/slow", TestRequest::get("/slow")).deadline_in(Duration::from_secs(30)).await.expect_http();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test]
async fn compression_follows_accept_encoding() {
    async fn big() -> String {
        "a compressible line of text\n".repeat(200)
    }
    let app = App::new()
        .without_compiled_handlers()
        .http_layer(CompressionLayer::new().gzip(true))
        .http("GET::/big", big)
        .into_test();
    let plain = app.call("GET::/big", TestRequest::get("/big")).await.expect_http();
    assert_eq!((plain.header("content-encoding"), plain.body().len()), (None, 5600));
    let gzipped = app.call("GET::/big", TestRequest::get("/big").header("accept-encoding", "gzip")).await.expect_http();
    assert_eq!(gzipped.header("content-encoding"), Some("gzip"));
    assert_eq!(&gzipped.body()[..2], [0x1f, 0x8b], "a gzip stream");
    assert!(gzipped.body().len() < 200, "{} bytes", gzipped.body().len());
}

#[tokio::test]
async fn a_body_limit_refuses_a_large_request() {
    async fn take(body: celerity::Bytes) -> String {
        body.len().to_string()
    }
    let app = App::new()
        .without_compiled_handlers()
        .http_layer(RequestBodyLimitLayer::new(16))
        .http("POST::/upload", take)
        .into_test();
    let small = app.call("POST::/upload", TestRequest::post("/upload").body("tiny")).await.expect_http();
    assert_eq!(small.text(), "4");
    let large = app.call("POST::/upload", TestRequest::post("/upload").body(vec![b'x'; 64])).await.expect_http();
    assert_eq!(large.status(), StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn cors_answers_a_preflight_and_marks_responses() {
    let cors = CorsLayer::new()
        .allow_origin(HeaderValue::from_static("https://shop.example"))
        .allow_methods([Method::GET, Method::POST]);
    let app = App::new()
        .without_compiled_handlers()
        .http_layer(cors)
        .http("POST::/orders", || async { (StatusCode::CREATED, "made") })
        .into_test();
    let preflight = TestRequest::new(Method::OPTIONS, "/orders")
        .header("origin", "https://shop.example")
        .header("access-control-request-method", "POST");
    let response = app.call("POST::/orders", preflight).await.expect_http();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.header("access-control-allow-origin"), Some("https://shop.example"));
    assert!(response.header("access-control-allow-methods").unwrap().contains("POST"));
    let made = app
        .call("POST::/orders", TestRequest::post("/orders").header("origin", "https://shop.example"))
        .await
        .expect_http();
    assert_eq!(
        (made.status(), made.header("access-control-allow-origin")),
        (StatusCode::CREATED, Some("https://shop.example"))
    );
}

#[tokio::test]
async fn what_crosses_the_layers_keeps_its_path_query_headers_and_errors() {
    #[derive(serde::Deserialize)]
    struct Page {
        page: u32,
    }
    async fn list(
        celerity::http::Path(id): celerity::http::Path<String>,
        celerity::http::Query(page): celerity::http::Query<Page>,
    ) -> ([(&'static str, &'static str); 1], Json<(String, u32)>) {
        ([("set-cookie", "a=1")], Json((id, page.page)))
    }
    async fn broken() -> celerity::Result<()> {
        Err(celerity::Error::msg("the store is down"))
    }
    let app = App::new()
        .without_compiled_handlers()
        .http_layer(SetResponseHeaderLayer::appending(header::SET_COOKIE, HeaderValue::from_static("b=2")))
        .http("GET::/customers/{id}/orders", list)
        .http("GET::/broken", broken)
        .into_test();
    let response = app
        .call("GET::/customers/{id}/orders", TestRequest::get("/customers/a%2520b/orders").query("page", "3"))
        .await
        .expect_http();
    assert_eq!(response.json::<(String, u32)>(), ("a%20b".to_string(), 3));
    assert_eq!(response.header_all("set-cookie"), ["a=1", "b=2"]);
    // A handler's error reaches the runtime as the error it was.
    let error = app.call("GET::/broken", TestRequest::get("/broken")).await.expect_error();
    assert_eq!(error.message(), "the store is down");
}
