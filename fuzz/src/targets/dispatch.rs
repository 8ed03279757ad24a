//! The conversion of a `Dispatch` into each handler kind's input, driven
//! through the real adapters: an arbitrary `Dispatch` (decoded from the
//! bytes as a whole, or as one source of a chosen kind) is handed to a
//! handler of every kind, through the same code the driver runs: argument
//! extraction (path, query, JSON bodies, records, triggers, invocations),
//! the handler (a no-op, or one that fails some records), and the answer
//! built from its return value. Whatever the input:
//! - nothing panics outside the handler;
//! - the outcome is the handler kind's own shape or a `HandlerError`, and a
//!   `HandlerError` has a type and a message and no stack (none was asked
//!   for);
//! - an event with no source is refused as `WrongEventSource`;
//! - an HTTP status is one the runtime passes on (100 to 999);
//! - a batch result names only records of the batch, and reports success
//!   only with no failure named.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::future::IntoFuture;

use celerity::__private::session::error_type;
use celerity::App;
use celerity::HandlerKind;
use celerity::consumer::{Batch, BatchOutcome, RawRecord, Record};
use celerity::custom::Invocation;
use celerity::http::{Json, Path, Query, Request};
use celerity::proto::prost::Message as _;
use celerity::proto::v1::{self as pb, Dispatch, dispatch::Source, result::Outcome};
use celerity::schedule::Trigger;
use celerity::testing::{Event, TestApp};
use celerity::websocket::Message;

/// Every handler the target calls: tag and kind.
pub const HANDLERS: [(&str, HandlerKind); 12] = [
    ("GET::/raw", HandlerKind::Http),
    ("POST::/any/{a}/{*rest}", HandlerKind::Http),
    ("GET::/typed/{id}", HandlerKind::Http),
    ("event::$default", HandlerKind::WebSocket),
    ("action::typed", HandlerKind::WebSocket),
    ("source::q::each", HandlerKind::Consumer),
    ("source::q::concurrent", HandlerKind::Consumer),
    ("source::q::batch", HandlerKind::Consumer),
    ("source::nightly::job", HandlerKind::Schedule),
    ("source::nightly::typed", HandlerKind::Schedule),
    ("custom::raw", HandlerKind::Custom),
    ("custom::typed", HandlerKind::Custom),
];

#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct TypedQuery {
    page: Option<u32>,
    tags: Option<Vec<String>>,
    flag: Option<bool>,
    name: Option<String>,
}

async fn http_raw(_request: Request) -> &'static str {
    "ok"
}

async fn http_any(
    Path(_path): Path<HashMap<String, String>>,
    Query(_query): Query<HashMap<String, String>>,
    _headers: celerity::http::HeaderMap,
    Json(_body): Json<serde_json::Value>,
) -> &'static str {
    "ok"
}

async fn http_typed(Path(_id): Path<u64>, Query(_query): Query<TypedQuery>, _body: String) -> &'static str {
    "ok"
}

async fn ws_raw(_message: Message) {}

async fn ws_typed(Json(_value): Json<serde_json::Value>) {}

/// Fails the records whose payload is a JSON number.
async fn each(record: Record<serde_json::Value>) -> Result<(), celerity::Error> {
    if record.is_number() { Err(celerity::Error::msg("a number")) } else { Ok(()) }
}

async fn concurrent(_record: RawRecord) {}

/// Fails every other record.
async fn batch(batch: Batch) -> BatchOutcome {
    let mut outcome = batch.outcome();
    for (i, record) in batch.iter().enumerate() {
        if i % 2 == 1 {
            outcome.fail(record, "odd");
        }
    }
    outcome
}

async fn schedule_raw(_trigger: Trigger) {}

async fn schedule_typed(Json(_value): Json<serde_json::Value>) {}

async fn custom_raw(_invocation: Invocation) {}

async fn custom_typed(Json(value): Json<serde_json::Value>) -> Json<serde_json::Value> {
    Json(value)
}

fn app() -> TestApp {
    App::new()
        .without_compiled_handlers()
        .http(HANDLERS[0].0, http_raw)
        .http(HANDLERS[1].0, http_any)
        .http(HANDLERS[2].0, http_typed)
        .websocket(HANDLERS[3].0, ws_raw)
        .websocket(HANDLERS[4].0, ws_typed)
        .consumer(HANDLERS[5].0, each)
        .consumer_concurrent(HANDLERS[6].0, 4, concurrent)
        .consumer_batch(HANDLERS[7].0, batch)
        .schedule(HANDLERS[8].0, schedule_raw)
        .schedule(HANDLERS[9].0, schedule_typed)
        .custom(HANDLERS[10].0, custom_raw)
        .custom(HANDLERS[11].0, custom_typed)
        .into_test()
}

thread_local! {
    static WORLD: RefCell<Option<(tokio::runtime::Runtime, TestApp)>> = const { RefCell::new(None) };
}

/// Reads the bytes as a `Dispatch`: the first byte picks whether the rest
/// is a whole `Dispatch` or one source of a given kind.
pub fn dispatch_from_bytes(data: &[u8]) -> Option<Dispatch> {
    let (&mode, rest) = data.split_first()?;
    let source = match mode % 6 {
        0 => return Dispatch::decode(rest).ok(),
        1 => Source::Http(pb::HttpRequest::decode(rest).ok()?),
        2 => Source::Websocket(pb::WebSocketMessage::decode(rest).ok()?),
        3 => Source::Consumer(pb::ConsumerBatch::decode(rest).ok()?),
        4 => Source::Schedule(pb::ScheduleTrigger::decode(rest).ok()?),
        _ => Source::Custom(pb::CustomInvoke::decode(rest).ok()?),
    };
    Some(Dispatch { id: "fuzz-1".to_string(), source: Some(source), ..Default::default() })
}

pub fn run(data: &[u8]) {
    let Some(mut dispatch) = dispatch_from_bytes(data) else {
        return;
    };
    // A deadline already passed would answer for the handler without
    // running it; the conversion is what is under test.
    dispatch.deadline_unix_ms = 0;
    WORLD.with(|world| {
        let mut world = world.borrow_mut();
        let (runtime, app) = world.get_or_insert_with(|| {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
            (runtime, app())
        });
        for (tag, kind) in HANDLERS {
            let call = app.call(tag, Event::from_dispatch(dispatch.clone()));
            let outcome = runtime.block_on(call.into_future()).into_wire();
            check(tag, kind, &dispatch, &outcome);
        }
    });
}

fn check(tag: &str, kind: HandlerKind, dispatch: &Dispatch, outcome: &Outcome) {
    if dispatch.source.is_none() {
        match outcome {
            Outcome::Error(error) => assert_eq!(error.r#type, error_type::WRONG_SOURCE, "{tag}: {error:?}"),
            other => panic!("{tag}: an event with no source was answered {other:?}"),
        }
    }
    match (kind, outcome) {
        (_, Outcome::Error(error)) => {
            assert!(!error.r#type.is_empty(), "{tag}: an error with no type: {error:?}");
            assert!(!error.message.is_empty(), "{tag}: an error with no message: {error:?}");
            assert!(error.stack.is_empty(), "{tag}: a stack went out without the opt-in: {error:?}");
        }
        (HandlerKind::Http, Outcome::Http(response)) => {
            assert!((100..=999).contains(&response.status), "{tag}: status {}", response.status);
        }
        (HandlerKind::WebSocket, Outcome::Websocket(_)) => {}
        (HandlerKind::Consumer, Outcome::Consumer(result)) => {
            let ids: HashSet<&str> = match &dispatch.source {
                Some(Source::Consumer(batch)) => batch.records.iter().map(|r| r.message_id.as_str()).collect(),
                _ => HashSet::new(),
            };
            for failure in &result.failures {
                assert!(
                    ids.contains(failure.message_id.as_str()),
                    "{tag}: a failure names {:?}, which is not a record of the batch",
                    failure.message_id
                );
            }
            if result.success {
                assert!(result.failures.is_empty(), "{tag}: success with failures named: {result:?}");
            }
        }
        (HandlerKind::Schedule, Outcome::Schedule(_)) => {}
        (HandlerKind::Custom, Outcome::Custom(_)) => {}
        (kind, other) => panic!("{tag}: a {kind:?} handler answered {other:?}"),
    }
}
