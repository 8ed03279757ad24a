//! Drain from the runtime, SIGTERM and SIGINT, the application's own stop,
//! and the stream ending without a drain.

mod common;

use std::time::Duration;

use celerity_testkit::StreamEnd;
use celerity_testkit::proto::v1::cancel::Reason;
use common::{WAIT, get, handler_error, ok_body, sleep, start};

#[tokio::test]
async fn drain_finishes_held_work_keeps_reading_frames_then_closes_and_exits_zero() {
    let mut app = start(&[]).await;
    let finishing = app.conn.dispatch(sleep(300, false)).unwrap();
    let waiting = app.conn.dispatch(sleep(60_000, true)).unwrap();
    app.conn.drain_in(Duration::from_secs(30)).unwrap();
    // Work held at the Drain is finished.
    assert_eq!(ok_body(&app.conn.result(&finishing).await.unwrap()), "slept");
    // Frames are still read after Drain: a Cancel still reaches its handler.
    app.conn.cancel(&waiting, Reason::Shutdown).unwrap();
    assert_eq!(ok_body(&app.conn.result(&waiting).await.unwrap()), "stopped: shutdown");
    // Nothing left: the stream is closed cleanly, and the process exits 0.
    let end = app.conn.closed_timeout(WAIT).await.unwrap();
    assert_eq!(end, StreamEnd::Clean);
    let status = app.exit().await;
    assert!(status.success(), "{status}\n{}", app.process.output_text());
    assert!(app.conn.handler_draining().is_none(), "the runtime's drain needs no Draining");
    app.conn.assert_no_violations();
}

#[tokio::test]
async fn a_dispatch_after_drain_is_not_run() {
    let mut app = start(&[]).await;
    let held = app.conn.dispatch(sleep(60_000, true)).unwrap();
    app.conn.drain_in(Duration::from_secs(30)).unwrap();
    let late = app.conn.dispatch_unchecked(get("/fast")).unwrap();
    let refused = app.conn.result(&late).await.unwrap();
    assert_eq!(handler_error(&refused).r#type, "NotAccepting");
    assert_eq!(refused.credit_grant, 1);
    app.conn.cancel(&held, Reason::Shutdown).unwrap();
    app.conn.result(&held).await.unwrap();
    assert!(app.conn.closed_timeout(WAIT).await.unwrap().is_clean());
    assert!(app.exit().await.success());
    app.conn.assert_no_violations();
}

#[tokio::test]
async fn at_the_drain_deadline_what_is_left_is_dropped_and_the_process_exits_zero() {
    let mut app = start(&[]).await;
    let stuck = app.conn.dispatch(sleep(60_000, false)).unwrap();
    app.conn.drain_in(Duration::from_millis(300)).unwrap();
    let result = app.conn.result(&stuck).await.unwrap();
    let error = handler_error(&result);
    assert_eq!(error.r#type, "Cancelled");
    assert!(error.message.contains("drain deadline"), "{}", error.message);
    assert!(app.conn.closed_timeout(WAIT).await.unwrap().is_clean());
    let status = app.exit().await;
    assert!(status.success(), "{status}\n{}", app.process.output_text());
    app.conn.assert_no_violations();
}

#[tokio::test]
async fn held_work_is_told_to_stop_a_grace_before_the_drain_deadline() {
    let mut app = start(&[]).await;
    let honouring = app.conn.dispatch(sleep(60_000, true)).unwrap();
    app.conn.drain_in(Duration::from_millis(1_500)).unwrap();
    // The handler's cancellation fires (reason shutdown) in time for it to
    // answer for itself before the deadline.
    assert_eq!(ok_body(&app.conn.result(&honouring).await.unwrap()), "stopped: shutdown");
    assert!(app.conn.closed_timeout(WAIT).await.unwrap().is_clean());
    assert!(app.exit().await.success(), "{}", app.process.output_text());
    app.conn.assert_no_violations();
}

#[tokio::test]
async fn sigterm_sends_draining_finishes_what_is_held_and_exits_zero() {
    let mut app = start(&[("CELERITY_SHUTDOWN_GRACE_MS", "20000")]).await;
    let held = app.conn.dispatch(sleep(500, false)).unwrap();
    // Wait until the stream is up and the event held, then signal.
    app.conn.call(get("/fast")).await.unwrap();
    let before = now_ms();
    app.process.terminate().unwrap();
    let draining = app.conn.next_draining().await.unwrap();
    assert!(
        draining.deadline_unix_ms >= before + 19_000 && draining.deadline_unix_ms <= now_ms() + 20_000,
        "Draining's deadline is now + the shutdown grace: {}",
        draining.deadline_unix_ms - before
    );
    assert_eq!(ok_body(&app.conn.result(&held).await.unwrap()), "slept");
    assert!(app.conn.closed_timeout(WAIT).await.unwrap().is_clean());
    let status = app.exit().await;
    assert!(status.success(), "{status}\n{}", app.process.output_text());
    app.conn.assert_no_violations();
}

#[tokio::test]
async fn sigint_with_nothing_held_drains_and_exits_zero() {
    let mut app = start(&[]).await;
    app.conn.call(get("/fast")).await.unwrap();
    app.process.signal(libc::SIGINT).unwrap();
    app.conn.next_draining().await.unwrap();
    assert!(app.conn.closed_timeout(WAIT).await.unwrap().is_clean());
    assert!(app.exit().await.success(), "{}", app.process.output_text());
    app.conn.assert_no_violations();
}

#[tokio::test]
async fn a_second_signal_exits_at_once_with_130() {
    let mut app = start(&[]).await;
    let stuck = app.conn.dispatch(sleep(60_000, false)).unwrap();
    app.conn.call(get("/fast")).await.unwrap();
    app.process.terminate().unwrap();
    app.conn.next_draining().await.unwrap();
    app.process.signal(libc::SIGINT).unwrap();
    let status = app.exit().await;
    assert_eq!(status.code(), Some(130), "{status}\n{}", app.process.output_text());
    assert!(app.process.stderr_text().contains("second shutdown signal"), "{}", app.process.output_text());
    // Even stopping at once, the held event was answered.
    let result = app.conn.result(&stuck).await.unwrap();
    assert_eq!(handler_error(&result).r#type, "Cancelled");
    app.conn.assert_no_violations();
}

#[tokio::test]
async fn sigterm_before_drain_is_not_interrupted_by_the_drain() {
    let mut app = start(&[]).await;
    let held = app.conn.dispatch(sleep(400, false)).unwrap();
    app.conn.call(get("/fast")).await.unwrap();
    app.process.terminate().unwrap();
    app.conn.next_draining().await.unwrap();
    app.conn.drain_in(Duration::from_secs(30)).unwrap();
    assert_eq!(ok_body(&app.conn.result(&held).await.unwrap()), "slept");
    assert!(app.conn.closed_timeout(WAIT).await.unwrap().is_clean());
    assert!(app.exit().await.success(), "{}", app.process.output_text());
    app.conn.assert_no_violations();
}

#[tokio::test]
async fn sigterm_after_drain_is_the_first_signal_not_the_second() {
    let mut app = start(&[]).await;
    let held = app.conn.dispatch(sleep(60_000, true)).unwrap();
    app.conn.drain_in(Duration::from_secs(30)).unwrap();
    app.process.terminate().unwrap();
    app.conn.next_draining().await.unwrap();
    // Still serving what it holds: a Cancel reaches it, and its answer is
    // its own.
    app.conn.cancel(&held, Reason::Shutdown).unwrap();
    assert_eq!(ok_body(&app.conn.result(&held).await.unwrap()), "stopped: shutdown");
    assert!(app.conn.closed_timeout(WAIT).await.unwrap().is_clean());
    let status = app.exit().await;
    assert!(status.success(), "{status}\n{}", app.process.output_text());
    app.conn.assert_no_violations();
}

#[tokio::test]
async fn the_applications_shutdown_drains_and_exits_zero() {
    let mut app = start(&[]).await;
    let result = app.conn.call(get("/shutdown")).await.unwrap();
    assert_eq!(ok_body(&result), "stopping");
    app.conn.next_draining().await.unwrap();
    assert!(app.conn.closed_timeout(WAIT).await.unwrap().is_clean());
    assert!(app.exit().await.success(), "{}", app.process.output_text());
    app.conn.assert_no_violations();
}

#[tokio::test]
async fn a_stream_closed_without_drain_is_fatal_nothing_is_sent_and_the_reason_is_logged() {
    let mut app = start(&[]).await;
    let lost = app.conn.dispatch(sleep(60_000, false)).unwrap();
    app.conn.call(get("/fast")).await.unwrap();
    app.conn.close();
    let status = app.exit().await;
    assert!(!status.success(), "a stream closed without Drain must end the process with a failure");
    let stderr = app.process.stderr_text();
    assert!(stderr.contains("closed the stream without draining"), "{stderr}");
    assert!(stderr.contains("1 event(s) in flight were abandoned"), "{stderr}");
    assert!(app.conn.try_result(&lost).is_none(), "nothing is sent for the abandoned event");
    app.conn.assert_no_violations();
}

#[tokio::test]
async fn a_stream_that_fails_is_fatal_and_names_the_failure() {
    let mut app = start(&[]).await;
    app.conn.call(get("/fast")).await.unwrap();
    app.conn.close_with_status(tonic::Status::unavailable("the runtime fell over"));
    let status = app.exit().await;
    assert!(!status.success());
    let stderr = app.process.stderr_text();
    assert!(stderr.contains("without draining") && stderr.contains("the runtime fell over"), "{stderr}");
    app.conn.assert_no_violations();
}

#[tokio::test]
async fn sigterm_before_the_runtime_answers_stops_cleanly() {
    // Nothing listens yet: the process is still connecting.
    let dir = tempdir();
    let mut process = celerity_testkit::HandlerProcess::command(env!("CARGO_BIN_EXE_protocol-app"))
        .env("CELERITY_RUNTIME_SOCKET", dir.join("runtime.sock"))
        .env("CELERITY_CONNECT_TIMEOUT_MS", "60000")
        .env("RUST_LOG", "debug")
        .spawn()
        .unwrap();
    assert!(process.wait_for_output("runtime not reachable yet", WAIT).await, "{}", process.output_text());
    process.terminate().unwrap();
    let status = process.wait_timeout(WAIT).await.expect("exits");
    assert!(status.success(), "{status}\n{}", process.output_text());
    let _ = std::fs::remove_dir_all(dir);
}

fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("celerity-conformance-{}-{}", std::process::id(), now_ms()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}
