use celerity::http::Path;
use celerity::http_handler;

#[http_handler("GET::/orders/{id}")]
async fn get_order(Path(id): Path<u64>, limit: u32) -> String {
    format!("{id} {limit}")
}

fn main() {}
