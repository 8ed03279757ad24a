use celerity::custom_handler;

#[custom_handler("custom::resizeImage")]
async fn resize() -> u32 {
    7
}

fn main() {}
