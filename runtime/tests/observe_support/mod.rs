//! Serving an [`App`] through the real driver against the test kit's
//! runtime, for the observability tests.

#![allow(dead_code)]

use std::time::Duration;

use celerity::App;
use celerity_testkit::{Connection, TestRuntime, TestRuntimeBuilder};
use tokio::task::JoinHandle;

/// A served application and the runtime's side of its stream.
pub struct Served {
    pub runtime: TestRuntime,
    pub conn: Connection,
    pub app: JoinHandle<celerity::Result<()>>,
}

/// Serves `app` with a cancel grace of 100 ms and a credit of 8.
pub async fn serve(builder: TestRuntimeBuilder, app: App) -> Served {
    let runtime = builder.bind().await.expect("the test runtime binds");
    let settings = runtime.app_settings(&[("CELERITY_CANCEL_GRACE_MS", "100"), ("CELERITY_HANDLER_CONCURRENCY", "8")]);
    let app = tokio::spawn(app.without_compiled_handlers().settings(settings).run());
    let conn = runtime.accept().await.expect("a handshake").accepted().expect("Ready accepted");
    Served { runtime, conn, app }
}

impl Served {
    /// Drains the application and waits for it to end well.
    pub async fn stop(self) {
        self.conn.drain_in(Duration::from_secs(5)).expect("drain");
        let result = tokio::time::timeout(Duration::from_secs(10), self.app).await.expect("the app stops");
        result.expect("the app task").expect("the app ends without error");
    }
}

/// Waits, briefly, until `check` holds.
pub async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..200 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}
