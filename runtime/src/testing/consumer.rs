//! Building a consumer batch event.

use std::time::SystemTime;

use bytes::Bytes;
use celerity_proto::v1::{self as pb, dispatch::Source};
use serde::Serialize;

use super::envelope::{Envelope, envelope_setters};
use crate::consumer::{Batch, RawRecord};

/// A batch of records to call a consumer with, built the way the runtime
/// would send it. Each record has the id a failure names it by.
///
/// The source id defaults to the one in the tag the batch is sent to
/// (`source::orders-queue::processOrders` gives `orders-queue`).
///
/// ```
/// use celerity::testing::TestBatch;
///
/// #[derive(serde::Serialize)]
/// struct OrderPlaced { id: u64 }
///
/// let batch = TestBatch::new()
///     .record("m-1", r#"{"id": 1}"#)
///     .json_record("m-2", &OrderPlaced { id: 2 })
///     .source_type("queue");
/// let wire = batch.into_wire(Some("source::orders-queue::processOrders"));
/// assert_eq!(wire.source_id, "orders-queue");
/// assert_eq!(wire.records.len(), 2);
/// assert_eq!(wire.records[1].message_id, "m-2");
/// ```
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct TestBatch {
    pub(super) envelope: Envelope,
    source_id: Option<String>,
    source_type: String,
    vendor: Bytes,
    records: Vec<pb::ConsumerRecord>,
}

impl TestBatch {
    /// An empty batch.
    pub fn new() -> Self {
        TestBatch::default()
    }

    envelope_setters!();

    /// Sets the id of the source the batch comes from.
    pub fn source_id(mut self, id: impl Into<String>) -> Self {
        self.source_id = Some(id.into());
        self
    }

    /// Sets the type of the source, such as `queue` or `topic`.
    pub fn source_type(mut self, source_type: impl Into<String>) -> Self {
        self.source_type = source_type.into();
        self
    }

    /// Sets the batch's vendor data.
    pub fn vendor(mut self, vendor: impl Into<Bytes>) -> Self {
        self.vendor = vendor.into();
        self
    }

    /// Adds a record with id `message_id` and `body`.
    pub fn record(self, message_id: impl Into<String>, body: impl Into<Bytes>) -> Self {
        self.raw_record(RawRecord::new(message_id, body))
    }

    /// Adds a record with id `message_id` whose body is `value` as JSON.
    ///
    /// # Panics
    ///
    /// When `value` cannot be serialized as JSON.
    pub fn json_record(self, message_id: impl Into<String>, value: &impl Serialize) -> Self {
        let body = serde_json::to_vec(value).unwrap_or_else(|error| panic!("the record is not serializable: {error}"));
        self.record(message_id, body)
    }

    /// Adds a record with every field set ([`RawRecord`]'s builders).
    pub fn raw_record(self, record: RawRecord) -> Self {
        self.record_with(record_to_wire(&record))
    }

    /// Adds a record in the wire's form, every field as given.
    pub fn record_with(mut self, record: pb::ConsumerRecord) -> Self {
        self.records.push(record);
        self
    }

    /// The tag of a dispatch that is built: `source::{sourceId}::handler`
    /// (the source id defaulting to `test-source`).
    pub(crate) fn default_tag(&self) -> String {
        let source = self.source_id.as_deref().filter(|id| !id.is_empty()).unwrap_or("test-source");
        format!("source::{source}::handler")
    }

    /// The whole `Dispatch`, for the tag set with `tag` (by default
    /// `source::{sourceId}::handler`).
    pub fn build(mut self) -> pb::Dispatch {
        let tag = self.envelope.tag().map_or_else(|| self.default_tag(), str::to_string);
        let envelope = std::mem::take(&mut self.envelope);
        let batch = self.into_wire(Some(&tag));
        envelope.into_dispatch(tag, String::new(), SystemTime::now(), Some(Source::Consumer(batch)))
    }

    /// The batch a wire batch is, every field kept.
    pub(crate) fn from_wire(batch: pb::ConsumerBatch) -> Self {
        TestBatch {
            envelope: Envelope::default(),
            source_id: Some(batch.source_id),
            source_type: batch.source_type,
            vendor: batch.vendor,
            records: batch.records,
        }
    }

    /// The wire batch, for the handler bound to `tag` (whose source id is the
    /// default source id).
    pub fn into_wire(self, tag: Option<&str>) -> pb::ConsumerBatch {
        let source_id = self.source_id.or_else(|| tag.and_then(source_of_tag)).unwrap_or_default();
        pb::ConsumerBatch { records: self.records, source_id, source_type: self.source_type, vendor: self.vendor }
    }
}

/// A batch built with [`Batch::new`]: every field is kept.
impl From<Batch> for TestBatch {
    fn from(batch: Batch) -> Self {
        TestBatch {
            envelope: Envelope::default(),
            source_id: Some(batch.source_id().to_string()),
            source_type: batch.source_type().to_string(),
            vendor: batch.vendor().clone(),
            records: batch.iter().map(record_to_wire).collect(),
        }
    }
}

impl From<TestBatch> for pb::Dispatch {
    fn from(batch: TestBatch) -> Self {
        batch.build()
    }
}

/// The source id of a tag `source::{sourceId}::{handlerName}`.
pub(crate) fn source_of_tag(tag: &str) -> Option<String> {
    let mut parts = tag.split("::");
    match (parts.next(), parts.next(), parts.next()) {
        (Some("source"), Some(source), Some(_)) => Some(source.to_string()),
        _ => None,
    }
}

fn record_to_wire(record: &RawRecord) -> pb::ConsumerRecord {
    pb::ConsumerRecord {
        message_id: record.message_id().to_string(),
        body: record.body().clone(),
        source: record.source().to_string(),
        event_type: record.event_type().to_string(),
        attributes: record.attributes().clone(),
        vendor: record.vendor().clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_from_the_sdk_builder_keeps_every_field() {
        let batch = Batch::new(
            "orders",
            "queue",
            [RawRecord::new("m-1", "{}")
                .with_source("arn:queue")
                .with_event_type("order.placed")
                .with_attributes(r#"{"a":1}"#)
                .with_vendor("v")],
        )
        .with_vendor("bv");
        let wire = TestBatch::from(batch.clone()).into_wire(Some("source::other::x"));
        assert_eq!(Batch::from(wire), batch);
    }

    #[test]
    fn the_source_id_comes_from_the_tag_unless_set() {
        assert_eq!(TestBatch::new().into_wire(Some("source::orders::process")).source_id, "orders");
        assert_eq!(TestBatch::new().source_id("mine").into_wire(Some("source::orders::process")).source_id, "mine");
        assert_eq!(TestBatch::new().into_wire(Some("processOrders")).source_id, "");
    }
}
