use celerity::http_handler;

#[http_handler("GET::/orders/{id}", name = "getOrder")]
async fn get_order() {}

fn main() {}
