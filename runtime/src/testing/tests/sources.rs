//! Every kind of event, built by its builder, and its outcome.

use bytes::Bytes;
use serde::Deserialize;

use crate::App;
use crate::consumer::{Batch, BatchOutcome, RawRecord, Record};
use crate::custom::{CustomError, Invocation};
use crate::schedule::Trigger;
use crate::testing::{
    TestBatch, TestInvocation, TestMessage, TestTrigger, call_consumer, call_consumer_batch, call_custom,
    call_schedule, call_websocket,
};
use crate::websocket::Message;
use crate::{Context, Error, Json};

#[derive(Deserialize)]
struct OrderPlaced {
    id: u64,
    quantity: u32,
}

async fn process(order: Record<OrderPlaced>) -> Result<(), Error> {
    if order.quantity == 0 {
        return Err(Error::msg(format!("order {} has no items", order.id)));
    }
    Ok(())
}

fn three_orders() -> TestBatch {
    TestBatch::new()
        .record("m-1", r#"{"id": 1, "quantity": 0}"#)
        .json_record("m-2", &serde_json::json!({ "id": 2, "quantity": 3 }))
        .record("m-3", r#"{"id": 3}"#)
}

#[tokio::test]
async fn a_consumer_names_the_records_that_failed() {
    let app =
        App::new().without_compiled_handlers().consumer("source::orders-queue::processOrders", process).into_test();
    let result = app.call("source::orders-queue::processOrders", three_orders()).await.expect_batch();
    assert!(!result.is_success() && !result.is_whole_batch_failure());
    assert_eq!(result.failed_ids(), ["m-1", "m-3"]);
    assert_eq!(result.failure("m-1"), Some("order 1 has no items"));
    assert!(result.failure("m-3").unwrap().contains("quantity"));
    assert_eq!(result.failure("m-2"), None);
    assert_eq!(result.failures().len(), 2);
    assert!(result.to_string().contains(r#""m-1" (order 1 has no items)"#), "{result}");
}

#[tokio::test]
async fn a_concurrent_consumer_names_the_same_records() {
    let app = App::new()
        .without_compiled_handlers()
        .consumer_concurrent("source::orders-queue::processOrders", 4, process)
        .into_test();
    let result = app.call("source::orders-queue::processOrders", three_orders()).await.expect_batch();
    let mut ids = result.failed_ids();
    ids.sort();
    assert_eq!(ids, ["m-1", "m-3"]);
}

#[tokio::test]
async fn a_batch_consumer_and_its_source_from_the_tag() {
    async fn whole(batch: Batch) -> BatchOutcome {
        let mut outcome = batch.outcome();
        for record in &batch {
            if record.source_id() != "orders-queue" {
                outcome.fail(record, format!("wrong source {:?}", record.source_id()));
            } else if record.message_id() == "m-2" {
                outcome.fail(record, "no stock");
            }
        }
        outcome
    }
    let app =
        App::new().without_compiled_handlers().consumer_batch("source::orders-queue::processOrders", whole).into_test();
    let result = app.call("source::orders-queue::processOrders", three_orders()).await.expect_batch();
    assert_eq!(result.failed_ids(), ["m-2"]);

    async fn failing(_batch: Batch) -> Result<(), Error> {
        Err(Error::msg("database down"))
    }
    let result = call_consumer_batch(failing, three_orders()).await.expect_batch();
    assert!(result.is_whole_batch_failure());
    assert_eq!(result.to_string(), "a batch result failing the whole batch");
}

#[tokio::test]
async fn a_consumer_function_with_the_sdk_batch() {
    let batch = Batch::new("orders", "queue", [RawRecord::new("a", r#"{"id":1,"quantity":1}"#)]);
    assert!(call_consumer(process, batch).await.expect_batch().is_success());
}

#[tokio::test]
async fn a_websocket_message_is_acknowledged() {
    async fn on_message(message: Message) -> Result<(), Error> {
        if message.connection_id() != "c-9" || message.route() != "sendMessage" {
            return Err(Error::msg(format!("{} on {}", message.connection_id(), message.route())));
        }
        let chat: serde_json::Value = message.json()?;
        if chat["text"] == "" { Err(Error::msg("empty message")) } else { Ok(()) }
    }
    let app = App::new().without_compiled_handlers().websocket("action::sendMessage", on_message).into_test();
    let message = || TestMessage::json(&serde_json::json!({ "text": "hi" })).connection_id("c-9");
    let ack = app.call("action::sendMessage", message()).await.expect_ack();
    assert!(ack.is_success() && ack.error_message().is_none());
    let empty = TestMessage::json(&serde_json::json!({ "text": "" })).connection_id("c-9");
    let ack = app.call("action::sendMessage", empty).await.expect_ack();
    assert_eq!(ack.error_message(), Some("empty message"));

    async fn on_connect(message: Message) -> Result<(), Error> {
        if message.is_connect() && message.connection_id() == crate::testing::TEST_CONNECTION_ID {
            Ok(())
        } else {
            Err(Error::msg("not a connect"))
        }
    }
    assert!(call_websocket(on_connect, TestMessage::connect()).await.expect_ack().is_success());
    let binary = Message::new_binary("$connect", vec![1u8]).with_connection_id("x");
    assert!(!call_websocket(on_connect, binary).await.expect_ack().is_success());
    assert!(call_websocket(|_: Bytes| async {}, TestMessage::binary(vec![0u8, 1])).await.expect_ack().is_success());
}

#[tokio::test]
async fn a_schedule_trigger_is_acknowledged() {
    #[derive(Deserialize)]
    struct Cleanup {
        older_than_days: u32,
    }
    async fn cleanup(trigger: Trigger, Json(input): Json<Option<Cleanup>>) -> Result<(), Error> {
        match input {
            Some(input) if trigger.schedule_id() == "nightly" && input.older_than_days > 0 => Ok(()),
            Some(_) => Err(Error::msg(format!("bad input for {}", trigger.schedule_id()))),
            None => Err(Error::msg("no input")),
        }
    }
    let app = App::new().without_compiled_handlers().schedule("source::nightly::cleanup", cleanup).into_test();
    let trigger = TestTrigger::new().schedule("rate(1 day)").json_input(&serde_json::json!({ "older_than_days": 7 }));
    assert!(app.call("source::nightly::cleanup", trigger).await.expect_ack().is_success());
    let ack = app.call("source::nightly::cleanup", TestTrigger::new()).await.expect_ack();
    assert_eq!(ack.error_message(), Some("no input"));
    let sdk = Trigger::new("weekly", "rate(7 days)").with_input(r#"{"older_than_days": 1}"#);
    assert_eq!(call_schedule(cleanup, sdk).await.expect_ack().error_message(), Some("bad input for weekly"));
}

#[tokio::test]
async fn a_custom_invocation_answers_with_its_output_or_error() {
    #[derive(Deserialize)]
    struct Resize {
        width: u32,
    }
    async fn resize(cx: Context, invocation: Invocation) -> Result<Json<serde_json::Value>, CustomError> {
        let input: Resize = invocation.json().map_err(|e| CustomError::new(e.to_string()))?;
        if input.width == 0 {
            return Err(CustomError::new("width must be positive"));
        }
        Ok(Json(serde_json::json!({ "width": input.width, "by": invocation.handler_name(), "tag": cx.tag() })))
    }
    let app = App::new().without_compiled_handlers().custom("custom::resizeImage", resize).into_test();
    let result = app.call("custom::resizeImage", TestInvocation::json(&serde_json::json!({"width": 10}))).await;
    let result = result.expect_custom();
    assert!(!result.is_error());
    let output: serde_json::Value = result.output_json();
    assert_eq!(output, serde_json::json!({ "width": 10, "by": "resizeImage", "tag": "custom::resizeImage" }));

    let result = call_custom(resize, Invocation::new("resizeImage", r#"{"width": 0}"#)).await.expect_custom();
    assert_eq!(result.error_message(), Some("width must be positive"));
    assert!(result.output().is_empty());

    async fn text() -> &'static str {
        "plain"
    }
    assert_eq!(call_custom(text, TestInvocation::empty()).await.expect_custom().output_text(), "plain");
}

#[tokio::test]
async fn a_handler_sent_another_kind_of_event_answers_wrong_source() {
    let app =
        App::new().without_compiled_handlers().consumer("source::orders-queue::processOrders", process).into_test();
    let error = app.call("source::orders-queue::processOrders", TestTrigger::new()).await.expect_error();
    assert_eq!(error.error_type(), "WrongEventSource");
}
