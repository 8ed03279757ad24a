//! Two functions declare one tag: the binary must refuse to start, naming
//! both with their source locations.

use celerity::http_handler;

#[http_handler("GET::/orders")]
async fn list_orders() -> &'static str {
    "[]"
}

#[http_handler("GET::/orders")]
async fn list_orders_again() -> &'static str {
    "[]"
}

#[celerity::main]
async fn main() -> celerity::Result<()> {
    celerity::App::new().run().await
}
