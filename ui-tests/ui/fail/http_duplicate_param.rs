use celerity::http_handler;

#[http_handler("GET::/orders/{id}/items/{id}")]
async fn item() -> &'static str {
    "{}"
}

fn main() {}
