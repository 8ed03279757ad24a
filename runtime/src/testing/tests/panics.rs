//! Panics are answered as the driver answers them.

use std::sync::Arc;

use celerity_proto::v1::Dispatch;

use crate::consumer::RawRecord;
use crate::handler::{Handler, HandlerFuture};
use crate::registry::{HandlerKey, HandlerKind, Origin, Registration};
use crate::testing::{TestApp, TestBatch, TestRequest, TestTrigger};
use crate::{Context, Error};

#[tokio::test]
async fn a_panic_after_an_await_is_a_handler_error_of_type_panic() {
    async fn later() -> &'static str {
        tokio::task::yield_now().await;
        panic!("later {}", 7)
    }
    let app = TestApp::empty().http("GET::/", later);
    let error = app.call("GET::/", TestRequest::get("/")).await.expect_error();
    assert_eq!((error.error_type(), error.message(), error.stack()), ("panic", "later 7", ""));
}

#[tokio::test]
async fn a_panic_with_a_payload_that_is_not_text() {
    async fn odd() {
        std::panic::panic_any(42u8)
    }
    let app = TestApp::empty().schedule("source::s::h", odd);
    let error = app.call("source::s::h", TestTrigger::new()).await.expect_error();
    assert_eq!(error.message(), "the handler panicked");
}

/// A handler whose `call` itself panics, before any future exists.
struct PanicsOnCall;

impl Handler for PanicsOnCall {
    fn call(&self, _dispatch: Dispatch, _cx: Context) -> HandlerFuture {
        panic!("no future for you")
    }
}

#[tokio::test]
async fn a_panic_while_building_the_future_is_answered_too() {
    let origin = Origin { function: "panics_on_call", file: file!(), line: line!() };
    let registration =
        Registration::new(HandlerKey::Tag("t".into()), HandlerKind::Custom, origin, Arc::new(PanicsOnCall));
    let app = TestApp::empty().register(registration);
    let error = app.call("t", crate::testing::TestInvocation::empty()).await.expect_error();
    assert_eq!((error.error_type(), error.message()), ("panic", "no future for you"));
}

#[tokio::test]
async fn a_panicking_record_fails_alone() {
    async fn process(record: RawRecord) -> Result<(), Error> {
        if record.message_id() == "m-2" {
            panic!("bad record");
        }
        Ok(())
    }
    let app = TestApp::empty().consumer("source::q::p", process);
    let batch = TestBatch::new().record("m-1", "{}").record("m-2", "{}").record("m-3", "{}");
    let result = app.call("source::q::p", batch).await.expect_batch();
    assert_eq!(result.failed_ids(), ["m-2"]);
    assert_eq!(result.failure("m-2"), Some("panicked: bad record"));
}
