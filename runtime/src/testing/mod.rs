//! Unit-testing handlers without a runtime.
//!
//! [`TestApp`] serves an [`App`](crate::App), the same value `main` serves,
//! in process: it calls a handler with an event built by a builder, and
//! gives back the outcome exactly as the runtime would receive it. Each
//! call goes through everything the SDK does around a handler: the wire
//! `Dispatch`, encoded and decoded by the decoders production uses, the
//! application's layers and guards, argument extraction, the [`Context`](crate::Context) with its
//! deadline, cancellation and state, the answer built from the return value,
//! and a panic, an overrun deadline or an ignored cancellation answered with
//! a `HandlerError`.
//!
//! For end-to-end tests of the real binary, over the real protocol and
//! socket, use the `celerity-testkit` crate: it plays the runtime's side.
//!
//! # An HTTP handler
//!
//! [`TestApp::new`] holds every handler the attribute macros registered, as
//! [`App::new`](crate::App::new) does, and [`TestApp::call`] calls one by its
//! tag. The route and path parameters of a [`TestRequest`] come from the tag
//! and the path, as the runtime sends them.
//!
//! ```rust,standalone_crate
//! use celerity::App;
//! use celerity::http::{HttpError, Json, Path};
//! use celerity::testing::{TestApp, TestRequest, block_on};
//!
//! #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
//! struct Order {
//!     id: u64,
//! }
//!
//! #[celerity::http_handler("GET::/orders/{id}")]
//! async fn get_order(Path(id): Path<u64>) -> Result<Json<Order>, HttpError> {
//!     if id == 0 {
//!         return Err(HttpError::not_found("no such order"));
//!     }
//!     Ok(Json(Order { id }))
//! }
//!
//! fn main() {
//!     let app = TestApp::new();
//!     block_on(async {
//!         let response = app.call("GET::/orders/{id}", TestRequest::get("/orders/42")).await.expect_http();
//!         assert_eq!(response.status(), 200);
//!         assert_eq!(response.header("content-type"), Some("application/json"));
//!         assert_eq!(response.json::<Order>(), Order { id: 42 });
//!
//!         let response = app.call("GET::/orders/{id}", TestRequest::get("/orders/0")).await.expect_http();
//!         assert_eq!(response.status(), 404);
//!
//!         // A bad path parameter is answered by the SDK, naming it.
//!         let response = app.call("GET::/orders/{id}", TestRequest::get("/orders/abc")).await.expect_http();
//!         assert_eq!(response.status(), 400);
//!
//!         // The attribute leaves the function as it was: call it directly too.
//!         let Json(order) = get_order(Path(7)).await.unwrap();
//!         assert_eq!(order, Order { id: 7 });
//!     });
//! }
//! ```
//!
//! # A consumer with a partial failure
//!
//! A [`TestBatch`] holds records with the ids the runtime gives them; the
//! [`BatchResult`] names the ones that failed, as the runtime receives it.
//!
//! ```rust,standalone_crate
//! use celerity::App;
//! use celerity::consumer::Record;
//! use celerity::testing::{TestApp, TestBatch, block_on};
//!
//! #[derive(serde::Deserialize)]
//! struct OrderPlaced {
//!     id: u64,
//!     quantity: u32,
//! }
//!
//! #[celerity::consumer("source::orders-queue::processOrders")]
//! async fn process(order: Record<OrderPlaced>) -> celerity::Result<()> {
//!     if order.quantity == 0 {
//!         return Err(celerity::Error::msg(format!("order {} has no items", order.id)));
//!     }
//!     Ok(())
//! }
//!
//! fn main() {
//!     let batch = TestBatch::new()
//!         .record("m-1", r#"{"id": 1, "quantity": 0}"#)
//!         .record("m-2", r#"{"id": 2, "quantity": 3}"#)
//!         .record("m-3", r#"{"id": 3}"#);
//!     let outcome = block_on(TestApp::new().call("source::orders-queue::processOrders", batch));
//!
//!     let result = outcome.expect_batch();
//!     assert_eq!(result.failed_ids(), ["m-1", "m-3"]);
//!     assert_eq!(result.failure("m-1"), Some("order 1 has no items"));
//!     assert!(result.failure("m-3").unwrap().contains("quantity"), "names the missing field");
//!     assert_eq!(result.failure("m-2"), None);
//! }
//! ```
//!
//! # Calling a handler
//!
//! - **By tag**: [`App::into_test`](crate::App::into_test) serves an
//!   application as `main` builds it (with [`App::new`](crate::App::new),
//!   the compile-time registry and whatever is added to it; with
//!   [`App::without_compiled_handlers`](crate::App::without_compiled_handlers),
//!   only what is added), and [`TestApp::new`] is `App::new().into_test()`.
//!   A handler bound by blueprint name is called by that name.
//! - **By function**: an attribute re-emits its function unchanged, so a
//!   test can call it as the plain `async fn` it is, with the arguments
//!   built by hand. To go through extraction and the answer as the runtime
//!   would, use [`call_http`], [`call_websocket`], [`call_consumer`],
//!   [`call_consumer_batch`], [`call_schedule`] or [`call_custom`], which
//!   take any handler function, annotated or not.
//!
//! Calls are `async`: await them in `#[tokio::test]`, or use [`block_on`] in
//! a plain `#[test]`.
//!
//! # Events
//!
//! [`TestRequest`], [`TestBatch`], [`TestMessage`], [`TestTrigger`] and
//! [`TestInvocation`] build the wire event, one builder per kind: the same
//! builders the `celerity-testkit` crate sends over a socket (its `event`
//! module starts them, and `build()` makes the whole `Dispatch`). Each
//! carries what the dispatch does beside its source too: id, deadline,
//! trace context. The SDK's own event types
//! (`http::Request`, `consumer::Batch`, `websocket::Message`,
//! `schedule::Trigger`, `custom::Invocation`) and the wire types are events
//! too. [`Event`] adds what the dispatch carries beside the source: id,
//! deadline, trace context.
//!
//! # Outcomes
//!
//! An [`Outcome`] is the `Result.outcome` the runtime would receive:
//! [`HttpOutcome`] (status, every header value, body), [`BatchResult`]
//! (the failed records by id, with their messages), [`Ack`],
//! [`CustomResult`] or [`HandlerError`]. `expect_http()`, `expect_batch()`,
//! ... take the expected one and panic, saying what came instead, otherwise.
//! A panic in a handler is caught and answered with a `HandlerError` of type
//! `panic`, as the SDK answers the runtime: with a fixed text, unless the
//! panic's message is asked for with [`TestApp::expose_panics`] (the SDK's
//! `CELERITY_EXPOSE_PANICS`):
//!
//! ```
//! use celerity::App;
//! use celerity::testing::{TestApp, TestRequest, block_on};
//!
//! async fn broken() -> &'static str {
//!     panic!("out of coffee")
//! }
//!
//! let app = App::new().without_compiled_handlers().http("GET::/coffee", broken).into_test();
//! let error = block_on(app.call("GET::/coffee", TestRequest::get("/coffee"))).expect_error();
//! assert!(error.is_panic());
//! assert_eq!(error.message(), "the handler panicked");
//!
//! let app = app.expose_panics(true);
//! let error = block_on(app.call("GET::/coffee", TestRequest::get("/coffee"))).expect_error();
//! assert_eq!(error.message(), "out of coffee");
//! ```
//!
//! # Deadlines and cancellation
//!
//! A deadline set on the call ([`Call::deadline_in`]) is the handler's: its
//! cancellation fires when it passes, and a handler still running one cancel
//! grace later is answered for with a `HandlerError` of type
//! `DeadlineExceeded`. [`Call::cancel_after`], or [`CallHandle::cancel`] on a
//! [started](Call::start) call, cancel it with a reason as a runtime
//! `Cancel` does (`Cancelled` after the grace). Timers run on tokio's clock,
//! so `tokio::time::pause()` makes them instant.
//!
//! ```
//! use std::time::Duration;
//! use celerity::App;
//! use celerity::testing::{TestRequest, block_on};
//! use celerity::{CancelReason, Context};
//!
//! async fn report(cx: Context) -> String {
//!     tokio::select! {
//!         _ = tokio::time::sleep(Duration::from_secs(60)) => "done".to_string(),
//!         reason = cx.cancelled() => format!("stopped: {reason}"),
//!     }
//! }
//!
//! async fn stubborn() -> &'static str {
//!     tokio::time::sleep(Duration::from_secs(60)).await;
//!     "too late"
//! }
//!
//! let app = App::new()
//!     .without_compiled_handlers()
//!     .http("GET::/report", report)
//!     .http("GET::/stubborn", stubborn)
//!     .into_test()
//!     .cancel_grace(Duration::from_millis(20));
//! block_on(async {
//!     let outcome = app.call("GET::/report", TestRequest::get("/report")).deadline_in(Duration::from_millis(10)).await;
//!     assert_eq!(outcome.expect_http().text(), "stopped: deadline exceeded");
//!
//!     let outcome = app.call("GET::/stubborn", TestRequest::get("/stubborn")).deadline_in(Duration::from_millis(10)).await;
//!     assert!(outcome.expect_error().is_deadline_exceeded());
//!
//!     let call = app.call("GET::/report", TestRequest::get("/report")).start();
//!     call.cancel(CancelReason::CallerGone);
//!     assert_eq!(call.await.expect_http().text(), "stopped: caller gone");
//! });
//! ```
//!
//! # State
//!
//! The application's [`App::state`](crate::App::state) is every handler's
//! `State<T>`; [`Call::state`] gives one to a single call.
//!
//! ```
//! use celerity::App;
//! use celerity::State;
//! use celerity::testing::{TestApp, TestRequest, block_on};
//!
//! struct Store {
//!     name: &'static str,
//! }
//!
//! async fn which(store: State<Store>) -> &'static str {
//!     store.name
//! }
//!
//! let app = App::new().without_compiled_handlers().http("GET::/store", which).state(Store { name: "main" }).into_test();
//! let outcome = block_on(app.call("GET::/store", TestRequest::get("/store")));
//! assert_eq!(outcome.expect_http().text(), "main");
//! let outcome = block_on(app.call("GET::/store", TestRequest::get("/store")).state(Store { name: "other" }));
//! assert_eq!(outcome.expect_http().text(), "other");
//! ```
//!
//! # WebSocket sends
//!
//! A handler's WebSocket sends go to the [`WsRecorder`] of its
//! [`TestApp`] ([`TestApp::ws`]) instead of a runtime: each `WsSend` is
//! recorded, with the id of the event that made it, and answered with the
//! `WsSendAck` the test scripts ([`WsAnswer`]: success, failures by index or
//! connection, no answer at all, a disconnect, after a delay). What a
//! handler asks of its [`AppHandle`](crate::AppHandle) (withhold, resume,
//! resize, shut down) is recorded too: [`TestApp::app_requests`].

mod app;
#[cfg(feature = "bucket")]
mod bucket;
#[cfg(feature = "cache")]
mod cache;
#[cfg(feature = "cache")]
mod cache_memory;
mod consumer;
mod custom;
#[cfg(feature = "datastore")]
mod datastore;
mod envelope;
mod event;
mod functions;
mod http;
#[cfg(messaging)]
mod messaging;
mod outcome;
mod schedule;
#[cfg(feature = "jwt")]
mod token;
mod websocket;
mod ws_send;

#[cfg(test)]
mod tests;

use std::future::IntoFuture;

pub use app::{AppRequest, Call, CallHandle, TestApp};
#[cfg(feature = "bucket")]
pub use bucket::TestBucket;
#[cfg(feature = "cache")]
pub use cache::TestCache;
pub use consumer::TestBatch;
pub use custom::TestInvocation;
#[cfg(feature = "datastore")]
pub use datastore::TestDatastore;
pub use event::Event;
pub use functions::{call_consumer, call_consumer_batch, call_custom, call_http, call_schedule, call_websocket};
pub use http::TestRequest;
#[cfg(feature = "queue")]
pub use messaging::TestQueue;
#[cfg(feature = "topic")]
pub use messaging::TestTopic;
pub use outcome::{Ack, BatchResult, CustomResult, HandlerError, HttpOutcome, Outcome};
pub use schedule::TestTrigger;
#[cfg(feature = "jwt")]
pub use token::TestToken;
pub use websocket::{TEST_CONNECTION_ID, TestMessage};
pub use ws_send::{RecordedSend, WsAnswer, WsRecorder, WsReply};

/// Runs `future` (a [`Call`], or any future) to completion on a new
/// single-threaded tokio runtime with time and I/O enabled: for calling
/// handlers from a plain `#[test]` or a doctest.
///
/// # Panics
///
/// When called inside a tokio runtime (use `.await` there), or when the
/// runtime cannot be built.
pub fn block_on<F: IntoFuture>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|error| panic!("could not start a tokio runtime: {error}"))
        .block_on(future.into_future())
}
