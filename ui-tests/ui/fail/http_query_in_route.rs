use celerity::http_handler;

#[http_handler("GET::/orders?page={page}")]
async fn list() -> &'static str {
    "[]"
}

fn main() {}
