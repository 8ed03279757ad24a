//! Running a per-record consumer over a batch: every record through the
//! handler, in order or a few at once, and the batch's answer naming each
//! record that failed, panicked or was not run.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::Poll;
use std::time::SystemTime;

use celerity_proto::v1::result::Outcome;
use futures_util::FutureExt;
use tokio::task::JoinSet;

use super::{Batch, BatchOutcome, PerRecord, RawRecord};
use crate::context::Context;
use crate::panics;
use crate::pipeline::Handler;

/// What became of one record.
enum Ran {
    Succeeded,
    Failed(String),
    /// The handler panicked: the payload, made into the record's failure by
    /// [`answer`] (where what may go on the wire is decided).
    Panicked(Box<dyn Any + Send>),
}

/// The ids of a batch's records, copied into one buffer before the records
/// go to the handler (which takes each one whole): a failure is named by its
/// record's id, and one buffer per batch costs less than a `String` per
/// record, most of which never fail.
struct Ids {
    text: String,
    /// Where each record's id ends in `text`.
    ends: Vec<usize>,
}

impl Ids {
    fn of(records: &[RawRecord]) -> Self {
        let mut text = String::with_capacity(records.iter().map(|record| record.message_id().len()).sum());
        let ends = records
            .iter()
            .map(|record| {
                text.push_str(record.message_id());
                text.len()
            })
            .collect();
        Ids { text, ends }
    }

    /// The id of the record at `index`.
    fn get(&self, index: usize) -> &str {
        let start = index.checked_sub(1).map_or(0, |before| self.ends[before]);
        &self.text[start..self.ends[index]]
    }
}

/// Runs the handler for every record of `batch`, at most `concurrency` at
/// once, and builds the batch's answer, naming the records that failed or
/// did not run in the batch's order.
pub(super) async fn run_records<H, Args>(handler: Arc<H>, batch: Batch, cx: Context, concurrency: usize) -> Outcome
where
    H: Handler<PerRecord, Args>,
    Args: 'static,
{
    let mut outcome = batch.outcome();
    let records = batch.into_records();
    let ids = Ids::of(&records);
    let deadline = cx.deadline();
    let mut pending = records.into_iter().enumerate();

    if concurrency <= 1 {
        // One at a time, in order: each record is answered for as it ends,
        // which is the batch's order; the ones not run come last, each named
        // with its own id (they never reached the handler).
        while !must_stop(&cx, deadline) {
            let Some((index, record)) = pending.next() else { break };
            // Run here, borrowing the handler and the context: no count of
            // either is taken and dropped per record.
            let ran = run_one(&*handler, record, &cx).await;
            answer(&mut outcome, &ids, index, ran);
        }
        let mut not_run = pending.peekable();
        if not_run.peek().is_some() {
            let message = not_processed(&cx);
            for (_, record) in not_run {
                outcome.fail_id(record.message_id(), message.clone());
            }
        }
        return outcome.into_outcome();
    }

    let mut ran: Vec<Option<Ran>> = std::iter::repeat_with(|| None).take(ids.ends.len()).collect();
    let mut running = JoinSet::new();
    let mut tasks = std::collections::HashMap::new();
    loop {
        while running.len() < concurrency && !must_stop(&cx, deadline) {
            let Some((index, record)) = pending.next() else { break };
            // Polled once here first: a record whose handler finishes
            // without waiting (most of them, for a handler that only
            // computes) costs no task of its own, and the next record
            // starts at once. Only one that waits gets a task, where it
            // runs beside the others.
            let (handler, cx) = (Arc::clone(&handler), cx.clone());
            let mut record = Box::pin(async move { run_one(&*handler, record, &cx).await });
            match std::future::poll_fn(|task| Poll::Ready(record.as_mut().poll(task))).await {
                Poll::Ready(result) => ran[index] = Some(result),
                Poll::Pending => {
                    let task = running.spawn(record);
                    tasks.insert(task.id(), index);
                }
            }
        }
        match running.join_next_with_id().await {
            Some(Ok((id, result))) => {
                if let Some(index) = tasks.remove(&id) {
                    ran[index] = Some(result);
                }
            }
            // `run_one` catches panics and nothing aborts these tasks, so
            // this is not expected; the record still fails, by name.
            Some(Err(error)) => {
                if let Some(index) = tasks.remove(&error.id()) {
                    ran[index] = Some(Ran::Failed(format!("the record's task failed: {error}")));
                }
            }
            None => break,
        }
    }
    // Records finish in any order; they are named in the batch's.
    let mut not_run = None;
    for (index, ran) in ran.into_iter().enumerate() {
        match ran {
            Some(ran) => answer(&mut outcome, &ids, index, ran),
            None => {
                let message = not_run.get_or_insert_with(|| not_processed(&cx)).clone();
                outcome.fail_id(ids.get(index), message);
            }
        }
    }
    outcome.into_outcome()
}

/// The failure of a record that was not run.
fn not_processed(cx: &Context) -> String {
    stop_reason(cx).map_or_else(|| "not processed".to_string(), |reason| format!("not processed: cancelled ({reason})"))
}

/// Answers for the record at `index`, which ran: a failure is named by the
/// record's id (looked up only then).
fn answer(outcome: &mut BatchOutcome, ids: &Ids, index: usize, ran: Ran) {
    match ran {
        Ran::Succeeded => {}
        Ran::Failed(message) => outcome.fail_id(ids.get(index), message),
        Ran::Panicked(panic) => {
            let id = ids.get(index);
            // Logged here, beside the record's id; the panic hook printed it
            // already, without saying which record. Its message goes on the
            // wire only with `CELERITY_EXPOSE_PANICS`, since a failure's text
            // may be shown where the batch's results are.
            let text = panics::payload_text(panic.as_ref()).unwrap_or("(a payload that is not text)");
            tracing::error!(
                message_id = %crate::excerpt::quoted(id),
                panic = text,
                "a consumer handler panicked; the record is reported failed"
            );
            let message = match panics::panic_text(panic.as_ref()) {
                Some(text) => format!("{PANICKED}: {text}"),
                None => PANICKED.to_string(),
            };
            outcome.fail_id(id, message);
        }
    }
}

/// The failure of a record whose handler panicked; with
/// `CELERITY_EXPOSE_PANICS`, followed by `: <the panic's message>`.
const PANICKED: &str = "panicked";

/// Runs the handler for one record, a panic included.
async fn run_one<H, Args>(handler: &H, record: RawRecord, cx: &Context) -> Ran
where
    H: Handler<PerRecord, Args>,
    Args: 'static,
{
    // Calling the handler inside the guarded future catches a panic in
    // taking its arguments or before its future is first polled, too.
    match AssertUnwindSafe(async move { handler.call(record, cx).await }).catch_unwind().await {
        Ok(Ok(())) => Ran::Succeeded,
        Ok(Err(error)) => Ran::Failed(error.message().to_string()),
        Err(panic) => Ran::Panicked(panic),
    }
}

/// Whether no further record may start: the event was cancelled, or its
/// `deadline` (read from `cx` once per batch) has passed. Checked before
/// every record, so the clock is read only when there is a deadline.
fn must_stop(cx: &Context, deadline: Option<SystemTime>) -> bool {
    cx.is_cancelled() || deadline.is_some_and(|deadline| SystemTime::now() >= deadline)
}

/// Why no further record may start: the event was cancelled, or its
/// deadline passed (the runtime has then answered for the batch itself).
fn stop_reason(cx: &Context) -> Option<String> {
    if cx.is_cancelled() {
        return Some(cx.cancel_reason().map_or_else(|| "cancelled by the runtime".to_string(), |r| r.to_string()));
    }
    match cx.deadline() {
        Some(deadline) if SystemTime::now() >= deadline => Some("deadline exceeded".to_string()),
        _ => None,
    }
}
