//! The credit account and per-tag caps, driven by a fake handler.

mod common;

use std::time::Duration;

use celerity_testkit::{DispatchRefusal, Error, TestRuntime, Violation, event};
use common::{FakeHandler, ready, with_limits};

const Q: &str = "source::orders::process";
const S: &str = "source::nightly::cleanup";

fn q() -> event::ConsumerEvent {
    event::consumer("orders", "process").record("m-1", "{}")
}

async fn runtime() -> TestRuntime {
    TestRuntime::builder()
        .handler("process", Q)
        .handler("cleanup", S)
        .wait_timeout(Duration::from_secs(5))
        .bind()
        .await
        .unwrap()
}

fn refusal(r: Result<String, Error>) -> DispatchRefusal {
    match r {
        Err(Error::DispatchRefused(r)) => r,
        other => panic!("expected a refused dispatch, got {other:?}"),
    }
}

#[tokio::test]
async fn credit_window_withhold_and_resume() {
    let rt = runtime().await;
    let mut h = FakeHandler::connect(rt.socket_path().unwrap()).await;
    assert!(h.handshake(ready(&[Q, S], 2)).await.accepted);
    let conn = rt.accept_connection().await.unwrap();

    // Initial window 2, one unit per dispatch.
    let a = conn.dispatch(q()).unwrap();
    let b = conn.dispatch(q()).unwrap();
    assert_eq!((conn.credit(), conn.in_flight(), conn.window()), (0, 2, 2));
    assert_eq!(refusal(conn.dispatch(q())), DispatchRefusal::NoCredit { available: 0 });
    h.recv_dispatch().await;
    h.recv_dispatch().await;

    // A Result returns its grant (here 2: the window grows by one).
    h.answer(&a, 2);
    conn.result(&a).await.unwrap();
    assert_eq!((conn.credit(), conn.in_flight(), conn.window()), (2, 1, 3));

    // credit_grant 0 withholds: no dispatch although credit is left.
    conn.expect_withhold(true);
    h.answer(&b, 0);
    conn.result(&b).await.unwrap();
    assert!(conn.withheld());
    assert_eq!((conn.credit(), conn.in_flight(), conn.window()), (2, 0, 2));
    assert_eq!(refusal(conn.dispatch(q())), DispatchRefusal::Withheld);
    assert!(matches!(conn.wait_for_credit_timeout(Duration::from_millis(100)).await, Err(Error::Timeout { .. })));

    // A CreditGrant, even of 0, ends the withhold.
    let waiter = conn.wait_for_credit();
    let grant = async { h.grant(0) };
    let (waited, ()) = tokio::join!(waiter, grant);
    waited.unwrap();
    assert!(!conn.withheld());
    assert_eq!(conn.credit(), 2);
    assert_eq!(conn.next_credit_grant().await.unwrap().additional, 0);

    // A CreditGrant also resizes.
    h.grant(3);
    let state = conn.wait_for_credit_state(Duration::from_secs(5), |c| c.available == 5).await.unwrap();
    assert_eq!(state.window(), 5);
    conn.assert_no_violations();
}

#[tokio::test]
async fn unexpected_withhold_is_a_violation_but_still_applied() {
    let rt = runtime().await;
    let mut h = FakeHandler::connect(rt.socket_path().unwrap()).await;
    assert!(h.handshake(ready(&[Q, S], 2)).await.accepted);
    let conn = rt.accept_connection().await.unwrap();
    let id = conn.dispatch(q()).unwrap();
    h.recv_dispatch().await;
    h.answer(&id, 0);
    match conn.result(&id).await {
        Err(Error::Violations(vs)) => {
            assert_eq!(vs, vec![Violation::UnexpectedWithhold { id: id.clone() }])
        }
        other => panic!("expected a violation, got {other:?}"),
    }
    assert!(conn.withheld());
    assert_eq!(conn.credit(), 1);
}

#[tokio::test]
async fn per_tag_caps_and_forced_dispatch() {
    let rt = runtime().await;
    let mut h = FakeHandler::connect(rt.socket_path().unwrap()).await;
    let r = with_limits(ready(&[Q, S], 3), &[(Q, 1)]);
    assert!(h.handshake(r).await.accepted);
    let conn = rt.accept_connection().await.unwrap();

    conn.dispatch(q()).unwrap();
    assert_eq!(refusal(conn.dispatch(q())), DispatchRefusal::TagCap { tag: Q.into(), cap: 1, in_flight: 1 });
    // Another tag still has room in the shared window.
    conn.dispatch(event::schedule("nightly", "cleanup")).unwrap();
    assert_eq!(conn.in_flight_for(Q), 1);
    assert_eq!(conn.in_flight_for(S), 1);

    // Forced: over the cap, then over the window.
    conn.dispatch_unchecked(q()).unwrap();
    assert_eq!(conn.credit(), 0);
    conn.dispatch_unchecked(q()).unwrap();
    assert_eq!(conn.credit(), -1);
    assert_eq!(conn.in_flight_for(Q), 3);
    for _ in 0..4 {
        h.recv_dispatch().await;
    }

    // Undeclared tags are refused unless forced.
    assert_eq!(refusal(conn.dispatch(event::custom("other"))), DispatchRefusal::UnknownTag("custom::other".into()));
}

#[tokio::test]
async fn a_result_does_not_return_credit_implicitly() {
    let rt = runtime().await;
    let mut h = FakeHandler::connect(rt.socket_path().unwrap()).await;
    assert!(h.handshake(ready(&[Q, S], 1)).await.accepted);
    let conn = rt.accept_connection().await.unwrap();
    conn.expect_withhold(true);
    let id = conn.dispatch(q()).unwrap();
    h.recv_dispatch().await;
    h.answer(&id, 0);
    conn.result(&id).await.unwrap();
    assert_eq!((conn.credit(), conn.window()), (0, 0));
    // A later CreditGrant is the only way back.
    h.grant(1);
    conn.wait_for_credit().await.unwrap();
    assert_eq!(conn.credit(), 1);
}
