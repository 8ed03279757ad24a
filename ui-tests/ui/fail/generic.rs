use celerity::http::Json;
use celerity::http_handler;

#[http_handler("POST::/echo")]
async fn echo<T: serde::de::DeserializeOwned + serde::Serialize>(Json(body): Json<T>) -> Json<T> {
    Json(body)
}

fn main() {}
