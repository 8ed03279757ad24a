use celerity::http_handler;

struct Orders;

impl Orders {
    #[http_handler("GET::/orders")]
    async fn list(&self) -> &'static str {
        "[]"
    }
}

fn main() {}
