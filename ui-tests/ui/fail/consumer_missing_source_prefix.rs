use celerity::consumer;

#[consumer("orders-queue::processOrders")]
async fn process() {}

fn main() {}
