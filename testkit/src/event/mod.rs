//! Builders for `Dispatch` frames, one per kind of source.
//!
//! Every builder fills what the runtime fills: the handler tag in the
//! runtime's exact form, `timestamp_ms` (now) and `deadline_unix_ms` (now +
//! 60 s, the runtime's default handler timeout). The common setters are the
//! same on every builder: `id`, `tag`, `timestamp_ms`, `deadline_in`,
//! `deadline_unix_ms`, `no_deadline`, `trace_context`. Each builder turns into
//! a [`Dispatch`](celerity_proto::v1::Dispatch) with `build()` or `into()`,
//! so it can be passed straight to
//! [`Connection::dispatch`](crate::Connection::dispatch). The id is left
//! empty unless set; the connection assigns one when dispatching.
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

mod consumer;
mod custom;
mod envelope;
mod http;
mod schedule;
mod websocket;

pub use consumer::{ConsumerEvent, consumer, record};
pub use custom::{CustomEvent, custom};
pub use http::{HttpEvent, http};
pub use schedule::{ScheduleEvent, schedule};
pub use websocket::{WebSocketEvent, websocket, websocket_connect, websocket_disconnect};

use std::collections::HashMap;

use celerity_proto::v1::Values;

/// Appends `value` to the multi-valued `key` of `map`.
fn push_value(map: &mut HashMap<String, Values>, key: String, value: String) {
    map.entry(key).or_default().values.push(value);
}
