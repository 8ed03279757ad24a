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
//! The handler ([`PerRecord`]) takes one record ([`Record<T>`] with its
//! JSON body decoded as `T`, or a [`RawRecord`]) plus any other argument of
//! a per-record consumer ([`BatchInfo`], `Context`, `State<T>`, ...), and
//! returns `()` or a `Result`. The SDK runs it for every record of the
//! batch, in order one at a time, or up to `n` at once (the attribute's
//! `concurrency = n`, or [`crate::App::consumer_concurrent`]), and builds
//! the answer:
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
//! The handler ([`WholeBatch`]) takes the [`Batch`] and returns a
//! [`BatchOutcome`] built with [`Batch::outcome`], `()` (all succeeded), or
//! a `Result` of either. A failure can only be built from a record of the
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

mod answer;
mod batch;
mod extract;
mod kind;
mod record;
mod records;
mod wire;

pub use batch::{Batch, BatchInfo, BatchOutcome};
#[doc(hidden)]
pub use kind::{ConsumerAnswer, ConsumerArgument, ConsumerBatchAnswer, ConsumerBatchArgument, RecordOptions};
pub use kind::{ConsumerBatchHandler, ConsumerHandler, PerRecord, WholeBatch};
#[cfg(feature = "validation")]
pub(crate) use record::RECORD_BODY;
pub use record::{RawRecord, Record};

#[cfg(test)]
mod tests;
