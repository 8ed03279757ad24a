use celerity::schedule_handler;

#[schedule_handler("source::nightly")]
async fn cleanup() {}

fn main() {}
