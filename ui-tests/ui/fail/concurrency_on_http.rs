use celerity::http_handler;

#[http_handler("GET::/hello", concurrency = 4)]
async fn hello() {}

fn main() {}
