//! The dispatcher over a real socket, against a hand-written handler client.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use celerity_testkit::dispatcher::ws::ScriptedDelivery;
use celerity_testkit::dispatcher::{AbandonReason, Dispatcher, EventOutcome, Notice, ShedReason, Timing};
use celerity_testkit::proto::v1::{Draining, WsOutbound, WsSend, cancel, handler_message, runtime_message};
use celerity_testkit::{TestRuntime, event};
use common::{FakeHandler, ready};

const WAIT: Duration = Duration::from_secs(5);

fn fast() -> Timing {
    Timing {
        attach_grace: Duration::from_millis(300),
        max_producer_wait: Duration::from_millis(300),
        cancel_reclaim: Duration::from_millis(200),
        late_memory: Duration::from_secs(5),
    }
}

async fn start(tags: &[&str]) -> (Dispatcher, std::path::PathBuf) {
    start_with(tags, Dispatcher::builder().timing(fast())).await
}

async fn start_with(
    tags: &[&str],
    builder: celerity_testkit::dispatcher::DispatcherBuilder,
) -> (Dispatcher, std::path::PathBuf) {
    let mut rt = TestRuntime::builder();
    for tag in tags {
        rt = rt.handler(*tag, *tag);
    }
    let rt = rt.bind().await.unwrap();
    let path = rt.socket_path().unwrap().to_owned();
    let dispatcher = builder.runtime_config(rt.config().clone()).build();
    dispatcher.serve(rt);
    (dispatcher, path)
}

async fn attached(dispatcher: &Dispatcher, n: usize) {
    dispatcher.wait_for_streams(WAIT, |s| s.len() == n).await.unwrap();
}

#[tokio::test]
async fn an_event_is_dispatched_answered_and_its_place_returned() {
    let (dispatcher, path) = start(&["a"]).await;
    let mut handler = FakeHandler::connect(&path).await;
    assert!(handler.handshake(ready(&["a"], 2)).await.accepted);
    attached(&dispatcher, 1).await;

    let call = tokio::spawn({
        let dispatcher = dispatcher.clone();
        async move { dispatcher.submit(event::schedule("nightly", "cleanup").tag("a")).await }
    });
    let d = handler.recv_dispatch().await;
    assert_eq!(d.handler_tag, "a");
    handler.answer(&d.id, 1);
    let outcome = tokio::time::timeout(WAIT, call).await.unwrap().unwrap();
    assert_eq!(outcome.result().map(|r| r.id.as_str()), Some(d.id.as_str()));
    let streams = dispatcher.streams();
    assert_eq!((streams[0].credit.available, streams[0].credit.in_flight), (2, 0));
}

#[tokio::test]
async fn events_spread_across_the_streams_serving_a_tag() {
    let (dispatcher, path) = start(&["a"]).await;
    let mut h1 = FakeHandler::connect(&path).await;
    h1.handshake(ready(&["a"], 4)).await;
    let mut h2 = FakeHandler::connect(&path).await;
    h2.handshake(ready(&["a"], 4)).await;
    attached(&dispatcher, 2).await;

    let subs: Vec<_> = (0..4).map(|_| dispatcher.submit(event::custom("x").tag("a"))).collect();
    for handler in [&mut h1, &mut h2] {
        for _ in 0..2 {
            let d = handler.recv_dispatch().await;
            handler.answer(&d.id, 1);
        }
    }
    for sub in subs {
        assert!(matches!(tokio::time::timeout(WAIT, sub).await.unwrap(), EventOutcome::Result(_)));
    }
}

#[tokio::test]
async fn a_caller_that_goes_away_cancels_with_caller_gone() {
    let (dispatcher, path) = start(&["a"]).await;
    let mut handler = FakeHandler::connect(&path).await;
    handler.handshake(ready(&["a"], 1)).await;
    attached(&dispatcher, 1).await;

    let sub = dispatcher.submit(event::custom("x").tag("a"));
    let d = handler.recv_dispatch().await;
    drop(sub);
    match handler.recv().await {
        runtime_message::Frame::Cancel(c) => {
            assert_eq!(c.id, d.id);
            assert_eq!(c.reason, cancel::Reason::CallerGone as i32);
        }
        other => panic!("expected Cancel, got {other:?}"),
    }
    // No answer: after the reclaim the runtime takes the place back itself.
    dispatcher.wait_for_streams(WAIT, |s| s[0].credit.available == 1 && s[0].credit.in_flight == 0).await.unwrap();
}

#[tokio::test]
async fn a_deadline_answers_the_caller_and_cancels() {
    let (dispatcher, path) = start(&["a"]).await;
    let mut handler = FakeHandler::connect(&path).await;
    handler.handshake(ready(&["a"], 1)).await;
    attached(&dispatcher, 1).await;

    let started = std::time::Instant::now();
    let sub = dispatcher.submit(event::custom("x").tag("a").deadline_in(Duration::from_millis(200)));
    let d = handler.recv_dispatch().await;
    assert_eq!(sub.await, EventOutcome::Abandoned(AbandonReason::Deadline));
    assert!(started.elapsed() >= Duration::from_millis(150));
    match handler.recv().await {
        runtime_message::Frame::Cancel(c) => {
            assert_eq!((c.id.as_str(), c.reason), (d.id.as_str(), cancel::Reason::DeadlineExceeded as i32))
        }
        other => panic!("expected Cancel, got {other:?}"),
    }
    // A late answer after the reclaim does not grow the window.
    dispatcher.wait_for_streams(WAIT, |s| s[0].credit.in_flight == 0).await.unwrap();
    handler.answer(&d.id, 1);
    let sub = dispatcher.submit(event::custom("x").tag("a"));
    let d2 = handler.recv_dispatch().await;
    handler.answer(&d2.id, 1);
    assert!(matches!(sub.await, EventOutcome::Result(_)));
    assert_eq!(dispatcher.streams()[0].credit.window(), 1);
}

#[tokio::test]
async fn an_event_waits_out_the_attach_grace_for_a_handler_to_connect() {
    let (dispatcher, path) = start(&["a"]).await;
    let sub = dispatcher.submit(event::custom("x").tag("a"));
    let mut handler = FakeHandler::connect(&path).await;
    handler.handshake(ready(&["a"], 1)).await;
    let d = handler.recv_dispatch().await;
    handler.answer(&d.id, 1);
    assert!(matches!(tokio::time::timeout(WAIT, sub).await.unwrap(), EventOutcome::Result(_)));

    // Nothing serves "b": shed once the grace has passed.
    let started = std::time::Instant::now();
    let shed = dispatcher.submit(event::custom("x").tag("b")).await;
    assert_eq!(shed, EventOutcome::Shed(ShedReason::NoHandler));
    assert!(started.elapsed() >= Duration::from_millis(250));
}

#[tokio::test]
async fn drain_waits_for_work_in_flight_and_refuses_new_streams() {
    let (dispatcher, path) = start(&["a"]).await;
    let mut handler = FakeHandler::connect(&path).await;
    handler.handshake(ready(&["a"], 2)).await;
    attached(&dispatcher, 1).await;

    let sub = dispatcher.submit(event::custom("x").tag("a"));
    let d = handler.recv_dispatch().await;
    let drain = tokio::spawn({
        let dispatcher = dispatcher.clone();
        async move { dispatcher.drain_within(Duration::from_secs(5)).await }
    });
    match handler.recv().await {
        runtime_message::Frame::Drain(drain) => assert!(drain.deadline_unix_ms > 0),
        other => panic!("expected Drain, got {other:?}"),
    }
    assert_eq!(dispatcher.submit(event::custom("x").tag("a")).await, EventOutcome::Shed(ShedReason::Draining));

    // A stream connecting now is refused.
    let channel = common::unix_channel(&path).await;
    let mut client =
        celerity_testkit::proto::v1::handler_runtime_service_client::HandlerRuntimeServiceClient::new(channel);
    let refused = client.event_stream(tokio_stream::iter(Vec::new())).await;
    assert_eq!(refused.err().map(|s| s.code()), Some(tonic::Code::Unavailable));

    handler.answer(&d.id, 1);
    assert!(matches!(sub.await, EventOutcome::Result(_)));
    let report = tokio::time::timeout(WAIT, drain).await.unwrap().unwrap();
    assert!(report.completed);
    assert_eq!((report.in_flight_at_start, report.abandoned), (1, 0));
}

#[tokio::test]
async fn a_drain_deadline_abandons_what_is_still_in_flight() {
    let (dispatcher, path) = start(&["a"]).await;
    let mut handler = FakeHandler::connect(&path).await;
    handler.handshake(ready(&["a"], 2)).await;
    attached(&dispatcher, 1).await;
    let sub = dispatcher.submit(event::custom("x").tag("a"));
    handler.recv_dispatch().await;
    let report = dispatcher.drain_within(Duration::from_millis(200)).await;
    assert_eq!((report.completed, report.abandoned), (false, 1));
    assert_eq!(sub.await, EventOutcome::Abandoned(AbandonReason::DrainDeadline));
    assert!(matches!(handler.recv().await, runtime_message::Frame::Drain(_)));
    assert!(matches!(handler.recv_raw().await, Ok(None) | Err(_)), "the stream is closed at the deadline");
}

#[tokio::test]
async fn a_draining_handler_is_closed_at_its_deadline_and_its_callers_released() {
    let notices = Arc::new(Mutex::new(Vec::new()));
    let builder = Dispatcher::builder().timing(fast()).on_notice({
        let notices = Arc::clone(&notices);
        move |n: &Notice| notices.lock().unwrap().push(n.to_string())
    });
    let (dispatcher, path) = start_with(&["a"], builder).await;
    let mut handler = FakeHandler::connect(&path).await;
    handler.handshake(ready(&["a"], 2)).await;
    attached(&dispatcher, 1).await;
    let held = dispatcher.submit(event::custom("x").tag("a"));
    let answered = dispatcher.submit(event::custom("x").tag("a"));
    let d1 = handler.recv_dispatch().await;
    let d2 = handler.recv_dispatch().await;
    let deadline = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64 + 300;
    handler.send(handler_message::Frame::Draining(Draining { deadline_unix_ms: deadline }));
    dispatcher.wait_for_streams(WAIT, |s| s[0].draining.is_some()).await.unwrap();
    // No new work, but results are still taken.
    let queued = dispatcher.submit(event::custom("x").tag("a"));
    handler.answer(&d2.id, 1);
    assert!(matches!(answered.await, EventOutcome::Result(_)));
    assert_eq!(held.await, EventOutcome::Abandoned(AbandonReason::StreamGone), "{}", d1.id);
    assert!(matches!(handler.recv_raw().await, Ok(None) | Err(_)));
    // The queued event waits out the grace for another stream, then is shed.
    assert_eq!(queued.await, EventOutcome::Shed(ShedReason::NoHandler));
    assert!(notices.lock().unwrap().iter().any(|n| n.contains("Draining deadline")), "{:?}", notices.lock().unwrap());
}

#[tokio::test]
async fn ws_sends_are_answered_with_per_message_outcomes() {
    let delivery = ScriptedDelivery::new();
    delivery.fail_connection("gone", "no such connection");
    let builder = Dispatcher::builder().timing(fast()).delivery(delivery.clone());
    let (dispatcher, path) = start_with(&["a"], builder).await;
    let mut handler = FakeHandler::connect(&path).await;
    handler.handshake(ready(&["a"], 1)).await;
    attached(&dispatcher, 1).await;
    let message = |conn: &str| WsOutbound {
        connection_id: conn.into(),
        message: bytes::Bytes::from_static(b"{}"),
        ..Default::default()
    };
    handler.send(handler_message::Frame::WsSend(WsSend {
        correlation_id: "c-1".into(),
        messages: vec![message("a"), message("gone"), message("b")],
    }));
    match handler.recv().await {
        runtime_message::Frame::WsAck(ack) => {
            assert_eq!(ack.correlation_id, "c-1");
            assert!(!ack.success);
            assert_eq!(ack.failures.len(), 1);
            assert_eq!((ack.failures[0].index, ack.failures[0].connection_id.as_str()), (1, "gone"));
        }
        other => panic!("expected WsSendAck, got {other:?}"),
    }
    assert_eq!(delivery.messages().len(), 3);
}

#[tokio::test]
async fn a_stream_that_sends_ready_during_a_drain_is_refused() {
    let rt = TestRuntime::builder().handler("a", "a").bind().await.unwrap();
    let mut handler = FakeHandler::connect(rt.socket_path().unwrap()).await;
    handler.recv_config().await;
    rt.refuse_new_streams();
    assert!(rt.is_refusing());
    handler.send(handler_message::Frame::Ready(ready(&["a"], 1)));
    let status = handler.recv_raw().await.expect_err("closed with a status");
    assert_eq!(status.code(), tonic::Code::Unavailable);
    assert!(matches!(rt.accept().await, Err(celerity_testkit::Error::RefusedDraining)));
}
