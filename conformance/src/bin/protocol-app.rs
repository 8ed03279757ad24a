//! A handler executable for the conformance tests: one HTTP handler per
//! behaviour the flow-control and lifecycle rules are about. Built with the
//! explicit API (no attribute macros).

use std::process::ExitCode;
use std::time::{Duration, UNIX_EPOCH};

use celerity::consumer::RawRecord;
use celerity::http::{Json, Query};
use celerity::layer::{self, Answer, Event, EventLayer, Next};
use celerity::websocket::outbound::{SendError, SendReport};
use celerity::websocket::{Outbound, WsSender};
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

/// One message for `POST /ws/send`.
#[derive(Deserialize)]
struct WsMessage {
    connection: String,
    /// A text message.
    text: Option<String>,
    /// Bytes sent as an already-framed binary message.
    raw_binary: Option<Vec<u8>>,
    message_id: Option<String>,
    wait_for_ack: Option<bool>,
}

#[derive(Deserialize)]
struct WsSendRequest {
    messages: Vec<WsMessage>,
    timeout_ms: Option<u64>,
    /// On partial failure, send exactly the failed messages once more.
    retry_failed: Option<bool>,
}

fn outbound(message: WsMessage) -> Outbound {
    let mut out = match message.raw_binary {
        Some(bytes) => Outbound::raw_binary(message.connection, bytes),
        None => Outbound::text(message.connection, message.text.unwrap_or_default()),
    };
    if let Some(id) = message.message_id {
        out = out.message_id(id);
    }
    out.wait_for_ack(message.wait_for_ack.unwrap_or(false))
}

/// What became of a send, as JSON: `result` is ok, failed, unconfirmed,
/// timed_out, disconnected or invalid; `failed` lists `[index, connection,
/// error]` and `unconfirmed` the indexes the runtime could not confirm.
fn describe(outcome: &Result<SendReport, SendError>) -> serde_json::Value {
    match outcome {
        Ok(_) => serde_json::json!({ "result": "ok" }),
        Err(error) => {
            let result = match error {
                SendError::Failed(_) => "failed",
                SendError::Unconfirmed(_) => "unconfirmed",
                SendError::TimedOut { .. } => "timed_out",
                SendError::Disconnected { .. } => "disconnected",
                SendError::Invalid { .. } => "invalid",
                _ => "other",
            };
            let failed: Vec<serde_json::Value> =
                error.failures().iter().map(|f| serde_json::json!([f.index(), f.connection_id(), f.error()])).collect();
            let unconfirmed = error.report().map(|report| report.unconfirmed_indexes()).unwrap_or_default();
            serde_json::json!({ "result": result, "failed": failed, "unconfirmed": unconfirmed, "error": error.to_string() })
        }
    }
}

/// Sends the messages in the body as one batch, and answers with what
/// became of them (and of the retry of what failed, when asked).
async fn ws_send(ws: WsSender, Json(request): Json<WsSendRequest>) -> Json<serde_json::Value> {
    let ws = ws.with_timeout(Duration::from_millis(request.timeout_ms.unwrap_or(10_000)));
    let outcome = ws.send_all(request.messages.into_iter().map(outbound)).await;
    let mut answer = describe(&outcome);
    if request.retry_failed.unwrap_or(false)
        && let Err(error) = &outcome
    {
        let retry = ws.send_all(error.retry_batch()).await;
        answer["retry"] = describe(&retry);
    }
    Json(answer)
}

#[derive(Deserialize)]
struct Fanout {
    sends: usize,
}

/// Makes `sends` sends at once, each of one message to connection
/// `{event}-{i}`, and answers with the outcome of each, in order.
async fn ws_fanout(ws: WsSender, cx: Context, Query(params): Query<Fanout>) -> Json<Vec<String>> {
    let sends = (0..params.sends).map(|i| {
        let ws = ws.clone();
        let connection = format!("{}-{i}", cx.event_id());
        async move {
            match ws.send(Outbound::text(connection.clone(), "{}")).await {
                Ok(_) => format!("{connection}:ok"),
                Err(error) => {
                    let why = error.failures().first().map(|f| f.error().to_string()).unwrap_or_default();
                    format!("{connection}:failed:{why}")
                }
            }
        }
    });
    Json(futures_util::future::join_all(sends).await)
}

#[derive(Deserialize)]
struct Big {
    /// The size of the body, in KiB.
    kb: usize,
}

/// Answers with a body of `kb` KiB: for frames near and over the limits,
/// and for a runtime that stops reading.
async fn big(Query(params): Query<Big>) -> Vec<u8> {
    vec![b'x'; params.kb * 1024]
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Colour {
    Red,
    Green,
}

#[derive(Deserialize)]
struct Paint {
    colour: Colour,
}

#[derive(Deserialize)]
struct Litres {
    litres: u32,
}

/// Takes a typed query and a typed JSON body: for the errors that quote
/// what a request sent (an unknown variant, a value of the wrong type, a
/// content type that is not JSON).
async fn paint(Query(paint): Query<Paint>, Json(amount): Json<Litres>) -> String {
    format!("{} l of {:?}", amount.litres, paint.colour)
}

/// Takes the query's `layer_ms` before handing the event on: the event's deadline
/// covers this and the handler together.
fn slow_layer() -> impl EventLayer {
    layer::from_fn(|event: Event, next: Next| async move {
        let ms = event
            .request()
            .and_then(|request| request.query().get("layer_ms").map(str::to_string))
            .and_then(|ms| ms.parse().ok())
            .unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        next.run(event).await
    })
}

/// Panics before the handler runs: answered as the handler's panic is.
fn panicking_layer() -> impl EventLayer {
    layer::from_fn(|_event: Event, _next: Next| async move {
        if true {
            panic!("kaboom from a layer");
        }
        Answer::http("unreachable")
    })
}

/// A per-record consumer that fails records whose body is empty.
async fn consume(record: RawRecord) -> Result<(), celerity::Error> {
    if record.body().is_empty() { Err(celerity::Error::msg("an empty record")) } else { Ok(()) }
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
            .http("POST::/ws/send", ws_send)
            .http("POST::/ws/fanout", ws_fanout)
            .register(Registration::http(HandlerKey::Tag("GET::/capped".into()), sleep).max_concurrent(CAPPED_MAX))
            .http("GET::/big", big)
            .http("POST::/paint", paint)
            .consumer("source::faults::consume", consume)
            .register(Registration::http(HandlerKey::Tag("GET::/layered/sleep".into()), sleep).layer(slow_layer()))
            .register(Registration::http(HandlerKey::Tag("GET::/layered/panic".into()), fast).layer(panicking_layer()))
            .run()
            .await
    })
}
