//! `State<T>` injected for every call, or for one.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::App;
use crate::consumer::RawRecord;
use crate::testing::{TestApp, TestBatch, TestRequest};
use crate::{Error, State};

struct Counter {
    n: AtomicU32,
}

async fn count(counter: State<Counter>) -> String {
    (counter.n.fetch_add(1, Ordering::SeqCst) + 1).to_string()
}

#[tokio::test]
async fn state_is_shared_by_every_call() {
    let app = App::new()
        .without_compiled_handlers()
        .http("POST::/count", count)
        .state(Counter { n: AtomicU32::new(0) })
        .into_test();
    for expected in ["1", "2", "3"] {
        assert_eq!(app.call("POST::/count", TestRequest::post("/count")).await.expect_http().text(), expected);
    }
}

#[tokio::test]
async fn state_given_to_one_call_replaces_the_app_s_for_that_call() {
    let app = App::new()
        .without_compiled_handlers()
        .http("POST::/count", count)
        .state(Counter { n: AtomicU32::new(0) })
        .into_test();
    let call = app.call("POST::/count", TestRequest::post("/count")).state(Counter { n: AtomicU32::new(41) });
    assert_eq!(call.await.expect_http().text(), "42");
    assert_eq!(app.call("POST::/count", TestRequest::post("/count")).await.expect_http().text(), "1");
}

#[tokio::test]
#[should_panic(
    expected = "takes State<celerity::testing::tests::state::Counter>, which the application never provided"
)]
async fn missing_state_stops_the_call_as_it_stops_the_application() {
    let app = App::new().without_compiled_handlers().http("POST::/count", count).into_test();
    let _ = app.call("POST::/count", TestRequest::post("/count")).await;
}

#[tokio::test]
async fn state_given_to_the_call_alone_is_enough() {
    async fn record(_record: RawRecord, _limit: State<u32>) -> Result<(), Error> {
        Ok(())
    }
    let app = App::new().without_compiled_handlers().consumer("source::q::p", record).into_test();
    let result = app.call("source::q::p", TestBatch::new().record("m-1", "{}")).state(5u32).await.expect_batch();
    assert!(result.is_success());
    let app = App::new().without_compiled_handlers().consumer("source::q::p", record).state(5u32).into_test();
    assert!(app.call("source::q::p", TestBatch::new().record("m-1", "{}")).await.expect_batch().is_success());
}

#[tokio::test]
async fn from_app_carries_the_apps_state() {
    struct Greeting(&'static str);
    async fn hello(greeting: State<Greeting>) -> &'static str {
        greeting.0.0
    }
    let app = crate::App::new().without_compiled_handlers().state(Greeting("hi from state")).http("GET::/hello", hello);
    let response = TestApp::from_app(app).call("GET::/hello", TestRequest::get("/hello")).await.expect_http();
    assert_eq!(response.text(), "hi from state");
}
