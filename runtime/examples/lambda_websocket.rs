//! A WebSocket handler that relays each message it is sent to the
//! connections the message names, through its `WsSender`. Under the
//! Celerity runtime the sends go over the event stream; on AWS Lambda
//! (feature `aws-lambda`) they are posted to API Gateway's Management API.
//!
//! A client sends `{"event": "relay", "to": ["<connection id>", ...], "text": "..."}`;
//! the `Ack` fails, naming each connection that could not be sent to.

use std::process::ExitCode;

use celerity::App;
use celerity::websocket::{Message, Outbound, WsSender};

#[derive(serde::Deserialize)]
struct Relay {
    to: Vec<String>,
    text: String,
}

async fn relay(ws: WsSender, message: Message) -> celerity::Result<()> {
    let relay: Relay = message.json()?;
    let batch = relay.to.iter().map(|connection| Outbound::text(connection.as_str(), relay.text.as_str()));
    ws.send_all(batch).await?;
    Ok(())
}

fn main() -> ExitCode {
    celerity::run_main(|| async { App::new().without_compiled_handlers().websocket("event::relay", relay).run().await })
}
