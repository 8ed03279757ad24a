use celerity::consumer;
use celerity::consumer::RawRecord;

#[consumer("source::orders-queue::processOrders")]
async fn process(record: RawRecord) -> String {
    record.message_id().to_string()
}

fn main() {}
