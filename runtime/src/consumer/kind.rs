//! Consumer batches as kinds of event: a handler of one record at a time
//! ([`PerRecord`]) or of the whole batch ([`WholeBatch`]), how each serves a
//! batch, and the words compile errors use for what each takes and returns.

use std::sync::Arc;

use celerity_proto::v1::dispatch::Source;

use super::batch::whole_batch_failed;
use super::records::run_records;
use super::{Batch, RawRecord};
use crate::context::Context;
use crate::error::Error;
use crate::kind::HandlerKind;
use crate::layer::Payload;
use crate::pipeline::{Handler, HandlerFuture, Kind, kind_diagnostics, sealed, whole_event_kind};

/// The consumer kind whose handler takes one record at a time: the SDK runs
/// it for each record of a batch and answers for the batch, naming the
/// records that failed. A record whose argument cannot be taken fails on its
/// own, with the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerRecord;

/// How a per-record consumer runs the records of one batch. Not a public
/// API: set through `concurrency = n` and
/// [`crate::App::consumer_concurrent`].
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordOptions {
    concurrency: usize,
}

impl RecordOptions {
    /// Up to `n` records of a batch at once (each polled first on the
    /// batch's task, and given a task of its own only when it waits); `1`
    /// runs them in order, one at a time, and `0` is taken as `1`.
    pub fn concurrency(n: usize) -> Self {
        RecordOptions { concurrency: n.max(1) }
    }
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions::concurrency(1)
    }
}

impl sealed::Sealed for PerRecord {}

impl Kind for PerRecord {
    const KIND: HandlerKind = HandlerKind::Consumer;
    type Event = RawRecord;
    type Answer = Result<(), Error>;
    type Rejection = Error;
    type Options = RecordOptions;

    fn reject(rejection: Error) -> Result<(), Error> {
        Err(rejection)
    }

    fn serve<H, Args>(
        handler: &Arc<H>,
        options: &RecordOptions,
        source: Source,
        cx: &Context,
    ) -> Result<HandlerFuture, HandlerKind>
    where
        H: Handler<PerRecord, Args>,
        Args: 'static,
    {
        let Source::Consumer(batch) = source else {
            return Err(HandlerKind::of_source(&source));
        };
        Ok(crate::pipeline::erased(run_records(
            Arc::clone(handler),
            Batch::from_wire(batch),
            cx.clone(),
            options.concurrency,
        )))
    }

    fn serve_payload<H, Args>(
        handler: &Arc<H>,
        options: &RecordOptions,
        payload: Payload,
        cx: &Context,
    ) -> Result<HandlerFuture, HandlerKind>
    where
        H: Handler<PerRecord, Args>,
        Args: 'static,
    {
        match payload {
            Payload::Consumer(batch) => {
                Ok(crate::pipeline::erased(run_records(Arc::clone(handler), batch, cx.clone(), options.concurrency)))
            }
            other => Err(other.kind()),
        }
    }
}

whole_event_kind! {
    /// The consumer kind whose handler takes the whole [`Batch`] and answers
    /// for it with a [`super::BatchOutcome`]. An argument that cannot be
    /// taken fails the whole batch (and is logged, since a batch result
    /// carries no message).
    pub struct WholeBatch;
    serves: Consumer from Source::Consumer,
    event: Batch = |wire| Ok(Batch::from_wire(wire)),
    rejection: Error = |rejection: Error| {
        tracing::warn!(error = ?rejection, "a batch consumer's argument could not be extracted; the whole batch is reported failed");
        whole_batch_failed()
    },
    answer: ::celerity_proto::v1::result::Outcome,
}

kind_diagnostics! {
    kind: PerRecord,
    argument: ConsumerArgument {
        message: "`{Self}` cannot be an argument of a consumer handler",
        label: "not something a consumer handler can take",
        notes: [
            "a per-record consumer handler takes: `Record<T>`, `RawRecord`, `BatchInfo`, `Context`, `State<T>` and `WsSender`; a handler taking the whole `Batch` takes: `Batch`, `BatchInfo`, `Context`, `State<T>` and `WsSender`",
            "a type of your own can be one by implementing `celerity::FromEvent<celerity::consumer::PerRecord>`",
        ],
    },
    answer: ConsumerAnswer {
        message: "`{Self}` cannot be returned from a consumer handler",
        label: "not a consumer handler's result",
        notes: [
            "a per-record consumer handler returns: `()` or `Result<(), E>` where `E` is `celerity::Error` or any `std::error::Error`; a handler taking the whole `Batch` returns `BatchOutcome`, `()`, or a `Result` of either",
        ],
    },
    handler:
        /// An `async fn` usable as a per-record consumer handler: every
        /// argument can be taken from a record
        /// ([`crate::FromEvent`]`<PerRecord>`) and it returns `()` or a
        /// `Result`. The same as [`crate::Handler`]`<PerRecord, Args>`, in
        /// the words of a consumer.
        ConsumerHandler {
        message: "`{Self}` is not a per-record consumer handler",
        label: "not a per-record consumer handler",
        notes: [
            "a per-record consumer handler is an `async fn` whose arguments are record extractors (`Record<T>`, `RawRecord`, `BatchInfo`, `Context`, `State<T>`) and that returns `()` or `Result<(), E>`; a handler taking the whole `Batch` is registered with `consumer_batch`",
        ],
    },
}

kind_diagnostics! {
    kind: WholeBatch,
    argument: ConsumerBatchArgument {
        message: "`{Self}` cannot be an argument of a batch consumer handler",
        label: "not something a batch consumer handler can take",
        notes: [
            "a consumer handler taking the whole batch takes: `Batch`, `BatchInfo`, `Context`, `State<T>` and `WsSender`; `Record<T>` and `RawRecord` are for per-record handlers, which do not take `Batch`",
            "a type of your own can be one by implementing `celerity::FromEvent<celerity::consumer::WholeBatch>`",
        ],
    },
    answer: ConsumerBatchAnswer {
        message: "`{Self}` cannot be returned from a batch consumer handler",
        label: "not a batch consumer handler's result",
        notes: [
            "a consumer handler taking the whole `Batch` returns: `BatchOutcome` (from `batch.outcome()`), `()`, or `Result<R, E>` of one, where `E` is `celerity::Error` or any `std::error::Error`",
        ],
    },
    handler:
        /// An `async fn` usable as a whole-batch consumer handler: every
        /// argument can be taken from a batch
        /// ([`crate::FromEvent`]`<WholeBatch>`) and it returns a
        /// [`super::BatchOutcome`], `()` or a `Result` of one. The same as
        /// [`crate::Handler`]`<WholeBatch, Args>`, in the words of a batch
        /// consumer.
        ConsumerBatchHandler {
        message: "`{Self}` is not a batch consumer handler",
        label: "not a batch consumer handler",
        notes: [
            "a batch consumer handler is an `async fn` whose arguments are batch extractors (`Batch`, `BatchInfo`, `Context`, `State<T>`) and that returns `BatchOutcome`, `()`, or a `Result` of one",
        ],
    },
}
