//! A whole consumer batch, where it came from, and the outcome a batch
//! handler builds for it.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use celerity_proto::v1::{self as pb, BatchResult, RecordFailure, result::Outcome};

use super::record::{BatchMeta, RawRecord};

/// A batch of records from a queue or topic, as the runtime delivered it.
///
/// Iterate it for its records, and build the answer with
/// [`Batch::outcome`]: a failure can only be reported for a record of this
/// batch, by the id it arrived with.
///
/// ```
/// use celerity::consumer::{Batch, BatchOutcome};
///
/// async fn process(batch: Batch) -> BatchOutcome {
///     let mut outcome = batch.outcome();
///     for record in &batch {
///         if record.body().is_empty() {
///             outcome.fail(record, "an empty body");
///         }
///     }
///     outcome
/// }
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Batch {
    meta: Arc<BatchMeta>,
    records: Vec<RawRecord>,
}

/// What a batch and the [`BatchInfo`] kept of it say of where it came
/// from, read from the `meta` both hold.
macro_rules! where_the_batch_came_from {
    () => {
        /// The id of the source the batch came from.
        pub fn source_id(&self) -> &str {
            &self.meta.source_id
        }

        /// The type of the source the batch came from, such as a queue or
        /// topic.
        pub fn source_type(&self) -> &str {
            &self.meta.source_type
        }

        /// The source's own data about the batch, as the runtime sent it.
        pub fn vendor(&self) -> &Bytes {
            &self.meta.vendor
        }
    };
}

impl Batch {
    /// A batch from source `source_id` of type `source_type` holding
    /// `records`, for calling a handler directly in a test. The records
    /// become this batch's.
    pub fn new(
        source_id: impl Into<String>,
        source_type: impl Into<String>,
        records: impl IntoIterator<Item = RawRecord>,
    ) -> Self {
        let meta =
            Arc::new(BatchMeta { source_id: source_id.into(), source_type: source_type.into(), vendor: Bytes::new() });
        Batch { records: adopt(records, &meta), meta }
    }

    /// Sets the batch's vendor data.
    pub fn with_vendor(self, vendor: impl Into<Bytes>) -> Self {
        let meta = Arc::new(BatchMeta {
            source_id: self.meta.source_id.clone(),
            source_type: self.meta.source_type.clone(),
            vendor: vendor.into(),
        });
        Batch { records: adopt(self.records, &meta), meta }
    }

    /// The batch of `records`, which belong to `meta`.
    pub(super) fn of(meta: Arc<BatchMeta>, records: Vec<RawRecord>) -> Self {
        Batch { meta, records }
    }

    pub(crate) fn from_wire(batch: pb::ConsumerBatch) -> Self {
        let meta =
            Arc::new(BatchMeta { source_id: batch.source_id, source_type: batch.source_type, vendor: batch.vendor });
        let records = batch.records.into_iter().map(|record| RawRecord::from_wire(record, &meta)).collect();
        Batch { meta, records }
    }

    where_the_batch_came_from!();

    /// Where the batch came from, as a value to keep.
    pub fn info(&self) -> BatchInfo {
        BatchInfo { meta: Arc::clone(&self.meta) }
    }

    /// The records, in the order they arrived.
    pub fn records(&self) -> &[RawRecord] {
        &self.records
    }

    /// The records, in the order they arrived.
    pub fn iter(&self) -> std::slice::Iter<'_, RawRecord> {
        self.records.iter()
    }

    /// How many records the batch holds.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether the batch holds no records.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Takes the records. Build the [`Batch::outcome`] first: failures are
    /// named from the records, which keep their place in the batch.
    pub fn into_records(self) -> Vec<RawRecord> {
        self.records
    }

    /// An outcome for this batch, every record successful until failed with
    /// [`BatchOutcome::fail`].
    pub fn outcome(&self) -> BatchOutcome {
        BatchOutcome { batch: Arc::clone(&self.meta), failures: Vec::new(), unnamed: None }
    }
}

fn adopt(records: impl IntoIterator<Item = RawRecord>, meta: &Arc<BatchMeta>) -> Vec<RawRecord> {
    records
        .into_iter()
        .map(|mut record| {
            record.batch = Arc::clone(meta);
            record
        })
        .collect()
}

impl fmt::Debug for Batch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Batch")
            .field("source_id", &self.meta.source_id)
            .field("source_type", &self.meta.source_type)
            .field("vendor", &self.meta.vendor)
            .field("records", &self.records)
            .finish()
    }
}

impl From<pb::ConsumerBatch> for Batch {
    fn from(batch: pb::ConsumerBatch) -> Self {
        Batch::from_wire(batch)
    }
}

impl IntoIterator for Batch {
    type Item = RawRecord;
    type IntoIter = std::vec::IntoIter<RawRecord>;
    fn into_iter(self) -> Self::IntoIter {
        self.records.into_iter()
    }
}

impl<'a> IntoIterator for &'a Batch {
    type Item = &'a RawRecord;
    type IntoIter = std::slice::Iter<'a, RawRecord>;
    fn into_iter(self) -> Self::IntoIter {
        self.records.iter()
    }
}

/// Where a batch came from: its source's id and type, and the vendor data.
/// A handler argument in either consumer form. Cloning is cheap.
#[derive(Clone, PartialEq, Eq)]
pub struct BatchInfo {
    meta: Arc<BatchMeta>,
}

impl BatchInfo {
    pub(crate) fn of(record: &RawRecord) -> Self {
        BatchInfo { meta: Arc::clone(&record.batch) }
    }

    where_the_batch_came_from!();
}

impl fmt::Debug for BatchInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchInfo")
            .field("source_id", &self.meta.source_id)
            .field("source_type", &self.meta.source_type)
            .finish()
    }
}

/// The answer to a batch, built by a batch handler: every record succeeds
/// unless [failed](BatchOutcome::fail) by name.
///
/// Failed records stay on their source and are delivered again; the others
/// are acknowledged. A failure is built from a record of the batch, never
/// from a string, so it names the id the record arrived with. Should a record
/// not be nameable (it arrived without an id, or it belongs to another
/// batch), the outcome fails the whole batch rather than acknowledge a
/// record that was not processed.
#[derive(Clone, PartialEq, Eq)]
pub struct BatchOutcome {
    batch: Arc<BatchMeta>,
    failures: Vec<RecordFailure>,
    /// Why a failure could not be named, which fails the whole batch.
    unnamed: Option<String>,
}

impl BatchOutcome {
    /// Fails `record` (a [`RawRecord`] or [`super::Record`] of this batch)
    /// with `error` as its message. A record failed twice keeps the first
    /// message.
    ///
    /// ```
    /// use celerity::consumer::{Batch, RawRecord};
    /// let batch = Batch::new("orders", "queue", [RawRecord::new("m-1", "{}"), RawRecord::new("m-2", "{}")]);
    /// let mut outcome = batch.outcome();
    /// outcome.fail(&batch.records()[1], "out of stock");
    /// assert_eq!(outcome.failed_ids().collect::<Vec<_>>(), ["m-2"]);
    /// ```
    pub fn fail<R>(&mut self, record: &R, error: impl fmt::Display) -> &mut Self
    where
        R: AsRef<RawRecord> + ?Sized,
    {
        let record = record.as_ref();
        if !Arc::ptr_eq(&record.batch, &self.batch) {
            self.fail_unnamed(format!(
                "a failure was reported for record {}, which is not a record of this batch",
                crate::excerpt::quoted(record.message_id())
            ));
            return self;
        }
        self.fail_id(record.message_id(), error.to_string());
        self
    }

    /// Names the record with id `message_id`, which the caller took from a
    /// record of this batch.
    pub(crate) fn fail_id(&mut self, message_id: &str, message: String) {
        if message_id.is_empty() {
            return self.fail_unnamed(format!("a record without a message id failed ({message})"));
        }
        if self.failures.iter().any(|failure| failure.message_id == message_id) {
            return;
        }
        let error_message = if message.is_empty() { "the handler failed the record".to_string() } else { message };
        self.failures.push(RecordFailure { message_id: message_id.to_string(), error_message });
    }

    fn fail_unnamed(&mut self, why: String) {
        if self.unnamed.is_none() {
            self.unnamed = Some(why);
        }
    }

    /// Whether every record succeeded so far.
    pub fn is_success(&self) -> bool {
        self.failures.is_empty() && self.unnamed.is_none()
    }

    /// The ids of the records failed so far, in the order they were failed.
    pub fn failed_ids(&self) -> impl Iterator<Item = &str> {
        self.failures.iter().map(|failure| failure.message_id.as_str())
    }

    /// The outcome sent to the runtime.
    pub(crate) fn into_outcome(self) -> Outcome {
        match self.unnamed {
            Some(why) => {
                tracing::warn!(
                    "{why}: the whole batch is reported failed, so that nothing unprocessed is acknowledged"
                );
                whole_batch_failed()
            }
            None => Outcome::Consumer(BatchResult { success: self.failures.is_empty(), failures: self.failures }),
        }
    }
}

impl fmt::Debug for BatchOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchOutcome").field("failures", &self.failures).field("unnamed", &self.unnamed).finish()
    }
}

/// A failed batch with nothing named: none of it is acknowledged.
pub(crate) fn whole_batch_failed() -> Outcome {
    Outcome::Consumer(BatchResult { success: false, failures: Vec::new() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch() -> Batch {
        Batch::new("orders", "queue", ["m-1", "m-2", "m-3"].map(|id| RawRecord::new(id, "{}")))
    }

    fn result(outcome: BatchOutcome) -> BatchResult {
        match outcome.into_outcome() {
            Outcome::Consumer(result) => result,
            other => panic!("expected a batch result, got {other:?}"),
        }
    }

    #[test]
    fn nothing_failed_is_a_success() {
        let batch = batch();
        assert!(batch.outcome().is_success());
        assert_eq!(result(batch.outcome()), BatchResult { success: true, failures: vec![] });
    }

    #[test]
    fn failures_name_the_records_once() {
        let batch = batch();
        let mut outcome = batch.outcome();
        outcome.fail(&batch.records()[2], "no stock").fail(&batch.records()[0], "bad").fail(&batch.records()[2], "x");
        let decoded = batch.records()[1].decode::<serde_json::Value>().unwrap();
        outcome.fail(&decoded, std::io::Error::other("io"));
        assert_eq!(
            result(outcome).failures,
            [("m-3", "no stock"), ("m-1", "bad"), ("m-2", "io")]
                .map(|(id, m)| RecordFailure { message_id: id.into(), error_message: m.into() })
        );
    }

    #[test]
    fn a_record_of_another_batch_fails_the_whole_batch() {
        let (one, other) = (batch(), batch());
        let mut outcome = one.outcome();
        outcome.fail(&one.records()[0], "bad").fail(&other.records()[1], "foreign");
        assert!(!outcome.is_success());
        assert_eq!(result(outcome), BatchResult { success: false, failures: vec![] });
        let mut outcome = one.outcome();
        outcome.fail(&RawRecord::new("m-1", "{}"), "made up");
        assert_eq!(result(outcome), BatchResult { success: false, failures: vec![] });
    }

    #[test]
    fn a_record_without_an_id_fails_the_whole_batch() {
        let batch = Batch::new("orders", "queue", [RawRecord::new("", "{}"), RawRecord::new("m-2", "{}")]);
        let mut outcome = batch.outcome();
        outcome.fail(&batch.records()[0], "bad");
        assert_eq!(result(outcome), BatchResult { success: false, failures: vec![] });
    }

    #[test]
    fn records_cloned_or_taken_from_the_batch_still_belong_to_it() {
        let batch = batch().with_vendor("v");
        let outcome_before = batch.outcome();
        let mut outcome = batch.outcome();
        let records = batch.clone().into_records();
        outcome.fail(&records[1], "bad");
        assert_eq!(result(outcome).failures[0].message_id, "m-2");
        assert_eq!(batch.records()[0].source_id(), "orders");
        assert_eq!(batch.vendor(), &Bytes::from_static(b"v"));
        assert!(outcome_before.is_success());
    }

    #[test]
    fn converts_the_wire_batch() {
        let batch = Batch::from_wire(pb::ConsumerBatch {
            records: vec![pb::ConsumerRecord { message_id: "m-1".into(), ..Default::default() }],
            source_id: "orders".into(),
            source_type: "queue".into(),
            vendor: Bytes::from_static(b"{}"),
        });
        assert_eq!((batch.source_id(), batch.source_type(), batch.len()), ("orders", "queue", 1));
        let info = BatchInfo::of(&batch.records()[0]);
        assert_eq!((info.source_id(), info.source_type()), ("orders", "queue"));
        assert_eq!(batch.info(), info);
        assert_eq!(batch.iter().map(RawRecord::message_id).collect::<Vec<_>>(), ["m-1"]);
    }
}
