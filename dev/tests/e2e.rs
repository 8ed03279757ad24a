//! End to end: `celerity-dev run <hello binary>` on a free port, real HTTP and
//! WebSocket clients, a client that goes away, and a SIGTERM that drains
//! without losing an accepted request.
//!
//! `hello`'s `GET /hello` reads the file named by `HELLO_GREETING_FILE`;
//! pointing it at a FIFO holds that request in the handler until the test
//! writes to the FIFO, which is how a request is kept in flight.

use std::ffi::CString;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;

struct Dev {
    child: Child,
    log: Arc<Mutex<String>>,
    port: u16,
}

impl Drop for Dev {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `hello` binary. `cargo test --workspace` builds it (for hello's own
/// tests) before any test runs, so the one in the target directory is used
/// as is; only when it is missing is it built here (building it with `-p
/// hello` alone could unify features differently and rebuild its
/// dependencies). `CELERITY_DEV_E2E_HELLO` names another binary.
fn hello_binary(root: &Path) -> PathBuf {
    if let Some(path) = std::env::var_os("CELERITY_DEV_E2E_HELLO") {
        return PathBuf::from(path);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let binary = target.join("debug").join("hello");
    if !binary.is_file() {
        let status = Command::new(env!("CARGO")).args(["build", "-p", "hello"]).current_dir(root).status().unwrap();
        assert!(status.success(), "cargo build -p hello failed");
    }
    binary
}

impl Dev {
    fn start(greeting_file: &Path) -> Dev {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let hello = hello_binary(&root);
        let mut child = Command::new(env!("CARGO_BIN_EXE_celerity-dev"))
            .arg("run")
            .arg(&hello)
            .args(["--port", "0", "--timeout-ms", "8000", "--drain-timeout-ms", "10000"])
            .current_dir(&root)
            .env("HELLO_GREETING_FILE", greeting_file)
            .env("CELERITY_CANCEL_GRACE_MS", "200")
            .env_remove("CELERITY_DRAIN_TIMEOUT")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start celerity-dev");
        let log = Arc::new(Mutex::new(String::new()));
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn({
            let log = Arc::clone(&log);
            move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    let mut log = log.lock().unwrap();
                    log.push_str(&line);
                    log.push('\n');
                }
            }
        });
        let mut dev = Dev { child, log, port: 0 };
        let line = dev.wait_for("serving on http://127.0.0.1:", Duration::from_secs(60));
        let port = line.rsplit(':').next().unwrap().trim().parse().expect("the port in the banner");
        dev.port = port;
        dev
    }

    fn text(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Waits for a log line containing `needle` and returns it.
    fn wait_for(&mut self, needle: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(line) = self.text().lines().find(|l| l.contains(needle)) {
                return line.to_owned();
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("celerity-dev exited ({status}) before logging {needle:?}:\n{}", self.text());
            }
            assert!(Instant::now() < deadline, "no {needle:?} in the log:\n{}", self.text());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

struct Response {
    status: u16,
    head: String,
    body: String,
}

fn send(port: u16, method: &str, path: &str, body: &str) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    stream
}

fn read(mut stream: TcpStream) -> Response {
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    Response { status, head: head.to_owned(), body: body.to_owned() }
}

fn http(port: u16, method: &str, path: &str, body: &str) -> Response {
    read(send(port, method, path, body))
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// Writes `text` into the FIFO once the handler has opened it for reading.
fn release(fifo: &Path, text: &str) {
    use std::os::unix::fs::OpenOptionsExt;
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut f = loop {
        // Without a reader, a non-blocking open for writing fails (ENXIO).
        match std::fs::OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(fifo) {
            Ok(f) => break f,
            Err(e) => assert!(Instant::now() < deadline, "the handler never opened the FIFO: {e}"),
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    f.write_all(text.as_bytes()).unwrap();
}

async fn websocket_round_trip(port: u16) {
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (mut ws, response) =
        tokio_tungstenite::client_async(format!("ws://127.0.0.1:{port}/ws"), stream).await.unwrap();
    assert_eq!(response.status(), 101);
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
    let mut dev = Dev::start(&fifo);
    let port = dev.port;

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
