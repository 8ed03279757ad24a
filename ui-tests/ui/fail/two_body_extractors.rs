use celerity::http::Json;
use celerity::http_handler;

#[derive(serde::Deserialize)]
struct Order {
    id: u64,
}

#[http_handler("POST::/orders")]
async fn create(Json(order): Json<Order>, raw: String) -> String {
    format!("{} {raw}", order.id)
}

fn main() {}
