use celerity::websocket::Message;
use celerity::{Json, websocket_handler};

#[websocket_handler("action::sendMessage")]
async fn send(message: Message, Json(text): Json<String>) {
    let _ = (message, text);
}

fn main() {}
