use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use std::future::Future;
use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use celerity_proto::v1::{self as pb, BatchResult, Dispatch, RecordFailure, dispatch::Source, result::Outcome};
use serde::Deserialize;

use super::*;
use crate::context::{Context, State, StateMap};
use crate::error::Error;
use crate::handle::AppHandle;
use crate::pipeline::{Endpoint, Handler, endpoint};
use crate::session::{CancelReason, error_type};

const TAG: &str = "source::orders-queue::processOrders";

#[derive(Debug, Deserialize, PartialEq)]
struct Order {
    id: u64,
    quantity: u32,
}

fn wire_record(id: &str, body: &str) -> pb::ConsumerRecord {
    pb::ConsumerRecord {
        message_id: id.into(),
        body: Bytes::copy_from_slice(body.as_bytes()),
        source: "orders-queue".into(),
        event_type: "order.placed".into(),
        attributes: Bytes::new(),
        vendor: Bytes::new(),
    }
}

fn dispatch(source: Source) -> Dispatch {
    Dispatch { id: "ev-1".into(), handler_tag: TAG.into(), source: Some(source), ..Default::default() }
}

fn batch_of(records: Vec<pb::ConsumerRecord>) -> Dispatch {
    dispatch(Source::Consumer(pb::ConsumerBatch {
        records,
        source_id: "orders-queue".into(),
        source_type: "queue".into(),
        vendor: Bytes::new(),
    }))
}

/// `n` records `m-1`..`m-n` with quantities 1..n.
fn orders(n: u64) -> Dispatch {
    batch_of((1..=n).map(|i| wire_record(&format!("m-{i}"), &format!(r#"{{"id":{i},"quantity":{i}}}"#))).collect())
}

fn cx() -> Context {
    Context::detached(TAG)
}

/// A context with a deadline and state, as the driver builds one.
fn cx_with(deadline_unix_ms: i64, state: StateMap) -> Context {
    let (commands, _) = tokio::sync::mpsc::unbounded_channel();
    Context::new(
        "ev-1".into(),
        TAG.into(),
        "process",
        deadline_unix_ms,
        HashMap::new(),
        Arc::new(state),
        AppHandle::new(commands),
    )
}

/// A per-record consumer running up to `concurrency` records at once.
fn records<Args: 'static>(handler: impl Handler<PerRecord, Args>, concurrency: usize) -> Arc<dyn Endpoint> {
    endpoint::<PerRecord, _, Args>(handler, RecordOptions::concurrency(concurrency))
}

async fn call(handler: Arc<dyn Endpoint>, dispatch: Dispatch, cx: Context) -> Outcome {
    let outcome = handler.call(dispatch.source, cx).await.into_outcome();
    assert!(
        matches!(outcome, Outcome::Consumer(_) | Outcome::Error(_)),
        "a consumer handler answered with another shape: {outcome:?}"
    );
    outcome
}

async fn per_record<Args: 'static>(handler: impl Handler<PerRecord, Args>, dispatch: Dispatch) -> BatchResult {
    result(call(records(handler, 1), dispatch, cx()).await)
}

async fn whole_batch<Args: 'static>(handler: impl Handler<WholeBatch, Args>, dispatch: Dispatch) -> BatchResult {
    result(call(endpoint::<WholeBatch, _, Args>(handler, ()), dispatch, cx()).await)
}

fn result(outcome: Outcome) -> BatchResult {
    match outcome {
        Outcome::Consumer(result) => result,
        other => panic!("expected a batch result, got {other:?}"),
    }
}

fn success() -> BatchResult {
    BatchResult { success: true, failures: vec![] }
}

fn whole_batch_failure() -> BatchResult {
    BatchResult { success: false, failures: vec![] }
}

fn failed_ids(result: &BatchResult) -> Vec<&str> {
    assert!(!result.success, "a result naming failures must not be a success: {result:?}");
    result.failures.iter().map(|f| f.message_id.as_str()).collect()
}

fn failure<'a>(result: &'a BatchResult, id: &str) -> &'a str {
    &result
        .failures
        .iter()
        .find(|f| f.message_id == id)
        .unwrap_or_else(|| panic!("{id} not named in {result:?}"))
        .error_message
}

// ---- per record ----

#[tokio::test]
async fn every_record_succeeding_is_a_success() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&seen);
    let handler = move |order: Record<Order>| {
        let keep = Arc::clone(&keep);
        async move {
            keep.lock().unwrap().push((order.message_id().to_string(), order.id, order.source().to_string()));
        }
    };
    assert_eq!(per_record(handler, orders(3)).await, success());
    let seen = seen.lock().unwrap();
    assert_eq!(
        *seen,
        [1, 2, 3].map(|i| (format!("m-{i}"), i, "orders-queue".to_string())),
        "one at a time, in order, every record"
    );
}

#[tokio::test]
async fn an_empty_batch_is_a_success() {
    async fn handler(_order: Record<Order>) -> Result<(), Error> {
        Err(Error::msg("must not run"))
    }
    assert_eq!(per_record(handler, orders(0)).await, success());
}

#[tokio::test]
async fn a_failing_record_is_named_with_its_error() {
    async fn handler(order: Record<Order>) -> Result<(), std::io::Error> {
        if order.id == 2 { Err(std::io::Error::other("warehouse unreachable")) } else { Ok(()) }
    }
    let result = per_record(handler, orders(3)).await;
    assert_eq!(
        result,
        BatchResult {
            success: false,
            failures: vec![RecordFailure { message_id: "m-2".into(), error_message: "warehouse unreachable".into() }]
        }
    );
}

#[tokio::test]
async fn two_of_five_failing_names_exactly_those() {
    async fn handler(order: Record<Order>) -> Result<(), Error> {
        if order.id.is_multiple_of(2) { Err(Error::msg(format!("order {} rejected", order.id))) } else { Ok(()) }
    }
    let result = per_record(handler, orders(5)).await;
    assert_eq!(failed_ids(&result), ["m-2", "m-4"]);
    assert_eq!(failure(&result, "m-4"), "order 4 rejected");
}

#[tokio::test]
async fn a_panic_fails_that_record_alone_and_the_rest_still_run() {
    let ran = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&ran);
    let handler = move |order: Record<Order>| {
        let count = Arc::clone(&count);
        async move {
            count.fetch_add(1, Ordering::SeqCst);
            if order.id == 2 {
                panic!("order {} broke the handler", order.id);
            }
        }
    };
    let result = per_record(handler.clone(), orders(4)).await;
    assert_eq!(failed_ids(&result), ["m-2"]);
    assert_eq!(failure(&result, "m-2"), "panicked", "the message goes on the wire only when opted in");
    assert_eq!(ran.load(Ordering::SeqCst), 4);
    let result = exposed(per_record(handler, orders(4))).await;
    assert_eq!(failed_ids(&result), ["m-2"]);
    assert_eq!(failure(&result, "m-2"), "panicked: order 2 broke the handler");
    assert_eq!(ran.load(Ordering::SeqCst), 8);
}

/// Runs `future` as with `CELERITY_EXPOSE_PANICS=true`, without touching the
/// process's setting (tests run in parallel).
async fn exposed<T>(future: impl Future<Output = T>) -> T {
    let mut future = std::pin::pin!(future);
    std::future::poll_fn(|cx| crate::panics::exposing(true, || future.as_mut().poll(cx))).await
}

#[tokio::test]
async fn a_panic_with_a_static_message_is_named_too() {
    async fn handler() {
        panic!("static");
    }
    let result = per_record(handler, orders(1)).await;
    assert_eq!(failure(&result, "m-1"), "panicked");
    let result = exposed(per_record(handler, orders(1))).await;
    assert_eq!(failure(&result, "m-1"), "panicked: static");
}

#[tokio::test]
async fn a_panic_with_a_payload_that_is_not_text_fails_the_record_with_the_fixed_text() {
    async fn handler() {
        std::panic::panic_any(42u8);
    }
    assert_eq!(failure(&per_record(handler, orders(1)).await, "m-1"), "panicked");
    assert_eq!(failure(&exposed(per_record(handler, orders(1))).await, "m-1"), "panicked");
}

#[tokio::test]
async fn an_undecodable_record_fails_alone_naming_the_field() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&ran);
    let handler = move |order: Record<Order>| {
        let keep = Arc::clone(&keep);
        async move { keep.lock().unwrap().push(order.id) }
    };
    let dispatch = batch_of(vec![
        wire_record("m-1", r#"{"id":1,"quantity":1}"#),
        wire_record("m-2", r#"{"id":2,"quantity":"lots"}"#),
        wire_record("m-3", "not json"),
        wire_record("m-4", r#"{"id":4,"quantity":4}"#),
    ]);
    let result = per_record(handler, dispatch).await;
    assert_eq!(failed_ids(&result), ["m-2", "m-3"]);
    let message = failure(&result, "m-2");
    assert!(message.starts_with("the record body does not fit at `quantity`: invalid type: string"), "{message}");
    assert!(failure(&result, "m-3").starts_with("the record body is not valid JSON"));
    assert_eq!(*ran.lock().unwrap(), [1, 4]);
}

#[tokio::test]
async fn a_raw_record_and_the_batch_info() {
    async fn handler(info: BatchInfo, cx: Context, record: RawRecord) -> Result<(), Error> {
        let fine = info.source_id() == "orders-queue"
            && info.source_type() == "queue"
            && cx.tag() == TAG
            && record.event_type() == "order.placed"
            && record.source_id() == "orders-queue";
        if fine { Ok(()) } else { Err(Error::msg("wrong metadata")) }
    }
    assert_eq!(per_record(handler, orders(2)).await, success());
}

#[tokio::test]
async fn missing_state_fails_every_record_by_name() {
    async fn handler(_store: State<String>, _order: Record<Order>) {}
    let result = per_record(handler, orders(2)).await;
    assert_eq!(failed_ids(&result), ["m-1", "m-2"]);
    assert!(failure(&result, "m-1").contains("App::state"));
}

#[tokio::test]
async fn state_is_shared_with_every_record() {
    async fn handler(prefix: State<String>, record: RawRecord) -> Result<(), Error> {
        if record.message_id().starts_with(prefix.as_str()) { Ok(()) } else { Err(Error::msg("no prefix")) }
    }
    let mut state = StateMap::default();
    state.insert(Arc::new("m-".to_string()));
    let outcome = call(records(handler, 1), orders(2), cx_with(0, state)).await;
    assert_eq!(result(outcome), success());
}

#[tokio::test]
async fn a_failed_record_without_an_id_fails_the_whole_batch() {
    async fn handler(record: RawRecord) -> Result<(), Error> {
        if record.message_id().is_empty() { Err(Error::msg("bad")) } else { Ok(()) }
    }
    let dispatch = batch_of(vec![wire_record("m-1", "{}"), wire_record("", "{}")]);
    assert_eq!(per_record(handler, dispatch).await, whole_batch_failure());
    // A record without an id that succeeds harms nothing.
    async fn fine(_record: RawRecord) {}
    assert_eq!(per_record(fine, batch_of(vec![wire_record("", "{}")])).await, success());
}

#[tokio::test]
async fn cancellation_stops_starting_records_and_names_those_not_run() {
    let handler = |record: RawRecord, cx: Context| async move {
        if record.message_id() == "m-2" {
            cx.cancel(CancelReason::Shutdown);
        }
    };
    let result = per_record(handler, orders(5)).await;
    assert_eq!(failed_ids(&result), ["m-3", "m-4", "m-5"]);
    assert_eq!(failure(&result, "m-3"), "not processed: cancelled (shutdown)");
}

#[tokio::test]
async fn a_cancelled_event_reports_no_record_as_processed() {
    let cx = cx();
    cx.cancel(CancelReason::DeadlineExceeded);
    let handler = records(|_record: RawRecord| async {}, 1);
    let result = result(call(handler, orders(2), cx).await);
    assert_eq!(failed_ids(&result), ["m-1", "m-2"]);
    assert_eq!(failure(&result, "m-1"), "not processed: cancelled (deadline exceeded)");
}

#[tokio::test]
async fn a_passed_deadline_stops_starting_records() {
    let handler = records(|_record: RawRecord| async {}, 3);
    let late = result(call(handler, orders(2), cx_with(1, StateMap::default())).await);
    assert_eq!(failed_ids(&late), ["m-1", "m-2"]);
    assert_eq!(failure(&late, "m-2"), "not processed: cancelled (deadline exceeded)");
    let far = (SystemTime::now() + Duration::from_secs(60)).duration_since(SystemTime::UNIX_EPOCH).unwrap();
    let handler = records(|_record: RawRecord| async {}, 1);
    let outcome = call(handler, orders(2), cx_with(far.as_millis() as i64, StateMap::default())).await;
    assert_eq!(result(outcome), success());
}

// ---- concurrency ----

type Tracked = std::pin::Pin<Box<dyn Future<Output = Result<(), Error>> + Send>>;

/// A handler that tracks how many records run at once, and fails the ids
/// in `failing` (after a pause that makes them finish out of order).
fn tracked(
    failing: &'static [u64],
    in_flight: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
) -> impl Fn(Record<Order>) -> Tracked + Clone + Send + Sync + 'static {
    move |order: Record<Order>| {
        let (in_flight, most) = (Arc::clone(&in_flight), Arc::clone(&most));
        Box::pin(async move {
            let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20 - order.id % 7)).await;
            in_flight.fetch_sub(1, Ordering::SeqCst);
            if order.id == 6 {
                panic!("six");
            }
            if failing.contains(&order.id) { Err(Error::msg(format!("failed {}", order.id))) } else { Ok(()) }
        })
    }
}

#[tokio::test]
async fn concurrent_records_still_name_the_right_ids() {
    let (in_flight, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let handler = tracked(&[2, 9, 11], Arc::clone(&in_flight), Arc::clone(&most));
    let outcome = call(records(handler, 4), orders(12), cx()).await;
    let result = result(outcome);
    assert_eq!(failed_ids(&result), ["m-2", "m-6", "m-9", "m-11"], "named in the batch's order");
    assert_eq!(failure(&result, "m-9"), "failed 9");
    assert_eq!(failure(&result, "m-6"), "panicked");
    assert_eq!(most.load(Ordering::SeqCst), 4, "up to the limit at once, never more");
}

#[tokio::test]
async fn a_panic_on_a_records_own_task_is_named_as_opted_in() {
    let handler = tracked(&[2], Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let outcome = exposed(call(records(handler, 4), orders(8), cx())).await;
    let result = result(outcome);
    assert_eq!(failed_ids(&result), ["m-2", "m-6"]);
    assert_eq!(failure(&result, "m-6"), "panicked: six", "the records' tasks hand their panics back");
}

#[tokio::test]
async fn concurrency_one_runs_one_at_a_time() {
    let (in_flight, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let handler = tracked(&[], Arc::clone(&in_flight), Arc::clone(&most));
    let result = result(call(records(handler, 1), orders(4), cx()).await);
    assert_eq!(result, success());
    assert_eq!(most.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn concurrent_cancellation_names_the_records_not_started() {
    let handler = |record: RawRecord, cx: Context| async move {
        if record.message_id() == "m-1" {
            // Waiting first, so that it runs on a task of its own, beside m-2.
            tokio::task::yield_now().await;
            cx.cancel(CancelReason::Shutdown);
        } else {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    let result = result(call(records(handler, 2), orders(5), cx()).await);
    // m-1 and m-2 started together; m-1 cancelled before any other started.
    assert_eq!(failed_ids(&result), ["m-3", "m-4", "m-5"]);
}

// ---- whole batch ----

#[tokio::test]
async fn a_batch_outcome_names_the_failed_records() {
    async fn handler(batch: Batch) -> BatchOutcome {
        let mut outcome = batch.outcome();
        for record in &batch {
            match record.decode::<Order>() {
                Ok(order) if order.quantity > 3 => {
                    outcome.fail(&order, "too many");
                }
                Ok(_) => {}
                Err(error) => {
                    outcome.fail(record, error);
                }
            }
        }
        outcome
    }
    let dispatch = batch_of(vec![
        wire_record("m-1", r#"{"id":1,"quantity":1}"#),
        wire_record("m-2", r#"{"id":2,"quantity":9}"#),
        wire_record("m-3", r#"{"id":3}"#),
    ]);
    let result = whole_batch(handler, dispatch).await;
    assert_eq!(failed_ids(&result), ["m-2", "m-3"]);
    assert_eq!(failure(&result, "m-2"), "too many");
    assert!(failure(&result, "m-3").contains("missing field `quantity`"));
}

#[tokio::test]
async fn a_batch_returning_nothing_or_ok_succeeds() {
    async fn nothing(_batch: Batch) {}
    assert_eq!(whole_batch(nothing, orders(3)).await, success());
    async fn ok(batch: Batch) -> Result<BatchOutcome, Error> {
        Ok(batch.outcome())
    }
    assert_eq!(whole_batch(ok, orders(3)).await, success());
}

#[tokio::test]
async fn an_error_fails_the_whole_batch_naming_nothing() {
    async fn handler(_batch: Batch) -> Result<BatchOutcome, std::io::Error> {
        Err(std::io::Error::other("database down"))
    }
    assert_eq!(whole_batch(handler, orders(3)).await, whole_batch_failure());
    async fn unit(_batch: Batch) -> Result<(), Error> {
        Err(Error::msg("no"))
    }
    assert_eq!(whole_batch(unit, orders(3)).await, whole_batch_failure());
}

#[tokio::test]
async fn a_record_of_another_batch_fails_the_whole_batch() {
    async fn handler(batch: Batch) -> BatchOutcome {
        let mut outcome = batch.outcome();
        let stranger = RawRecord::new("m-1", "{}");
        outcome.fail(&stranger, "made up");
        outcome
    }
    assert_eq!(whole_batch(handler, orders(2)).await, whole_batch_failure());
}

#[tokio::test]
async fn the_batch_carries_its_source_and_context() {
    async fn handler(info: BatchInfo, cx: Context, batch: Batch) -> Result<(), Error> {
        let fine = info.source_id() == "orders-queue"
            && batch.source_type() == "queue"
            && batch.len() == 2
            && cx.tag() == TAG
            && batch.records()[1].message_id() == "m-2";
        if fine { Ok(()) } else { Err(Error::msg("wrong batch")) }
    }
    assert_eq!(whole_batch(handler, orders(2)).await, success());
}

#[tokio::test]
async fn missing_state_fails_the_whole_batch() {
    async fn handler(_store: State<String>, _batch: Batch) {}
    assert_eq!(whole_batch(handler, orders(2)).await, whole_batch_failure());
}

// ---- wrong source ----

#[tokio::test]
async fn another_source_is_a_wrong_source_error_in_either_form() {
    async fn handler() {}
    let handlers: [Arc<dyn Endpoint>; 2] = [records(handler, 1), endpoint::<WholeBatch, _, ()>(handler, ())];
    for handler in handlers {
        for source in [
            Source::Http(pb::HttpRequest::default()),
            Source::Websocket(pb::WebSocketMessage::default()),
            Source::Schedule(pb::ScheduleTrigger::default()),
            Source::Custom(pb::CustomInvoke { handler_name: "processOrders".into(), input: Bytes::new() }),
        ] {
            match call(Arc::clone(&handler), dispatch(source), cx()).await {
                Outcome::Error(error) => {
                    assert_eq!(error.r#type, error_type::WRONG_SOURCE);
                    assert!(error.message.contains("consumer"), "{}", error.message);
                    assert!(error.message.contains("custom") || !error.message.contains("invocation"));
                }
                other => panic!("expected a wrong-source error, got {other:?}"),
            }
        }
    }
}

#[tokio::test]
async fn concurrent_records_that_finish_without_waiting_run_on_the_batchs_own_task() {
    let tasks = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&tasks);
    let handler = move |record: RawRecord| {
        let seen = Arc::clone(&seen);
        async move {
            seen.lock().unwrap().push(tokio::task::try_id());
            if record.message_id() == "m-2" { Err(Error::msg("two")) } else { Ok(()) }
        }
    };
    let batch_task = tokio::spawn(call(records(handler, 4), orders(5), cx()));
    let result = result(batch_task.await.unwrap());
    assert_eq!(failed_ids(&result), ["m-2"]);
    let tasks = tasks.lock().unwrap();
    assert_eq!(tasks.len(), 5);
    assert!(tasks.iter().all(|task| task.is_some() && *task == tasks[0]), "no task of their own: {tasks:?}");
}
