use celerity::custom_handler;

#[custom_handler("resizeImage")]
async fn resize() {}

fn main() {}
