use celerity::websocket_handler;

#[websocket_handler("$connect")]
async fn connect() {}

fn main() {}
