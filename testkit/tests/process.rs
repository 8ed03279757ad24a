//! Running a process: environment, captured output, exit status, signals.

use std::time::Duration;

use celerity_testkit::{HandlerProcess, TestRuntime};

#[tokio::test]
async fn captures_output_env_and_exit_code() {
    let rt = TestRuntime::builder().bind().await.unwrap();
    let mut p = HandlerProcess::command("/bin/sh")
        .args(["-c", "echo \"socket=$CELERITY_RUNTIME_SOCKET\"; echo oops >&2; exit 3"])
        .envs(rt.env())
        .spawn()
        .unwrap();
    let status = p.wait_timeout(Duration::from_secs(10)).await.unwrap();
    assert_eq!(status.code(), Some(3));
    assert_eq!(p.stdout_text(), format!("socket={}\n", rt.socket_path().unwrap().display()));
    assert_eq!(p.stderr_text(), "oops\n");
    let all = p.output_text();
    assert!(all.contains("oops") && all.contains("socket="), "{all}");
}

#[tokio::test]
async fn spawn_for_sets_the_runtime_environment() {
    let rt = TestRuntime::builder().tcp(0).bind().await.unwrap();
    let mut p = HandlerProcess::spawn_for(&rt, "/usr/bin/env").unwrap();
    assert!(p.wait_timeout(Duration::from_secs(10)).await.unwrap().success());
    let out = p.stdout_text();
    assert!(out.contains("CELERITY_RUNTIME_SOCKET_FALLBACK_ENABLED=true"), "{out}");
    let port = rt.tcp_addr().unwrap().port();
    assert!(out.contains(&format!("CELERITY_RUNTIME_SOCKET_FALLBACK_PORT={port}")), "{out}");
}

#[tokio::test]
async fn output_is_readable_while_running_and_kill_works() {
    let mut p = HandlerProcess::command("/bin/sh")
        .args(["-c", "echo \"$GREETING\" >&2; exec sleep 30"])
        .env("GREETING", "hello")
        .spawn()
        .unwrap();
    assert!(p.wait_for_output("hello", Duration::from_secs(10)).await);
    assert!(p.try_status().is_none());
    assert!(p.wait_timeout(Duration::from_millis(100)).await.is_none());
    let status = p.kill().await.unwrap();
    assert!(!status.success());
    assert!(!p.wait_for_output("never printed", Duration::from_millis(50)).await);
}

#[tokio::test]
async fn terminate_sends_sigterm() {
    let mut p = HandlerProcess::command("/bin/sh")
        .args(["-c", "trap 'echo got-term; exit 0' TERM; echo ready; while true; do sleep 0.05; done"])
        .spawn()
        .unwrap();
    assert!(p.wait_for_output("ready", Duration::from_secs(10)).await);
    p.terminate().unwrap();
    let status = p.wait_timeout(Duration::from_secs(10)).await.unwrap();
    assert!(status.success(), "{}", p.output_text());
    assert!(p.stdout_text().contains("got-term"));
}

#[tokio::test]
async fn dropping_kills_the_process() {
    let p = HandlerProcess::command("/bin/sleep").arg("30").spawn().unwrap();
    let pid = p.id().unwrap();
    drop(p);
    // Reaped by Tokio in the background; wait until the pid is gone.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        // Gone, or a zombie waiting to be reaped: killed either way.
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit(')').next().and_then(|s| s.split_whitespace().next());
        if matches!(state, None | Some("Z") | Some("X")) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "process {pid} still alive");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
