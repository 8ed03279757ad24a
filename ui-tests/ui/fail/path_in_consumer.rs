use celerity::consumer;
use celerity::http::Path;

#[consumer("source::orders-queue::processOrders")]
async fn process(Path(id): Path<u64>) {
    let _ = id;
}

fn main() {}
