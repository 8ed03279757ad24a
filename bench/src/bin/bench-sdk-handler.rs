//! (A): the benchmark's handler executable built with the SDK, with the
//! explicit API. Every handler does as little as its shape allows:
//!
//! - `POST::/echo` and the eight `POST::/capped/{n}` tags (each capped at
//!   `BENCH_TAG_CAP`): answer with the request body;
//! - `source::bench-queue::consume`: a per-record consumer that fails the
//!   records whose body is `fail`;
//! - `POST::/ws-send`: sends as many WebSocket messages as the body says in
//!   one `WsSend`, waits for the acknowledgement, and answers.
//!
//! `BENCH_SDK_LAYER=1` puts one layer that only hands the event on around
//! every handler: what a layer costs. `BENCH_SDK_IO_THREAD`,
//! `BENCH_SDK_RUNTIME` and `BENCH_SDK_WORKERS` choose where the stream and
//! the handlers run (see `main`); by default, as `run_main` chooses.

use std::process::ExitCode;
use std::sync::OnceLock;

use celerity::consumer::RawRecord;
use celerity::http::HttpError;
use celerity::layer::{self, Event, Next};
use celerity::websocket::{Outbound, WsSender};
use celerity::{App, Bytes, HandlerKey, Registration};
use celerity_bench::{
    CAPPED_TAGS, CONSUMER_TAG, FAIL_BODY, FAILURE_MESSAGE, HTTP_TAG, WS_MESSAGE, WS_TAG, tag_cap_from_env,
    ws_batch_size, ws_connection_id,
};

/// Counts heap allocations for the harness (`celerity_bench::alloc`), as
/// (B) does.
#[global_allocator]
static ALLOCATOR: celerity_bench::alloc::Counting = celerity_bench::alloc::Counting;

async fn echo(body: Bytes) -> Bytes {
    body
}

async fn consume(record: RawRecord) -> Result<(), celerity::Error> {
    if record.body().as_ref() == FAIL_BODY { Err(celerity::Error::msg(FAILURE_MESSAGE)) } else { Ok(()) }
}

/// The connection ids, made once: what (B) sends is precomputed too, so
/// that formatting ids is not what the WebSocket cases measure.
fn connections() -> &'static [String] {
    static CONNECTIONS: OnceLock<Vec<String>> = OnceLock::new();
    CONNECTIONS.get_or_init(|| (0..100).map(ws_connection_id).collect())
}

async fn ws_send(ws: WsSender, body: Bytes) -> Result<&'static str, HttpError> {
    let connections = connections();
    let n = ws_batch_size(&body).min(connections.len());
    let messages = connections[..n].iter().map(|connection| Outbound::text(connection.clone(), WS_MESSAGE));
    ws.send_all(messages).await.map_err(|error| HttpError::internal(error.to_string()))?;
    Ok("sent")
}

fn main() -> ExitCode {
    celerity_bench::alloc::attach_from_env();
    let cap = tag_cap_from_env();
    let serve = move || async move {
        let mut app = App::new()
            .without_compiled_handlers()
            .http(HTTP_TAG, echo)
            .consumer(CONSUMER_TAG, consume)
            .http(WS_TAG, ws_send);
        for tag in CAPPED_TAGS {
            app = app.register(Registration::http(HandlerKey::Tag(tag.to_string()), echo).max_concurrent(cap));
        }
        if std::env::var_os("BENCH_SDK_LAYER").is_some_and(|on| on == "1") {
            app = app.layer(layer::from_fn(|event: Event, next: Next| next.run(event)));
        }
        // `BENCH_SDK_IO_THREAD=false`: the stream as a task on the
        // application's runtime (`App::io_thread(false)`), to measure what
        // the thread of its own costs.
        app.io_thread(std::env::var("BENCH_SDK_IO_THREAD").map_or(true, |on| on != "false")).run().await
    };
    // `BENCH_SDK_RUNTIME=current_thread`: the same application on a
    // single-threaded runtime, as (B) runs, to tell the SDK's own cost per
    // event from that of the multi-threaded scheduler (`run_main`'s
    // default) waking its other workers.
    if std::env::var("BENCH_SDK_RUNTIME").is_ok_and(|flavor| flavor == "current_thread") {
        return celerity::run_main_on(tokio::runtime::Builder::new_current_thread(), serve);
    }
    // The stream as a task: on tokio's own runtime size, as
    // `CELERITY_IO_THREAD=false` gets from `run_main` (the harness passes no
    // `CELERITY_*` variable through).
    if std::env::var("BENCH_SDK_IO_THREAD").is_ok_and(|on| on == "false") {
        return celerity::run_main_on(tokio::runtime::Builder::new_multi_thread(), serve);
    }
    // `BENCH_SDK_WORKERS=N`: the multi-threaded runtime with N workers.
    if let Some(workers) = std::env::var("BENCH_SDK_WORKERS").ok().and_then(|n| n.parse::<usize>().ok()) {
        let mut runtime = tokio::runtime::Builder::new_multi_thread();
        runtime.worker_threads(workers.max(1));
        return celerity::run_main_on(runtime, serve);
    }
    celerity::run_main(serve)
}
