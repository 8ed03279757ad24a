//! (B): the benchmark's handler with no SDK: a hand-written tonic client on
//! one single-threaded tokio runtime that answers every `Dispatch` at once
//! with a `Result` granting one place. That is as fast as the handler IPC
//! protocol goes over gRPC on a Unix socket, and what (A) is measured
//! against.
//!
//! - HTTP: the request body is the response body.
//! - Consumer: a precomputed `BatchResult` naming the records that fail.
//! - `POST::/ws-send`: a `WsSend` of as many messages as the body says; the
//!   `Result` goes once its `WsSendAck` is back (a map from correlation id to
//!   dispatch id).
//!
//! It speaks just enough protocol for the benchmark: no deadlines, no
//! cancellation (it holds nothing long enough to cancel), and it exits on
//! `Drain` (it holds nothing then either).
//!
//! `BENCH_RAW_HANDOFF=1` gives it (A)'s shape of threads and nothing else of
//! the SDK: the stream is served from a thread of its own, on a
//! single-threaded runtime, and each HTTP and consumer event's answer is
//! made in a task of its own on a multi-threaded runtime of the default
//! size, which hands it back to the stream's thread to be sent. That is the
//! least an event costs when handlers run apart from the stream, as (A)'s
//! isolation requires: what (A) spends beyond it is the SDK's own.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use celerity_bench::{
    CAPPED_TAGS, FAILURE_MESSAGE, WS_MESSAGE, WS_TAG, expected_failures, tag_cap_from_env, ws_batch_size,
    ws_connection_id,
};
use celerity_proto::v1::handler_runtime_service_client::HandlerRuntimeServiceClient;
use celerity_proto::v1::{
    BatchResult, HandlerError, HandlerLimit, HandlerMessage, HttpResponse, ProtocolVersion, Ready, RecordFailure,
    WsOutbound, WsSend, dispatch::Source, handler_message, result::Outcome, runtime_message,
};
use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Endpoint;

/// Counts heap allocations for the harness (`celerity_bench::alloc`), as
/// (A) does.
#[global_allocator]
static ALLOCATOR: celerity_bench::alloc::Counting = celerity_bench::alloc::Counting;

type Error = Box<dyn std::error::Error + Send + Sync>;

fn main() -> ExitCode {
    celerity_bench::alloc::attach_from_env();
    let handoff = std::env::var("BENCH_RAW_HANDOFF").is_ok_and(|on| on == "1");
    let result =
        if handoff { serve_handed_off() } else { serve_on(tokio::runtime::Builder::new_current_thread(), None) };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("bench-raw-handler: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Serves the stream on a runtime built by `builder`, handing answers to
/// `workers` when given.
fn serve_on(mut builder: tokio::runtime::Builder, workers: Option<tokio::runtime::Handle>) -> Result<(), Error> {
    builder.enable_all().build()?.block_on(serve(workers))
}

/// The stream on a thread of its own, answers made on a multi-threaded
/// runtime, as (A) runs them.
fn serve_handed_off() -> Result<(), Error> {
    let workers = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let handle = workers.handle().clone();
    let stream = std::thread::Builder::new().name("bench-io".to_string()).spawn(move || {
        serve_on(tokio::runtime::Builder::new_current_thread(), Some(handle)).map_err(|e| e.to_string())
    })?;
    stream.join().map_err(|_| "the stream's thread panicked")??;
    Ok(())
}

fn result(id: String, outcome: Outcome) -> HandlerMessage {
    HandlerMessage {
        frame: Some(handler_message::Frame::Result(celerity_proto::v1::Result {
            id,
            credit_grant: 1,
            outcome: Some(outcome),
        })),
    }
}

fn ok_response(body: celerity_proto::prost::bytes::Bytes) -> Outcome {
    Outcome::Http(HttpResponse { status: 200, headers: HashMap::new(), body })
}

async fn connect(path: &str) -> Result<UnixStream, Error> {
    let mut tries = 0;
    loop {
        match UnixStream::connect(path).await {
            Ok(io) => return Ok(io),
            Err(error) if tries < 200 => {
                tries += 1;
                let _ = error;
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            Err(error) => return Err(error.into()),
        }
    }
}

/// The answer to an HTTP or consumer event that is not a WebSocket send.
fn answer(id: String, source: Option<Source>, batch_result: &BatchResult) -> HandlerMessage {
    match source {
        Some(Source::Http(request)) => result(id, ok_response(request.body)),
        Some(Source::Consumer(_)) => result(id, Outcome::Consumer(batch_result.clone())),
        _ => result(
            id,
            Outcome::Error(HandlerError {
                message: "not served by the benchmark".to_string(),
                r#type: "Unsupported".to_string(),
                stack: String::new(),
            }),
        ),
    }
}

async fn serve(workers: Option<tokio::runtime::Handle>) -> Result<(), Error> {
    let socket = std::env::var("CELERITY_RUNTIME_SOCKET")?;
    let credit: u32 = std::env::var("CELERITY_HANDLER_CONCURRENCY").ok().and_then(|v| v.parse().ok()).unwrap_or(64);
    let cap = tag_cap_from_env();

    // The same connection as the SDK's: one Unix stream under tonic, with
    // the same flow-control windows.
    let slot = Arc::new(Mutex::new(Some(connect(&socket).await?)));
    let connector = tower::service_fn(move |_| {
        let io = slot.lock().ok().and_then(|mut slot| slot.take());
        async move { io.map(TokioIo::new).ok_or_else(|| std::io::Error::other("the connection is gone")) }
    });
    let channel = Endpoint::from_static("http://localhost")
        .initial_stream_window_size(Some(8 << 20))
        .initial_connection_window_size(Some(16 << 20))
        .connect_with_connector(connector)
        .await?;
    let mut client = HandlerRuntimeServiceClient::new(channel)
        .max_decoding_message_size(64 << 20)
        .max_encoding_message_size(64 << 20);
    let (tx, rx) = mpsc::channel::<HandlerMessage>(1024);
    let mut inbound = client.event_stream(ReceiverStream::new(rx)).await?.into_inner();

    let batch_result = Arc::new(BatchResult {
        success: false,
        failures: expected_failures()
            .into_iter()
            .map(|message_id| RecordFailure { message_id, error_message: FAILURE_MESSAGE.to_string() })
            .collect(),
    });
    let ws_messages: Vec<WsOutbound> = (0..100)
        .map(|i| WsOutbound {
            connection_id: ws_connection_id(i),
            message: WS_MESSAGE.as_bytes().to_vec().into(),
            ..WsOutbound::default()
        })
        .collect();
    // Correlation id → the dispatch waiting for its acknowledgement.
    let mut waiting: HashMap<String, String> = HashMap::new();
    let mut next_correlation: u64 = 0;

    // Answers made on the workers, back to be sent.
    let (done_tx, mut done_rx) = mpsc::unbounded_channel::<HandlerMessage>();

    loop {
        let message = match workers {
            // (B) as it is: nothing else to wait for.
            None => inbound.message().await?,
            Some(_) => tokio::select! {
                message = inbound.message() => message?,
                Some(reply) = done_rx.recv() => {
                    if tx.send(reply).await.is_err() {
                        break;
                    }
                    continue;
                }
            },
        };
        let Some(message) = message else { break };
        let Some(frame) = message.frame else { continue };
        let reply = match frame {
            runtime_message::Frame::Config(config) => {
                let mut handler_tags: Vec<String> = config.handlers.into_iter().map(|h| h.handler_tag).collect();
                handler_tags.sort();
                let limits = CAPPED_TAGS
                    .iter()
                    .map(|tag| HandlerLimit { handler_tag: tag.to_string(), max_concurrent: cap })
                    .collect();
                let ready = Ready {
                    handler_tags,
                    initial_credit: credit,
                    sdk_version: "bench-raw-handler".to_string(),
                    limits,
                    protocol_version: Some(ProtocolVersion { major: 1, minor: 0 }),
                };
                HandlerMessage { frame: Some(handler_message::Frame::Ready(ready)) }
            }
            runtime_message::Frame::ReadyAck(ack) => {
                if !ack.accepted {
                    return Err(format!("refused: {ack:?}").into());
                }
                continue;
            }
            runtime_message::Frame::Dispatch(dispatch) => match dispatch.source {
                Some(Source::Http(request)) if dispatch.handler_tag == WS_TAG => {
                    let n = ws_batch_size(&request.body).min(ws_messages.len());
                    let correlation_id = next_correlation.to_string();
                    next_correlation += 1;
                    waiting.insert(correlation_id.clone(), dispatch.id);
                    let send = WsSend { correlation_id, messages: ws_messages[..n].to_vec() };
                    HandlerMessage { frame: Some(handler_message::Frame::WsSend(send)) }
                }
                source => match &workers {
                    Some(workers) => {
                        let (done, batch_result) = (done_tx.clone(), Arc::clone(&batch_result));
                        drop(workers.spawn(async move {
                            let _ = done.send(answer(dispatch.id, source, &batch_result));
                        }));
                        continue;
                    }
                    None => answer(dispatch.id, source, &batch_result),
                },
            },
            runtime_message::Frame::WsAck(ack) => {
                let Some(id) = waiting.remove(&ack.correlation_id) else { continue };
                let status = if ack.success { 200 } else { 500 };
                let response = HttpResponse { status, headers: HashMap::new(), body: Default::default() };
                result(id, Outcome::Http(response))
            }
            // Nothing is held long enough to cancel.
            runtime_message::Frame::Cancel(_) => continue,
            // Nothing is held when the benchmark drains: ending our half of
            // the stream is all there is to do.
            runtime_message::Frame::Drain(_) => break,
        };
        if tx.send(reply).await.is_err() {
            break;
        }
    }
    Ok(())
}
