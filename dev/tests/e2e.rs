//! End to end: `celerity-dev run <hello binary>` on a free port, real HTTP and
//! WebSocket clients, a client that goes away, and a SIGTERM that drains
//! without losing an accepted request.
//!
//! `hello`'s `GET /hello` reads the file named by `HELLO_GREETING_FILE`;
//! pointing it at a FIFO holds that request in the handler until the test
//! writes to the FIFO, which is how a request is kept in flight.

use std::path::Path;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;

mod common;

use common::{Dev, dev_command, example_binary, http, mkfifo, read, release, send};

/// `celerity-dev run <hello>`, with `hello`'s greeting read from
/// `greeting_file`.
fn start(greeting_file: &Path) -> Dev {
    let mut command = dev_command(&example_binary("hello", "CELERITY_DEV_E2E_HELLO"));
    command.args(["--timeout-ms", "8000", "--drain-timeout-ms", "10000"]).env("HELLO_GREETING_FILE", greeting_file);
    Dev::spawn(command)
}

async fn websocket_round_trip(port: u16) {
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (mut ws, response) =
        tokio_tungstenite::client_async(format!("ws://127.0.0.1:{port}/ws"), stream).await.unwrap();
    assert_eq!(response.status(), 101);
    let capabilities = tokio::time::timeout(Duration::from_secs(5), ws.next()).await.unwrap().unwrap().unwrap();
    assert_eq!(capabilities, Message::binary(vec![1u8, 5, 0, 0]));
    ws.send(Message::text(r#"{"ping":true}"#)).await.unwrap();
    let pong = tokio::time::timeout(Duration::from_secs(5), ws.next()).await.unwrap().unwrap().unwrap();
    assert_eq!(pong, Message::text(r#"{"pong":true}"#));
    ws.send(Message::binary(vec![1u8, 1, 0, 0])).await.unwrap();
    let pong = tokio::time::timeout(Duration::from_secs(5), ws.next()).await.unwrap().unwrap().unwrap();
    assert_eq!(pong, Message::binary(vec![1u8, 2, 0, 0]));
    // hello serves no WebSocket route: the message is dropped, and said so.
    ws.send(Message::text(r#"{"event":"chat","data":1}"#)).await.unwrap();
    ws.close(None).await.unwrap();
}

#[test]
fn hello_end_to_end_with_a_drain_that_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("greeting");
    mkfifo(&fifo);
    let mut dev = start(&fifo);
    let port = dev.port;
    // Run from the workspace root, which holds no blueprint.
    assert_eq!(dev.count("no blueprint read"), 1, "{}", dev.text());

    // HTTP: success, a validation error, no route, a method not served.
    let created = http(port, "POST", "/greetings/ada?shout=true", r#"{"greeting":"Hello"}"#);
    assert_eq!(created.status, 201, "{}\n{}", created.head, dev.text());
    assert!(created.body.contains("HELLO, ADA!"), "{}", created.body);
    assert!(created.head.to_ascii_lowercase().contains("set-cookie: last-greeted=ada"), "{}", created.head);
    let invalid = http(port, "POST", "/greetings/ada", r#"{"greeting":"  "}"#);
    assert_eq!(invalid.status, 400, "{}", invalid.body);
    assert_eq!(http(port, "GET", "/nope", "").status, 404);
    assert_eq!(http(port, "DELETE", "/hello", "").status, 405);

    // The local invoke endpoint and the dev endpoints answer JSON.
    let unknown =
        http(port, "POST", "/runtime/handlers/invoke", r#"{"handlerName":"nope","invocationType":"requestResponse"}"#);
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    let mismatch = http(
        port,
        "POST",
        "/runtime/handlers/invoke",
        r#"{"handlerName":"greet","invocationType":"requestResponse","payload":{}}"#,
    );
    assert!(mismatch.body.contains("\"message\""), "{} {}", mismatch.status, mismatch.body);
    assert_eq!(http(port, "POST", "/dev/consumers/queue/none", "[1]").status, 404);
    assert_eq!(http(port, "POST", "/runtime/handlers/invoke", "{").status, 400);

    // WebSocket: the upgrade, and the reserved ping frames.
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(websocket_round_trip(port));
    dev.wait_for("no handler for route \"chat\"", Duration::from_secs(5));

    // A client that goes away cancels its event.
    let gone = send(port, "GET", "/hello", "");
    std::thread::sleep(Duration::from_millis(300));
    drop(gone);
    dev.wait_for("client went away: Cancel(CALLER_GONE)", Duration::from_secs(10));
    release(&fifo, "too late");

    // SIGTERM while a request is in flight: it is answered, then celerity-dev exits 0.
    std::thread::sleep(Duration::from_millis(300));
    let held = send(port, "GET", "/hello", "");
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill(2) has no memory-safety preconditions.
    assert_eq!(unsafe { libc::kill(dev.child.id() as libc::pid_t, libc::SIGTERM) }, 0);
    dev.wait_for("draining: 1 event(s) in flight", Duration::from_secs(5));
    // A request arriving during the drain is refused, not lost silently.
    let late = http(port, "GET", "/hello", "");
    assert_eq!(late.status, 503, "{}", late.body);
    release(&fifo, "hello from the fifo\n");
    let answered = read(held);
    assert_eq!(answered.status, 200, "{}\n{}", answered.body, dev.text());
    assert_eq!(answered.body, "hello from the fifo");
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = dev.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "celerity-dev did not exit:\n{}", dev.text());
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(100));
    let log = dev.text();
    assert!(status.success(), "{status}\n{log}");
    assert!(log.contains("drained: 1 event(s) answered"), "{log}");
    assert!(log.contains("GET::/hello -> 200"), "{log}");
    assert!(log.contains("the handler exited (exit status: 0)"), "{log}");
}
