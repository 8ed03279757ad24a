//! A `Path<T>` reads a parameter its route does not have: the binary must
//! refuse to start, and to print its manifest, naming the handler, the
//! route and the field.

use celerity::http::Path;
use celerity::http_handler;

#[derive(serde::Deserialize)]
struct LinePath {
    order: String,
    item: u32,
}

#[http_handler("GET::/orders/{order}/lines/{line}")]
async fn get_line(Path(path): Path<LinePath>) -> String {
    format!("{} {}", path.order, path.item)
}

#[celerity::main]
async fn main() {}
