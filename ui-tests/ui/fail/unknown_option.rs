use celerity::http_handler;

#[http_handler("GET::/hello", max_concurency = 4)]
async fn hello() {}

#[http_handler("GET::/bye", timeout = 30)]
async fn bye() {}

fn main() {}
