//! Guards, in-process through `celerity::testing`, which runs them as
//! production does: allow with an identity, deny in each kind's shape, fail
//! as an error, and the startup checks.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use celerity::App;
use celerity::guard::{GuardRequest, Identity, Verdict};
use celerity::http::StatusCode;
use celerity::testing::{TestApp, TestInvocation, TestMessage, TestRequest};
use celerity::{HandlerKey, Registration};
use serde_json::Value;

#[derive(Debug)]
struct Caller {
    user: String,
}

/// Allows `Bearer good` as ada, forbids `Bearer guest`, and refuses the rest.
async fn token(request: GuardRequest) -> Result<Verdict, celerity::Error> {
    Ok(match request.bearer_token() {
        Ok(Some("good")) => Verdict::allow_as(Caller { user: "ada".to_string() }),
        Ok(Some("guest")) => Verdict::forbidden("guests may not read reports"),
        Ok(Some(_)) => Verdict::unauthorized("the token is not valid"),
        Ok(None) => Verdict::unauthorized("a bearer token is required"),
        Err(ambiguous) => ambiguous,
    })
}

async fn reports(caller: Identity<Caller>) -> String {
    format!("reports for {}", caller.user)
}

fn application() -> App {
    App::new()
        .without_compiled_handlers()
        .guard("token", token)
        .register(Registration::http(HandlerKey::Tag("GET::/reports".into()), reports).guard("token"))
}

fn app() -> TestApp {
    application().into_test()
}

#[tokio::test]
async fn an_allowed_request_reaches_the_handler_with_its_identity() {
    let request = TestRequest::get("/reports").header("authorization", "Bearer good");
    let response = app().call("GET::/reports", request).await.expect_http();
    assert_eq!((response.status(), response.text()), (StatusCode::OK, "reports for ada"));
}

#[tokio::test]
async fn a_denied_request_is_a_401_or_403_with_the_reason() {
    let response = app().call("GET::/reports", TestRequest::get("/reports")).await.expect_http();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(response.json::<Value>()["message"], "a bearer token is required");
    let request = TestRequest::get("/reports").header("authorization", "Bearer guest");
    let response = app().call("GET::/reports", request).await.expect_http();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(response.json::<Value>()["message"], "guests may not read reports");
}

#[tokio::test]
async fn a_guard_that_fails_or_panics_is_an_error_never_an_allow() {
    let called = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&called);
    let handler = move || {
        let seen = Arc::clone(&seen);
        async move {
            seen.fetch_add(1, Ordering::SeqCst);
            "reached"
        }
    };
    let app = App::new()
        .without_compiled_handlers()
        .guard("down", |_request: GuardRequest| async {
            Err::<Verdict, _>(celerity::Error::msg("the key store is down"))
        })
        .guard("broken", |_request: GuardRequest| async {
            if true {
                panic!("the guard broke");
            }
            Ok::<_, celerity::Error>(Verdict::allow())
        })
        .register(Registration::http(HandlerKey::Tag("GET::/a".into()), handler.clone()).guard("down"))
        .register(Registration::http(HandlerKey::Tag("GET::/b".into()), handler).guard("broken"))
        .into_test();
    let error = app.call("GET::/a", TestRequest::get("/a")).await.expect_error();
    assert_eq!(
        (error.error_type(), error.message()),
        ("GuardFailed", "the guard `down` failed: the key store is down")
    );
    let error = app.call("GET::/b", TestRequest::get("/b")).await.expect_error();
    assert!(error.is_panic(), "{error:?}");
    assert_eq!(called.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn every_guard_named_must_allow_in_order() {
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let noting = |name: &'static str, verdict: fn() -> Verdict| {
        let order = Arc::clone(&order);
        move |_request: GuardRequest| {
            order.lock().unwrap().push(name);
            async move { Ok::<_, celerity::Error>(verdict()) }
        }
    };
    let app = App::new()
        .without_compiled_handlers()
        .guard("first", noting("first", Verdict::allow))
        .guard("second", noting("second", || Verdict::forbidden("no")))
        .guard("third", noting("third", Verdict::allow))
        .register(
            Registration::http(HandlerKey::Tag("GET::/x".into()), || async { "x" })
                .guard("first")
                .guard("second")
                .guard("third"),
        )
        .into_test();
    let response = app.call("GET::/x", TestRequest::get("/x")).await.expect_http();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(*order.lock().unwrap(), ["first", "second"]);
}

#[tokio::test]
async fn a_websocket_message_or_custom_invocation_is_refused_in_its_own_shape() {
    let deny = |_request: GuardRequest| async { Ok::<_, celerity::Error>(Verdict::unauthorized("not a member")) };
    let app = App::new()
        .without_compiled_handlers()
        .guard("members", deny)
        .register(Registration::websocket(HandlerKey::Tag("event::chat".into()), || async {}).guard("members"))
        .register(Registration::custom(HandlerKey::Tag("custom::quote".into()), || async { "1" }).guard("members"))
        .into_test();
    let ack = app.call("event::chat", TestMessage::text("hi")).await.expect_ack();
    assert_eq!(ack.error_message(), Some("not a member"));
    let result = app.call("custom::quote", TestInvocation::empty()).await.expect_custom();
    assert_eq!(result.error_message(), Some("not a member"));
}

#[tokio::test]
async fn a_guard_sees_the_request() {
    let seen = Arc::new(std::sync::Mutex::new(None));
    let keep = Arc::clone(&seen);
    let app = App::new()
        .without_compiled_handlers()
        .guard("look", move |request: GuardRequest| {
            *keep.lock().unwrap() = Some(request);
            async { Ok::<_, celerity::Error>(Verdict::allow()) }
        })
        .register(Registration::http(HandlerKey::Tag("POST::/orders/{id}".into()), || async {}).guard("look"))
        .into_test();
    let request = TestRequest::post("/orders/7").query("dry", "1").header("x-a", "1").request_id("req-7");
    app.call("POST::/orders/{id}", request).await.expect_http();
    let request = seen.lock().unwrap().take().unwrap();
    assert_eq!(request.kind(), celerity::HandlerKind::Http);
    assert_eq!(request.tag(), "POST::/orders/{id}");
    assert_eq!(
        (request.method().unwrap().as_str(), request.path(), request.route()),
        ("POST", Some("/orders/7"), Some("/orders/{id}"))
    );
    assert_eq!(
        (request.header("x-a"), request.query().get("dry"), request.request_id()),
        (Some("1"), Some("1"), Some("req-7"))
    );
}

#[test]
#[should_panic(
    expected = "is protected by the guard \"jwt\", which the application never registered: its guards are \"token\""
)]
fn a_guard_never_registered_is_refused_naming_the_handler_and_the_guards_there_are() {
    let app = application()
        .register(Registration::http(HandlerKey::Tag("GET::/other".into()), || async {}).guard("jwt"))
        .into_test();
    drop(app.call("GET::/other", TestRequest::get("/other")));
}

#[test]
#[should_panic(expected = "the guard \"token\" is registered twice")]
fn a_guard_registered_twice_is_refused() {
    drop(application().guard("token", token).into_test().call("GET::/reports", TestRequest::get("/reports")));
}

#[test]
#[should_panic(expected = "consumer events carry no caller to authorise")]
fn a_guard_on_a_consumer_is_refused() {
    let app = application()
        .register(Registration::consumer(HandlerKey::Tag("source::q::p".into()), || async {}).guard("token"))
        .into_test();
    drop(app.call("GET::/reports", TestRequest::get("/reports")));
}

#[test]
#[should_panic(expected = "takes Identity<guards::Caller>, but no guard protects it")]
fn an_identity_without_a_guard_is_refused() {
    let app = App::new().without_compiled_handlers().http("GET::/reports", reports).into_test();
    drop(app.call("GET::/reports", TestRequest::get("/reports")));
}
