//! The attribute macros of the [`celerity`](https://docs.rs/celerity) crate.
//! Use them through `celerity`, which re-exports them; this crate is not
//! meant to be a dependency of its own.
//!
//! ```ignore
//! use celerity::http::{Json, Path};
//! use celerity::http_handler;
//!
//! #[derive(serde::Serialize)]
//! struct Order { id: u64 }
//!
//! #[http_handler("GET::/orders/{id}", max_concurrent = 16)]
//! async fn get_order(Path(id): Path<u64>) -> Json<Order> {
//!     Json(Order { id })
//! }
//!
//! #[celerity::main]
//! async fn main() -> celerity::Result<()> {
//!     celerity::App::new().run().await
//! }
//! ```
//!
//! The macros are thin. Each handler attribute re-emits the function
//! unchanged, so it can still be called and unit-tested directly, then emits
//! spanned checks and a registry entry (a `linkme` distributed slice element
//! in `celerity::__private::HANDLERS`) that builds a `celerity::Registration`
//! through library code, as the explicit API does: the arguments are taken
//! and the answer made by `celerity::Handler`, not by generated code. The
//! checks put each type error on the argument or return type it is about,
//! in the words of the handler's kind. What the macros check themselves (the
//! tag's form, the options, the signature, a `Path<T>` tuple or single value
//! against the route's parameters) is reported with the original
//! item still emitted, so no secondary errors follow.

mod args;
mod handler;
mod kind;
mod main_attr;
mod path_check;
mod types;

use proc_macro::TokenStream;

use celerity_tags::TagKind;

/// Declares an HTTP handler: `#[http_handler("METHOD::/route")]`, such as
/// `#[http_handler("GET::/orders/{id}")]`, or by blueprint handler name
/// `#[http_handler(name = "getOrder")]`.
///
/// The method is one of `GET`, `POST`, `PUT`, `PATCH`, `DELETE`, `HEAD`,
/// `OPTIONS`, in upper case; the route starts with `/`; parameters are
/// `{name}` and a catch-all `{*name}` (or `{name+}`) as the last segment.
///
/// Arguments are HTTP extractors (`Request`, `Path<T>`, `Query<T>`,
/// `Json<T>`, `HeaderMap`, `Method`, `Bytes`, `String`, `Context`,
/// `State<T>`), at most one of which reads the body. The return value is an
/// HTTP response (`Json<T>`, `String`, `StatusCode`, `(StatusCode, R)`, ...)
/// or a `Result` of one.
///
/// Options: `max_concurrent = N` caps how many events of this handler run at
/// once (N ≥ 1).
#[proc_macro_attribute]
pub fn http_handler(attr: TokenStream, item: TokenStream) -> TokenStream {
    handler::expand(TagKind::Http, attr.into(), item.into()).into()
}

/// Declares a WebSocket handler: `#[websocket_handler("routeKey::route")]`,
/// such as `#[websocket_handler("event::$connect")]` or
/// `#[websocket_handler("action::sendMessage")]`, or by blueprint handler name
/// `#[websocket_handler(name = "onConnect")]`.
///
/// Options: `max_concurrent = N`.
#[proc_macro_attribute]
pub fn websocket_handler(attr: TokenStream, item: TokenStream) -> TokenStream {
    handler::expand(TagKind::WebSocket, attr.into(), item.into()).into()
}

/// Declares a consumer of a queue or topic:
/// `#[consumer("source::{sourceId}::{handlerName}")]`, such as
/// `#[consumer("source::orders-queue::processOrders")]`, or by blueprint
/// handler name `#[consumer(name = "processOrders")]`.
///
/// A consumer whose argument is a `Batch` handles each batch whole; otherwise
/// it handles one record at a time.
///
/// Options: `max_concurrent = N`, and `concurrency = N` for the records of
/// one batch handled at once.
#[proc_macro_attribute]
pub fn consumer(attr: TokenStream, item: TokenStream) -> TokenStream {
    handler::expand(TagKind::Consumer, attr.into(), item.into()).into()
}

/// Declares a schedule handler:
/// `#[schedule_handler("source::{sourceId}::{handlerName}")]`, such as
/// `#[schedule_handler("source::nightly::cleanup")]`, or by blueprint handler
/// name `#[schedule_handler(name = "cleanup")]`.
///
/// Options: `max_concurrent = N`.
#[proc_macro_attribute]
pub fn schedule_handler(attr: TokenStream, item: TokenStream) -> TokenStream {
    handler::expand(TagKind::Schedule, attr.into(), item.into()).into()
}

/// Declares a custom handler: `#[custom_handler("custom::{handlerName}")]`,
/// such as `#[custom_handler("custom::resizeImage")]`, or by blueprint handler
/// name `#[custom_handler(name = "resizeImage")]`.
///
/// Options: `max_concurrent = N`.
#[proc_macro_attribute]
pub fn custom_handler(attr: TokenStream, item: TokenStream) -> TokenStream {
    handler::expand(TagKind::Custom, attr.into(), item.into()).into()
}

/// Runs an `async fn main` on a tokio runtime built for it, logs an error it
/// returns, and exits with a matching status.
///
/// `main` returns `()`, `celerity::Result<()>` (or any `Result<(), E>` whose
/// error converts into `celerity::Error`), or a `celerity::App`, or
/// `celerity::Result<App>`, which is then served: the body is the
/// application's initialisation.
///
/// ```ignore
/// #[celerity::main]
/// async fn main() -> celerity::Result<celerity::App> {
///     let store = Store::connect().await?;
///     Ok(celerity::App::new().state(store))
/// }
/// ```
///
/// # The runtime
///
/// The options choose the runtime as `#[tokio::main]`'s do, with no tokio
/// dependency needed:
///
/// - `#[celerity::main]` or `#[celerity::main(flavor = "multi_thread")]`: a
///   multi-threaded runtime with one worker thread fewer than the cores, at
///   least one, the last core being the event stream's thread's
///   (`celerity::run_main` says when tokio sizes it instead);
/// - `#[celerity::main(worker_threads = 4)]`, or with
///   `flavor = "multi_thread"` beside it: a multi-threaded runtime with that
///   many worker threads (at least 1);
/// - `#[celerity::main(flavor = "current_thread")]`: everything on the thread
///   that runs `main`.
///
/// `current_thread` suits applications whose handlers only await I/O, and
/// costs no less CPU per event than the default runtime. A handler that
/// blocks (a synchronous client, CPU-heavy work) then stops every other
/// handler, and the event stream unless `App::io_thread` is on: run such
/// work with `tokio::task::spawn_blocking`, or keep the multi-threaded
/// runtime.
///
/// ```ignore
/// #[celerity::main(flavor = "current_thread")]
/// async fn main() {}
/// ```
///
/// `celerity::run_main_on` takes a `tokio::runtime::Builder` for any other
/// setting (thread names, stack size, scheduler intervals).
#[proc_macro_attribute]
pub fn main(attr: TokenStream, item: TokenStream) -> TokenStream {
    main_attr::expand(attr.into(), item.into()).into()
}
