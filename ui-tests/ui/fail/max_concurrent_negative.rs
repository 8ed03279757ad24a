use celerity::http_handler;

#[http_handler("GET::/hello", max_concurrent = -4)]
async fn hello() {}

fn main() {}
