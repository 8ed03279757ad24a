use celerity::http_handler;

#[http_handler("GET::/orders", layer = std::time::Duration::from_secs(5))]
async fn list() -> &'static str {
    "[]"
}

fn main() {}
