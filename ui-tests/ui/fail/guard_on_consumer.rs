use celerity::consumer;
use celerity::consumer::Record;

#[consumer("source::orders-queue::processOrders", guard = "jwt")]
async fn process(record: Record<String>) {
    let _ = record;
}

fn main() {}
