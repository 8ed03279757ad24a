//! The runtime's side of the handshake, driven by a fake handler.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use celerity_testkit::proto::v1::{
    CreditGrant, Drain, ProtocolVersion, RuntimeMessage, handler_message, ready_ack::RefusedReason, runtime_message,
};
use celerity_testkit::{Error, StreamEnd, TestRuntime};
use common::{FakeHandler, ready};

const A: &str = "GET::/a";
const B: &str = "POST::/b/{id}";
const C: &str = "custom::c";

async fn runtime() -> TestRuntime {
    TestRuntime::builder()
        .handler("a", A)
        .handler("b", B)
        .tracing(true)
        .accept_timeout(Duration::from_secs(5))
        .bind()
        .await
        .unwrap()
}

#[tokio::test]
async fn accepted_handshake() {
    let rt = runtime().await;
    let path = rt.socket_path().unwrap().to_owned();
    assert!(path.ends_with("runtime.sock"));
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);

    let mut h = FakeHandler::connect(&path).await;
    let config = h.recv_config().await;
    assert!(config.tracing_enabled);
    assert!(!config.metrics_enabled);
    assert_eq!(config.protocol_version, Some(ProtocolVersion { major: 1, minor: 0 }));
    let tags: Vec<_> = config.handlers.iter().map(|c| c.handler_tag.as_str()).collect();
    assert_eq!(tags, [A, B]);
    assert_eq!(config.handlers[0].handler_name, "a");
    assert_eq!(config.handlers[0].timeout_ms, 60_000);

    h.send(handler_message::Frame::Ready(ready(&[B, A], 4)));
    let ack = match h.recv().await {
        runtime_message::Frame::ReadyAck(a) => a,
        other => panic!("expected ReadyAck, got {other:?}"),
    };
    assert!(ack.accepted);
    assert!(ack.unknown_tags.is_empty() && ack.unhandled_tags.is_empty());
    assert_eq!(ack.refused_reason, RefusedReason::Unspecified as i32);

    let hs = rt.accept().await.unwrap();
    assert!(hs.is_accepted());
    assert_eq!(hs.ack(), &ack);
    assert_eq!(hs.ready().initial_credit, 4);
    assert!(!hs.served_later_minor());
    let conn = hs.accepted().unwrap();
    assert_eq!(conn.credit(), 4);
    assert_eq!(conn.window(), 4);
    assert_eq!(conn.in_flight(), 0);
    assert!(!conn.withheld());
}

#[tokio::test]
async fn tag_refusal_lists_both_sides_and_closes() {
    let rt = runtime().await;
    let mut h = FakeHandler::connect(rt.socket_path().unwrap()).await;
    let ack = h.handshake(ready(&[A, C, C], 1)).await;
    assert!(!ack.accepted);
    assert_eq!(ack.unknown_tags, vec![C]);
    assert_eq!(ack.unhandled_tags, vec![B]);
    assert_eq!(ack.refused_reason, RefusedReason::Tags as i32);
    // The runtime closes the stream after a refusal.
    assert!(matches!(h.recv_raw().await, Ok(None)));

    let hs = rt.accept().await.unwrap();
    assert!(!hs.is_accepted());
    assert_eq!(hs.refused_reason(), RefusedReason::Tags);
    assert!(hs.connection().is_none());
    match hs.accepted() {
        Err(Error::Refused(a)) => assert_eq!(a, ack),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn version_refusal_without_version_and_for_other_major() {
    let rt = runtime().await;
    for version in [None, Some(ProtocolVersion { major: 2, minor: 0 })] {
        let mut h = FakeHandler::connect(rt.socket_path().unwrap()).await;
        let mut r = ready(&[A, B], 1);
        r.protocol_version = version;
        let ack = h.handshake(r).await;
        assert!(!ack.accepted, "{version:?} must be refused");
        assert_eq!(ack.refused_reason, RefusedReason::ProtocolVersion as i32);
        assert!(ack.unknown_tags.is_empty() && ack.unhandled_tags.is_empty());
        assert!(matches!(h.recv_raw().await, Ok(None)));

        let hs = rt.accept().await.unwrap();
        assert_eq!(hs.refused_reason(), RefusedReason::ProtocolVersion);
        assert_eq!(hs.handler_version(), version);
        assert!(hs.into_connection().is_none());
    }
}

#[tokio::test]
async fn later_minor_is_served_and_recorded() {
    let rt = runtime().await;
    let mut h = FakeHandler::connect(rt.socket_path().unwrap()).await;
    let mut r = ready(&[A, B], 1);
    r.protocol_version = Some(ProtocolVersion { major: 1, minor: 7 });
    assert!(h.handshake(r).await.accepted);
    let hs = rt.accept().await.unwrap();
    assert!(hs.is_accepted());
    assert!(hs.served_later_minor());
}

#[tokio::test]
async fn runtime_serving_another_version() {
    let rt = TestRuntime::builder().handler("a", A).protocol_version(2, 1).bind().await.unwrap();
    let mut h = FakeHandler::connect(rt.socket_path().unwrap()).await;
    let config = h.recv_config().await;
    assert_eq!(config.protocol_version, Some(ProtocolVersion { major: 2, minor: 1 }));
    h.send(handler_message::Frame::Ready(ready(&[A], 1)));
    let hs = rt.accept().await.unwrap();
    assert_eq!(hs.refused_reason(), RefusedReason::ProtocolVersion);
}

#[tokio::test]
async fn legacy_runtime_sends_no_version_and_no_reason() {
    let rt = TestRuntime::builder().handler("a", A).no_protocol_version().bind().await.unwrap();
    let mut h = FakeHandler::connect(rt.socket_path().unwrap()).await;
    let config = h.recv_config().await;
    assert_eq!(config.protocol_version, None);
    let mut r = ready(&[A, C], 1);
    r.protocol_version = None;
    h.send(handler_message::Frame::Ready(r));
    let hs = rt.accept().await.unwrap();
    assert!(!hs.is_accepted());
    assert_eq!(hs.ack().unknown_tags, vec![C]);
    assert_eq!(hs.refused_reason(), RefusedReason::Unspecified);

    let mut h = FakeHandler::connect(rt.socket_path().unwrap()).await;
    let mut r = ready(&[A], 1);
    r.protocol_version = None;
    assert!(h.handshake(r).await.accepted);
}

#[tokio::test]
async fn a_frame_other_than_ready_first_is_a_protocol_error() {
    let rt = runtime().await;
    let mut h = FakeHandler::connect(rt.socket_path().unwrap()).await;
    h.recv_config().await;
    h.send(handler_message::Frame::Credit(CreditGrant { additional: 1 }));
    let err = rt.accept().await.unwrap_err();
    assert!(
        matches!(&err, Error::UnexpectedFirstFrame(m)
            if matches!(m.frame, Some(handler_message::Frame::Credit(_)))),
        "{err}"
    );
    assert!(err.to_string().contains("CreditGrant instead of Ready"), "{err}");
    let status = h.recv_raw().await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::FailedPrecondition);
}

#[tokio::test]
async fn closing_before_ready_is_reported() {
    let rt = runtime().await;
    let mut h = FakeHandler::connect(rt.socket_path().unwrap()).await;
    h.recv_config().await;
    h.close();
    match rt.accept().await {
        Err(Error::ClosedBeforeReady(StreamEnd::Clean)) => {}
        other => panic!("expected ClosedBeforeReady, got {other:?}"),
    }
}

#[tokio::test]
async fn no_ready_in_time_closes_the_stream() {
    let rt = TestRuntime::builder().handler("a", A).ready_timeout(Duration::from_millis(200)).bind().await.unwrap();
    let mut h = FakeHandler::connect(rt.socket_path().unwrap()).await;
    h.recv_config().await;
    match rt.accept().await {
        Err(Error::ReadyTimeout(d)) => assert_eq!(d, Duration::from_millis(200)),
        other => panic!("expected ReadyTimeout, got {other:?}"),
    }
    let status = h.recv_raw().await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::DeadlineExceeded);
}

#[tokio::test]
async fn accept_times_out_when_nobody_connects() {
    let rt = runtime().await;
    let err = rt.accept_timeout(Duration::from_millis(50)).await.unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err}");
}

#[tokio::test]
async fn first_frame_can_replace_the_config() {
    let rt = TestRuntime::builder()
        .handler("a", A)
        .first_frame(RuntimeMessage { frame: Some(runtime_message::Frame::Drain(Drain { deadline_unix_ms: 42 })) })
        .bind()
        .await
        .unwrap();
    let mut h = FakeHandler::connect(rt.socket_path().unwrap()).await;
    match h.recv().await {
        runtime_message::Frame::Drain(d) => assert_eq!(d.deadline_unix_ms, 42),
        other => panic!("expected the Drain override, got {other:?}"),
    }
    h.close();
    assert!(matches!(rt.accept().await, Err(Error::ClosedBeforeReady(_))));
}

#[tokio::test]
async fn ack_override_replaces_the_verdict() {
    let rt = TestRuntime::builder()
        .handler("a", A)
        .ack_with(|_, mut ack| {
            ack.accepted = false;
            ack.refused_reason = RefusedReason::ProtocolVersion as i32;
            ack
        })
        .bind()
        .await
        .unwrap();
    let mut h = FakeHandler::connect(rt.socket_path().unwrap()).await;
    let ack = h.handshake(ready(&[A], 1)).await;
    assert!(!ack.accepted);
    assert!(rt.accept().await.unwrap().connection().is_none());
}

#[tokio::test]
async fn serves_loopback_tcp() {
    let rt = TestRuntime::builder().handler("a", A).tcp(0).bind().await.unwrap();
    let addr = rt.tcp_addr().unwrap();
    assert!(rt.socket_path().is_none());
    let env = rt.env();
    assert!(env.contains(&("CELERITY_RUNTIME_SOCKET_FALLBACK_PORT".to_owned(), addr.port().to_string())));
    let mut h = FakeHandler::connect_tcp(addr).await;
    assert!(h.handshake(ready(&[A], 1)).await.accepted);
    assert!(rt.accept().await.unwrap().is_accepted());
}

#[tokio::test]
async fn socket_binding_creates_the_directory_and_guards_a_live_socket() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/deeper/rt.sock");
    let rt = TestRuntime::builder().unix_socket(&path).handler("a", A).bind().await.unwrap();
    assert_eq!(rt.socket_path(), Some(path.as_path()));
    assert_eq!(rt.env(), vec![("CELERITY_RUNTIME_SOCKET".to_owned(), path.display().to_string())]);
    let parent_mode = std::fs::metadata(path.parent().unwrap()).unwrap().permissions().mode();
    assert_eq!(parent_mode & 0o077, 0, "created directory is private");

    // A second runtime on a live socket refuses to start.
    match TestRuntime::builder().unix_socket(&path).bind().await {
        Err(Error::AlreadyServing(p)) => assert_eq!(p, path),
        other => panic!("expected AlreadyServing, got {other:?}"),
    }

    // A stale socket file is replaced.
    drop(rt);
    let stale = std::os::unix::net::UnixListener::bind(&path).unwrap();
    drop(stale);
    assert!(path.exists());
    let rt = TestRuntime::builder().unix_socket(&path).handler("a", A).bind().await.unwrap();
    let mut h = FakeHandler::connect(&path).await;
    assert!(h.handshake(ready(&[A], 1)).await.accepted);
    assert!(rt.accept().await.unwrap().is_accepted());
}
