//! A handler of every kind, in every binding, with `#[celerity::main]`
//! returning `celerity::Result<()>`.

use celerity::consumer::{Batch, BatchInfo, BatchOutcome, RawRecord, Record};
use celerity::custom::Invocation;
use celerity::schedule::Trigger;
use celerity::websocket::Message;
use celerity::{App, Context, HandlerKind, Json, State, consumer, custom_handler, schedule_handler, websocket_handler};
use serde::{Deserialize, Serialize};

struct Counter;

#[derive(Deserialize, Serialize)]
struct Chat {
    text: String,
}

#[websocket_handler("event::$connect")]
async fn connect(message: Message) {
    let _ = message.connection_id();
}

#[websocket_handler("action::sendMessage", max_concurrent = 32)]
async fn send_message(cx: Context, Json(chat): Json<Chat>) -> celerity::Result<()> {
    let _ = (cx.tag(), chat.text);
    Ok(())
}

#[consumer("source::orders-queue::processOrders", concurrency = 8)]
async fn process_order(record: Record<Chat>, _counter: State<Counter>) -> Result<(), std::io::Error> {
    let _ = record.value().text.len();
    Ok(())
}

#[consumer(name = "auditRecords")]
async fn audit(record: RawRecord) {
    let _ = record.message_id();
}

#[consumer("source::events::summarise", max_concurrent = 2)]
async fn summarise(info: BatchInfo, batch: Batch) -> BatchOutcome {
    let _ = info.source_id();
    batch.outcome()
}

#[schedule_handler("source::nightly::cleanup")]
async fn cleanup(trigger: Trigger) -> celerity::Result<()> {
    let _ = trigger.schedule_id();
    Ok(())
}

#[schedule_handler(name = "report")]
async fn report(Json(input): Json<Chat>) {
    let _ = input.text;
}

#[custom_handler("custom::resizeImage")]
async fn resize(Json(chat): Json<Chat>) -> Json<Chat> {
    Json(chat)
}

#[custom_handler(name = "echo")]
async fn echo(invocation: Invocation) -> Result<String, celerity::custom::CustomError> {
    Ok(String::from_utf8_lossy(invocation.input()).into_owned())
}

#[celerity::main]
async fn main() -> celerity::Result<()> {
    let kinds: Vec<HandlerKind> = App::new().registrations().iter().map(|r| r.kind()).collect();
    let count = |kind| kinds.iter().filter(|k| **k == kind).count();
    assert_eq!(count(HandlerKind::WebSocket), 2);
    assert_eq!(count(HandlerKind::Consumer), 3);
    assert_eq!(count(HandlerKind::Schedule), 2);
    assert_eq!(count(HandlerKind::Custom), 2);
    Ok(())
}
