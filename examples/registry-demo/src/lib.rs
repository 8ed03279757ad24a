//! Handler binaries for the integration tests of the attribute macros and
//! the compile-time registry: see `src/bin/`.
//!
//! The library holds one handler of its own, registered by the attribute in
//! this crate and served by the `demo` binary that links it: handlers can
//! live in library crates.

use celerity::http_handler;

/// `GET /version`: a handler declared in a library crate.
#[http_handler("GET::/version")]
pub async fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}
