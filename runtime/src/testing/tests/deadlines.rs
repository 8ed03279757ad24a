//! Deadlines and cancellations, driven by the test, answered as the session
//! answers them. Time is paused: tokio advances it to the next timer.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use tokio::time::Instant;

use crate::App;
use crate::consumer::RawRecord;
use crate::testing::{TestApp, TestBatch, TestRequest};
use crate::{CancelReason, Context, Error};

const GRACE: Duration = Duration::from_millis(100);

/// Answers with why it was cancelled.
async fn polite(cx: Context) -> String {
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_secs(3600)) => "finished".to_string(),
        reason = cx.cancelled() => format!("stopped: {reason}"),
    }
}

/// Ignores its cancellation.
async fn stubborn() -> &'static str {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    "too late"
}

/// Takes `took` to finish whatever happens.
async fn slow(cx: Context) -> String {
    tokio::time::sleep(Duration::from_millis(50)).await;
    format!("done, cancelled: {:?}", cx.cancel_reason())
}

fn app() -> TestApp {
    App::new()
        .without_compiled_handlers()
        .http("GET::/polite", polite)
        .http("GET::/stubborn", stubborn)
        .http("GET::/slow", slow)
        .into_test()
        .cancel_grace(GRACE)
}

#[tokio::test(start_paused = true)]
async fn the_deadline_fires_the_handler_s_cancellation() {
    let start = Instant::now();
    let outcome = app().call("GET::/polite", TestRequest::get("/polite")).deadline_in(Duration::from_secs(2)).await;
    assert_eq!(outcome.expect_http().text(), "stopped: deadline exceeded");
    assert_eq!(start.elapsed(), Duration::from_secs(2));
}

#[tokio::test(start_paused = true)]
async fn a_handler_past_its_deadline_and_the_grace_is_answered_for() {
    let start = Instant::now();
    let outcome = app().call("GET::/stubborn", TestRequest::get("/stubborn")).deadline_in(Duration::from_secs(2)).await;
    let error = outcome.expect_error();
    assert_eq!(error.error_type(), "DeadlineExceeded");
    assert_eq!(error.message(), "the handler ran past its deadline and did not finish");
    assert_eq!(start.elapsed(), Duration::from_secs(2) + GRACE);
}

#[tokio::test(start_paused = true)]
async fn a_handler_that_finishes_within_the_grace_answers_itself() {
    let outcome = app().call("GET::/slow", TestRequest::get("/slow")).deadline_in(Duration::from_millis(10)).await;
    assert_eq!(outcome.expect_http().text(), "done, cancelled: Some(DeadlineExceeded)");
    // With no grace at all, it is answered for at the deadline.
    let outcome = app()
        .call("GET::/slow", TestRequest::get("/slow"))
        .deadline_in(Duration::from_millis(10))
        .grace(Duration::ZERO);
    assert!(outcome.await.expect_error().is_deadline_exceeded());
}

#[tokio::test(start_paused = true)]
async fn the_context_has_the_deadline() {
    async fn remaining(cx: Context) -> String {
        let deadline = cx.deadline().expect("a deadline");
        let left = deadline.duration_since(SystemTime::now()).unwrap_or_default();
        format!("{}", left <= Duration::from_secs(30) && left >= Duration::from_secs(29))
    }
    let app = App::new().without_compiled_handlers().http("GET::/", remaining).into_test();
    let outcome = app.call("GET::/", TestRequest::get("/")).deadline_in(Duration::from_secs(30)).await;
    assert_eq!(outcome.expect_http().text(), "true");
}

#[tokio::test(start_paused = true)]
async fn a_deadline_already_passed() {
    let ran = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&ran);
    let handler = move |cx: Context| {
        let seen = Arc::clone(&seen);
        async move {
            seen.store(true, Ordering::SeqCst);
            format!("{:?}", cx.cancel_reason())
        }
    };
    let app = App::new().without_compiled_handlers().http("GET::/", handler).into_test().cancel_grace(GRACE);

    // Within a grace of the deadline: the handler starts already cancelled.
    let past = SystemTime::now() - Duration::from_millis(10);
    let outcome = app.call("GET::/", TestRequest::get("/")).deadline_at(past).await;
    assert_eq!(outcome.expect_http().text(), "Some(DeadlineExceeded)");
    assert!(ran.swap(false, Ordering::SeqCst));

    // More than a grace ago: answered for at once; the handler never runs.
    let past = SystemTime::now() - Duration::from_secs(10);
    let outcome = app.call("GET::/", TestRequest::get("/")).deadline_at(past).await;
    assert!(outcome.expect_error().is_deadline_exceeded());
    assert!(!ran.load(Ordering::SeqCst));
}

#[tokio::test(start_paused = true)]
async fn a_scheduled_cancellation_fires_with_its_reason() {
    let start = Instant::now();
    let outcome = app()
        .call("GET::/polite", TestRequest::get("/polite"))
        .cancel_after(Duration::from_millis(300), CancelReason::CallerGone)
        .await;
    assert_eq!(outcome.expect_http().text(), "stopped: caller gone");
    assert_eq!(start.elapsed(), Duration::from_millis(300));

    let outcome = app()
        .call("GET::/stubborn", TestRequest::get("/stubborn"))
        .cancel_after(Duration::from_millis(300), CancelReason::Shutdown)
        .await;
    let error = outcome.expect_error();
    assert_eq!(error.error_type(), "Cancelled");
    assert_eq!(error.message(), "the handler was cancelled (shutdown) and did not finish");
    assert_eq!(start.elapsed(), Duration::from_millis(300) * 2 + GRACE);
}

#[tokio::test(start_paused = true)]
async fn a_started_call_is_cancelled_mid_flight() {
    let app = app();
    let call = app.call("GET::/stubborn", TestRequest::get("/stubborn")).id("ev-1").start();
    assert_eq!(call.context().event_id(), "ev-1");
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert!(!call.is_finished() && !call.context().is_cancelled());
    call.cancel(CancelReason::CallerGone);
    // The first reason stays.
    call.cancel(CancelReason::Shutdown);
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(call.context().cancel_reason(), Some(CancelReason::CallerGone));
    let error = call.await.expect_error();
    assert_eq!(error.message(), "the handler was cancelled (caller gone) and did not finish");
}

#[tokio::test(start_paused = true)]
async fn a_cancellation_after_the_deadline_changes_nothing() {
    let app = app();
    let call = app.call("GET::/stubborn", TestRequest::get("/stubborn")).deadline_in(Duration::from_millis(10)).start();
    tokio::time::sleep(Duration::from_millis(20)).await;
    call.cancel(CancelReason::CallerGone);
    let error = call.await.expect_error();
    assert!(error.is_deadline_exceeded(), "{error}");
}

#[tokio::test(start_paused = true)]
async fn a_cancellation_with_reason_deadline_exceeded_is_answered_as_one() {
    let call = app().call("GET::/stubborn", TestRequest::get("/stubborn")).start();
    call.cancel(CancelReason::DeadlineExceeded);
    assert!(call.await.expect_error().is_deadline_exceeded());
}

#[tokio::test(start_paused = true)]
async fn dropping_a_started_call_stops_it() {
    let finished = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&finished);
    let handler = move || {
        let seen = Arc::clone(&seen);
        async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            seen.store(true, Ordering::SeqCst);
        }
    };
    let app = App::new().without_compiled_handlers().http("GET::/", handler).into_test();
    let call = app.call("GET::/", TestRequest::get("/")).start();
    tokio::task::yield_now().await;
    drop(call);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!finished.load(Ordering::SeqCst));
}

#[tokio::test(start_paused = true)]
async fn a_consumer_past_its_deadline_names_the_records_not_run() {
    async fn process(record: RawRecord) -> Result<(), Error> {
        tokio::time::sleep(Duration::from_millis(40)).await;
        if record.message_id() == "m-1" { Ok(()) } else { Err(Error::msg("failed")) }
    }
    let app = App::new()
        .without_compiled_handlers()
        .consumer("source::q::p", process)
        .into_test()
        .cancel_grace(Duration::from_secs(1));
    let batch = TestBatch::new().record("m-1", "{}").record("m-2", "{}").record("m-3", "{}");
    let result = app.call("source::q::p", batch).deadline_in(Duration::from_millis(60)).await.expect_batch();
    // m-1 succeeded, m-2 was running at the deadline and failed on its own,
    // m-3 was never started.
    assert_eq!(result.failed_ids(), ["m-2", "m-3"]);
    assert_eq!(result.failure("m-3"), Some("not processed: cancelled (deadline exceeded)"));
}

/// What the protocol core itself answers for a handler still running one
/// grace past its deadline: driven by hand, as the driver would, with the
/// handler never finishing.
fn session_answer_past_the_deadline(tag: &str) -> celerity_proto::v1::result::Outcome {
    use celerity_proto::v1::{self as pb, handler_message, runtime_message};

    use crate::kind::HandlerKind;
    use crate::session::{Action, HandlerKey, HandlerSpec, Input, Session, SessionConfig};

    let frame = |frame| Input::from(pb::RuntimeMessage { frame: Some(frame) });
    let mut config = SessionConfig::new(vec![HandlerSpec::new(HandlerKey::Tag(tag.into()), HandlerKind::Http, "h")], 1);
    config.cancel_grace_ms = GRACE.as_millis() as u64;
    let t0 = 1_000_000;
    let mut session = Session::new(config, t0);
    let declared = pb::HandlerConfig { handler_name: "h".into(), handler_tag: tag.into(), ..Default::default() };
    session.handle(
        t0,
        frame(runtime_message::Frame::Config(pb::RuntimeConfig { handlers: vec![declared], ..Default::default() })),
    );
    session.handle(t0, frame(runtime_message::Frame::ReadyAck(pb::ReadyAck { accepted: true, ..Default::default() })));
    let dispatch = pb::Dispatch {
        id: "ev-1".into(),
        handler_tag: tag.into(),
        deadline_unix_ms: t0 + 2_000,
        source: Some(pb::dispatch::Source::Http(pb::HttpRequest { method: "GET".into(), ..Default::default() })),
        ..Default::default()
    };
    session.handle(t0, frame(runtime_message::Frame::Dispatch(dispatch)));
    session.handle(t0 + 2_000, Input::Tick);
    session.handle(t0 + 2_000 + GRACE.as_millis() as i64, Input::Tick);
    std::iter::from_fn(|| session.poll_action())
        .find_map(|action| match action {
            Action::Send(pb::HandlerMessage { frame: Some(handler_message::Frame::Result(result)) }) => result.outcome,
            _ => None,
        })
        .expect("the session answers for the handler")
}

#[tokio::test(start_paused = true)]
async fn a_deadline_is_answered_exactly_as_the_session_answers_it() {
    let outcome = app().call("GET::/stubborn", TestRequest::get("/stubborn")).deadline_in(Duration::from_secs(2)).await;
    assert_eq!(outcome.into_wire(), session_answer_past_the_deadline("GET::/stubborn"));
}
