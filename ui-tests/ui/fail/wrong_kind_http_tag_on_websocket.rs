use celerity::websocket_handler;

#[websocket_handler("GET::/chat")]
async fn chat() {}

fn main() {}
