//! Consumer batch events.

use bytes::Bytes;
use celerity_proto::v1::{ConsumerBatch, ConsumerRecord, Dispatch, dispatch::Source};

use super::envelope::{Envelope, envelope_setters};

/// Starts a consumer batch from source `source_id` for handler
/// `handler_name`; tag `source::{source_id}::{handler_name}`.
pub fn consumer(source_id: impl Into<String>, handler_name: impl Into<String>) -> ConsumerEvent {
    ConsumerEvent {
        envelope: Envelope::default(),
        source_id: source_id.into(),
        handler_name: handler_name.into(),
        source_type: String::new(),
        vendor: Bytes::new(),
        records: Vec::new(),
    }
}

/// A consumer record with a message id and body, other fields empty.
pub fn record(message_id: impl Into<String>, body: impl Into<Bytes>) -> ConsumerRecord {
    ConsumerRecord { message_id: message_id.into(), body: body.into(), ..Default::default() }
}

/// Builds a Dispatch with a `ConsumerBatch` source.
#[derive(Debug, Clone)]
#[must_use]
pub struct ConsumerEvent {
    envelope: Envelope,
    source_id: String,
    handler_name: String,
    source_type: String,
    vendor: Bytes,
    records: Vec<ConsumerRecord>,
}

impl ConsumerEvent {
    envelope_setters!();

    /// Adds a record with a message id and body.
    pub fn record(self, message_id: impl Into<String>, body: impl Into<Bytes>) -> Self {
        self.record_with(record(message_id, body))
    }

    /// Adds a record with every field given.
    pub fn record_with(mut self, record: ConsumerRecord) -> Self {
        self.records.push(record);
        self
    }

    /// Sets the batch's `source_type`.
    pub fn source_type(mut self, source_type: impl Into<String>) -> Self {
        self.source_type = source_type.into();
        self
    }

    /// Sets the batch's vendor bytes.
    pub fn vendor(mut self, vendor: impl Into<Bytes>) -> Self {
        self.vendor = vendor.into();
        self
    }

    /// The Dispatch.
    pub fn build(self) -> Dispatch {
        let tag = format!("source::{}::{}", self.source_id, self.handler_name);
        self.envelope.into_dispatch(
            tag,
            Source::Consumer(ConsumerBatch {
                records: self.records,
                source_id: self.source_id,
                source_type: self.source_type,
                vendor: self.vendor,
            }),
        )
    }
}

impl From<ConsumerEvent> for Dispatch {
    fn from(e: ConsumerEvent) -> Dispatch {
        e.build()
    }
}
