//! Worker pool, credit window, per-tag caps, withholding and resizing.

mod common;

use std::time::Duration;

use celerity_conformance::CAPPED_MAX;
use celerity_testkit::proto::v1::{HandlerLimit, handler_message};
use celerity_testkit::{DispatchRefusal, Error};
use common::{WAIT, get, handler_error, ok_body, sleep, start};

#[tokio::test]
async fn ready_declares_the_pool_size_as_credit_and_the_caps_as_limits() {
    let mut app = start(&[("CELERITY_HANDLER_CONCURRENCY", "3")]).await;
    let ready = app.conn.ready().clone();
    assert_eq!(ready.initial_credit, 3, "the initial credit is the worker pool size");
    assert_eq!(ready.limits, [HandlerLimit { handler_tag: "GET::/capped".into(), max_concurrent: CAPPED_MAX }]);
    assert_eq!(ready.handler_tags.len(), celerity_conformance::HANDLERS.len());
    assert_eq!(app.conn.credit(), 3);
    app.drain_and_exit().await;
}

#[tokio::test]
async fn every_result_returns_its_place() {
    let mut app = start(&[("CELERITY_HANDLER_CONCURRENCY", "2")]).await;
    for _ in 0..10 {
        let result = app.conn.call(get("/fast")).await.unwrap();
        assert_eq!(result.credit_grant, 1);
        assert_eq!(ok_body(&result), "ok");
    }
    // Failures return their place too.
    let failed = app.conn.call(get("/error")).await.unwrap();
    assert_eq!(failed.credit_grant, 1);
    assert_eq!(handler_error(&failed).r#type, "InventoryError");
    assert_eq!(app.conn.window(), 2);
    assert_eq!(app.conn.credit(), 2);
    app.conn.assert_no_violations();
    app.drain_and_exit().await;
}

#[tokio::test]
async fn over_dispatch_beyond_credit_gets_a_bounded_answer() {
    let mut app = start(&[("CELERITY_HANDLER_CONCURRENCY", "2")]).await;
    let held: Vec<String> = (0..2).map(|_| app.conn.dispatch(sleep(60_000, true)).unwrap()).collect();
    assert!(matches!(app.conn.dispatch(get("/fast")), Err(Error::DispatchRefused(DispatchRefusal::NoCredit { .. }))));
    // A runtime that ignores the window: each extra event is answered at
    // once without running (never queued), and gives back the place it took.
    for _ in 0..20 {
        let id = app.conn.dispatch_unchecked(sleep(60_000, false)).unwrap();
        let result = app.conn.result(&id).await.unwrap();
        assert_eq!(handler_error(&result).r#type, "OverCapacity");
        assert_eq!(result.credit_grant, 1);
    }
    assert_eq!(app.conn.window(), 2);
    assert!(
        app.process.wait_for_output("beyond the credit window", WAIT).await,
        "the over-dispatch is logged\n{}",
        app.process.output_text()
    );
    // The held events are still running and are answered normally.
    for id in &held {
        app.conn.cancel(id, celerity_testkit::proto::v1::cancel::Reason::CallerGone).unwrap();
        assert_eq!(ok_body(&app.conn.result(id).await.unwrap()), "stopped: caller gone");
    }
    app.drain_and_exit().await;
}

#[tokio::test]
async fn a_per_tag_cap_is_declared_and_enforced_locally() {
    let mut app = start(&[]).await;
    let first = app.conn.dispatch(sleep(60_000, true).tag("GET::/capped")).unwrap();
    assert!(matches!(
        app.conn.dispatch(sleep(1, false).tag("GET::/capped")),
        Err(Error::DispatchRefused(DispatchRefusal::TagCap { .. }))
    ));
    // The runtime ignoring the cap is answered without running the event.
    let second = app.conn.dispatch_unchecked(sleep(1, false).tag("GET::/capped")).unwrap();
    let refused = app.conn.result(&second).await.unwrap();
    let error = handler_error(&refused);
    assert_eq!(error.r#type, "OverCapacity");
    assert!(error.message.contains("max_concurrent"), "{}", error.message);
    assert_eq!(refused.credit_grant, 1);
    // Other tags still have the rest of the window.
    assert_eq!(ok_body(&app.conn.call(get("/fast")).await.unwrap()), "ok");
    app.conn.cancel(&first, celerity_testkit::proto::v1::cancel::Reason::CallerGone).unwrap();
    assert_eq!(ok_body(&app.conn.result(&first).await.unwrap()), "stopped: caller gone");
    // And once the first has finished, the capped tag takes one again.
    assert_eq!(ok_body(&app.conn.call(sleep(1, false).tag("GET::/capped")).await.unwrap()), "slept");
    app.drain_and_exit().await;
}

#[tokio::test]
async fn a_withhold_grants_zero_and_a_resume_sends_a_credit_grant() {
    let mut app = start(&[]).await;
    app.conn.expect_withhold(true);
    let result = app.conn.call(get("/withhold").query("resume_after_ms", "300")).await.unwrap();
    assert_eq!(ok_body(&result), "withheld");
    assert_eq!(result.credit_grant, 0, "the withhold is a zero grant on the next result");
    assert!(app.conn.withheld());
    assert!(matches!(app.conn.dispatch(get("/fast")), Err(Error::DispatchRefused(DispatchRefusal::Withheld))));
    // The application resumes: a CreditGrant gives the place back.
    let grant = app.conn.next_credit_grant().await.unwrap();
    assert_eq!(grant.additional, 1);
    assert!(!app.conn.withheld());
    assert_eq!(app.conn.window(), 4);
    app.conn.expect_withhold(false);
    assert_eq!(app.conn.call(get("/fast")).await.unwrap().credit_grant, 1);
    app.drain_and_exit().await;
}

#[tokio::test]
async fn a_resize_grows_with_a_credit_grant_and_shrinks_by_withholding_on_results() {
    let mut app = start(&[("CELERITY_HANDLER_CONCURRENCY", "3")]).await;
    app.conn.call(get("/resize").query("n", "6")).await.unwrap();
    let grant = app.conn.next_credit_grant().await.unwrap();
    assert_eq!(grant.additional, 3, "growing sends the difference");
    app.conn.wait_for_credit_state(WAIT, |c| c.window() == 6).await.unwrap();

    // Shrinking: the next results carry zero until the window is the new
    // size; each is followed by a CreditGrant of zero so the runtime keeps
    // dispatching (there is nothing left in flight to withhold on).
    app.conn.expect_withhold(true);
    app.conn.call(get("/resize").query("n", "2")).await.unwrap();
    for _ in 0..10 {
        if app.conn.window() == 2 {
            break;
        }
        app.conn.wait_for_credit().await.unwrap();
        app.conn.call(get("/fast")).await.unwrap();
    }
    app.conn.wait_for_credit_state(WAIT, |c| c.window() == 2 && !c.withheld).await.unwrap();
    // Once there, results return their place again.
    app.conn.expect_withhold(false);
    app.conn.wait_for_credit().await.unwrap();
    let result = app.conn.call(get("/fast")).await.unwrap();
    assert_eq!(result.credit_grant, 1);
    assert_eq!(app.conn.window(), 2);
    // Every frame besides results was a CreditGrant.
    while let Some(frame) = app.conn.try_next_frame() {
        assert!(matches!(frame.frame, Some(handler_message::Frame::Credit(_))), "{frame:?}");
    }
    app.drain_and_exit().await;
}

#[tokio::test]
async fn a_shrink_with_events_in_flight_withholds_on_their_results() {
    let mut app = start(&[("CELERITY_HANDLER_CONCURRENCY", "4")]).await;
    let held: Vec<String> = (0..3).map(|_| app.conn.dispatch(sleep(60_000, true)).unwrap()).collect();
    app.conn.expect_withhold(true);
    app.conn.call(get("/resize").query("n", "1")).await.unwrap();
    for id in &held {
        app.conn.cancel(id, celerity_testkit::proto::v1::cancel::Reason::CallerGone).unwrap();
        app.conn.result(id).await.unwrap();
    }
    let state = app.conn.wait_for_credit_state(WAIT, |c| c.window() == 1 && !c.withheld).await.unwrap();
    assert_eq!(state.in_flight, 0);
    app.conn.expect_withhold(false);
    assert_eq!(app.conn.call(get("/fast")).await.unwrap().credit_grant, 1);
    tokio::time::sleep(Duration::from_millis(50)).await;
    app.drain_and_exit().await;
}
