//! Deadlines, `Cancel`, and the grace before an event is answered for its
//! handler.

mod common;

use std::time::Duration;

use celerity_testkit::proto::v1::cancel::Reason;
use common::{WAIT, get, handler_error, ok_body, sleep, start};

#[tokio::test]
async fn the_handler_sees_its_deadline() {
    let mut app = start(&[]).await;
    let event = get("/deadline").deadline_in(Duration::from_secs(42)).build();
    let deadline = event.deadline_unix_ms;
    let result = app.conn.call(event).await.unwrap();
    assert_eq!(ok_body(&result), deadline.to_string());
    let result = app.conn.call(get("/deadline").no_deadline()).await.unwrap();
    assert_eq!(ok_body(&result), "0", "deadline 0 is no deadline");
    app.drain_and_exit().await;
}

#[tokio::test]
async fn a_passed_deadline_is_answered_deadline_exceeded_with_its_credit_after_the_grace() {
    let mut app = start(&[]).await;
    let id = app.conn.dispatch(sleep(60_000, false).deadline_in(Duration::from_millis(300))).unwrap();
    let result = app.conn.result(&id).await.unwrap();
    let error = handler_error(&result);
    assert_eq!(error.r#type, "DeadlineExceeded");
    assert!(error.message.contains("deadline"), "{}", error.message);
    assert!(error.stack.is_empty());
    assert_eq!(result.credit_grant, 1);
    assert_eq!(app.conn.window(), 4);
    // The process goes on serving.
    assert_eq!(ok_body(&app.conn.call(get("/fast")).await.unwrap()), "ok");
    app.drain_and_exit().await;
}

#[tokio::test]
async fn a_handler_that_honours_its_deadline_answers_for_itself() {
    let mut app = start(&[]).await;
    let id = app.conn.dispatch(sleep(60_000, true).deadline_in(Duration::from_millis(300))).unwrap();
    let result = app.conn.result(&id).await.unwrap();
    assert_eq!(ok_body(&result), "stopped: deadline exceeded", "the cancellation fires with its reason");
    assert_eq!(result.credit_grant, 1);
    app.drain_and_exit().await;
}

#[tokio::test]
async fn a_cancel_reaches_the_handler_with_its_reason() {
    let mut app = start(&[]).await;
    for (reason, text) in [(Reason::CallerGone, "caller gone"), (Reason::Shutdown, "shutdown")] {
        let id = app.conn.dispatch(sleep(60_000, true)).unwrap();
        // Other work flows meanwhile.
        app.conn.call(get("/fast")).await.unwrap();
        app.conn.cancel(&id, reason).unwrap();
        let result = app.conn.result(&id).await.unwrap();
        assert_eq!(ok_body(&result), format!("stopped: {text}"));
        assert_eq!(result.credit_grant, 1);
    }
    app.drain_and_exit().await;
}

#[tokio::test]
async fn a_handler_that_ignores_a_cancel_is_answered_cancelled_after_the_grace() {
    let mut app = start(&[]).await;
    let id = app.conn.dispatch(sleep(60_000, false)).unwrap();
    app.conn.cancel(&id, Reason::CallerGone).unwrap();
    let result = app.conn.result(&id).await.unwrap();
    let error = handler_error(&result);
    assert_eq!(error.r#type, "Cancelled");
    assert!(error.message.contains("caller gone"), "{}", error.message);
    assert_eq!(result.credit_grant, 1);
    assert_eq!(app.conn.window(), 4);
    app.drain_and_exit().await;
}

#[tokio::test]
async fn a_cancel_for_an_id_no_longer_held_is_ignored_quietly() {
    let mut app = start(&[]).await;
    // Never dispatched.
    app.conn.cancel("no-such-event", Reason::CallerGone).unwrap();
    // Already answered: the Cancel crossed the Result on the wire.
    let done = app.conn.call(get("/fast")).await.unwrap();
    app.conn.cancel(&done.id, Reason::DeadlineExceeded).unwrap();
    // Both were read (frames are handled in order): the stream serves on,
    // with no extra frame and nothing in the log about them.
    assert_eq!(ok_body(&app.conn.call(get("/fast")).await.unwrap()), "ok");
    assert!(app.conn.try_next_frame().is_none(), "no frame answers a Cancel");
    assert_eq!(app.conn.credit(), 4);
    app.conn.assert_no_violations();
    app.drain_and_exit().await;
    let output = app.process.output_text();
    assert!(!output.contains("no-such-event") && !output.contains(&done.id), "log noise:\n{output}");
    assert!(!output.contains("WARN") && !output.contains("ERROR"), "log noise:\n{output}");
}

#[tokio::test]
async fn the_grace_is_configurable_and_refused_beyond_the_runtimes_reclaim() {
    // A longer grace still answers (here 1 s; the default).
    let mut app = start(&[("CELERITY_CANCEL_GRACE_MS", "1000")]).await;
    let id = app.conn.dispatch(sleep(60_000, false)).unwrap();
    app.conn.cancel(&id, Reason::CallerGone).unwrap();
    assert_eq!(handler_error(&app.conn.result(&id).await.unwrap()).r#type, "Cancelled");
    app.drain_and_exit().await;

    // A grace of 5 s or more would be answered after the runtime took the
    // place back itself: refused at startup, naming the setting.
    let mut process = celerity_testkit::HandlerProcess::command(env!("CARGO_BIN_EXE_protocol-app"))
        .env("CELERITY_RUNTIME_SOCKET", "/nonexistent/runtime.sock")
        .env("CELERITY_CANCEL_GRACE_MS", "5000")
        .spawn()
        .unwrap();
    let status = process.wait_timeout(WAIT).await.expect("exits at once");
    assert!(!status.success());
    let output = process.output_text();
    assert!(output.contains("CELERITY_CANCEL_GRACE_MS") && output.contains("below 5000 ms"), "{output}");
}
