use celerity::websocket_handler;

#[websocket_handler("event::$open")]
async fn open() {}

fn main() {}
