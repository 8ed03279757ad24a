use celerity::http::Path;
use celerity::http_handler;

#[http_handler("GET::/orders")]
async fn list_orders(Path(id): Path<String>) -> String {
    id
}

fn main() {}
