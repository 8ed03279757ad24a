use celerity::schedule_handler;

#[schedule_handler("source::nightly::cleanup", http_layer = ())]
async fn cleanup() {}

fn main() {}
