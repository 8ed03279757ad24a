use celerity::consumer;
use celerity::consumer::{Batch, RawRecord};

#[consumer("source::orders-queue::processOrders")]
async fn process(batch: Batch, record: RawRecord) {
    let _ = (batch.len(), record);
}

fn main() {}
