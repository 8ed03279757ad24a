//! A handler bound by blueprint name resolves, at the handshake, to the tag
//! another handler declares: the binary must stop, naming both.

use celerity::http_handler;

#[http_handler("GET::/orders")]
async fn list_orders() -> &'static str {
    "[]"
}

#[http_handler(name = "listOrders")]
async fn list_orders_by_name() -> &'static str {
    "[]"
}

#[celerity::main]
async fn main() -> celerity::Result<()> {
    celerity::App::new().run().await
}
