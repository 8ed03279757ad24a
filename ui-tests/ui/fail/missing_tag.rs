use celerity::http_handler;

#[http_handler]
async fn hello() {}

fn main() {}
