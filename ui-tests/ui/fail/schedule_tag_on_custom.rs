use celerity::custom_handler;

#[custom_handler("source::nightly::cleanup")]
async fn cleanup() {}

fn main() {}
