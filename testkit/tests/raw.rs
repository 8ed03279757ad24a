//! The raw mode, driven from a hand-written handler over a real socket:
//! streams handed out as they open, frames and bytes sent as given, the
//! handler's frames read as they come, and headers held back on request.

mod common;

use std::time::Duration;

use celerity_testkit::RawRuntime;
use celerity_testkit::proto::prost::Message as _;
use celerity_testkit::proto::v1::{Cancel, Drain, RuntimeConfig, RuntimeMessage, handler_message, runtime_message};
use common::{FakeHandler, ready};

fn cancel(id: &str) -> RuntimeMessage {
    RuntimeMessage { frame: Some(runtime_message::Frame::Cancel(Cancel { id: id.to_owned(), reason: 1 })) }
}

#[tokio::test]
async fn a_stream_is_handed_out_as_it_opens_with_no_handshake() {
    let rt = RawRuntime::builder().bind().await.unwrap();
    let mut handler = FakeHandler::connect(rt.socket_path().unwrap()).await;
    let mut stream = rt.accept().await.unwrap();
    // Not a RuntimeConfig first: the raw runtime sends what it is told.
    stream.outbound.send(cancel("evt-1")).await.unwrap();
    assert_eq!(handler.recv().await, cancel("evt-1").frame.unwrap());
    handler.send(handler_message::Frame::Ready(ready(&["GET::/a"], 2)));
    match stream.next_message().await.unwrap() {
        Some(message) => assert!(matches!(message.frame, Some(handler_message::Frame::Ready(_)))),
        None => panic!("the stream ended"),
    }
    assert!(rt.try_accept().is_none(), "one stream, taken");
}

#[tokio::test]
async fn the_handshake_helper_sends_the_config_and_accepts_whatever_ready_says() {
    let rt = RawRuntime::builder().bind().await.unwrap();
    let mut handler = FakeHandler::connect(rt.socket_path().unwrap()).await;
    let mut stream = rt.accept().await.unwrap();
    let served = tokio::spawn(async move {
        let ready = stream.handshake(RuntimeConfig::default()).await.unwrap();
        (stream, ready)
    });
    // Tags the blueprint does not declare: accepted all the same.
    let ack = handler.handshake(ready(&["GET::/undeclared"], 3)).await;
    assert!(ack.accepted);
    let (_stream, ready) = served.await.unwrap();
    assert_eq!(ready.handler_tags, ["GET::/undeclared"]);
}

#[tokio::test]
async fn bytes_are_sent_as_one_frame_exactly_as_given() {
    let rt = RawRuntime::builder().bind().await.unwrap();
    let mut handler = FakeHandler::connect(rt.socket_path().unwrap()).await;
    let stream = rt.accept().await.unwrap();
    // An encoded message arrives as that message.
    stream.outbound.send_bytes(cancel("evt-2").encode_to_vec()).await.unwrap();
    assert_eq!(handler.recv().await, cancel("evt-2").frame.unwrap());
    // Bytes no encoder produces (an id that is not UTF-8) reach the
    // handler unchanged: its decoder refuses them.
    let mut bytes = cancel("evt-3").encode_to_vec();
    let at = bytes.iter().position(|&b| b == b'e').unwrap();
    bytes[at] = 0xff;
    stream.outbound.send_bytes(bytes).await.unwrap();
    let refused = handler.recv_raw().await.expect_err("the handler's decoder refuses the frame");
    assert!(refused.message().contains("Cancel.id"), "{refused}");
}

#[tokio::test]
async fn held_headers_go_out_with_the_first_frame() {
    let rt = RawRuntime::builder().hold_headers_until_first_frame().bind().await.unwrap();
    let path = rt.socket_path().unwrap().to_owned();
    let mut opening = tokio::spawn(async move { FakeHandler::connect(&path).await });
    let stream = rt.accept().await.unwrap();
    // The stream is open on the runtime side, yet the handler's call has
    // no response: no headers have been sent.
    assert!(tokio::time::timeout(Duration::from_millis(300), &mut opening).await.is_err());
    let drain = RuntimeMessage { frame: Some(runtime_message::Frame::Drain(Drain { deadline_unix_ms: 7 })) };
    stream.outbound.send(drain.clone()).await.unwrap();
    let mut handler = opening.await.unwrap();
    assert_eq!(handler.recv().await, drain.frame.unwrap());
}

#[tokio::test]
async fn dropping_the_stream_ends_the_runtimes_side_cleanly() {
    let rt = RawRuntime::builder().queue(1).bind().await.unwrap();
    let mut handler = FakeHandler::connect(rt.socket_path().unwrap()).await;
    let stream = rt.accept().await.unwrap();
    stream.outbound.send(cancel("a")).await.unwrap();
    assert_eq!(handler.recv().await, cancel("a").frame.unwrap());
    drop(stream);
    assert_eq!(handler.recv_raw().await.unwrap(), None, "a clean end");
}
