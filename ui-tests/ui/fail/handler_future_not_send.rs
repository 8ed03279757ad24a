use std::rc::Rc;

use celerity::http_handler;

async fn work() {}

#[http_handler("GET::/hello")]
async fn hello() -> String {
    let shared = Rc::new(String::from("hello"));
    work().await;
    shared.to_string()
}

fn main() {}
