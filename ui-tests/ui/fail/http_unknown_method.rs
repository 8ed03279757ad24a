use celerity::http_handler;

#[http_handler("FETCH::/hello")]
async fn hello() -> &'static str {
    "hello"
}

fn main() {}
