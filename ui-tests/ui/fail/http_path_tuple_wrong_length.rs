use celerity::http::Path;
use celerity::http_handler;

#[http_handler("GET::/orders/{id}")]
async fn get_order(Path((order, line)): Path<(String, String)>) -> String {
    format!("{order} {line}")
}

fn main() {}
