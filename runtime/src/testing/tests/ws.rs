//! WebSocket sends recorded and answered as scripted, through the link a
//! handler's context leads to (as the SDK's sender uses it).

use std::time::Duration;

use celerity_proto::v1 as pb;

use crate::App;
use crate::testing::{TestApp, TestMessage, TestRequest, WsAnswer, WsRecorder};
use crate::websocket::Message;
use crate::websocket::outbound::{Outbound, SendError, SendReport};
use crate::{Context, Error};

/// The SDK's sender, as a handler gets it from its context: under
/// `TestApp` its sends go to the app's recorder.
async fn send_batch(cx: &Context, batch: Vec<Outbound>) -> Result<SendReport, SendError> {
    cx.ws().with_timeout(Duration::from_secs(30)).send_all(batch).await
}

fn three() -> Vec<Outbound> {
    vec![Outbound::text("c-1", "one"), Outbound::text("c-2", "two"), Outbound::text("c-3", "three")]
}

/// Sends three messages, retries what failed once, and says what happened.
async fn broadcast(cx: Context) -> String {
    match send_batch(&cx, three()).await {
        Ok(report) => format!("sent {}", report.len()),
        Err(error @ SendError::Failed(_)) => {
            let retried = send_batch(&cx, error.retry_batch()).await;
            format!("failed {:?}, retry ok: {}", error.failed_indexes(), retried.is_ok())
        }
        Err(SendError::TimedOut { .. }) => "timed out".to_string(),
        Err(SendError::Disconnected { .. }) => "disconnected".to_string(),
        Err(error) => format!("refused: {error}"),
    }
}

fn app() -> TestApp {
    App::new().without_compiled_handlers().http("POST::/broadcast", broadcast).into_test()
}

async fn call(app: &TestApp) -> String {
    app.call("POST::/broadcast", TestRequest::post("/broadcast")).await.expect_http().text().to_string()
}

#[tokio::test]
async fn sends_are_recorded_with_their_event_and_succeed_by_default() {
    let app = app();
    let outcome = app.call("POST::/broadcast", TestRequest::post("/broadcast")).id("ev-1").await;
    assert_eq!(outcome.expect_http().text(), "sent 3");
    let sends = app.ws().sends();
    assert_eq!(sends.len(), 1);
    assert_eq!(sends[0].event_id(), Some("ev-1"));
    assert_eq!(sends[0].messages().len(), 3);
    let ack = sends[0].ack().unwrap();
    assert!(ack.success && ack.failures.is_empty());
    assert_eq!(ack.correlation_id, sends[0].send().correlation_id);
    assert_eq!(app.ws().messages_to("c-2")[0].message, "two");
    assert_eq!(app.ws().messages().len(), 3);
}

#[tokio::test]
async fn a_failure_in_the_middle_is_reported_and_only_it_retried() {
    let app = app();
    app.ws().answer_next(WsAnswer::fail(1, "connection gone"));
    assert_eq!(call(&app).await, "failed [1], retry ok: true");
    let sends = app.ws().sends();
    assert_eq!(sends.len(), 2);
    let failures = &sends[0].ack().unwrap().failures;
    assert_eq!(failures.len(), 1);
    assert_eq!((failures[0].index, failures[0].connection_id.as_str()), (1, "c-2"));
    assert_eq!(failures[0].error_message, "connection gone");
    // The retry is exactly the failed message, with its id and bytes.
    assert_eq!(sends[1].messages(), &sends[0].messages()[1..2]);
}

#[tokio::test]
async fn failures_by_connection_and_for_all() {
    let app = app();
    app.ws().answer_next(WsAnswer::fail_connection("c-3", "gone").and_fail(0, "slow"));
    assert_eq!(call(&app).await, "failed [0, 2], retry ok: true");
    app.ws().answer_next(WsAnswer::fail_all("overloaded")).answer_next(WsAnswer::fail_all("still"));
    assert_eq!(call(&app).await, "failed [0, 1, 2], retry ok: false");
}

#[tokio::test(start_paused = true)]
async fn no_answer_leaves_the_sender_to_its_timeout() {
    let app = app();
    app.ws().answer_next(WsAnswer::no_answer());
    assert_eq!(call(&app).await, "timed out");
    assert!(app.ws().sends()[0].ack().is_none());
}

#[tokio::test]
async fn a_disconnect_ends_the_send() {
    let app = app();
    app.ws().answer_next(WsAnswer::disconnect());
    assert_eq!(call(&app).await, "disconnected");
    assert!(app.ws().sends()[0].is_disconnected());
}

#[tokio::test(start_paused = true)]
async fn delayed_answers_arrive_out_of_order() {
    let app = app();
    app.ws().answer_next(WsAnswer::succeed().after(Duration::from_millis(50)));
    app.ws().answer_next(WsAnswer::succeed());
    let first = app.call("POST::/broadcast", TestRequest::post("/broadcast")).start();
    tokio::task::yield_now().await;
    let second = app.call("POST::/broadcast", TestRequest::post("/broadcast")).start();
    let second = second.await;
    assert!(!first.is_finished());
    assert_eq!(second.expect_http().text(), "sent 3");
    assert_eq!(first.await.expect_http().text(), "sent 3");
}

#[tokio::test]
async fn answers_by_a_function_once_the_queue_is_used_up() {
    let app = app();
    app.ws().answer_with(
        |send| {
            if send.messages.len() > 1 { WsAnswer::fail(2, "too many") } else { WsAnswer::succeed() }
        },
    );
    assert_eq!(call(&app).await, "failed [2], retry ok: true");
    app.ws().answer_next(WsAnswer::succeed());
    assert_eq!(call(&app).await, "sent 3");
    app.ws().answer_all(WsAnswer::disconnect());
    assert_eq!(call(&app).await, "disconnected");
}

#[tokio::test]
async fn an_exact_acknowledgement_and_an_index_outside_the_batch() {
    let app = app();
    let ack = pb::WsSendAck { correlation_id: String::new(), success: false, failures: vec![] };
    app.ws().answer_next(WsAnswer::ack(ack));
    // A failed batch with nothing named: the sender cannot say which failed.
    assert_eq!(call(&app).await, "failed [], retry ok: true");
    let sends = app.ws().sends();
    assert_eq!(sends[0].ack().unwrap().correlation_id, sends[0].send().correlation_id);

    app.ws().clear();
    app.ws().answer_next(WsAnswer::fail(7, "which?"));
    assert_eq!(call(&app).await, "failed [], retry ok: true");
    let sends = app.ws().sends();
    let failures = &sends[0].ack().unwrap().failures;
    assert_eq!((failures[0].index, failures[0].connection_id.as_str()), (7, ""));
}

#[tokio::test]
async fn the_recorder_is_usable_on_its_own() {
    let ws = WsRecorder::new();
    let send = pb::WsSend { correlation_id: "x".into(), messages: vec![] };
    let ack = ws.send(send).await.unwrap();
    assert!(ack.success);
    assert_eq!(ws.sends()[0].event_id(), None);
    assert!(format!("{ws:?}").contains("WsRecorder"));
}

#[tokio::test]
async fn a_websocket_handler_answering_on_its_connection() {
    async fn echo(cx: Context, message: Message) -> Result<(), Error> {
        let text = message.text().unwrap_or_default().to_string();
        send_batch(&cx, vec![Outbound::text(message.connection_id(), text)]).await?;
        Ok(())
    }
    let app = App::new().without_compiled_handlers().websocket("event::$default", echo).into_test();
    app.ws().answer_next(WsAnswer::fail(0, "gone"));
    let ack = app.call("event::$default", TestMessage::text("hi")).await.expect_ack();
    assert!(ack.error_message().unwrap().contains("gone"), "{ack}");
    let ack = app.call("event::$default", TestMessage::text("again")).await.expect_ack();
    assert!(ack.is_success());
    assert_eq!(app.ws().messages_to(crate::testing::TEST_CONNECTION_ID).len(), 2);
}

#[tokio::test]
async fn a_detached_context_sends_nowhere() {
    let sent = send_batch(&Context::detached("t"), three()).await;
    assert!(matches!(sent, Err(SendError::Disconnected { .. })), "{sent:?}");
}
