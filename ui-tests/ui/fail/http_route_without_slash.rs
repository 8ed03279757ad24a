use celerity::http_handler;

#[http_handler("GET::hello")]
async fn hello() -> &'static str {
    "hello"
}

fn main() {}
