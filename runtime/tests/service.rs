//! A tower service, an axum `Router` above all, served as HTTP handlers:
//! what reaches it, what comes back, and the SDK's layers, guards, panic
//! handling and size limit around it.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use axum::extract::{Extension, Path, Query};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{AppendHeaders, IntoResponse};
use axum::routing::{get, post};
use axum::{Json, Router};
use bytes::Bytes;
use celerity::guard::{GuardRequest, Verdict};
use celerity::http::Body;
use celerity::layer::{self, Answer, Event, Next};
use celerity::settings::Settings;
use celerity::testing::{TestApp, TestRequest};
use celerity::{App, Context, HandlerKey, HandlerKind, Registration};
use celerity_testkit::proto::v1::result::Outcome;
use celerity_testkit::{TestRuntime, event};
use http_body::Frame;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize)]
struct Search {
    q: String,
    #[serde(default)]
    page: u32,
}

fn router() -> Router {
    Router::new()
        .route("/files/{name}", get(|Path(name): Path<String>| async move { name }))
        .route(
            "/search",
            get(|Query(search): Query<Search>| async move { format!("{} page {}", search.q, search.page) }),
        )
        .route("/echo", post(|Json(value): Json<Value>| async move { Json(json!({"echo": value})) }))
        .route(
            "/cookies",
            get(|| async { (AppendHeaders([("set-cookie", "a=1"), ("set-cookie", "b=2")]), "two cookies") }),
        )
        .route("/event", get(|Extension(cx): Extension<Context>| async move { cx.tag().to_string() }))
        .route("/headers", get(|headers: HeaderMap| async move { headers["x-trace"].to_str().unwrap().to_string() }))
        .route("/teapot", get(|| async { StatusCode::IM_A_TEAPOT.into_response() }))
        .route("/panic", get(broken))
}

async fn broken() -> &'static str {
    panic!("the router broke")
}

const TAGS: [&str; 8] = [
    "GET::/files/{name}",
    "GET::/search",
    "POST::/echo",
    "GET::/cookies",
    "GET::/event",
    "GET::/headers",
    "GET::/teapot",
    "GET::/panic",
];

fn app() -> TestApp {
    App::new().without_compiled_handlers().service(TAGS, router()).into_test()
}

#[tokio::test]
async fn axum_routes_from_the_raw_path_and_reads_the_query_and_body() {
    let app = app();
    // The raw path keeps its encoding; axum decodes the parameter once.
    let file = app.call("GET::/files/{name}", TestRequest::get("/files/a%20b")).await.expect_http();
    assert_eq!((file.status(), file.text()), (StatusCode::OK, "a b"));
    let found = app.call("GET::/search", TestRequest::get("/search?q=tea+pot&page=2")).await.expect_http();
    assert_eq!(found.text(), "tea pot page 2");
    let echoed = app
        .call(
            "POST::/echo",
            TestRequest::post("/echo").header("content-type", "application/json").body(r#"{"a":[1,2]}"#),
        )
        .await
        .expect_http();
    assert_eq!(echoed.json::<Value>(), json!({"echo": {"a": [1, 2]}}));
    let traced = app.call("GET::/headers", TestRequest::get("/headers").header("x-trace", "t-9")).await.expect_http();
    assert_eq!(traced.text(), "t-9");
}

#[tokio::test]
async fn axum_rejections_and_statuses_reach_the_caller_as_axum_wrote_them() {
    let app = app();
    let missing = app.call("GET::/search", TestRequest::get("/search")).await.expect_http();
    assert_eq!(missing.status(), StatusCode::BAD_REQUEST);
    assert!(missing.text().contains("missing field `q`"), "{}", missing.text());
    let not_json = app.call("POST::/echo", TestRequest::post("/echo").body("{}")).await.expect_http();
    assert_eq!(not_json.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let teapot = app.call("GET::/teapot", TestRequest::get("/teapot")).await.expect_http();
    assert_eq!(teapot.status(), StatusCode::IM_A_TEAPOT);
}

#[tokio::test]
async fn every_value_of_a_repeated_header_comes_back() {
    let response = app().call("GET::/cookies", TestRequest::get("/cookies")).await.expect_http();
    assert_eq!(response.header_all("set-cookie"), ["a=1", "b=2"]);
    assert_eq!(response.text(), "two cookies");
}

#[tokio::test]
async fn the_events_context_is_in_the_requests_extensions() {
    let response = app().call("GET::/event", TestRequest::get("/event")).await.expect_http();
    assert_eq!(response.text(), "GET::/event");
}

#[tokio::test]
async fn a_panic_in_the_service_is_answered_as_a_handlers_panic() {
    let error = app().call("GET::/panic", TestRequest::get("/panic")).await.expect_error();
    assert!(error.message().contains("panicked"), "{error:?}");
}

#[tokio::test]
async fn a_service_error_is_a_handler_error() {
    let failing = tower::service_fn(|_request: http::Request<Body>| async {
        Err::<http::Response<Body>, _>(std::io::Error::other("the upstream is down"))
    });
    let app = App::new().without_compiled_handlers().service(["GET::/down"], failing).into_test();
    let error = app.call("GET::/down", TestRequest::get("/down")).await.expect_error();
    assert!(error.message().contains("the upstream is down"), "{error:?}");
}

#[tokio::test]
async fn the_applications_layers_and_a_registrations_guard_wrap_the_service() {
    let stamped = layer::from_fn(|event: Event, next: Next| async move {
        let answer = next.run(event).await;
        let status = answer.http_status().map(|status| status.as_u16());
        Answer::http(format!("layer saw {status:?}"))
    });
    let app = App::new()
        .without_compiled_handlers()
        .layer(stamped)
        .guard("key", |request: GuardRequest| async move {
            Ok::<_, celerity::Error>(match request.header("x-key") {
                Some("k") => Verdict::allow(),
                _ => Verdict::unauthorized("an x-key header is required"),
            })
        })
        .register(Registration::service(HandlerKey::Tag("GET::/files/{name}".into()), router()).guard("key"))
        .into_test();
    let refused = app.call("GET::/files/{name}", TestRequest::get("/files/x")).await.expect_http();
    assert_eq!(refused.text(), "layer saw Some(401)");
    let allowed = app.call("GET::/files/{name}", TestRequest::get("/files/x").header("x-key", "k")).await.expect_http();
    assert_eq!(allowed.text(), "layer saw Some(200)");
}

#[test]
fn each_tag_is_a_registration_of_an_http_handler_and_a_malformed_one_is_refused() {
    let app = App::new().without_compiled_handlers().service(["GET::/a", "POST::/b/{rest+}"], router());
    let registrations = app.registrations();
    let keys: Vec<_> = registrations.iter().map(|r| (r.key().clone(), r.kind())).collect();
    assert_eq!(
        keys,
        [
            (HandlerKey::Tag("GET::/a".into()), HandlerKind::Http),
            (HandlerKey::Tag("POST::/b/{*rest}".into()), HandlerKind::Http)
        ]
    );
    assert!(registrations[0].origin_info().file.ends_with("service.rs"), "{:?}", registrations[0].origin_info());

    let error = celerity::testing::block_on(App::new().without_compiled_handlers().service(["orders"], router()).run())
        .unwrap_err();
    assert!(error.message().contains("orders"), "{error}");
}

/// A body that never ends.
struct Endless;

impl http_body::Body for Endless {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, _cx: &mut TaskContext<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(&[b'x'; 4096])))))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_the_socket_a_body_past_the_message_limit_is_an_error_not_cut_short() {
    let runtime = TestRuntime::builder()
        .handler("endless", "GET::/endless")
        .handler("files", "GET::/files/{name}")
        .bind()
        .await
        .unwrap();
    let socket = runtime.socket_path().unwrap().to_string_lossy().into_owned();
    let settings = Settings::from_lookup(|name| match name {
        "CELERITY_RUNTIME_SOCKET" => Some(socket.clone()),
        "CELERITY_MAX_MESSAGE_BYTES" => Some("65536".to_string()),
        _ => None,
    })
    .unwrap();
    let endless =
        tower::service_fn(|_request: http::Request<Body>| async { Ok::<_, Infallible>(http::Response::new(Endless)) });
    let app = App::new()
        .without_compiled_handlers()
        .service(["GET::/endless"], endless)
        .service(["GET::/files/{name}"], router())
        .settings(settings);
    let served = tokio::spawn(app.run());
    let conn = runtime.accept().await.unwrap().accepted().unwrap();

    let result = conn.call(event::http("GET", "/endless")).await.unwrap();
    let Some(Outcome::Error(error)) = &result.outcome else { panic!("expected a HandlerError, got {result:?}") };
    assert!(error.message.contains("larger than the 65536 bytes"), "{error:?}");
    let result = conn.call(event::http("GET", "/files/report.txt").route("/files/{name}")).await.unwrap();
    let Some(Outcome::Http(response)) = &result.outcome else { panic!("expected a response, got {result:?}") };
    assert_eq!((response.status, response.body.as_ref()), (200, b"report.txt".as_ref()));

    conn.assert_no_violations();
    conn.drain_in(Duration::from_secs(5)).unwrap();
    tokio::time::timeout(Duration::from_secs(10), served).await.unwrap().unwrap().unwrap();
}
