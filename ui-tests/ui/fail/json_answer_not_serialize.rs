use celerity::http::{HttpError, Json};
use celerity::http_handler;

struct Order {
    id: u64,
}

#[http_handler("GET::/orders/{id}")]
async fn get_order(celerity::http::Path(id): celerity::http::Path<u64>) -> Result<Json<Order>, HttpError> {
    Ok(Json(Order { id }))
}

fn main() {}
