use celerity::consumer::RawRecord;
use celerity::consumer;
use celerity::validation::Valid;

#[consumer("source::orders::process")]
async fn process(Valid(record): Valid<RawRecord>) {
    let _ = record;
}

fn main() {}
