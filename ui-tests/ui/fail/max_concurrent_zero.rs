use celerity::http_handler;

#[http_handler("GET::/hello", max_concurrent = 0)]
async fn hello() {}

fn main() {}
