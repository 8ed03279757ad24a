use celerity::http_handler;

#[http_handler("GET::/count")]
async fn count() -> u64 {
    42
}

fn main() {}
