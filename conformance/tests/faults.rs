//! Faults over a real socket: the `protocol-app` binary against a runtime
//! that goes away, stalls, or sends what it should not, and handlers that
//! misbehave. What the SDK does in each case is stated on each test and in
//! `SECURITY.md`; the measured numbers are printed (run with
//! `--nocapture` to see them).
//!
//! Most tests use the test kit's runtime. What it will not do (never send
//! `RuntimeConfig`, stop reading the handler's frames, send bytes that do
//! not decode) is done with the kit's raw mode ([`raw_runtime`]), and a
//! runtime killed with SIGKILL is this test binary run again as a child
//! process ([`fault_runtime_child`]).

mod common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use celerity_conformance::HANDLERS;
use celerity_testkit::proto::prost::Message as _;
use celerity_testkit::proto::v1::{
    self as pb, Dispatch, HandlerMessage, RuntimeMessage, cancel::Reason, handler_message, result::Outcome,
    runtime_message,
};
use celerity_testkit::{HandlerProcess, RawRuntime, RawStream, TestRuntime, event};
use common::{WAIT, get, handler_error, ok_body, rss_kib, sleep, start};

// ----- helpers -----------------------------------------------------------------

fn tempdir(name: &str) -> PathBuf {
    let unique = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let dir = std::env::temp_dir().join(format!("celerity-faults-{name}-{}-{unique}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

/// `protocol-app` connecting to the socket at `socket`, with the settings
/// the other tests use.
fn spawn_app(socket: &Path, env: &[(&str, &str)]) -> HandlerProcess {
    let mut command = HandlerProcess::command(env!("CARGO_BIN_EXE_protocol-app"))
        .env("CELERITY_RUNTIME_SOCKET", socket)
        .env("RUST_LOG", "info")
        .env("RUST_BACKTRACE", "0")
        .env("CELERITY_HANDLER_CONCURRENCY", "4")
        .env("CELERITY_CANCEL_GRACE_MS", common::GRACE_MS)
        .env_remove("CELERITY_EXPOSE_PANICS");
    for (key, value) in env {
        command = command.env(key, value);
    }
    command.spawn().expect("protocol-app starts")
}

fn runtime_config() -> pb::RuntimeConfig {
    pb::RuntimeConfig {
        handlers: HANDLERS
            .iter()
            .map(|(name, tag)| pb::HandlerConfig {
                handler_name: name.to_string(),
                handler_tag: tag.to_string(),
                timeout_ms: 60_000,
                ..Default::default()
            })
            .collect(),
        protocol_version: Some(pb::ProtocolVersion { major: 1, minor: 0 }),
        ..Default::default()
    }
}

fn frame(frame: runtime_message::Frame) -> RuntimeMessage {
    RuntimeMessage { frame: Some(frame) }
}

/// The test kit's raw runtime, for what its checked one will not do (never
/// send `RuntimeConfig`, stop reading, send bytes that do not decode). One
/// frame of queue: a send waits as soon as the stream does.
async fn raw_runtime() -> RawRuntime {
    RawRuntime::builder().queue(1).accept_timeout(WAIT).bind().await.expect("the raw runtime binds")
}

/// Takes the next stream and completes its handshake, accepting whatever
/// `Ready` says.
async fn raw_handshake(rt: &RawRuntime) -> RawStream {
    let mut stream = rt.accept().await.expect("the handler connects");
    stream.handshake(runtime_config()).await.expect("the handshake");
    stream
}

// ----- the runtime goes away or stalls -----------------------------------------

/// The variable that makes [`fault_runtime_child`] play the runtime.
const CHILD_SOCKET: &str = "CELERITY_FAULTS_CHILD_SOCKET";

/// Not a test of its own: run as a child process by
/// [`a_runtime_killed_mid_stream_ends_the_handler_promptly_with_a_failure`]
/// (with [`CHILD_SOCKET`] set), it is the runtime that gets killed. It
/// serves the socket, keeps the handler's window full of events, writes
/// `serving` next to the socket once results flow, and goes on until it
/// is killed (or for a minute at most). Without the variable it does
/// nothing.
#[test]
fn fault_runtime_child() {
    let Ok(socket) = std::env::var(CHILD_SOCKET) else {
        return;
    };
    let socket = PathBuf::from(socket);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async move {
        let mut builder = TestRuntime::builder().unix_socket(&socket).wait_timeout(WAIT);
        for (name, tag) in HANDLERS {
            builder = builder.handler(*name, *tag);
        }
        let rt = builder.bind().await.expect("the child runtime binds");
        let conn = rt.accept_timeout(WAIT).await.and_then(|h| h.accepted()).expect("the handshake");
        let marker = socket.with_file_name("serving");
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(60) {
            while conn.dispatch(sleep(50, false)).is_ok() {}
            conn.next_result_timeout(WAIT).await.expect("results flow");
            if !marker.exists() {
                std::fs::write(&marker, b"serving").unwrap();
            }
        }
    });
}

/// The runtime is killed (SIGKILL) while events are in flight: the socket
/// closes under the handler with no `Drain` and no goodbye. The handler
/// abandons what it holds, sends nothing, logs why, and exits non-zero at
/// once. Measured here: the time from the kill to the handler's exit.
#[tokio::test]
async fn a_runtime_killed_mid_stream_ends_the_handler_promptly_with_a_failure() {
    let dir = tempdir("killed");
    let socket = dir.join("runtime.sock");
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args(["fault_runtime_child", "--exact", "--nocapture", "--test-threads", "1"])
        .env(CHILD_SOCKET, &socket)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the child runtime starts");
    let mut app = spawn_app(&socket, &[("CELERITY_CONNECT_TIMEOUT_MS", "20000")]);
    let marker = dir.join("serving");
    let started = Instant::now();
    while !marker.exists() {
        assert!(started.elapsed() < WAIT, "the child runtime never served\n{}", app.output_text());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Events are in flight now: the child keeps the window full.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let killed_at = Instant::now();
    child.start_kill().unwrap();
    let status = app.wait_timeout(WAIT).await.unwrap_or_else(|| panic!("the handler hung\n{}", app.output_text()));
    let latency = killed_at.elapsed();
    let _ = child.wait().await;
    eprintln!("faults: exit {status} {:.0} ms after the runtime was killed", latency.as_secs_f64() * 1000.0);
    assert!(!status.success(), "a runtime that went away is a failure: {status}");
    // The contract asks for 1 s; the bound is generous for a loaded machine.
    assert!(latency < Duration::from_secs(5), "the handler took {latency:?} to exit\n{}", app.output_text());
    let stderr = app.stderr_text();
    assert!(stderr.contains("closed the stream without draining"), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A runtime that accepts the stream and never sends `RuntimeConfig`: the
/// handler gives up after `CELERITY_HANDSHAKE_TIMEOUT_MS` (30 s by default,
/// the runtime's own Ready timeout) with an error naming what it waited
/// for, and exits non-zero.
#[tokio::test]
async fn a_runtime_that_never_sends_its_config_is_a_clear_error_after_the_timeout() {
    let rt = raw_runtime().await;
    let started = Instant::now();
    let mut app = spawn_app(rt.socket_path().unwrap(), &[("CELERITY_HANDSHAKE_TIMEOUT_MS", "1500")]);
    // Hold the stream open and send nothing.
    let _stream = rt.accept().await.expect("the handler connects");
    let status = app
        .wait_timeout(Duration::from_secs(60))
        .await
        .unwrap_or_else(|| panic!("the handler waited forever\n{}", app.output_text()));
    let waited = started.elapsed();
    eprintln!("faults: gave up on a silent runtime after {:.2} s: {status}", waited.as_secs_f64());
    assert!(!status.success());
    let stderr = app.stderr_text();
    let named = stderr
        .split("sent no RuntimeConfig within ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|secs| secs.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("the error names what it waited for and how long\n{stderr}"));
    // The configured wait (CELERITY_HANDSHAKE_TIMEOUT_MS), not the default.
    assert_eq!(named, 1.5, "the error names the configured wait");
    assert!(waited.as_secs_f64() >= named - 0.1, "gave up after {waited:?}, before the {named} s it names");
    assert!(waited.as_secs_f64() <= named + 10.0, "gave up after {waited:?}, long after the {named} s it names");
}

/// A runtime that stops reading the handler's frames. The handler's writer
/// blocks once the transport's window and its own queue (1024 frames) are
/// full; from then on it reads nothing either, so the runtime's own sends
/// stall in turn, and the handler's memory stays flat however long the
/// stall lasts and however much the runtime tries to send. When the
/// runtime reads again, everything is answered, exactly once.
#[tokio::test]
async fn a_runtime_that_stops_reading_gets_backpressure_and_the_handlers_memory_stays_bounded() {
    let rt = raw_runtime().await;
    let mut app = spawn_app(rt.socket_path().unwrap(), &[("CELERITY_HANDLER_CONCURRENCY", "4")]);
    let pid = app.id().unwrap();
    let RawStream { mut inbound, outbound } = raw_handshake(&rt).await;
    let baseline = rss_kib(pid);

    // From here on the runtime reads nothing. Four events of 1 MiB answers
    // fill the window; then it over-dispatches small events until a send
    // finds no room for a few seconds.
    // Each frame carries a 2 KiB header: HTTP/2 counts frames under
    // 256 bytes that are left unread against a budget, and ends a
    // connection that exhausts it (see the next test).
    let dispatch = |id: String, path: &str, kb: Option<usize>| {
        let mut event = get(path).id(id).header("x-padding", "p".repeat(2048));
        if let Some(kb) = kb {
            event = event.query("kb", kb.to_string());
        }
        frame(runtime_message::Frame::Dispatch(event.no_deadline().build()))
    };
    let mut expected = HashSet::new();
    for i in 0..4 {
        let id = format!("big-{i}");
        outbound.send(dispatch(id.clone(), "/big", Some(1024))).await.unwrap();
        expected.insert(id);
    }
    let flood_started = Instant::now();
    let mut stalled = false;
    for i in 0..1_000_000 {
        let id = format!("o-{i}");
        let send = outbound.send(dispatch(id.clone(), "/fast", None));
        match tokio::time::timeout(Duration::from_secs(3), send).await {
            Ok(result) => {
                if result.is_err() {
                    let _ = app.wait_timeout(Duration::from_secs(2)).await;
                    panic!("the stream ended after {} frames\n{}", expected.len(), app.output_text());
                }
                expected.insert(id);
            }
            Err(_) => {
                stalled = true;
                break;
            }
        }
    }
    let sent = expected.len();
    assert!(stalled, "the handler took {sent} frames without the runtime reading any: no backpressure");
    // Memory while stalled: sampled for three seconds.
    let at_stall = rss_kib(pid);
    let mut peak = at_stall;
    for _ in 0..12 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        peak = peak.max(rss_kib(pid));
    }
    eprintln!(
        "faults: stalled after {sent} frames in {:.1} s; handler RSS {} KiB at the handshake, {} KiB at the stall, \
         {} KiB peak while stalled",
        flood_started.elapsed().as_secs_f64(),
        baseline,
        at_stall,
        peak
    );
    assert!(app.try_status().is_none(), "the handler died while the runtime was not reading\n{}", app.output_text());
    assert!(peak < 256 * 1024, "the handler's memory grew to {peak} KiB while the runtime was not reading");
    assert!(peak <= at_stall + 16 * 1024, "the handler's memory kept growing while stalled: {at_stall} -> {peak} KiB");

    // The runtime reads again: every event is answered, exactly once.
    let mut answered = HashSet::new();
    while answered.len() < sent {
        let message = tokio::time::timeout(WAIT, inbound.message()).await.expect("results flow again");
        match message.unwrap() {
            Some(HandlerMessage { frame: Some(handler_message::Frame::Result(result)) }) => {
                assert!(expected.contains(&result.id), "a Result for {:?}, never dispatched", result.id);
                assert!(answered.insert(result.id.clone()), "a second Result for {:?}", result.id);
                if result.id.starts_with("big-") {
                    match &result.outcome {
                        Some(Outcome::Http(response)) => assert_eq!(response.body.len(), 1024 * 1024),
                        other => panic!("expected the big answer, got {other:?}"),
                    }
                } else if let Some(Outcome::Error(error)) = &result.outcome {
                    // Beyond the window as the handler counts it.
                    assert_eq!(error.r#type, "OverCapacity");
                } else {
                    // Within it: the big events' places came free when they
                    // were answered, read or not.
                    assert_eq!(ok_body(&result), "ok");
                }
            }
            Some(_) => {}
            None => panic!("the stream ended with {} of {sent} answered", answered.len()),
        }
    }
    // A drain ends it cleanly.
    raw_drain_and_exit(RawStream { inbound, outbound }, &mut app).await;
}

/// A runtime that stops reading and floods frames of a few bytes far
/// beyond its credit. HTTP/2 (the `h2` crate under tonic) counts the
/// framing overhead of small DATA frames left unread against a budget (half
/// the connection window: 8 MiB, some 45,000 such frames) and ends the
/// connection with `ENHANCE_YOUR_CALM` once it is spent. Memory stays
/// bounded throughout, and the handler, its connection gone, exits
/// non-zero. Measured: frames taken, peak memory, and the time to exit.
#[tokio::test]
async fn a_runtime_flooding_small_frames_without_reading_is_cut_off() {
    let rt = raw_runtime().await;
    let mut app = spawn_app(rt.socket_path().unwrap(), &[("CELERITY_HANDLER_CONCURRENCY", "4")]);
    let pid = app.id().unwrap();
    let RawStream { inbound, outbound } = raw_handshake(&rt).await;
    let baseline = rss_kib(pid);
    let mut peak = baseline;
    let mut sent = 0u64;
    let started = Instant::now();
    let ended = loop {
        let event = get("/fast").id(format!("f-{sent}")).no_deadline().build();
        let send = outbound.send(frame(runtime_message::Frame::Dispatch(event)));
        match tokio::time::timeout(Duration::from_secs(3), send).await {
            Ok(Ok(())) => sent += 1,
            Ok(Err(_)) => break true,
            Err(_) => break false,
        }
        if sent.is_multiple_of(5_000) {
            peak = peak.max(rss_kib(pid));
        }
        assert!(sent < 2_000_000, "2,000,000 frames taken without reading: nothing bounds the flood");
    };
    let flood = started.elapsed();
    let exited = Instant::now();
    let status = app.wait_timeout(WAIT).await.unwrap_or_else(|| panic!("the handler hung\n{}", app.output_text()));
    eprintln!(
        "faults: a flood of {sent} small frames in {:.1} s was {}; handler RSS {baseline} KiB before, {peak} KiB peak; \
         it exited ({status}) {:.0} ms later",
        flood.as_secs_f64(),
        if ended { "cut off by the transport" } else { "stalled" },
        exited.elapsed().as_secs_f64() * 1000.0
    );
    assert!(ended, "the flood stalled rather than being cut off");
    assert!(!status.success());
    assert!(peak < 256 * 1024, "the handler's memory grew to {peak} KiB under the flood");
    drop(inbound);
}

// ----- where to connect ----------------------------------------------------------

/// `CELERITY_RUNTIME_SOCKET` naming something that is not a socket (a file,
/// a directory): refused at once, without retrying, naming the path.
#[tokio::test]
async fn a_socket_path_that_is_not_a_socket_is_refused_at_once() {
    let dir = tempdir("not-a-socket");
    let file = dir.join("runtime.sock");
    std::fs::write(&file, b"not a socket").unwrap();
    for path in [file.as_path(), dir.as_path()] {
        let started = Instant::now();
        let mut app = spawn_app(path, &[("CELERITY_CONNECT_TIMEOUT_MS", "30000")]);
        let status = app.wait_timeout(WAIT).await.expect("exits");
        assert!(!status.success());
        assert!(started.elapsed() < Duration::from_secs(10), "retried a path that can never be a socket");
        let stderr = app.stderr_text();
        assert!(stderr.contains("exists but is not a socket"), "{stderr}");
        assert!(stderr.contains(&path.display().to_string()), "{stderr}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A socket path longer than a Unix socket address holds (107 bytes on
/// Linux): refused at startup, saying how long it is and the limit.
#[tokio::test]
async fn an_over_long_socket_path_is_refused_at_startup() {
    let path = PathBuf::from(format!("/tmp/{}/runtime.sock", "d".repeat(150)));
    let mut app = spawn_app(&path, &[]);
    let status = app.wait_timeout(WAIT).await.expect("exits");
    assert!(!status.success());
    let stderr = app.stderr_text();
    assert!(stderr.contains("can be at most 107 bytes"), "{stderr}");
    assert!(stderr.contains(&format!("is {} bytes long", path.as_os_str().len())), "{stderr}");
}

// ----- the runtime sends what it should not ------------------------------------

/// After the handshake: a second `RuntimeConfig`, a second `ReadyAck`, a
/// `WsSendAck` for a send never made, and a frame with nothing in it. Each
/// is ignored, the first of each kind logged as a warning; the stream
/// carries on.
#[tokio::test]
async fn frames_that_make_no_sense_after_the_handshake_are_logged_and_ignored() {
    let mut app = start(&[]).await;
    let config = app.conn.config().clone();
    app.conn.send(frame(runtime_message::Frame::Config(config))).unwrap();
    let ack = pb::ReadyAck { accepted: true, ..Default::default() };
    app.conn.send(frame(runtime_message::Frame::ReadyAck(ack))).unwrap();
    let refusal = pb::ReadyAck { accepted: false, unknown_tags: vec!["GET::/x".into()], ..Default::default() };
    app.conn.send(frame(runtime_message::Frame::ReadyAck(refusal))).unwrap();
    app.conn.ws_ack_success("never-sent").unwrap();
    app.conn.send(RuntimeMessage { frame: None }).unwrap();
    assert_eq!(ok_body(&app.conn.call(get("/fast")).await.unwrap()), "ok");
    // A ReadyAck after the first is the same kind of warning as a second
    // RuntimeConfig: counted with it, not logged on its own.
    for warning in [
        "sent RuntimeConfig after the handshake; ignored",
        "\"never-sent\", which is not awaited",
        "a frame with nothing in it",
    ] {
        assert!(app.process.wait_for_output(warning, WAIT).await, "{warning}\n{}", app.process.output_text());
    }
    app.drain_and_exit().await;
}

/// A `Dispatch` with no source is answered `WrongEventSource`; one for a
/// tag nothing serves, `UnknownHandlerTag`; each returns its place. One
/// whose id is still in flight cannot be answered without its answer being
/// taken for the first one's: it is dropped with a warning, its place given
/// back with a `CreditGrant`, and the first event is answered normally.
#[tokio::test]
async fn dispatches_without_a_source_for_an_unknown_tag_or_with_an_id_in_flight_are_answered_safely() {
    let mut app = start(&[]).await;
    let no_source = Dispatch { source: None, ..get("/fast").build() };
    let result = app.conn.call(no_source).await.unwrap();
    let error = handler_error(&result);
    assert_eq!(error.r#type, "WrongEventSource");
    assert!(error.message.contains("no source at all"), "{}", error.message);
    assert_eq!(result.credit_grant, 1);

    let id = app.conn.dispatch_unchecked(get("/nowhere")).unwrap();
    let result = app.conn.result(&id).await.unwrap();
    let error = handler_error(&result);
    assert_eq!(error.r#type, "UnknownHandlerTag");
    assert!(error.message.contains("GET::/nowhere"), "{}", error.message);
    assert_eq!(result.credit_grant, 1);

    let held = app.conn.dispatch(sleep(60_000, true)).unwrap();
    app.conn.dispatch_unchecked(get("/fast").id(held.clone())).unwrap();
    let grant = app.conn.next_credit_grant().await.unwrap();
    assert_eq!(grant.additional, 1, "the place the duplicate took is given back");
    assert!(app.process.wait_for_output("its id is still in flight", WAIT).await, "{}", app.process.output_text());
    app.conn.cancel(&held, Reason::CallerGone).unwrap();
    assert_eq!(ok_body(&app.conn.result(&held).await.unwrap()), "stopped: caller gone");
    app.drain_and_exit().await;
}

/// A 32 MiB consumer batch (32 records of 1 MiB) is read and answered like
/// any other; the largest frame is 64 MiB by default.
#[tokio::test]
async fn a_32_mib_consumer_batch_is_served() {
    let mut app = start(&[]).await;
    let mut batch = event::consumer("faults", "consume");
    for i in 0..32 {
        batch = batch.record(format!("r-{i}"), vec![b'x'; 1024 * 1024]);
    }
    batch = batch.record("empty", Vec::new());
    let started = Instant::now();
    let result = app.conn.call_timeout(batch, WAIT).await.unwrap();
    eprintln!(
        "faults: a 32 MiB batch answered in {:.0} ms; handler RSS {} KiB",
        started.elapsed().as_secs_f64() * 1000.0,
        rss_kib(app.process.id().unwrap())
    );
    match &result.outcome {
        Some(Outcome::Consumer(batch)) => {
            let failed: Vec<&str> = batch.failures.iter().map(|f| f.message_id.as_str()).collect();
            assert_eq!(failed, ["empty"], "only the empty record fails");
        }
        other => panic!("expected a batch result, got {other:?}"),
    }
    assert_eq!(result.credit_grant, 1);
    app.drain_and_exit().await;
}

/// A frame over the largest frame (`CELERITY_MAX_MESSAGE_BYTES`) is refused
/// by the SDK's own decoder from its header, and cannot be skipped: its
/// body is still on the stream, and nothing after it can be told apart. The
/// handler exits non-zero, saying that it refused the frame, with its size
/// and the limit (not that the runtime went away), and does not hang.
#[tokio::test]
async fn a_frame_over_the_limit_is_named_as_the_sdks_refusal_and_ends_the_stream() {
    let mut app = start(&[("CELERITY_MAX_MESSAGE_BYTES", "1048576")]).await;
    let batch: Dispatch =
        event::consumer("faults", "consume").id("too-big").record("r-1", vec![b'x'; 2 * 1024 * 1024]).into();
    let size = frame(runtime_message::Frame::Dispatch(batch.clone())).encoded_len();
    app.conn.dispatch(batch).unwrap();
    let status = app.exit().await;
    assert!(!status.success());
    let stderr = app.process.stderr_text();
    assert!(stderr.contains(&format!("refused a frame of {size} bytes")), "the size is named\n{stderr}");
    assert!(stderr.contains("the largest it accepts is 1048576 bytes (CELERITY_MAX_MESSAGE_BYTES)"), "{stderr}");
    assert!(!stderr.contains("closed the stream without draining"), "the runtime is not blamed\n{stderr}");
    app.conn.take_violations();
}

/// A handler answering with more than a frame holds (65 MiB against the
/// default 64 MiB): the transport's encoder would fail the whole stream on
/// it, taking every other event with it, so the SDK sends a
/// `ResultTooLarge` error in its place, returns the place, and serves on.
#[tokio::test]
async fn an_answer_larger_than_a_frame_is_replaced_by_an_error_and_the_stream_survives() {
    let mut app = start(&[]).await;
    let held = app.conn.dispatch(sleep(60_000, true)).unwrap();
    let result = app.conn.call_timeout(get("/big").query("kb", (65 * 1024).to_string()), WAIT).await.unwrap();
    let error = handler_error(&result);
    assert_eq!(error.r#type, "ResultTooLarge");
    assert!(error.message.contains("CELERITY_MAX_MESSAGE_BYTES"), "{}", error.message);
    assert_eq!(result.credit_grant, 1);
    assert_eq!(ok_body(&app.conn.call(get("/fast")).await.unwrap()), "ok");
    app.conn.cancel(&held, Reason::CallerGone).unwrap();
    assert_eq!(ok_body(&app.conn.result(&held).await.unwrap()), "stopped: caller gone");
    app.drain_and_exit().await;
}

/// A runtime that dispatches far beyond the credit window: every extra
/// event is answered `OverCapacity` at once with its place, never queued
/// and never run, the window is unchanged, and the log is not flooded (one
/// line, then one count every ten seconds).
#[tokio::test]
async fn a_runtime_that_over_dispatches_by_thousands_gets_bounded_answers_and_a_bounded_log() {
    let mut app = start(&[("CELERITY_HANDLER_CONCURRENCY", "2")]).await;
    let held: Vec<String> = (0..2).map(|_| app.conn.dispatch(sleep(60_000, true)).unwrap()).collect();
    let ids: Vec<String> = (0..2_000).map(|_| app.conn.dispatch_unchecked(get("/fast")).unwrap()).collect();
    for id in &ids {
        let result = app.conn.result(id).await.unwrap();
        assert_eq!(handler_error(&result).r#type, "OverCapacity");
        assert_eq!(result.credit_grant, 1);
    }
    assert_eq!(app.conn.window(), 2);
    let lines = app.process.stderr_text().matches("beyond the credit window").count();
    assert!((1..=2).contains(&lines), "{lines} log lines for 2000 over-dispatches");
    for id in &held {
        app.conn.cancel(id, Reason::CallerGone).unwrap();
        app.conn.result(id).await.unwrap();
    }
    app.drain_and_exit().await;
}

// ----- hostile input ---------------------------------------------------------

/// The next `Result` for `id` on a raw stream, skipping other frames; the
/// `CreditGrant`s passed on the way are added to `grants`.
async fn raw_result(inbound: &mut tonic::Streaming<HandlerMessage>, id: &str, grants: &mut u32) -> pb::Result {
    loop {
        let message = tokio::time::timeout(WAIT, inbound.message()).await.expect("a frame in time");
        match message.expect("the stream is intact").expect("the stream goes on").frame {
            Some(handler_message::Frame::Result(result)) if result.id == id => return result,
            Some(handler_message::Frame::Credit(grant)) => *grants += grant.additional,
            Some(handler_message::Frame::Result(other)) => panic!("a Result for {:?} while awaiting {id:?}", other.id),
            _ => {}
        }
    }
}

/// The next `Result`s for each of `ids`, in whichever order they come,
/// skipping other frames; the `CreditGrant`s passed on the way are added
/// to `grants`.
async fn raw_results(
    inbound: &mut tonic::Streaming<HandlerMessage>,
    ids: &[&str],
    grants: &mut u32,
) -> Vec<(String, pb::Result)> {
    let mut results = Vec::new();
    while results.len() < ids.len() {
        let message = tokio::time::timeout(WAIT, inbound.message()).await.expect("a frame in time");
        match message.expect("the stream is intact").expect("the stream goes on").frame {
            Some(handler_message::Frame::Result(result)) => {
                assert!(ids.contains(&result.id.as_str()), "a Result for {:?} while awaiting {ids:?}", result.id);
                assert!(results.iter().all(|(id, _)| *id != result.id), "a second Result for {:?}", result.id);
                results.push((result.id.clone(), result));
            }
            Some(handler_message::Frame::Credit(grant)) => *grants += grant.additional,
            _ => {}
        }
    }
    results
}

/// Ends a raw stream with a `Drain` and checks the handler exits 0.
async fn raw_drain_and_exit(stream: RawStream, app: &mut HandlerProcess) {
    let RawStream { mut inbound, outbound } = stream;
    let deadline = now_ms() + 5_000;
    outbound.send(frame(runtime_message::Frame::Drain(pb::Drain { deadline_unix_ms: deadline }))).await.unwrap();
    while let Ok(Some(_)) = tokio::time::timeout(WAIT, inbound.message()).await.expect("the stream ends") {}
    drop(outbound);
    let status = app.wait_timeout(WAIT).await.expect("the handler exits");
    assert!(status.success(), "{status}\n{}", app.output_text());
}

/// `dispatch` encoded, with the first occurrence of `from` overwritten by
/// `to` (as long or shorter).
fn spoiled(dispatch: Dispatch, from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut bytes = frame(runtime_message::Frame::Dispatch(dispatch)).encode_to_vec();
    let at = bytes.windows(from.len()).position(|w| w == from).expect("the bytes to spoil");
    bytes[at..at + to.len()].copy_from_slice(to);
    bytes
}

/// Frames that do not decode, over a stream whose framing is intact: each
/// costs only itself. A `Cancel` that does not decode is logged as the
/// SDK's decode failure, naming the frame, and changes nothing. A
/// `Dispatch` with a path that is not UTF-8, and one cut short after its
/// id, are answered with an `UndecodableDispatch` error naming the field,
/// with their places; one whose id is not UTF-8 is dropped with its place
/// given back as a `CreditGrant`. Those three are counted with the first,
/// not logged one by one. The event held meanwhile, and every later one,
/// are served.
#[tokio::test]
async fn an_undecodable_frame_costs_only_itself() {
    let rt = raw_runtime().await;
    let mut app = spawn_app(rt.socket_path().unwrap(), &[]);
    let stream = raw_handshake(&rt).await;
    let held = sleep(60_000, true).id("held").no_deadline().build();
    stream.outbound.send(frame(runtime_message::Frame::Dispatch(held))).await.unwrap();

    let cancel = pb::Cancel { id: "held".into(), reason: Reason::Shutdown as i32 };
    let mut cancel = frame(runtime_message::Frame::Cancel(cancel)).encode_to_vec();
    let at = cancel.windows(4).position(|w| w == b"held").unwrap();
    cancel[at] = 0xff;
    stream.outbound.send_bytes(cancel).await.unwrap();
    // The tag holds "/fast" too: the path is one of its own.
    let mut bad_path = get("/fast").id("bad-path").no_deadline().build();
    bad_path.source =
        Some(pb::dispatch::Source::Http(pb::HttpRequest { path: "/orders".into(), ..Default::default() }));
    stream.outbound.send_bytes(spoiled(bad_path, b"/orders", b"/\xff\xfe")).await.unwrap();
    let cut = frame(runtime_message::Frame::Dispatch(get("/fast").id("cut-short").no_deadline().build()));
    let cut = cut.encode_to_vec();
    stream.outbound.send_bytes(cut[..cut.len() / 2].to_vec()).await.unwrap();
    let bad_id = get("/fast").id("id-\u{e9}").no_deadline().build();
    stream.outbound.send_bytes(spoiled(bad_id, "id-\u{e9}".as_bytes(), b"id-\xff\xff")).await.unwrap();
    stream.outbound.send(frame(runtime_message::Frame::Dispatch(get("/fast").id("after").build()))).await.unwrap();

    let RawStream { mut inbound, outbound } = stream;
    let mut grants = 0;
    // The path is found not to decode where the handler would have run,
    // the cut frame as it arrives: the three are answered in any order.
    for (id, result) in raw_results(&mut inbound, &["bad-path", "cut-short", "after"], &mut grants).await {
        if id == "after" {
            assert_eq!(ok_body(&result), "ok");
            continue;
        }
        let error = handler_error(&result);
        assert_eq!(error.r#type, "UndecodableDispatch", "{id}");
        assert_eq!(result.credit_grant, 1, "{id}: its place comes back");
        if id == "bad-path" {
            assert!(error.message.contains("HttpRequest.path"), "the field is named: {}", error.message);
        }
    }
    assert_eq!(grants, 1, "the place of the dispatch whose id could not be read");
    let first = "the SDK could not decode a Cancel from the runtime (failed to decode Protobuf message: Cancel.id";
    assert!(app.wait_for_output(first, WAIT).await, "{}", app.output_text());
    let counted = "the runtime sent 3 more frame(s) that could not be decoded";
    assert!(app.wait_for_output(counted, WAIT).await, "{}", app.output_text());
    // The held event was neither lost nor stopped by the broken Cancel.
    let cancel = pb::Cancel { id: "held".into(), reason: Reason::CallerGone as i32 };
    outbound.send(frame(runtime_message::Frame::Cancel(cancel))).await.unwrap();
    assert_eq!(ok_body(&raw_result(&mut inbound, "held", &mut grants).await), "stopped: caller gone");
    raw_drain_and_exit(RawStream { inbound, outbound }, &mut app).await;
}

/// The specification makes only the handshake's first frame mandatory: a
/// second `RuntimeConfig` before `ReadyAck` is warned about and ignored, and
/// the handler is served as the first one bound it.
#[tokio::test]
async fn a_second_runtime_config_before_ready_ack_is_ignored_with_a_warning() {
    let rt = raw_runtime().await;
    let mut app = spawn_app(rt.socket_path().unwrap(), &[]);
    let mut stream = rt.accept().await.expect("the handler connects");
    stream.outbound.send_frame(runtime_message::Frame::Config(runtime_config())).await.unwrap();
    stream.read_ready(WAIT).await.expect("Ready");
    stream.outbound.send_frame(runtime_message::Frame::Config(pb::RuntimeConfig::default())).await.unwrap();
    let ack = pb::ReadyAck { accepted: true, ..Default::default() };
    stream.outbound.send_frame(runtime_message::Frame::ReadyAck(ack)).await.unwrap();
    stream.outbound.send(frame(runtime_message::Frame::Dispatch(get("/fast").id("1").build()))).await.unwrap();
    let mut grants = 0;
    assert_eq!(ok_body(&raw_result(&mut stream.inbound, "1", &mut grants).await), "ok");
    let warning = "second RuntimeConfig before ReadyAck; ignored";
    assert!(app.wait_for_output(warning, WAIT).await, "{}", app.output_text());
    raw_drain_and_exit(stream, &mut app).await;
}

/// A gRPC server that sends no response headers before its first frame
/// (grpc-go's and grpcio's default) and then sends nothing: the handler
/// gives up after the handshake timeout, counted from connecting, and says
/// in plain words what did not come.
#[tokio::test]
async fn a_runtime_holding_its_headers_and_sending_nothing_is_named_plainly() {
    let rt = RawRuntime::builder().hold_headers_until_first_frame().accept_timeout(WAIT).bind().await.unwrap();
    let started = Instant::now();
    let mut app = spawn_app(rt.socket_path().unwrap(), &[("CELERITY_HANDSHAKE_TIMEOUT_MS", "1500")]);
    let _stream = rt.accept().await.expect("the handler connects");
    let status = app.wait_timeout(WAIT).await.unwrap_or_else(|| panic!("it waited on\n{}", app.output_text()));
    assert!(!status.success());
    let stderr = app.stderr_text();
    let expected =
        "the runtime sent no RuntimeConfig, nor even the stream's response headers, within 1.5 s of connecting";
    assert!(stderr.contains(expected), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(12), "gave up after {:?}", started.elapsed());
}

/// Only a `deadline_unix_ms` of 0 means no deadline: a negative one is in
/// the past, so the event is cancelled and answered `DeadlineExceeded` at
/// once rather than run to its end.
#[tokio::test]
async fn a_negative_deadline_is_in_the_past() {
    let mut app = start(&[]).await;
    let started = Instant::now();
    let result = app.conn.call(sleep(60_000, false).deadline_unix_ms(-1)).await.unwrap();
    assert_eq!(handler_error(&result).r#type, "DeadlineExceeded");
    assert_eq!(result.credit_grant, 1);
    assert!(started.elapsed() < Duration::from_secs(10), "answered after {:?}", started.elapsed());
    app.drain_and_exit().await;
}

/// Request values are cut to 256 bytes wherever the SDK echoes them in an
/// answer, with their full length noted: a content type in the 415, a
/// query value in the 400 (which quotes it twice: as the error and as its
/// detail), a JSON value of the wrong type.
#[tokio::test]
async fn echoed_request_values_are_cut_to_256_bytes() {
    let mut app = start(&[]).await;
    let long = "z".repeat(200_000);
    let cases = [
        (
            event::http("POST", "/paint")
                .query("colour", "red")
                .header("content-type", long.clone())
                .header("content-type", "application/json")
                .body("{}"),
            415,
        ),
        (
            event::http("POST", "/paint")
                .query("colour", long.clone())
                .header("content-type", "application/json")
                .body(r#"{"litres": 1}"#),
            400,
        ),
        (
            event::http("POST", "/paint")
                .query("colour", "red")
                .header("content-type", "application/json")
                .body(format!(r#"{{"litres": "{long}"}}"#)),
            400,
        ),
    ];
    for (event, status) in cases {
        let result = app.conn.call(event).await.unwrap();
        let Some(Outcome::Http(response)) = &result.outcome else { panic!("an HTTP answer: {result:?}") };
        let body = String::from_utf8_lossy(&response.body);
        assert_eq!(response.status, status, "{body}");
        assert!(response.body.len() < 2_000, "{} bytes echoed back: {body:.600}", response.body.len());
        assert!(body.contains("... (200"), "cut, with the full length noted: {body}");
    }
    app.drain_and_exit().await;
}

/// A runtime sending thousands of frames that each cost it a few bytes and
/// would each cost a log line: frames with nothing in them, acknowledgements
/// of sends never made, dispatches without an id, dispatches whose id is in
/// flight. Each kind is logged once, then counted, and the count logged
/// when the interval (10 s) is over; every dispatch's place still comes
/// back.
#[tokio::test]
async fn a_flood_of_frames_that_make_no_sense_is_logged_once_per_kind_then_counted() {
    const EACH: u32 = 10_000;
    let rt = raw_runtime().await;
    let mut app = spawn_app(rt.socket_path().unwrap(), &[]);
    let RawStream { mut inbound, outbound } = raw_handshake(&rt).await;
    let held = sleep(60_000, true).id("held").no_deadline().build();
    outbound.send(frame(runtime_message::Frame::Dispatch(held))).await.unwrap();
    // Read as it comes, so that the grants never hold the handler's writer.
    let reader = tokio::spawn(async move {
        let mut grants = 0;
        let fast = raw_result(&mut inbound, "fast", &mut grants).await;
        (inbound, grants, fast)
    });
    for i in 0..EACH {
        outbound.send(RuntimeMessage { frame: None }).await.unwrap();
        let ack = pb::WsSendAck { correlation_id: format!("stray-{i}"), success: true, failures: Vec::new() };
        outbound.send(frame(runtime_message::Frame::WsAck(ack))).await.unwrap();
        let no_id = get("/fast").id("").build();
        outbound.send(frame(runtime_message::Frame::Dispatch(no_id))).await.unwrap();
        outbound.send(frame(runtime_message::Frame::Dispatch(get("/fast").id("held").build()))).await.unwrap();
    }
    outbound.send(frame(runtime_message::Frame::Dispatch(get("/fast").id("fast").build()))).await.unwrap();
    let (mut inbound, grants, fast) = reader.await.unwrap();
    assert_eq!(ok_body(&fast), "ok");
    assert_eq!(grants, 2 * EACH, "every place the unanswerable dispatches took comes back");
    for count in [
        format!("{} more frame(s) with nothing in them", EACH - 1),
        format!("{} more WebSocket acknowledgement(s) of sends not awaited", EACH - 1),
        format!("{} more dispatch(es) that could not be answered", 2 * EACH - 1),
    ] {
        assert!(app.wait_for_output(&count, WAIT).await, "{count}\n{}", app.output_text());
    }
    let stderr = app.stderr_text();
    for (line, most) in [("frame with nothing in it", 1), ("which is not awaited", 1), ("which cannot be answered", 1)]
    {
        let lines = stderr.matches(line).count();
        assert_eq!(lines, most, "{lines} lines of {line:?} for {EACH} frames");
    }
    eprintln!("faults: {} frames that make no sense logged in {} bytes", 4 * EACH, stderr.len());
    let cancel = pb::Cancel { id: "held".into(), reason: Reason::CallerGone as i32 };
    outbound.send(frame(runtime_message::Frame::Cancel(cancel))).await.unwrap();
    let mut grants = 0;
    assert_eq!(ok_body(&raw_result(&mut inbound, "held", &mut grants).await), "stopped: caller gone");
    raw_drain_and_exit(RawStream { inbound, outbound }, &mut app).await;
}

// ----- handlers misbehave ------------------------------------------------------

/// One handler blocks its worker thread for three seconds; hundreds of
/// other events are served meanwhile, each promptly. Measured: their worst
/// latency.
#[tokio::test]
async fn a_handler_blocking_its_thread_for_seconds_does_not_hold_other_events() {
    let mut app = start(&[("TOKIO_WORKER_THREADS", "2"), ("CELERITY_HANDLER_CONCURRENCY", "16")]).await;
    let blocker = app.conn.dispatch(get("/block").query("ms", "3000")).unwrap();
    let started = Instant::now();
    while !app.process.stderr_text().contains("blocks its worker thread") {
        assert!(started.elapsed() < WAIT, "the blocking handler did not start");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut worst = Duration::ZERO;
    for _ in 0..300 {
        let sent = Instant::now();
        assert_eq!(ok_body(&app.conn.call(get("/fast")).await.unwrap()), "ok");
        worst = worst.max(sent.elapsed());
    }
    eprintln!("faults: 300 events served while a handler blocked; worst latency {:.1} ms", worst.as_secs_f64() * 1e3);
    assert!(app.conn.try_result(&blocker).is_none(), "all served while the blocker still blocked");
    assert!(worst < Duration::from_secs(1), "an event waited {worst:?} behind a blocked thread");
    assert_eq!(ok_body(&app.conn.result(&blocker).await.unwrap()), "unblocked");
    app.drain_and_exit().await;
}

/// Ten thousand events in flight at once across tags, one of them capped:
/// with `CELERITY_HANDLER_CONCURRENCY=10000` the handler holds them all,
/// refuses beyond the cap locally, answers each exactly once, and gives
/// every place back.
#[tokio::test]
async fn ten_thousand_events_in_flight_across_tags_with_caps() {
    const EVENTS: u32 = 10_000;
    let mut app = start(&[("CELERITY_HANDLER_CONCURRENCY", "10000")]).await;
    assert_eq!(app.conn.window(), i64::from(EVENTS));
    let started = Instant::now();
    let mut ids = Vec::new();
    ids.push(app.conn.dispatch(get("/capped").query("ms", "3000").query("honour", "true")).unwrap());
    // The runtime ignoring the cap: refused locally, without running.
    let beyond = app.conn.dispatch_unchecked(get("/capped").query("ms", "1")).unwrap();
    let refused = app.conn.result(&beyond).await.unwrap();
    assert_eq!(handler_error(&refused).r#type, "OverCapacity");
    for _ in 1..EVENTS {
        ids.push(app.conn.dispatch(sleep(3_000, false)).unwrap());
    }
    let peak_in_flight = app.conn.in_flight();
    let pid = app.process.id().unwrap();
    let mut answered = 0u32;
    let mut peak_rss = rss_kib(pid);
    for id in &ids {
        app.conn.result_timeout(id, Duration::from_secs(60)).await.unwrap();
        answered += 1;
        if answered.is_multiple_of(1_000) {
            peak_rss = peak_rss.max(rss_kib(pid));
        }
    }
    eprintln!(
        "faults: {EVENTS} events, {peak_in_flight} in flight at the peak, all answered in {:.2} s; peak RSS {peak_rss} KiB",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(peak_in_flight, EVENTS, "all were in flight at once");
    assert_eq!(answered, EVENTS);
    assert_eq!(app.conn.credit(), i64::from(EVENTS), "every place came back");
    app.drain_and_exit().await;
}
