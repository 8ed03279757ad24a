//! `orders`: a small order service for a coffee bar, using every kind of
//! Celerity handler.
//!
//! | kind | tags | module |
//! | --- | --- | --- |
//! | HTTP | `POST::/orders`, `GET::/orders`, `GET::/orders/{id}`, `PATCH::/orders/{id}`, `DELETE::/orders/{id}`, `GET::/customers/{customer}/orders` | [`http`] |
//! | consumer, per record | `source::order-events::processOrderEvents` | [`events`] |
//! | consumer, whole batch | `source::order-audit::auditOrders` | [`events`] |
//! | schedule | `source::nightly-cleanup::cleanupOrders` | [`cleanup`] |
//! | custom | `custom::quoteOrder` | [`quote`] |
//! | WebSocket | `event::$connect`, `event::$disconnect`, `event::subscribe` | [`live`] |
//!
//! Each handler is an `async fn` with an attribute naming its tag; they share
//! state ([`store::Store`], [`model::Catalog`], [`store::AuditLog`],
//! [`live::Subscriptions`]) that `main` provides, and each takes the pieces it
//! needs as `State<T>` arguments.
//!
//! Environment:
//!
//! - `ORDERS_AUDIT_LOG`: the file every change is audited to, one JSON line
//!   each (default: the process log, at debug level). A file that cannot be
//!   written stops changes; see [`store::AuditLog`].
//! - `ORDERS_CHAOS=1`: lets handlers panic on request, to show how panics are
//!   answered; see [`chaos`].
//!
//! `orders --manifest` prints the handler manifest as JSON instead of
//! connecting to the runtime.

mod chaos;
mod cleanup;
mod events;
mod http;
mod live;
mod model;
mod quote;
mod store;

use celerity::App;

/// Serves every handler the attributes above declared, with the state they
/// share. Returning the `App` lets `#[celerity::main]` serve it.
#[celerity::main]
async fn main() -> App {
    App::new()
        .state(store::Store::default())
        .state(model::Catalog::standard())
        .state(store::AuditLog::from_env())
        .state(live::Subscriptions::default())
}
