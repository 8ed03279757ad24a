use celerity::http_handler;

#[http_handler("/hello")]
async fn hello() -> &'static str {
    "hello"
}

fn main() {}
