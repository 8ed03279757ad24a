//! Consumer events: batches of records from a queue or topic.
//!
//! A consumer handler's tag is `source::{sourceId}::{handlerName}`, such as
//! `source::orders-queue::processOrders`. Its answer decides what happens to
//! each record: a record reported failed stays on its source and is
//! delivered again, every other record is acknowledged and never seen again.
//! So the SDK never reports success for a record it did not process.
//!
//! A consumer comes in two forms. The attribute macro tells them apart by
//! their arguments: a handler with an argument whose type's last path segment
//! is `Batch` (`Batch`, `consumer::Batch`, ...) takes the whole batch; any
//! other handler runs once per record. (An alias of `Batch` under another
//! name is not recognised, so name it `Batch`.) With the explicit API the
//! form is the method: [`crate::App::consumer`] or
//! [`crate::App::consumer_batch`].
//!
//! # Per record
//!
//! The handler takes one record ([`Record<T>`] with its JSON body decoded
//! as `T`, or a [`RawRecord`]) plus any other [`FromRecord`] argument, and
//! returns `()` or a `Result` ([`IntoRecordOutcome`]). The SDK runs it for
//! every record of the batch, in order one at a time, or up to `n` at once
//! with [`RecordFn::concurrency`] (the attribute's `concurrency = n`), and
//! builds the answer:
//!
//! - a record whose handler returned an error is named by the id it arrived
//!   with, with the error's message; the others succeed;
//! - a record whose body does not decode as `T` fails alone, named with the
//!   decoding error and the path of the field that does not fit;
//! - a record whose handler panicked fails alone, with `panicked` (the
//!   panic's message is logged; with `CELERITY_EXPOSE_PANICS=true` the
//!   failure is `panicked: <message>`), and the rest of the batch still runs:
//!   one bad record must not send the whole batch back to be delivered again;
//! - once the event is cancelled or its deadline has passed, no further
//!   record is started, and each record not run is named with
//!   `not processed: cancelled (<reason>)`;
//! - a failed record that arrived without an id cannot be named, so the
//!   whole batch is reported failed instead, leaving all of it on its source.
//!
//! ```
//! use celerity::consumer::Record;
//! use celerity::Result;
//!
//! #[derive(serde::Deserialize)]
//! struct OrderPlaced { id: u64, quantity: u32 }
//!
//! async fn process(order: Record<OrderPlaced>) -> Result<()> {
//!     if order.quantity == 0 {
//!         return Err(celerity::Error::msg(format!("order {} has no items", order.id)));
//!     }
//!     Ok(())
//! }
//!
//! let app = celerity::App::new().consumer("source::orders-queue::processOrders", process);
//! # drop(app);
//! ```
//!
//! # Whole batch
//!
//! The handler takes the [`Batch`] and returns a [`BatchOutcome`] built with
//! [`Batch::outcome`], `()` (all succeeded), or a `Result` of either
//! ([`IntoBatchOutcome`]). A failure can only be built from a record of the
//! batch, so it always names the id the record arrived with. Returning `Err`
//! fails the whole batch: nothing is acknowledged.
//!
//! ```
//! use celerity::consumer::{Batch, BatchOutcome};
//!
//! #[derive(serde::Deserialize)]
//! struct OrderPlaced { id: u64 }
//!
//! async fn process_all(batch: Batch) -> celerity::Result<BatchOutcome> {
//!     let mut outcome = batch.outcome();
//!     for record in &batch {
//!         match record.json::<OrderPlaced>() {
//!             Ok(order) => println!("order {}", order.id),
//!             Err(error) => {
//!                 outcome.fail(record, error);
//!             }
//!         }
//!     }
//!     Ok(outcome)
//! }
//!
//! let app = celerity::App::new().consumer_batch("source::orders-queue::processOrders", process_all);
//! # drop(app);
//! ```
//!
//! A panic in a batch handler is answered as a `HandlerError`, which the
//! runtime also takes as a failure of the whole batch.

mod batch;
mod record;

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::SystemTime;

use celerity_proto::v1::{Dispatch, dispatch::Source, result::Outcome};
use futures_util::FutureExt;
use serde::de::DeserializeOwned;
use tokio::task::JoinSet;

use crate::context::{Context, State};
use crate::error::Error;
use crate::handler::{Handler, HandlerFuture, expect_shape, ready, wrong_source};
use crate::panics;
use crate::registry::HandlerKind;

pub use batch::{Batch, BatchInfo, BatchOutcome};
pub use record::{RawRecord, Record};

use batch::whole_batch_failed;

/// A value a per-record consumer handler can take as an argument.
///
/// Extraction happens for each record before the handler runs; a failure
/// fails that record alone, named with the error's message, and the handler
/// is not called for it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an argument of a consumer handler",
    label = "not something a consumer handler can take",
    note = "a per-record consumer handler takes: `Record<T>`, `RawRecord`, `BatchInfo`, `Context`, `State<T>` and `WsSender`; a handler taking the whole `Batch` takes: `Batch`, `BatchInfo`, `Context`, `State<T>` and `WsSender`",
    note = "a type of your own can be one by implementing `celerity::consumer::FromRecord`"
)]
pub trait FromRecord: Sized {
    /// Takes the value from the record.
    fn from_record(record: &mut RawRecord, cx: &Context) -> Result<Self, Error>;

    /// Takes the value when it is the handler's last argument and may have
    /// the whole record. Defaults to [`FromRecord::from_record`].
    fn from_record_owned(mut record: RawRecord, cx: &Context) -> Result<Self, Error> {
        Self::from_record(&mut record, cx)
    }
}

impl FromRecord for RawRecord {
    fn from_record(record: &mut RawRecord, _cx: &Context) -> Result<Self, Error> {
        Ok(record.clone())
    }

    fn from_record_owned(record: RawRecord, _cx: &Context) -> Result<Self, Error> {
        Ok(record)
    }
}

/// The record with its body decoded from JSON; a body that does not fit
/// fails the record, naming the field.
impl<T: DeserializeOwned> FromRecord for Record<T> {
    fn from_record(record: &mut RawRecord, _cx: &Context) -> Result<Self, Error> {
        Ok(record.decode()?)
    }

    fn from_record_owned(record: RawRecord, _cx: &Context) -> Result<Self, Error> {
        Ok(record.into_decoded()?)
    }
}

impl FromRecord for BatchInfo {
    fn from_record(record: &mut RawRecord, _cx: &Context) -> Result<Self, Error> {
        Ok(BatchInfo::of(record))
    }
}

impl FromRecord for Context {
    fn from_record(_record: &mut RawRecord, cx: &Context) -> Result<Self, Error> {
        Ok(cx.clone())
    }
}

impl<T: Send + Sync + 'static> FromRecord for State<T> {
    fn from_record(_record: &mut RawRecord, cx: &Context) -> Result<Self, Error> {
        State::from_context(cx)
    }
}

/// A value a whole-batch consumer handler can take as an argument.
///
/// Extraction happens before the handler runs; a failure fails the whole
/// batch (the error is logged, since a batch result carries no message), and
/// the handler is not called.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an argument of a batch consumer handler",
    label = "not something a batch consumer handler can take",
    note = "a consumer handler taking the whole batch takes: `Batch`, `BatchInfo`, `Context`, `State<T>` and `WsSender`; `Record<T>` and `RawRecord` are for per-record handlers, which do not take `Batch`",
    note = "a type of your own can be one by implementing `celerity::consumer::FromBatch`"
)]
pub trait FromBatch: Sized {
    /// Takes the value from the batch.
    fn from_batch(batch: &mut Batch, cx: &Context) -> Result<Self, Error>;

    /// Takes the value when it is the handler's last argument and may have
    /// the whole batch. Defaults to [`FromBatch::from_batch`].
    fn from_batch_owned(mut batch: Batch, cx: &Context) -> Result<Self, Error> {
        Self::from_batch(&mut batch, cx)
    }
}

impl FromBatch for Batch {
    fn from_batch(batch: &mut Batch, _cx: &Context) -> Result<Self, Error> {
        Ok(batch.clone())
    }

    fn from_batch_owned(batch: Batch, _cx: &Context) -> Result<Self, Error> {
        Ok(batch)
    }
}

impl FromBatch for BatchInfo {
    fn from_batch(batch: &mut Batch, _cx: &Context) -> Result<Self, Error> {
        Ok(batch.info())
    }
}

impl FromBatch for Context {
    fn from_batch(_batch: &mut Batch, cx: &Context) -> Result<Self, Error> {
        Ok(cx.clone())
    }
}

impl<T: Send + Sync + 'static> FromBatch for State<T> {
    fn from_batch(_batch: &mut Batch, cx: &Context) -> Result<Self, Error> {
        State::from_context(cx)
    }
}

/// The answer to a per-record argument that could not be extracted: that
/// record fails with the error's message. The attribute macro calls it.
pub fn reject_record(error: Error) -> Result<(), Error> {
    Err(error)
}

/// The answer to a whole-batch argument that could not be extracted: the
/// whole batch fails, and the error is logged. The attribute macro calls it.
pub fn reject_batch(error: Error) -> Outcome {
    tracing::warn!(error = ?error, "a batch consumer's argument could not be extracted; the whole batch is reported failed");
    whole_batch_failed()
}

/// What a per-record consumer handler can return: `()` for success, or a
/// `Result` whose error fails the record with the error's message.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a consumer handler",
    label = "not a consumer handler's result",
    note = "a per-record consumer handler returns: `()` or `Result<(), E>` where `E` is `celerity::Error` or any `std::error::Error`; a handler taking the whole `Batch` returns `BatchOutcome`, `()`, or a `Result` of either"
)]
pub trait IntoRecordOutcome {
    /// Converts the return value.
    fn into_record_outcome(self) -> Result<(), Error>;
}

impl IntoRecordOutcome for () {
    fn into_record_outcome(self) -> Result<(), Error> {
        Ok(())
    }
}

impl<R: IntoRecordOutcome, E: Into<Error>> IntoRecordOutcome for Result<R, E> {
    fn into_record_outcome(self) -> Result<(), Error> {
        self.map_err(Into::into)?.into_record_outcome()
    }
}

/// What a whole-batch consumer handler can return: a [`BatchOutcome`] naming
/// the records that failed, `()` when all succeeded, or a `Result` of either
/// whose error fails the whole batch (nothing named, nothing acknowledged;
/// the error is logged).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a batch consumer handler",
    label = "not a batch consumer handler's result",
    note = "a consumer handler taking the whole `Batch` returns: `BatchOutcome` (from `batch.outcome()`), `()`, or `Result<R, E>` of one, where `E` is `celerity::Error` or any `std::error::Error`"
)]
pub trait IntoBatchOutcome {
    /// Converts the return value.
    fn into_batch_outcome(self) -> Outcome;
}

impl IntoBatchOutcome for () {
    fn into_batch_outcome(self) -> Outcome {
        Outcome::Consumer(celerity_proto::v1::BatchResult { success: true, failures: Vec::new() })
    }
}

impl IntoBatchOutcome for BatchOutcome {
    fn into_batch_outcome(self) -> Outcome {
        self.into_outcome()
    }
}

impl<R: IntoBatchOutcome, E: Into<Error>> IntoBatchOutcome for Result<R, E> {
    fn into_batch_outcome(self) -> Outcome {
        match self {
            Ok(value) => value.into_batch_outcome(),
            Err(error) => {
                let error = error.into();
                tracing::warn!(error = ?error, "a batch consumer failed; the whole batch is reported failed");
                whole_batch_failed()
            }
        }
    }
}

/// A per-record consumer handler from a function of one record and the
/// context. The SDK runs it for every record of a batch and builds the
/// batch's answer; the attribute macro builds its argument extraction inside
/// such a function.
///
/// ```
/// use celerity::consumer::{RawRecord, RecordFn};
/// use celerity::Context;
///
/// let handler = RecordFn::new(|record: RawRecord, _cx: Context| async move {
///     if record.body().is_empty() { Err(celerity::Error::msg("empty")) } else { Ok(()) }
/// })
/// .concurrency(8);
/// # let _: &dyn celerity::Handler = &handler;
/// ```
pub struct RecordFn<F> {
    f: Arc<F>,
    concurrency: usize,
}

impl<F> RecordFn<F> {
    /// Wraps `f`, to run for one record at a time, in order.
    pub fn new(f: F) -> Self {
        RecordFn { f: Arc::new(f), concurrency: 1 }
    }

    /// Runs up to `n` records of a batch at once, each on its own task
    /// (records then finish in any order; the answer still names each failed
    /// record by its id). `1`, the default, runs them in order one at a time;
    /// `0` is taken as `1`. Above `1`, the handler must be called inside a
    /// tokio runtime, as the SDK always does.
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }
}

impl<F, Fut> Handler for RecordFn<F>
where
    F: Fn(RawRecord, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), Error>> + Send + 'static,
{
    fn call(&self, dispatch: Dispatch, cx: Context) -> HandlerFuture {
        match dispatch.source {
            Some(Source::Consumer(batch)) => {
                let batch = Batch::from_wire(batch);
                let f = Arc::clone(&self.f);
                let concurrency = self.concurrency;
                Box::pin(async move { run_records(f, batch, cx, concurrency).await })
            }
            other => ready(wrong_source(HandlerKind::Consumer, &other, &cx)),
        }
    }
}

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
        let mut text = String::with_capacity(records.iter().map(|record| record.message_id.len()).sum());
        let ends = records
            .iter()
            .map(|record| {
                text.push_str(&record.message_id);
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
async fn run_records<F, Fut>(f: Arc<F>, batch: Batch, cx: Context, concurrency: usize) -> Outcome
where
    F: Fn(RawRecord, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), Error>> + Send + 'static,
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
            let ran = run_one(Arc::clone(&f), record, cx.clone()).await;
            answer(&mut outcome, &ids, index, ran);
        }
        let mut not_run = pending.peekable();
        if not_run.peek().is_some() {
            let message = not_processed(&cx);
            for (_, record) in not_run {
                outcome.fail_id(&record.message_id, message.clone());
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
            let task = running.spawn(run_one(Arc::clone(&f), record, cx.clone()));
            tasks.insert(task.id(), index);
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
async fn run_one<F, Fut>(f: Arc<F>, record: RawRecord, cx: Context) -> Ran
where
    F: Fn(RawRecord, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), Error>> + Send + 'static,
{
    // Calling `f` inside the guarded future catches a panic that happens
    // before its future is first polled, too.
    match AssertUnwindSafe(async move { f(record, cx).await }).catch_unwind().await {
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

/// A whole-batch consumer handler from a function of the batch and context.
/// The attribute macro builds its argument extraction inside such a
/// function.
pub struct BatchFn<F> {
    f: F,
}

impl<F> BatchFn<F> {
    /// Wraps `f`.
    pub fn new(f: F) -> Self {
        BatchFn { f }
    }
}

impl<F, Fut> Handler for BatchFn<F>
where
    F: Fn(Batch, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Outcome> + Send + 'static,
{
    fn call(&self, dispatch: Dispatch, cx: Context) -> HandlerFuture {
        match dispatch.source {
            Some(Source::Consumer(batch)) => {
                let outcome = (self.f)(Batch::from_wire(batch), cx.clone());
                Box::pin(async move { expect_shape(HandlerKind::Consumer, outcome.await, &cx) })
            }
            other => ready(wrong_source(HandlerKind::Consumer, &other, &cx)),
        }
    }
}

/// An `async fn` usable as a per-record consumer handler: every argument
/// implements [`FromRecord`] and the return value [`IntoRecordOutcome`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a per-record consumer handler",
    label = "not a per-record consumer handler",
    note = "a per-record consumer handler is an `async fn` whose arguments are record extractors (`Record<T>`, `RawRecord`, `BatchInfo`, `Context`, `State<T>`) and that returns `()` or `Result<(), E>`; a handler taking the whole `Batch` is registered with `consumer_batch`"
)]
pub trait ConsumerHandler<Args>: Clone + Send + Sync + 'static {
    /// Builds the type-erased handler, running up to `concurrency` records
    /// of a batch at once (`1`: in order, one at a time).
    fn into_handler(self, concurrency: usize) -> Arc<dyn Handler>;
}

/// An `async fn` usable as a whole-batch consumer handler: every argument
/// implements [`FromBatch`] and the return value [`IntoBatchOutcome`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a batch consumer handler",
    label = "not a batch consumer handler",
    note = "a batch consumer handler is an `async fn` whose arguments are batch extractors (`Batch`, `BatchInfo`, `Context`, `State<T>`) and that returns `BatchOutcome`, `()`, or a `Result` of one"
)]
pub trait ConsumerBatchHandler<Args>: Clone + Send + Sync + 'static {
    /// Builds the type-erased handler.
    fn into_handler(self) -> Arc<dyn Handler>;
}

macro_rules! consumer_handler_impl {
    ($($arg:ident),*; $last:ident) => {
        impl<F, Fut, R, $($arg,)* $last> ConsumerHandler<($($arg,)* $last,)> for F
        where
            F: Fn($($arg,)* $last) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = R> + Send + 'static,
            R: IntoRecordOutcome,
            $($arg: FromRecord + Send + 'static,)*
            $last: FromRecord + Send + 'static,
        {
            #[allow(non_snake_case, unused_mut)]
            fn into_handler(self, concurrency: usize) -> Arc<dyn Handler> {
                let f = self;
                Arc::new(RecordFn::new(move |mut record: RawRecord, cx: Context| {
                    let f = f.clone();
                    async move {
                        $(
                            let $arg = match $arg::from_record(&mut record, &cx) {
                                Ok(value) => value,
                                Err(error) => return reject_record(error),
                            };
                        )*
                        let $last = match $last::from_record_owned(record, &cx) {
                            Ok(value) => value,
                            Err(error) => return reject_record(error),
                        };
                        f($($arg,)* $last).await.into_record_outcome()
                    }
                }).concurrency(concurrency))
            }
        }

        impl<F, Fut, R, $($arg,)* $last> ConsumerBatchHandler<($($arg,)* $last,)> for F
        where
            F: Fn($($arg,)* $last) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = R> + Send + 'static,
            R: IntoBatchOutcome,
            $($arg: FromBatch + Send + 'static,)*
            $last: FromBatch + Send + 'static,
        {
            #[allow(non_snake_case, unused_mut)]
            fn into_handler(self) -> Arc<dyn Handler> {
                let f = self;
                Arc::new(BatchFn::new(move |mut batch: Batch, cx: Context| {
                    let f = f.clone();
                    async move {
                        $(
                            let $arg = match $arg::from_batch(&mut batch, &cx) {
                                Ok(value) => value,
                                Err(error) => return reject_batch(error),
                            };
                        )*
                        let $last = match $last::from_batch_owned(batch, &cx) {
                            Ok(value) => value,
                            Err(error) => return reject_batch(error),
                        };
                        f($($arg,)* $last).await.into_batch_outcome()
                    }
                }))
            }
        }
    };
}

impl<F, Fut, R> ConsumerHandler<()> for F
where
    F: Fn() -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoRecordOutcome,
{
    fn into_handler(self, concurrency: usize) -> Arc<dyn Handler> {
        let f = self;
        Arc::new(
            RecordFn::new(move |_record: RawRecord, _cx: Context| {
                let f = f.clone();
                async move { f().await.into_record_outcome() }
            })
            .concurrency(concurrency),
        )
    }
}

impl<F, Fut, R> ConsumerBatchHandler<()> for F
where
    F: Fn() -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoBatchOutcome,
{
    fn into_handler(self) -> Arc<dyn Handler> {
        let f = self;
        Arc::new(BatchFn::new(move |_batch: Batch, _cx: Context| {
            let f = f.clone();
            async move { f().await.into_batch_outcome() }
        }))
    }
}

consumer_handler_impl!(; A1);
consumer_handler_impl!(A1; A2);
consumer_handler_impl!(A1, A2; A3);
consumer_handler_impl!(A1, A2, A3; A4);
consumer_handler_impl!(A1, A2, A3, A4; A5);
consumer_handler_impl!(A1, A2, A3, A4, A5; A6);
consumer_handler_impl!(A1, A2, A3, A4, A5, A6; A7);
consumer_handler_impl!(A1, A2, A3, A4, A5, A6, A7; A8);

#[cfg(test)]
mod tests;
