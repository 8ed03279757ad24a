//! Starting `protocol-app` against a test runtime, and reading its answers.

#![allow(dead_code)]

use std::process::ExitStatus;
use std::time::Duration;

use celerity_conformance::HANDLERS;
use celerity_testkit::proto::v1::{self as pb, result::Outcome};
use celerity_testkit::{Connection, HandlerProcess, TestRuntime, TestRuntimeBuilder, event};

/// Generous: the suite must pass on a loaded two-core machine. Nothing
/// waits this long unless something is wrong.
pub const WAIT: Duration = Duration::from_secs(20);

/// The cancellation grace the tests run the app with, unless they set one.
pub const GRACE_MS: &str = "200";

/// A running `protocol-app` connected to a test runtime.
pub struct Served {
    pub runtime: TestRuntime,
    pub process: HandlerProcess,
    pub conn: Connection,
}

/// Starts `protocol-app` with a pool of 4, a 200 ms cancellation grace and
/// `env` on top, and completes its handshake.
pub async fn start(env: &[(&str, &str)]) -> Served {
    start_with(env, |builder| builder).await
}

/// [`start`] under a runtime that sends no protocol version, as the
/// public runtime that predates version negotiation does.
pub async fn start_unversioned(env: &[(&str, &str)]) -> Served {
    start_with(env, TestRuntimeBuilder::no_protocol_version).await
}

async fn start_with(env: &[(&str, &str)], runtime: impl FnOnce(TestRuntimeBuilder) -> TestRuntimeBuilder) -> Served {
    let mut builder = runtime(TestRuntime::builder().wait_timeout(WAIT));
    for (name, tag) in HANDLERS {
        builder = builder.handler(*name, *tag);
    }
    let runtime = builder.bind().await.expect("the test runtime binds");
    let mut command = HandlerProcess::command(env!("CARGO_BIN_EXE_protocol-app"))
        .envs(runtime.env())
        .env("RUST_LOG", "info")
        .env("RUST_BACKTRACE", "0")
        .env("CELERITY_HANDLER_CONCURRENCY", "4")
        .env("CELERITY_CANCEL_GRACE_MS", GRACE_MS)
        .env("CELERITY_SHUTDOWN_GRACE_MS", "10000")
        .env_remove("CELERITY_EXPOSE_PANICS");
    for (key, value) in env {
        command = command.env(key, value);
    }
    let process = command.spawn().expect("protocol-app starts");
    let conn = match runtime.accept_timeout(WAIT).await.and_then(|h| h.accepted()) {
        Ok(conn) => conn,
        Err(error) => panic!("handshake failed: {error}\n{}", process.output_text()),
    };
    Served { runtime, process, conn }
}

impl Served {
    /// Waits for the process to exit, failing with its output if it does not.
    pub async fn exit(&mut self) -> ExitStatus {
        match self.process.wait_timeout(WAIT).await {
            Some(status) => status,
            None => panic!("protocol-app did not exit\n{}", self.process.output_text()),
        }
    }

    /// Ends the session cleanly with a Drain and checks the process exits 0.
    pub async fn drain_and_exit(&mut self) {
        self.conn.drain_in(Duration::from_secs(10)).expect("Drain is sent");
        let end = self.conn.closed_timeout(WAIT).await.expect("the stream ends after Drain");
        assert!(end.is_clean(), "{end}");
        let status = self.exit().await;
        assert!(status.success(), "exit {status}\n{}", self.process.output_text());
        self.conn.assert_no_violations();
    }
}

/// `GET {path}`, tagged `GET::{path}`.
pub fn get(path: &str) -> event::HttpEvent {
    event::http("GET", path)
}

/// `GET /sleep?ms=..&honour=..`.
pub fn sleep(ms: u64, honour: bool) -> event::HttpEvent {
    get("/sleep").query("ms", ms.to_string()).query("honour", honour.to_string())
}

/// The `HandlerError` a result carries, or a failure naming what it was.
pub fn handler_error(result: &pb::Result) -> &pb::HandlerError {
    match &result.outcome {
        Some(Outcome::Error(error)) => error,
        other => panic!("expected a HandlerError for {}, got {other:?}", result.id),
    }
}

/// The body of an HTTP answer, checking it is a 200.
pub fn ok_body(result: &pb::Result) -> String {
    match &result.outcome {
        Some(Outcome::Http(response)) => {
            assert_eq!(response.status, 200, "{response:?}");
            String::from_utf8_lossy(&response.body).into_owned()
        }
        other => panic!("expected an HTTP answer for {}, got {other:?}", result.id),
    }
}

/// The resident set size of a process, in KiB, from `/proc`.
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
