//! `gateway`: behaviour around handlers that do not know it is there.
//!
//! - Every HTTP response says who served it (`x-served-by`) and is
//!   compressed when the caller accepts gzip: `tower-http` layers, on the
//!   HTTP kind.
//! - `GATEWAY_MAINTENANCE=1` fails every event, of every kind, in its kind's
//!   own way (HTTP callers get a 503): a layer on the whole application.
//! - The order routes are protected by the guard `api-key`, which reads
//!   `x-api-key` (once: a request carrying it twice is a 401) and gives the
//!   handler the calling client as `Identity<Client>`; placing an order
//!   needs the guard `writer` as well.
//! - The WebSocket `track` route is protected by `internal`, which allows
//!   messages from this machine only (and refuses a message whose address
//!   the runtime does not give).
//! - The custom `refund` handler is protected by `refunds-open`. A custom
//!   invocation carries no caller (no headers, no address), only its kind,
//!   tag and context, so this guard decides on what the application knows:
//!   it refuses while `GATEWAY_REFUNDS_PAUSED=1` pauses refunds.
//!
//! `gateway --manifest` lists every handler with its guards.

use celerity::guard::{GuardRequest, Identity, Verdict};
use celerity::http::HeaderValue;
use celerity::layer::{self, Answer, Event, Next};
use celerity::prelude::*;
use serde::{Deserialize, Serialize};
use tower_http::compression::CompressionLayer;
use tower_http::set_header::SetResponseHeaderLayer;

/// A caller, known by its API key.
#[derive(Debug, Clone)]
struct Client {
    name: &'static str,
    writes: bool,
}

/// The clients this example knows: fixed, so that it runs as it is.
fn client_for(key: &str) -> Option<Client> {
    match key {
        "k-reader" => Some(Client { name: "reporting", writes: false }),
        "k-writer" => Some(Client { name: "checkout", writes: true }),
        _ => None,
    }
}

/// The key is read with `sole_header`: a request that carries it twice is
/// refused (401), since which of the two counts would be a guess.
async fn api_key(request: GuardRequest) -> Result<Verdict> {
    Ok(match request.sole_header("x-api-key") {
        Ok(Some(key)) => match client_for(key) {
            Some(client) => Verdict::allow_as(client),
            None => Verdict::unauthorized("the API key is not known"),
        },
        Ok(None) => Verdict::unauthorized("an x-api-key header is required"),
        Err(refusal) => refusal,
    })
}

/// Placing orders: the key must be a client's that writes.
async fn writer(request: GuardRequest) -> Result<Verdict> {
    let key = match request.sole_header("x-api-key") {
        Ok(key) => key,
        Err(refusal) => return Ok(refusal),
    };
    let writes = key.and_then(client_for).is_some_and(|client| client.writes);
    Ok(if writes { Verdict::allow() } else { Verdict::forbidden("this API key may read orders, not place them") })
}

/// Messages from this machine only. A message whose address the runtime
/// does not give is refused too: a caller that cannot be placed is not
/// known to be here.
async fn internal(request: GuardRequest) -> Result<Verdict> {
    Ok(match request.source_ip() {
        Some(ip) if ip.is_loopback() => Verdict::allow(),
        _ => Verdict::forbidden("only callers on this machine may do this"),
    })
}

/// Whether refunds are taken: an operator pauses them
/// (`GATEWAY_REFUNDS_PAUSED=1`), as when the payment provider is down.
struct RefundDesk {
    paused: bool,
}

/// A custom invocation reaches the handler through the runtime's invoke
/// API and carries no caller: a guard sees its kind and tag and its
/// `Context` (deadline, trace context, the application's state), never
/// headers, an address or the payload. So this guard decides on what the
/// application knows rather than on who calls.
async fn refunds_open(request: GuardRequest) -> Result<Verdict> {
    let paused = request.context().state::<RefundDesk>().is_some_and(|desk| desk.paused);
    Ok(if paused { Verdict::forbidden("refunds are paused") } else { Verdict::allow() })
}

#[derive(Serialize, Deserialize)]
struct Order {
    id: String,
    status: String,
    seen_by: String,
}

#[http_handler("GET::/status")]
async fn status() -> &'static str {
    "ok"
}

#[http_handler("GET::/orders/{id}", guard = "api-key")]
async fn get_order(Path(id): Path<String>, client: Identity<Client>) -> Json<Order> {
    Json(Order { id, status: "preparing".into(), seen_by: client.name.into() })
}

#[http_handler("POST::/orders", guard = ["api-key", "writer"])]
async fn place_order(client: Identity<Client>) -> (StatusCode, Json<Order>) {
    let order = Order { id: "ord-1".into(), status: "placed".into(), seen_by: client.name.into() };
    (StatusCode::CREATED, Json(order))
}

#[websocket_handler("event::track", guard = "internal")]
async fn track(message: Message) -> Result<()> {
    if message.text().is_none() {
        return Err("a tracking message is text".into());
    }
    Ok(())
}

#[custom_handler("custom::refund", guard = "refunds-open")]
async fn refund(Json(order_id): Json<String>) -> Json<String> {
    Json(format!("refunded {order_id}"))
}

#[consumer("source::order-events::recordEvent")]
async fn record_event(_event: Record<serde::de::IgnoredAny>) {}

/// While `GATEWAY_MAINTENANCE` is set, every event fails in its kind's way.
fn maintenance() -> impl layer::EventLayer {
    let on = std::env::var_os("GATEWAY_MAINTENANCE").is_some();
    layer::from_fn(move |event: Event, next: Next| async move {
        if !on {
            return next.run(event).await;
        }
        match event.kind() {
            celerity::HandlerKind::Http => {
                Answer::http(HttpError::new(StatusCode::SERVICE_UNAVAILABLE, "down for maintenance"))
            }
            kind => Answer::failure(kind, "down for maintenance"),
        }
    })
}

#[celerity::main]
async fn main() -> App {
    App::new()
        .layer(maintenance())
        .http_layer(SetResponseHeaderLayer::overriding(
            celerity::http::HeaderName::from_static("x-served-by"),
            HeaderValue::from_static("gateway"),
        ))
        .http_layer(CompressionLayer::new().gzip(true))
        .guard("api-key", api_key)
        .guard("writer", writer)
        .guard("internal", internal)
        .state(RefundDesk { paused: std::env::var("GATEWAY_REFUNDS_PAUSED").is_ok_and(|value| value == "1") })
        .guard("refunds-open", refunds_open)
}
