//! Write [Celerity](https://celerityframework.io) handler executables in Rust.
//!
//! A handler executable is one binary holding every handler of an
//! application. The Celerity runtime starts it, and the two talk over one gRPC
//! stream on a Unix socket: the handler IPC protocol. This crate does all of
//! that protocol for you: the handshake, credit and concurrency caps,
//! deadlines and cancellation, draining, panics turned into answers. You
//! write plain `async fn`s.
//!
//! ```no_run
//! use celerity::prelude::*;
//!
//! #[derive(serde::Serialize)]
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
//! #[derive(serde::Deserialize)]
//! struct OrderPlaced {
//!     id: u64,
//! }
//!
//! #[celerity::consumer("source::orders-queue::processOrders")]
//! async fn process(order: Record<OrderPlaced>) -> Result<(), Error> {
//!     // An `Err` names this record in the batch result; the others are
//!     // acknowledged.
//!     println!("order {} placed ({})", order.id, order.message_id());
//!     Ok(())
//! }
//!
//! #[celerity::main]
//! async fn main() {}
//! ```
//!
//! Handlers can also be registered without the attributes, with [`App`],
//! and [`run_main`] / [`run_main_on`] / [`run`] start serving from a `main`
//! of your own.
//!
//! The modules, one per kind of event: [`http`](mod@http),
//! [`websocket`](mod@websocket), [`consumer`](mod@consumer),
//! [`schedule`](mod@schedule), [`custom`](mod@custom). A handler of any kind
//! is a [`Handler`]: its arguments are [`FromEvent`] and its return value
//! [`IntoAnswer`] for that kind. [`testing`] calls handlers in-process.
#![warn(missing_docs)]

mod app;
#[cfg(feature = "aws")]
mod aws;
mod codec;
mod command;
mod context;
mod driver;
mod error;
mod excerpt;
mod future;
mod handle;
mod json;
mod kind;
mod lambda;
mod logging;
mod manifest;
mod oneshot;
mod panics;
mod pipeline;
mod registry;
mod reply;
mod session;
mod text;
mod transport;
mod workers;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub mod config;
pub mod consumer;
pub mod custom;
pub mod guard;
pub mod http;
pub mod layer;
pub mod observe;
pub mod resources;
pub mod schedule;
pub mod settings;
pub mod testing;
#[cfg(feature = "validation")]
pub mod validation;
pub mod version;
pub mod websocket;

pub use app::{App, app, run, run_main, run_main_on};
pub use context::{CancelReason, Context, State};
pub use driver::ServeError;
pub use error::{Error, Result};
pub use handle::AppHandle;
pub use json::{Json, JsonError};
pub use pipeline::{FromEvent, Handler, HandlerCall, IntoAnswer, Kind};
pub use registry::{DuplicateHandler, HandlerKey, HandlerKind, Origin, Registration, RegistryError};
pub use session::SessionError;
pub use transport::ConnectError;

/// The handler attributes and `#[celerity::main]`.
pub use celerity_macros::{consumer, custom_handler, http_handler, main, schedule_handler, websocket_handler};

/// Reference-counted bytes: request and message bodies, handed to handlers
/// without copying.
pub use bytes::Bytes;

/// The protocol's generated types, for tests and tools that speak the wire.
pub use celerity_proto as proto;

/// What an application usually needs, in one import: the attributes, the
/// extractors and answers of every kind, state and errors.
///
/// ```no_run
/// use celerity::prelude::*;
///
/// #[http_handler("GET::/orders/{id}")]
/// async fn get_order(Path(id): Path<u64>) -> Result<Json<u64>, HttpError> {
///     if id == 0 { Err(HttpError::not_found("no such order")) } else { Ok(Json(id)) }
/// }
///
/// #[websocket_handler("event::$default")]
/// async fn echo(message: Message, ws: WsSender) -> Result<()> {
///     ws.send(Outbound::text(message.connection_id(), message.text().unwrap_or_default())).await?;
///     Ok(())
/// }
///
/// #[celerity::main]
/// async fn main() {}
/// ```
pub mod prelude {
    pub use crate::consumer::{Batch, BatchInfo, BatchOutcome, RawRecord, Record};
    pub use crate::custom::{CustomError, Invocation};
    pub use crate::http::{
        ErrorDetail, HeaderMap, HttpError, IntoResponse, Method, Path, Query, Request, Response, StatusCode, header,
    };
    pub use crate::schedule::Trigger;
    #[cfg(feature = "validation")]
    pub use crate::validation::Valid;
    pub use crate::websocket::{ConnectionId, Message, Outbound, WsSender};
    pub use crate::{App, Bytes, Context, Error, HandlerKind, Json, Result, State};
    pub use crate::{consumer, custom_handler, http_handler, schedule_handler, websocket_handler};
}

/// The README's snippets, compiled as doctests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeSnippets;
