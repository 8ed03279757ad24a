//! A handler executable for the conformance tests: one HTTP handler per
//! behaviour the flow-control and lifecycle rules are about. Built with the
//! explicit API (no attribute macros).

use std::process::ExitCode;
use std::time::{Duration, UNIX_EPOCH};

use celerity::http::Query;
use celerity::{App, Context, HandlerKey, Registration};
use celerity_conformance::CAPPED_MAX;
use serde::Deserialize;

#[derive(Deserialize)]
struct Sleep {
    /// How long to sleep.
    ms: u64,
    /// Whether to stop early when the event is cancelled.
    honour: Option<bool>,
}

/// Answers at once.
async fn fast() -> &'static str {
    "ok"
}

/// Sleeps `ms`, stopping early with the cancellation's reason when
/// `honour=true`, and ignoring it otherwise.
async fn sleep(Query(params): Query<Sleep>, cx: Context) -> String {
    let nap = tokio::time::sleep(Duration::from_millis(params.ms));
    if params.honour.unwrap_or(false) {
        tokio::select! {
            _ = nap => "slept".to_string(),
            reason = cx.cancelled() => format!("stopped: {reason}"),
        }
    } else {
        nap.await;
        "slept".to_string()
    }
}

/// Blocks its worker thread for `ms`: what a handler must not do, and what
/// must not stop the stream.
async fn block(Query(params): Query<Sleep>, cx: Context) -> &'static str {
    eprintln!("protocol-app: {} blocks its worker thread for {} ms", cx.event_id(), params.ms);
    std::thread::sleep(Duration::from_millis(params.ms));
    "unblocked"
}

async fn panics() -> &'static str {
    panic!("kaboom from the handler")
}

async fn fails() -> Result<&'static str, celerity::Error> {
    Err(celerity::Error::typed("InventoryError", "out of stock"))
}

/// The event's deadline as the handler sees it, in Unix milliseconds (0:
/// none).
async fn deadline(cx: Context) -> String {
    let ms = cx.deadline().map_or(0, |d| d.duration_since(UNIX_EPOCH).unwrap_or_default().as_millis());
    ms.to_string()
}

#[derive(Deserialize)]
struct Withhold {
    /// Resume this long after withholding.
    resume_after_ms: u64,
}

/// Withholds credit, and resumes from a background task later.
async fn withhold(Query(params): Query<Withhold>, cx: Context) -> &'static str {
    let app = cx.app().expect("served by the runtime").clone();
    app.withhold();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(params.resume_after_ms)).await;
        app.resume();
    });
    "withheld"
}

#[derive(Deserialize)]
struct Resize {
    n: u32,
}

async fn resize(Query(params): Query<Resize>, cx: Context) -> String {
    cx.app().expect("served by the runtime").set_concurrency(params.n);
    format!("resized to {}", params.n)
}

/// Asks the application to stop, twice: the second request changes nothing.
async fn shutdown(cx: Context) -> &'static str {
    let app = cx.app().expect("served by the runtime");
    app.shutdown();
    app.shutdown();
    "stopping"
}

fn main() -> ExitCode {
    celerity::run_main(|| async {
        App::new()
            .http("GET::/fast", fast)
            .http("GET::/sleep", sleep)
            .http("GET::/block", block)
            .http("GET::/panic", panics)
            .http("GET::/error", fails)
            .http("GET::/deadline", deadline)
            .http("GET::/withhold", withhold)
            .http("GET::/resize", resize)
            .http("GET::/shutdown", shutdown)
            .register(Registration::http(HandlerKey::Tag("GET::/capped".into()), sleep).max_concurrent(CAPPED_MAX))
            .run()
            .await
    })
}
