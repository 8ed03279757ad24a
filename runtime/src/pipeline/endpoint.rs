//! A registered handler as the driver and `celerity::testing` call it: a
//! dispatched source in, the outcome out, with panics caught.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;

#[cfg(test)]
use celerity_proto::v1::Dispatch;
use celerity_proto::v1::{dispatch::Source, result::Outcome};
use prost::DecodeError;

use super::{Handler, Kind};
use bytes::Bytes;

use crate::consumer::Batch;
use crate::context::Context;
use crate::http::Request;
use crate::kind::{self, HandlerKind};
use crate::layer::Payload;
use crate::panics::{CatchPanic, guarded};
use crate::reply::Reply;
use crate::session::{LazySource, in_source};

/// The future of a handler's answer.
pub(crate) type HandlerFuture = Pin<Box<dyn Future<Output = Reply> + Send + 'static>>;

/// `future` as a [`HandlerFuture`]: boxed, its output the driver's form.
pub(crate) fn erased<F>(future: F) -> HandlerFuture
where
    F: Future + Send + 'static,
    F::Output: Into<Reply>,
{
    Box::pin(async move { future.await.into() })
}

/// A handler of some kind, its kind erased: what a registration holds.
pub(crate) trait Endpoint: Send + Sync + 'static {
    /// Serves one dispatched source. Called inside [`start`], so a panic in
    /// it (taking an argument, building the handler's future) is caught.
    fn call(&self, source: Option<Source>, cx: Context) -> HandlerFuture;

    /// Serves a payload that layers handed on, as [`Endpoint::call`] serves
    /// a source.
    fn call_payload(&self, payload: Payload, cx: Context) -> HandlerFuture;

    /// This endpoint, answering within messages of at most `limit` bytes,
    /// for one that collects what it answers with (a tower service's
    /// response body); none for one whose answers need no limit of its own.
    fn with_limit(&self, _limit: usize) -> Option<Arc<dyn Endpoint>> {
        None
    }
}

/// A handler `H` of kind `K`, with its kind's options.
struct Pipeline<K: Kind, H, Args> {
    handler: Arc<H>,
    options: K::Options,
    args: PhantomData<fn() -> Args>,
}

/// The endpoint serving `handler` as a handler of kind `K`.
pub(crate) fn endpoint<K, H, Args>(handler: H, options: K::Options) -> Arc<dyn Endpoint>
where
    K: Kind,
    H: Handler<K, Args>,
    Args: 'static,
{
    Arc::new(Pipeline::<K, H, Args> { handler: Arc::new(handler), options, args: PhantomData })
}

impl<K, H, Args> Endpoint for Pipeline<K, H, Args>
where
    K: Kind,
    H: Handler<K, Args>,
    Args: 'static,
{
    fn call(&self, source: Option<Source>, cx: Context) -> HandlerFuture {
        // The session starts a handler only for a source of its kind; a
        // mismatch is still answered, never served.
        let unserved = match source {
            Some(source) => match K::serve(&self.handler, &self.options, source, &cx) {
                Ok(future) => return future,
                Err(kind) => Some(kind),
            },
            None => None,
        };
        let outcome = kind::wrong_source(K::KIND, cx.handler_name(), unserved, cx.tag());
        Box::pin(std::future::ready(outcome.into()))
    }

    fn call_payload(&self, payload: Payload, cx: Context) -> HandlerFuture {
        match K::serve_payload(&self.handler, &self.options, payload, &cx) {
            Ok(future) => future,
            Err(kind) => Box::pin(std::future::ready(
                kind::wrong_source(K::KIND, cx.handler_name(), Some(kind), cx.tag()).into(),
            )),
        }
    }
}

/// Runs `endpoint` for an event's `source`: the outcome of the handler, or
/// the answer to its panic, whether it panicked building its future or
/// polling it. The source is decoded here, in the handler's task, and is
/// the error when it does not decode: no handler ran, and the session
/// answers for it.
pub(crate) async fn start(
    endpoint: Arc<dyn Endpoint>,
    source: Option<LazySource>,
    cx: Context,
) -> Result<Reply, DecodeError> {
    let source = match source.map(LazySource::into_single) {
        Some(Ok((kind, bytes))) => match straight(kind, bytes)? {
            Straight::Payload(payload) => return Ok(answer(guarded(|| endpoint.call_payload(payload, cx))).await),
            Straight::Answered(outcome) => return Ok(outcome.into()),
            Straight::Not(kind, bytes) => Some(LazySource::encoded(kind, bytes).decode()?),
        },
        Some(Err(source)) => Some(source.decode()?),
        None => None,
    };
    Ok(answer(guarded(|| endpoint.call(source, cx))).await)
}

/// The answer of a handler's call: its future's, panics caught, or the
/// answer given instead of calling it.
async fn answer(call: Result<HandlerFuture, Outcome>) -> Reply {
    match call {
        Ok(future) => CatchPanic { future }.await,
        Err(outcome) => outcome.into(),
    }
}

/// A source decoded straight from its bytes.
// Made once per event and matched at once: boxing the payload would be an
// allocation per event for nothing.
#[allow(clippy::large_enum_variant)]
enum Straight {
    /// Into the payload its handler gets.
    Payload(Payload),
    /// Into the answer every handler of its kind gives it, with none called:
    /// a request the SDK cannot read.
    Answered(Outcome),
    /// Not: a kind with no decoder of the SDK's own.
    Not(HandlerKind, Bytes),
}

/// The source of `kind` whose bytes are `bytes`, decoded straight into the
/// payload its handler gets, for the kinds with a decoder of the SDK's own
/// (`http::wire`, `consumer::wire`). A source becomes that payload either
/// way: `Endpoint::call` converts a decoded source into one (and answers a
/// request it cannot read as below) and serves it as `call_payload` does.
/// Decoded straight, its text takes no `String` per field.
fn straight(kind: HandlerKind, bytes: Bytes) -> Result<Straight, DecodeError> {
    Ok(match kind {
        HandlerKind::Consumer => Straight::Payload(Payload::Consumer(Batch::decode(bytes).map_err(in_source)?)),
        HandlerKind::Http => match Payload::http(Request::decode(bytes).map_err(in_source)?) {
            Ok(payload) => Straight::Payload(payload),
            Err(outcome) => Straight::Answered(outcome),
        },
        _ => Straight::Not(kind, bytes),
    })
}

/// Serves one `dispatch` with `handler` as a handler of kind `K`, as the
/// driver would once the session has started it, without catching panics:
/// for the kinds' own tests.
#[cfg(test)]
pub(crate) async fn serve_once<K, H, Args>(handler: H, options: K::Options, dispatch: Dispatch, cx: Context) -> Outcome
where
    K: Kind,
    H: Handler<K, Args>,
    Args: 'static,
{
    endpoint::<K, H, Args>(handler, options).call(dispatch.source, cx).await.into_outcome()
}

/// The dispatch `ev-1` of `source` to `tag`, for the kinds' own tests.
#[cfg(test)]
pub(crate) fn dispatch_to(tag: &str, source: Source) -> Dispatch {
    Dispatch { id: "ev-1".into(), handler_tag: tag.into(), source: Some(source), ..Default::default() }
}

/// A source of every kind but `kind`, for the kinds' tests of a source
/// they do not take.
#[cfg(test)]
pub(crate) fn other_sources(kind: HandlerKind) -> Vec<Source> {
    use celerity_proto::v1 as pb;
    let every = [
        Source::Http(pb::HttpRequest::default()),
        Source::Websocket(pb::WebSocketMessage::default()),
        Source::Consumer(pb::ConsumerBatch::default()),
        Source::Schedule(pb::ScheduleTrigger::default()),
        Source::Custom(pb::CustomInvoke::default()),
    ];
    every.into_iter().filter(|source| HandlerKind::of_source(source) != kind).collect()
}
