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
//! Each handler is an `async fn` with an attribute naming its tag. They keep
//! orders in the blueprint's datastore ([`store::Store`]), write a receipt
//! for each confirmed order to its bucket ([`receipts::Receipts`]) and
//! announce placed orders on its queue ([`events::Announcements`]), each
//! taken as an argument; and they share state ([`model::Catalog`],
//! [`store::AuditLog`] and [`live::Subscriptions`]) that [`app`] provides,
//! each taking the pieces it needs as `State<T>` arguments. The datastore
//! and the bucket are declared with `celerity::resource!`, so the
//! application refuses to start where its resource links lack either,
//! naming the one missing.
//!
//! [`app`] builds the application once, for both of its uses: the binary's
//! `main` serves it to the runtime, and the in-process tests
//! (`tests/in_process.rs`) call the very same value's handlers with
//! `App::into_test`.
//!
//! Environment:
//!
//! - `ORDERS_AUDIT_LOG`: the file every change is audited to, one JSON line
//!   each (default: the process log, at debug level). A file that cannot be
//!   written stops changes; see [`store::AuditLog`].
//! - `ORDERS_CHAOS=1`: lets handlers panic on request, to show how panics are
//!   answered; see [`chaos`].
//!
//! The binary (`src/main.rs`) serves [`app`]; `orders --manifest` prints
//! its handler manifest as JSON instead of connecting to the runtime.

pub mod chaos;
pub mod cleanup;
pub mod events;
pub mod http;
pub mod live;
pub mod model;
pub mod quote;
pub mod receipts;
pub mod store;

use celerity::App;

/// The application: every handler the attributes in this crate declared,
/// with the state they share. What `main` serves, and what the tests call.
pub fn app() -> App {
    App::new()
        .state(model::Catalog::standard())
        .state(store::AuditLog::from_env())
        .state(live::Subscriptions::default())
}
