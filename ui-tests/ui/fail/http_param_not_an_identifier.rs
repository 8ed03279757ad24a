use celerity::http::Path;
use celerity::http_handler;

#[http_handler("GET::/orders/{order-id}")]
async fn get_order(Path(id): Path<String>) -> String {
    id
}

fn main() {}
