//! One record of a consumer batch: raw, or with its body decoded.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use bytes::Bytes;
use celerity_proto::v1 as pb;
use serde::de::DeserializeOwned;

use crate::json::{JsonError, decode_json, decode_json_input};
use crate::text::Text;

/// How a JSON decoding error names a record's body.
pub(crate) const RECORD_BODY: &str = "the record body";

/// What every record of one batch shares: where the batch came from. The
/// allocation is also the batch's identity, so a failure can only name a
/// record of the batch it is reported for.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct BatchMeta {
    pub(crate) source_id: String,
    pub(crate) source_type: String,
    pub(crate) vendor: Bytes,
}

/// A record of a consumer batch as the runtime delivered it: every wire field,
/// the body as bytes (not copied).
///
/// ```
/// use celerity::consumer::RawRecord;
///
/// #[derive(serde::Deserialize)]
/// struct OrderPlaced { id: u64 }
///
/// let record = RawRecord::new("m-1", r#"{"id": 7}"#).with_event_type("order.placed");
/// assert_eq!(record.message_id(), "m-1");
/// let body: OrderPlaced = record.json().unwrap();
/// assert_eq!(body.id, 7);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct RawRecord {
    fields: RecordFields,
    pub(crate) batch: Arc<BatchMeta>,
}

/// A record's fields as they arrived, the wire's `ConsumerRecord`, before
/// it is given its batch.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct RecordFields {
    pub(crate) message_id: Text,
    pub(crate) body: Bytes,
    pub(crate) source: Text,
    pub(crate) event_type: Text,
    pub(crate) attributes: Bytes,
    pub(crate) vendor: Bytes,
}

impl RawRecord {
    /// A record with a message id and a body, for calling a handler directly
    /// in a test. It belongs to no batch until given to
    /// [`crate::consumer::Batch::new`].
    pub fn new(message_id: impl Into<String>, body: impl Into<Bytes>) -> Self {
        let fields =
            RecordFields { message_id: Text::from(message_id.into()), body: body.into(), ..Default::default() };
        RawRecord { fields, batch: Arc::default() }
    }

    /// Sets the source.
    pub fn with_source(mut self, source: impl Into<String>) -> Self {
        self.fields.source = Text::from(source.into());
        self
    }

    /// Sets the event type.
    pub fn with_event_type(mut self, event_type: impl Into<String>) -> Self {
        self.fields.event_type = Text::from(event_type.into());
        self
    }

    /// Sets the attributes.
    pub fn with_attributes(mut self, attributes: impl Into<Bytes>) -> Self {
        self.fields.attributes = attributes.into();
        self
    }

    /// Sets the vendor data.
    pub fn with_vendor(mut self, vendor: impl Into<Bytes>) -> Self {
        self.fields.vendor = vendor.into();
        self
    }

    pub(crate) fn from_wire(record: pb::ConsumerRecord, batch: &Arc<BatchMeta>) -> Self {
        let fields = RecordFields {
            message_id: Text::from(record.message_id),
            body: record.body,
            source: Text::from(record.source),
            event_type: Text::from(record.event_type),
            attributes: record.attributes,
            vendor: record.vendor,
        };
        RawRecord::from_fields(fields, batch)
    }

    pub(crate) fn from_fields(fields: RecordFields, batch: &Arc<BatchMeta>) -> Self {
        RawRecord { fields, batch: Arc::clone(batch) }
    }

    /// The id the record arrived with: the one a failure names.
    pub fn message_id(&self) -> &str {
        self.fields.message_id.as_str()
    }

    /// The body as the runtime sent it.
    pub fn body(&self) -> &Bytes {
        &self.fields.body
    }

    /// Takes the body.
    pub fn into_body(self) -> Bytes {
        self.fields.body
    }

    /// Where the record came from, as the source names it (such as a queue
    /// or topic address).
    pub fn source(&self) -> &str {
        self.fields.source.as_str()
    }

    /// The record's event type, when the source gives one.
    pub fn event_type(&self) -> &str {
        self.fields.event_type.as_str()
    }

    /// The record's attributes as the runtime sent them.
    pub fn attributes(&self) -> &Bytes {
        &self.fields.attributes
    }

    /// The attributes deserialized from JSON into `A`. Empty attributes read
    /// as `null`, so `Option<A>` takes them.
    pub fn attributes_json<A: DeserializeOwned>(&self) -> Result<A, JsonError> {
        decode_json_input(&self.fields.attributes, "the record's attributes")
    }

    /// The source's own data about the record, as the runtime sent it.
    pub fn vendor(&self) -> &Bytes {
        &self.fields.vendor
    }

    /// The id of the source the batch came from.
    pub fn source_id(&self) -> &str {
        &self.batch.source_id
    }

    /// The type of the source the batch came from.
    pub fn source_type(&self) -> &str {
        &self.batch.source_type
    }

    /// The body deserialized from JSON into `T`; an error names the field
    /// that does not fit.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, JsonError> {
        decode_json(&self.fields.body, RECORD_BODY)
    }

    /// The record with its body decoded from JSON as `T`.
    ///
    /// ```
    /// use celerity::consumer::RawRecord;
    /// #[derive(serde::Deserialize)]
    /// struct Order { id: u64 }
    /// let record = RawRecord::new("m-1", r#"{"id": 7}"#).decode::<Order>().unwrap();
    /// assert_eq!((record.id, record.message_id()), (7, "m-1"));
    /// ```
    pub fn decode<T: DeserializeOwned>(&self) -> Result<Record<T>, JsonError> {
        Ok(Record { value: self.json()?, raw: self.clone() })
    }

    /// Like [`RawRecord::decode`], keeping the record without a copy.
    pub fn into_decoded<T: DeserializeOwned>(self) -> Result<Record<T>, JsonError> {
        Ok(Record { value: self.json()?, raw: self })
    }
}

impl fmt::Debug for RawRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawRecord")
            .field("message_id", &self.fields.message_id)
            .field("body", &self.fields.body)
            .field("source", &self.fields.source)
            .field("event_type", &self.fields.event_type)
            .field("attributes", &self.fields.attributes)
            .field("vendor", &self.fields.vendor)
            .finish()
    }
}

impl AsRef<RawRecord> for RawRecord {
    fn as_ref(&self) -> &RawRecord {
        self
    }
}

/// A record whose body was decoded from JSON as `T`: the value (also through
/// `Deref`), and the record's metadata.
///
/// As a consumer handler's argument, a record whose body does not decode
/// fails alone, named with the decoding error and the path of the field that
/// does not fit; the handler is not called for it, and the rest of the batch
/// is processed.
///
/// ```
/// use celerity::consumer::Record;
/// #[derive(serde::Deserialize)]
/// struct OrderPlaced { id: u64 }
/// async fn process(order: Record<OrderPlaced>) -> celerity::Result<()> {
///     println!("order {} in message {}", order.id, order.message_id());
///     Ok(())
/// }
/// ```
#[derive(Clone)]
pub struct Record<T> {
    value: T,
    raw: RawRecord,
}

impl<T> Record<T> {
    /// The decoded body.
    pub fn value(&self) -> &T {
        &self.value
    }

    /// Takes the decoded body.
    pub fn into_value(self) -> T {
        self.value
    }

    /// The decoded body and the record it came from.
    pub fn into_parts(self) -> (T, RawRecord) {
        (self.value, self.raw)
    }

    /// The record as it arrived, body included.
    pub fn raw(&self) -> &RawRecord {
        &self.raw
    }

    /// The id the record arrived with: the one a failure names.
    pub fn message_id(&self) -> &str {
        self.raw.message_id()
    }

    /// Where the record came from, as the source names it.
    pub fn source(&self) -> &str {
        self.raw.source()
    }

    /// The record's event type, when the source gives one.
    pub fn event_type(&self) -> &str {
        self.raw.event_type()
    }

    /// The record's attributes as the runtime sent them.
    pub fn attributes(&self) -> &Bytes {
        self.raw.attributes()
    }

    /// The attributes deserialized from JSON into `A`; empty reads as `null`.
    pub fn attributes_json<A: DeserializeOwned>(&self) -> Result<A, JsonError> {
        self.raw.attributes_json()
    }

    /// The source's own data about the record, as the runtime sent it.
    pub fn vendor(&self) -> &Bytes {
        self.raw.vendor()
    }

    /// The id of the source the batch came from.
    pub fn source_id(&self) -> &str {
        self.raw.source_id()
    }

    /// The type of the source the batch came from.
    pub fn source_type(&self) -> &str {
        self.raw.source_type()
    }
}

impl<T> Deref for Record<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for Record<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

impl<T> AsRef<RawRecord> for Record<T> {
    fn as_ref(&self) -> &RawRecord {
        &self.raw
    }
}

impl<T: fmt::Debug> fmt::Debug for Record<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Record").field("value", &self.value).field("raw", &self.raw).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::PathSegment;

    #[derive(Debug, serde::Deserialize, PartialEq)]
    struct Order {
        id: u64,
        items: Vec<u32>,
    }

    fn wire() -> pb::ConsumerRecord {
        pb::ConsumerRecord {
            message_id: "m-1".into(),
            body: Bytes::from_static(br#"{"id":1,"items":[2,3]}"#),
            source: "orders-queue".into(),
            event_type: "order.placed".into(),
            attributes: Bytes::from_static(br#"{"priority":"high"}"#),
            vendor: Bytes::from_static(b"\x01\x02"),
        }
    }

    #[test]
    fn every_wire_field_is_exposed() {
        let meta =
            Arc::new(BatchMeta { source_id: "orders".into(), source_type: "queue".into(), vendor: Bytes::new() });
        let record = RawRecord::from_wire(wire(), &meta);
        assert_eq!(record.message_id(), "m-1");
        assert_eq!(record.source(), "orders-queue");
        assert_eq!(record.event_type(), "order.placed");
        assert_eq!(record.vendor(), &Bytes::from_static(b"\x01\x02"));
        assert_eq!((record.source_id(), record.source_type()), ("orders", "queue"));
        let attributes: std::collections::HashMap<String, String> = record.attributes_json().unwrap();
        assert_eq!(attributes["priority"], "high");
        let decoded = record.decode::<Order>().unwrap();
        assert_eq!(decoded.value(), &Order { id: 1, items: vec![2, 3] });
        assert_eq!(decoded.event_type(), "order.placed");
        assert_eq!(decoded.raw().body().as_ptr(), record.body().as_ptr(), "the body is shared, not copied");
    }

    #[test]
    fn a_body_that_does_not_fit_names_the_field() {
        let record = RawRecord::new("m-1", r#"{"id":1,"items":[2,"x"]}"#);
        let error = record.decode::<Order>().unwrap_err();
        assert_eq!(error.path(), [PathSegment::from("items"), PathSegment::from(1)]);
        assert!(error.to_string().starts_with("the record body does not fit at `items[1]`"), "{error}");
    }

    #[test]
    fn empty_attributes_read_as_null() {
        let record = RawRecord::new("m-1", "{}");
        assert_eq!(record.attributes_json::<Option<serde_json::Value>>().unwrap(), None);
    }
}
