//! Panics are answered as the driver answers them: a fixed text by default,
//! the message (and stack) with `TestApp::expose_panics`.

use crate::App;
use crate::consumer::RawRecord;
use crate::custom::{Custom, Invocation};
use crate::pipeline::FromEvent;
use crate::testing::{TestBatch, TestRequest, TestTrigger};
use crate::{Context, Error};

async fn later() -> &'static str {
    tokio::task::yield_now().await;
    panic!("later {}", 7)
}

#[tokio::test]
async fn a_panic_after_an_await_is_a_handler_error_of_type_panic_with_a_fixed_text() {
    let app = App::new().without_compiled_handlers().http("GET::/", later).into_test();
    let error = app.call("GET::/", TestRequest::get("/")).await.expect_error();
    assert_eq!((error.error_type(), error.message(), error.stack()), ("panic", "the handler panicked", ""));
}

#[tokio::test]
async fn with_the_opt_in_the_message_and_stack_are_in_the_answer() {
    let app = App::new().without_compiled_handlers().http("GET::/", later).into_test().expose_panics(true);
    let error = app.call("GET::/", TestRequest::get("/")).await.expect_error();
    assert_eq!((error.error_type(), error.message()), ("panic", "later 7"));
    assert!(!error.stack().is_empty(), "the stack goes with the opt-in");
    // The choice is the app's: another one still hides it.
    let other = App::new().without_compiled_handlers().http("GET::/", later).into_test();
    assert_eq!(other.call("GET::/", TestRequest::get("/")).await.expect_error().message(), "the handler panicked");
}

#[tokio::test]
async fn a_panic_with_a_payload_that_is_not_text() {
    async fn odd() {
        std::panic::panic_any(42u8)
    }
    for expose in [false, true] {
        let app =
            App::new().without_compiled_handlers().schedule("source::s::h", odd).into_test().expose_panics(expose);
        let error = app.call("source::s::h", TestTrigger::new()).await.expect_error();
        assert_eq!(error.message(), "the handler panicked");
    }
}

/// An argument whose extraction panics, before the handler's future exists.
struct Explodes;

impl FromEvent<Custom> for Explodes {
    fn from_event(_invocation: &mut Invocation, _cx: &Context) -> Result<Self, Error> {
        panic!("no future for you")
    }
}

#[tokio::test]
async fn a_panic_while_building_the_future_is_answered_too() {
    async fn never(_explodes: Explodes) {}
    let app = App::new().without_compiled_handlers().custom("custom::t", never).into_test();
    let error = app.call("custom::t", crate::testing::TestInvocation::empty()).await.expect_error();
    assert_eq!((error.error_type(), error.message()), ("panic", "the handler panicked"));
    let error = app.expose_panics(true).call("custom::t", crate::testing::TestInvocation::empty()).await.expect_error();
    assert_eq!((error.error_type(), error.message()), ("panic", "no future for you"));
}

async fn process(record: RawRecord) -> Result<(), Error> {
    if record.message_id() == "m-2" {
        tokio::task::yield_now().await;
        panic!("bad record");
    }
    Ok(())
}

fn batch() -> TestBatch {
    TestBatch::new().record("m-1", "{}").record("m-2", "{}").record("m-3", "{}")
}

#[tokio::test]
async fn a_panicking_record_fails_alone() {
    let app = App::new().without_compiled_handlers().consumer("source::q::p", process).into_test();
    let result = app.call("source::q::p", batch()).await.expect_batch();
    assert_eq!(result.failed_ids(), ["m-2"]);
    assert_eq!(result.failure("m-2"), Some("panicked"));
    let result = app.expose_panics(true).call("source::q::p", batch()).await.expect_batch();
    assert_eq!(result.failure("m-2"), Some("panicked: bad record"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_record_run_on_a_task_of_its_own_is_answered_the_same() {
    let app = App::new().without_compiled_handlers().consumer_concurrent("source::q::p", 3, process).into_test();
    let result = app.call("source::q::p", batch()).await.expect_batch();
    assert_eq!((result.failed_ids(), result.failure("m-2")), (vec!["m-2"], Some("panicked")));
    let result = app.expose_panics(true).call("source::q::p", batch()).await.expect_batch();
    assert_eq!(result.failure("m-2"), Some("panicked: bad record"));
}
