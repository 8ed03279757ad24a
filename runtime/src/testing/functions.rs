//! Calling a handler function directly, through the extraction and the
//! answer the SDK builds around it.

use super::event::Event;
use super::outcome::Outcome;
use crate::App;
use crate::consumer::{ConsumerBatchHandler, ConsumerHandler};
use crate::custom::CustomHandler;
use crate::http::HttpHandler;
use crate::registry::{HandlerKey, Registration};
use crate::schedule::ScheduleHandler;
use crate::websocket::WebSocketHandler;

/// Calls `handler` with `event` as a registered handler of its kind runs:
/// the tag is made up from the event (see each function).
async fn call(event: Event, register: impl FnOnce(HandlerKey) -> Registration) -> Outcome {
    let tag = event.default_tag();
    App::new()
        .without_compiled_handlers()
        .register(register(HandlerKey::Tag(tag.clone())))
        .into_test()
        .call(&tag, event)
        .await
}

/// Calls an HTTP handler function with a request, through argument
/// extraction and response conversion, as the SDK does: a bad argument is
/// answered with its 400, an error with its response or a `HandlerError`.
/// The tag is `METHOD::route` of the request.
///
/// ```
/// use celerity::http::{HttpError, Json, Path};
/// use celerity::testing::{TestRequest, block_on, call_http};
///
/// #[derive(serde::Serialize)]
/// struct Order { id: u64 }
///
/// async fn get_order(Path(id): Path<u64>) -> Result<Json<Order>, HttpError> {
///     if id == 0 {
///         return Err(HttpError::not_found("no such order"));
///     }
///     Ok(Json(Order { id }))
/// }
///
/// let request = TestRequest::get("/orders/x").route("/orders/{id}");
/// assert_eq!(block_on(call_http(get_order, request)).expect_http().status(), 400);
/// let request = TestRequest::get("/orders/0").route("/orders/{id}");
/// assert_eq!(block_on(call_http(get_order, request)).expect_http().status(), 404);
/// ```
pub async fn call_http<H, Args>(handler: H, request: impl Into<Event>) -> Outcome
where
    H: HttpHandler<Args>,
    Args: 'static,
{
    call(request.into(), |key| Registration::http(key, handler)).await
}

/// Calls a WebSocket handler function with a message. The tag is
/// `event::route` of the message.
pub async fn call_websocket<H, Args>(handler: H, message: impl Into<Event>) -> Outcome
where
    H: WebSocketHandler<Args>,
    Args: 'static,
{
    call(message.into(), |key| Registration::websocket(key, handler)).await
}

/// Calls a per-record consumer handler function with a batch: it runs for
/// each record in order, and the outcome names the records that failed. The
/// tag is `source::{sourceId}::handler`.
pub async fn call_consumer<H, Args>(handler: H, batch: impl Into<Event>) -> Outcome
where
    H: ConsumerHandler<Args>,
    Args: 'static,
{
    call(batch.into(), |key| Registration::consumer(key, handler)).await
}

/// Calls a whole-batch consumer handler function with a batch. The tag is
/// `source::{sourceId}::handler`.
pub async fn call_consumer_batch<H, Args>(handler: H, batch: impl Into<Event>) -> Outcome
where
    H: ConsumerBatchHandler<Args>,
    Args: 'static,
{
    call(batch.into(), |key| Registration::consumer_batch(key, handler)).await
}

/// Calls a schedule handler function with a trigger. The tag is
/// `source::{scheduleId}::handler`.
pub async fn call_schedule<H, Args>(handler: H, trigger: impl Into<Event>) -> Outcome
where
    H: ScheduleHandler<Args>,
    Args: 'static,
{
    call(trigger.into(), |key| Registration::schedule(key, handler)).await
}

/// Calls a custom handler function with an invocation. The tag is
/// `custom::{handlerName}`.
pub async fn call_custom<H, Args>(handler: H, invocation: impl Into<Event>) -> Outcome
where
    H: CustomHandler<Args>,
    Args: 'static,
{
    call(invocation.into(), |key| Registration::custom(key, handler)).await
}
