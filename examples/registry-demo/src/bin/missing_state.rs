//! A handler takes state the application never provides: the binary must
//! refuse to start, and to print its manifest, naming the handler and the
//! type.

use celerity::{State, http_handler};

/// Never given with `App::state`.
struct Hits;

#[http_handler("GET::/hits")]
async fn count_hits(_hits: State<Hits>) -> &'static str {
    "unreachable"
}

#[celerity::main]
async fn main() {}
