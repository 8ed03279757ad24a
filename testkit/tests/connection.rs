//! Dispatching, results, other frames, violations and closing, driven by a
//! fake handler.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use celerity_testkit::proto::v1::{
    Draining, WsOutbound, WsSend, cancel, dispatch::Source, handler_message, runtime_message,
};
use celerity_testkit::{Connection, Error, StreamEnd, TestRuntime, Violation, event};
use common::{FakeHandler, ready, result};

const A: &str = "GET::/orders/{id}";
const S: &str = "source::nightly::cleanup";

async fn connected(credit: u32) -> (TestRuntime, FakeHandler, Connection) {
    let rt = TestRuntime::builder()
        .handler("getOrder", A)
        .handler("cleanup", S)
        .wait_timeout(Duration::from_secs(5))
        .bind()
        .await
        .unwrap();
    let mut h = FakeHandler::connect(rt.socket_path().unwrap()).await;
    assert!(h.handshake(ready(&[A, S], credit)).await.accepted);
    let conn = rt.accept().await.unwrap().accepted().unwrap();
    (rt, h, conn)
}

#[tokio::test]
async fn dispatch_and_result_round_trip() {
    let (_rt, mut h, conn) = connected(2).await;
    let id = conn
        .dispatch(
            event::http("GET", "/orders/7")
                .route("/orders/{id}")
                .path_param("id", "7")
                .header("Accept", "application/json"),
        )
        .unwrap();
    assert!(id.starts_with("evt-"));
    let d = h.recv_dispatch().await;
    assert_eq!(d.id, id);
    assert_eq!(d.handler_tag, A);
    assert!(d.deadline_unix_ms > 0);
    let Some(Source::Http(req)) = &d.source else { panic!("expected an HTTP source: {d:?}") };
    assert_eq!(req.headers["accept"].values, vec!["application/json"]);
    h.answer(&id, 1);
    let r = conn.result(&id).await.unwrap();
    assert_eq!(r.id, id);
    assert_eq!(conn.results_received(), 1);

    // call = dispatch + wait; results are matched by id, not order.
    let first = conn.dispatch(event::schedule("nightly", "cleanup").id("s-1")).unwrap();
    assert_eq!(first, "s-1");
    let call = async { conn.call(event::schedule("nightly", "cleanup")).await };
    let answer = async {
        let d1 = h.recv_dispatch().await;
        let d2 = h.recv_dispatch().await;
        h.answer(&d2.id, 1);
        h.answer(&d1.id, 1);
        d2.id
    };
    let (called, second_id) = tokio::join!(call, answer);
    assert_eq!(called.unwrap().id, second_id);
    assert_eq!(conn.next_result().await.unwrap().id, "s-1");
    conn.assert_no_violations();
}

#[tokio::test]
async fn result_for_unknown_id_is_a_violation() {
    let (_rt, h, conn) = connected(1).await;
    h.send(handler_message::Frame::Result(result("never-sent", 1)));
    let err = conn.next_result().await.unwrap_err();
    match &err {
        Error::Violations(vs) => assert_eq!(vs, &vec![Violation::ResultForUnknownId { id: "never-sent".into() }]),
        other => panic!("expected a violation, got {other:?}"),
    }
    assert!(err.to_string().contains("never dispatched"), "{err}");
    // The runtime ignores it: no credit came with it.
    assert_eq!(conn.credit(), 1);
    let panicked = catch_unwind(AssertUnwindSafe(|| conn.assert_no_violations()));
    assert!(panicked.is_err());
    // Once acknowledged, waits work again.
    assert_eq!(conn.take_violations().len(), 1);
    conn.assert_no_violations();
    let err = conn.next_result_timeout(Duration::from_millis(50)).await.unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err}");
}

#[tokio::test]
async fn duplicate_result_is_a_violation() {
    let (_rt, mut h, conn) = connected(2).await;
    let id = conn.dispatch(event::schedule("nightly", "cleanup")).unwrap();
    h.recv_dispatch().await;
    h.answer(&id, 1);
    conn.result(&id).await.unwrap();
    h.answer(&id, 1);
    // Fails fast, long before the timeout.
    let other = conn.dispatch(event::schedule("nightly", "cleanup")).unwrap();
    let started = tokio::time::Instant::now();
    let err = conn.result(&other).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(4));
    match err {
        Error::Violations(vs) => {
            assert_eq!(vs, vec![Violation::DuplicateResult { id: id.clone() }])
        }
        other => panic!("expected a violation, got {other:?}"),
    }
    // The duplicate's grant was ignored: 2 - 1 + 1 - 1 = 1.
    assert_eq!(conn.credit(), 1);
    assert_eq!(conn.violations().len(), 1);
}

#[tokio::test]
async fn result_without_outcome_is_a_violation() {
    let (_rt, mut h, conn) = connected(1).await;
    let id = conn.dispatch(event::schedule("nightly", "cleanup")).unwrap();
    h.recv_dispatch().await;
    let mut r = result(&id, 1);
    r.outcome = None;
    h.send(handler_message::Frame::Result(r));
    match conn.result(&id).await {
        Err(Error::Violations(vs)) => {
            assert_eq!(vs, vec![Violation::ResultWithoutOutcome { id: id.clone() }])
        }
        other => panic!("expected a violation, got {other:?}"),
    }
    conn.take_violations();
    // Still answered and accounted.
    assert!(conn.result(&id).await.unwrap().outcome.is_none());
    assert_eq!(conn.credit(), 1);
}

#[tokio::test]
async fn waiting_for_an_id_never_dispatched_fails_at_once() {
    let (_rt, _h, conn) = connected(1).await;
    assert!(matches!(
        conn.result("nope").await,
        Err(Error::NotDispatched(id)) if id == "nope"
    ));
}

#[tokio::test]
async fn other_frames_are_queued_in_order() {
    let (_rt, h, conn) = connected(1).await;
    h.send(handler_message::Frame::WsSend(WsSend {
        correlation_id: "c-1".into(),
        messages: vec![WsOutbound { connection_id: "conn-1".into(), message: "hi".into(), ..Default::default() }],
    }));
    h.send(handler_message::Frame::Ready(ready(&[A], 9)));
    h.send(handler_message::Frame::Draining(Draining { deadline_unix_ms: 7 }));
    let first = conn.next_frame().await.unwrap();
    assert!(matches!(first.frame, Some(handler_message::Frame::WsSend(_))));
    // A second Ready is just queued (the runtime ignores it).
    assert_eq!(conn.next_draining().await.unwrap().deadline_unix_ms, 7);
    assert!(matches!(conn.next_frame().await.unwrap().frame, Some(handler_message::Frame::Ready(_))));
    assert!(conn.try_next_frame().is_none());
    assert_eq!(conn.handler_draining(), Some(7));
    assert_eq!(conn.credit(), 1, "a second Ready changes nothing");
    // The runtime sends a draining handler nothing further.
    assert!(matches!(
        conn.dispatch(event::http("GET", "/orders/1").route("/orders/{id}")),
        Err(Error::DispatchRefused(celerity_testkit::DispatchRefusal::HandlerDraining))
    ));
}

#[tokio::test]
async fn runtime_frames_reach_the_handler() {
    let (_rt, mut h, conn) = connected(1).await;
    let id = conn.dispatch(event::schedule("nightly", "cleanup")).unwrap();
    h.recv_dispatch().await;
    conn.cancel(&id, cancel::Reason::CallerGone).unwrap();
    match h.recv().await {
        runtime_message::Frame::Cancel(c) => {
            assert_eq!(c.id, id);
            assert_eq!(c.reason, cancel::Reason::CallerGone as i32);
        }
        other => panic!("expected Cancel, got {other:?}"),
    }
    conn.ws_ack_success("c-9").unwrap();
    match h.recv().await {
        runtime_message::Frame::WsAck(a) => assert!(a.success && a.correlation_id == "c-9"),
        other => panic!("expected WsSendAck, got {other:?}"),
    }
    conn.drain(1234).unwrap();
    match h.recv().await {
        runtime_message::Frame::Drain(d) => assert_eq!(d.deadline_unix_ms, 1234),
        other => panic!("expected Drain, got {other:?}"),
    }
    assert!(matches!(
        conn.dispatch(event::schedule("nightly", "cleanup")),
        Err(Error::DispatchRefused(celerity_testkit::DispatchRefusal::RuntimeDraining))
    ));
}

#[tokio::test]
async fn close_ends_the_stream_and_closed_reports_the_handler_end() {
    let (_rt, mut h, conn) = connected(1).await;
    conn.close();
    assert!(matches!(h.recv_raw().await, Ok(None)));
    assert!(matches!(conn.dispatch(event::schedule("nightly", "cleanup")), Err(Error::SenderClosed)));
    assert_eq!(conn.stream_end(), None);
    h.close();
    assert_eq!(conn.closed_timeout(Duration::from_secs(5)).await.unwrap(), StreamEnd::Clean);
    // Waiting on a closed stream fails with the reason.
    match conn.next_frame().await {
        Err(Error::StreamClosed { end, .. }) => assert!(end.is_clean()),
        other => panic!("expected StreamClosed, got {other:?}"),
    }
}

#[tokio::test]
async fn handler_going_away_mid_event_fails_the_wait() {
    let (_rt, mut h, conn) = connected(1).await;
    let id = conn.dispatch(event::schedule("nightly", "cleanup")).unwrap();
    h.recv_dispatch().await;
    drop(h);
    match conn.result(&id).await {
        Err(Error::StreamClosed { .. }) => {}
        other => panic!("expected StreamClosed, got {other:?}"),
    }
}
