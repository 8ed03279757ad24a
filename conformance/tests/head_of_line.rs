//! No head-of-line blocking. By default the stream is served from a thread
//! of its own: even handlers blocking every worker thread stop neither frames
//! nor the answers the SDK gives for handlers (deadlines, cancellations).
//! With `CELERITY_IO_THREAD=false` the stream is a task on the application's
//! runtime, and a handler blocking one worker leaves the others serving it
//! (with the driver's watchdog: without it this stalled in a third of runs).

mod common;

use std::time::Duration;

use celerity_testkit::proto::v1::cancel::Reason;
use common::{WAIT, get, handler_error, ok_body, sleep, start};

/// Long enough that everything below happens while the workers are
/// blocked, with seconds to spare on a loaded machine.
const BLOCK_MS: &str = "5000";

#[tokio::test]
async fn handlers_blocking_every_worker_thread_stop_neither_frames_nor_deadlines_nor_cancels() {
    // Two worker threads, both about to be blocked.
    let mut app = start(&[("TOKIO_WORKER_THREADS", "2"), ("CELERITY_HANDLER_CONCURRENCY", "8")]).await;
    let blockers: Vec<String> =
        (0..2).map(|_| app.conn.dispatch(get("/block").query("ms", BLOCK_MS)).unwrap()).collect();
    wait_for_blocked_workers(&app.process, 2).await;

    // No handler can run now. The SDK still reads these frames and answers
    // for the handlers it cannot run, at their deadline or cancellation.
    let short = app.conn.dispatch(get("/fast").deadline_in(Duration::from_millis(300))).unwrap();
    let cancelled = app.conn.dispatch(sleep(60_000, false)).unwrap();
    let later = app.conn.dispatch(get("/fast")).unwrap();
    app.conn.cancel(&cancelled, Reason::CallerGone).unwrap();

    let result = app.conn.result(&short).await.unwrap();
    assert_eq!(handler_error(&result).r#type, "DeadlineExceeded");
    assert_eq!(result.credit_grant, 1);
    let result = app.conn.result(&cancelled).await.unwrap();
    assert_eq!(handler_error(&result).r#type, "Cancelled");
    assert_eq!(result.credit_grant, 1);
    // Both were answered while the workers were still blocked.
    for id in &blockers {
        assert!(app.conn.try_result(id).is_none(), "the deadline and cancel answers came only after unblocking");
    }
    assert!(app.conn.try_result(&later).is_none(), "nothing could run {later} yet");

    // Once the workers are free, the waiting event runs, and the blocking
    // handlers answer for themselves.
    assert_eq!(ok_body(&app.conn.result(&later).await.unwrap()), "ok");
    for id in &blockers {
        assert_eq!(ok_body(&app.conn.result(id).await.unwrap()), "unblocked");
    }
    app.drain_and_exit().await;
}

#[tokio::test]
async fn a_handler_blocking_one_worker_leaves_the_others_serving() {
    one_worker_blocked(&[]).await;
}

#[tokio::test]
async fn with_the_stream_as_a_task_a_handler_blocking_one_worker_leaves_the_others_serving() {
    one_worker_blocked(&[("CELERITY_IO_THREAD", "false")]).await;
}

async fn one_worker_blocked(env: &[(&str, &str)]) {
    let mut env = env.to_vec();
    env.extend([("TOKIO_WORKER_THREADS", "2"), ("CELERITY_HANDLER_CONCURRENCY", "8")]);
    let mut app = start(&env).await;
    let blocker = app.conn.dispatch(get("/block").query("ms", BLOCK_MS)).unwrap();
    wait_for_blocked_workers(&app.process, 1).await;
    // The other worker serves a stream of events meanwhile, including a
    // cancellation honoured by its handler.
    for _ in 0..20 {
        assert_eq!(ok_body(&app.conn.call(get("/fast")).await.unwrap()), "ok");
    }
    let honouring = app.conn.dispatch(sleep(60_000, true)).unwrap();
    app.conn.cancel(&honouring, Reason::CallerGone).unwrap();
    assert_eq!(ok_body(&app.conn.result(&honouring).await.unwrap()), "stopped: caller gone");
    assert!(app.conn.try_result(&blocker).is_none(), "served while the blocker still blocked");
    assert_eq!(ok_body(&app.conn.result(&blocker).await.unwrap()), "unblocked");
    app.drain_and_exit().await;
}

/// Waits until `n` handlers have said they block their worker thread.
async fn wait_for_blocked_workers(process: &celerity_testkit::HandlerProcess, n: usize) {
    let started = tokio::time::Instant::now();
    loop {
        if process.stderr_text().matches("blocks its worker thread").count() >= n {
            return;
        }
        assert!(started.elapsed() < WAIT, "the blocking handlers did not start\n{}", process.output_text());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
