use celerity::http_handler;

#[http_handler("GET::/hello")]
fn hello() -> &'static str {
    "hello"
}

fn main() {}
