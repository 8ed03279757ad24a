use celerity::http::Json;
use celerity::http_handler;
use celerity::validation::Valid;

#[derive(serde::Deserialize)]
struct NewOrder {
    customer: String,
}

#[http_handler("POST::/orders")]
async fn place(Valid(Json(order)): Valid<Json<NewOrder>>) -> String {
    order.customer
}

fn main() {}
