//! `Dispatch` frames, one builder per kind of source.
//!
//! The builders are the SDK's own test events (`celerity::testing`'s
//! `TestRequest`, `TestBatch`, `TestMessage`, `TestTrigger` and
//! `TestInvocation`): an event is built once, the same way, whether a test
//! sends it over a socket here or calls a handler in process there. The
//! functions here start one with what the runtime fills in: the handler tag
//! in the runtime's exact form, `timestamp_ms` (now, when built),
//! `deadline_unix_ms` (60 s after it is built, the runtime's default handler
//! timeout) and fresh message ids. The common setters are the same on every
//! builder: `id`, `tag`, `timestamp_ms`, `deadline_in`, `deadline_at`,
//! `deadline_unix_ms`, `no_deadline`, `trace_context`, `traceparent`. Each
//! builder turns into a [`Dispatch`](celerity_proto::v1::Dispatch) with `build()` or `into()`, so it can be
//! passed straight to [`Connection::dispatch`](crate::Connection::dispatch).
//! The id is left empty unless set; the connection assigns one when
//! dispatching.
//!
//! ```
//! use celerity_testkit::event;
//! let d = event::http("POST", "/orders/42/items")
//!     .route("/orders/{id}/items")
//!     .path_param("id", "42")
//!     .header("Content-Type", "application/json")
//!     .body(r#"{"sku":"a"}"#)
//!     .build();
//! assert_eq!(d.handler_tag, "POST::/orders/{id}/items");
//! ```

use std::time::Duration;

use bytes::Bytes;
use celerity::testing::{TestBatch, TestInvocation, TestMessage, TestRequest, TestTrigger};
use celerity_proto::v1::ConsumerRecord;

use crate::ids;
use crate::runtime::DEFAULT_HANDLER_TIMEOUT_MS;

#[cfg(test)]
mod tests;

/// An HTTP request event.
pub type HttpEvent = TestRequest;
/// A consumer batch event.
pub type ConsumerEvent = TestBatch;
/// A WebSocket message event.
pub type WebSocketEvent = TestMessage;
/// A schedule trigger event.
pub type ScheduleEvent = TestTrigger;
/// A custom invocation event.
pub type CustomEvent = TestInvocation;

/// The deadline every event starts with: the runtime's default handler
/// timeout after it is built.
fn default_deadline() -> Duration {
    Duration::from_millis(DEFAULT_HANDLER_TIMEOUT_MS.unsigned_abs())
}

/// Starts an HTTP request event. `method` is sent as given (the runtime sends
/// upper case); `path` is the raw request path (a query string after `?`
/// becomes the query parameters), and also the route unless
/// [`route`](HttpEvent::route) sets it; tag `{METHOD}::{route}`.
pub fn http(method: impl AsRef<str>, path: impl AsRef<str>) -> HttpEvent {
    TestRequest::new(method, path).deadline_in(default_deadline())
}

/// Starts a consumer batch from source `source_id` for handler
/// `handler_name`; tag `source::{source_id}::{handler_name}`.
pub fn consumer(source_id: impl Into<String>, handler_name: impl AsRef<str>) -> ConsumerEvent {
    let source_id = source_id.into();
    let tag = format!("source::{source_id}::{}", handler_name.as_ref());
    TestBatch::new().source_id(source_id).tag(tag).deadline_in(default_deadline())
}

/// A consumer record with a message id and body, other fields empty.
pub fn record(message_id: impl Into<String>, body: impl Into<Bytes>) -> ConsumerRecord {
    ConsumerRecord { message_id: message_id.into(), body: body.into(), ..Default::default() }
}

/// Starts a custom invocation of handler `handler_name`; tag
/// `custom::{handler_name}` (override with `.tag()` to invoke, as the local
/// invoke endpoint can, a handler of another kind under its own tag).
pub fn custom(handler_name: impl Into<String>) -> CustomEvent {
    TestInvocation::empty().handler_name(handler_name).deadline_in(default_deadline())
}

/// Starts a schedule trigger from schedule `schedule_id` for handler
/// `handler_name`; tag `source::{schedule_id}::{handler_name}`. The message id
/// defaults to a fresh one.
pub fn schedule(schedule_id: impl Into<String>, handler_name: impl AsRef<str>) -> ScheduleEvent {
    let schedule_id = schedule_id.into();
    let tag = format!("source::{schedule_id}::{}", handler_name.as_ref());
    TestTrigger::new()
        .schedule_id(schedule_id)
        .message_id(ids::next_id("sched-msg"))
        .tag(tag)
        .deadline_in(default_deadline())
}

/// Starts a WebSocket message on `route` (e.g. `$default`, `sendMessage`)
/// from connection `connection_id`; tag `{route_key}::{route}`, the route key
/// defaulting to `event`. The message id defaults to a fresh one, the message
/// to empty text (set with `with_text` or `with_binary`).
pub fn websocket(route: impl Into<String>, connection_id: impl Into<String>) -> WebSocketEvent {
    TestMessage::text("")
        .route(route)
        .connection_id(connection_id)
        .message_id(ids::next_id("ws-msg"))
        .deadline_in(default_deadline())
}

/// A `$connect` event for `connection_id` (body `null`).
pub fn websocket_connect(connection_id: impl Into<String>) -> WebSocketEvent {
    websocket("$connect", connection_id).with_text("null")
}

/// A `$disconnect` event for `connection_id` (body `null`).
pub fn websocket_disconnect(connection_id: impl Into<String>) -> WebSocketEvent {
    websocket("$disconnect", connection_id).with_text("null")
}
