use celerity::http_handler;

#[http_handler("source::orders-queue::processOrders")]
async fn process() {}

fn main() {}
