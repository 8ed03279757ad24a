use celerity::http_handler;

#[http_handler("get::/hello")]
async fn hello() -> &'static str {
    "hello"
}

fn main() {}
