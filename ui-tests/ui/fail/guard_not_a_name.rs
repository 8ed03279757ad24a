use celerity::http_handler;

const JWT: &str = "jwt";

#[http_handler("GET::/orders", guard = JWT)]
async fn list() -> &'static str {
    "[]"
}

fn main() {}
