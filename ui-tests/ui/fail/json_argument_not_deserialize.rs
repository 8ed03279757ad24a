use celerity::http::Json;
use celerity::http_handler;

struct NewOrder {
    id: u64,
}

#[http_handler("POST::/orders")]
async fn create(Json(order): Json<NewOrder>) -> String {
    order.id.to_string()
}

fn main() {}
