//! A consumer batch decoded from its bytes straight into a [`Batch`].
//!
//! Decoded as `pb::ConsumerBatch` and then converted, every record's
//! message id, source and event type is copied into a `String` of its own:
//! three allocations per record, nearly all of a batch's. Here those fields
//! are copied into an arena of the worker's own ([`Text`]), checked to be
//! UTF-8 as prost checks a `string`.
//!
//! It is the same decoding: each message's `merge_field` is the one prost
//! generates for `ConsumerBatch` and `ConsumerRecord`, field for field, on
//! prost's own primitives, and an error is prost's, naming the same fields.
//! The SDK's tests and its `event` fuzz target compare the two.

use std::sync::Arc;

use bytes::Bytes;
use prost::{DecodeError, Message};

use super::batch::Batch;
use super::record::{BatchMeta, RawRecord, RecordFields};
use crate::session::record_room;
use crate::text::Text;
use crate::text::proto::wire_message;

impl Batch {
    /// The batch whose `ConsumerBatch` message is `bytes`, or why it does
    /// not decode, in the words decoding the message with prost would use.
    pub(crate) fn decode(bytes: Bytes) -> Result<Batch, DecodeError> {
        let mut wire = WireBatch { records: Vec::with_capacity(record_room(&bytes)), ..WireBatch::default() };
        wire.merge(bytes)?;
        let meta = Arc::new(BatchMeta {
            source_id: wire.source_id.as_str().to_owned(),
            source_type: wire.source_type.as_str().to_owned(),
            vendor: wire.vendor,
        });
        let records = wire.records.into_iter().map(|record| RawRecord::from_fields(record, &meta)).collect();
        Ok(Batch::of(meta, records))
    }
}

/// `ConsumerBatch`, its text kept in the bytes it arrived in.
#[derive(Debug, Default)]
struct WireBatch {
    records: Vec<RecordFields>,
    source_id: Text,
    source_type: Text,
    vendor: Bytes,
}

wire_message!(WireBatch, "ConsumerBatch" {
    1 => records: messages,
    2 => source_id: text,
    3 => source_type: text,
    4 => vendor: bytes,
});

// `ConsumerRecord`, its text in the arena like the batch's.
wire_message!(RecordFields, "ConsumerRecord" {
    1 => message_id: text,
    2 => body: bytes,
    3 => source: text,
    4 => event_type: text,
    5 => attributes: bytes,
    6 => vendor: bytes,
});

#[cfg(test)]
mod tests {
    use celerity_proto::v1 as pb;

    use super::*;
    use crate::text::proto::tests::field;

    /// Decoded straight into a batch, and through prost's `ConsumerBatch`,
    /// `bytes` give the same batch, or the same error.
    fn same_both_ways(bytes: &[u8]) {
        let direct = Batch::decode(Bytes::copy_from_slice(bytes));
        let through_prost = pb::ConsumerBatch::decode(bytes).map(Batch::from_wire);
        match (direct, through_prost) {
            (Ok(direct), Ok(through_prost)) => assert_eq!(direct, through_prost),
            (Err(direct), Err(through_prost)) => assert_eq!(direct.to_string(), through_prost.to_string()),
            (direct, through_prost) => panic!("decoded directly: {direct:?}; through prost: {through_prost:?}"),
        }
    }

    fn record(id: &str) -> pb::ConsumerRecord {
        pb::ConsumerRecord {
            message_id: id.to_string(),
            body: Bytes::from_static(b"{\"n\":1}"),
            source: "orders-queue".to_string(),
            event_type: "order.placed".to_string(),
            attributes: Bytes::from_static(b"{\"a\":\"b\"}"),
            vendor: Bytes::from_static(b"v"),
        }
    }

    fn batch(records: Vec<pb::ConsumerRecord>) -> pb::ConsumerBatch {
        pb::ConsumerBatch {
            records,
            source_id: "orders".to_string(),
            source_type: "queue".to_string(),
            vendor: Bytes::from_static(b"batch vendor"),
        }
    }

    #[test]
    fn a_batch_decodes_to_what_prost_decodes() {
        let wire = batch((1..=5).map(|i| record(&format!("m-{i}"))).collect());
        let bytes = wire.encode_to_vec();
        same_both_ways(&bytes);
        let decoded = Batch::decode(Bytes::from(bytes)).unwrap();
        assert_eq!(decoded.source_id(), "orders");
        assert_eq!(decoded.records()[4].message_id(), "m-5");
        assert_eq!(decoded.records()[0].event_type(), "order.placed");
        same_both_ways(&[]);
        same_both_ways(&pb::ConsumerBatch::default().encode_to_vec());
        same_both_ways(&batch(vec![pb::ConsumerRecord::default()]).encode_to_vec());
        // Text that is UTF-8 but not ASCII.
        let bytes = batch(vec![record("m-ü-✓")]).encode_to_vec();
        same_both_ways(&bytes);
        assert_eq!(Batch::decode(Bytes::from(bytes)).unwrap().records()[0].message_id(), "m-ü-✓");
    }

    #[test]
    fn a_batch_in_pieces_decodes_as_one_in_a_piece() {
        // prost's own string decoding takes what is not in the first
        // chunk; the result is the same.
        let bytes = batch((1..=3).map(|i| record(&format!("m-{i}"))).collect()).encode_to_vec();
        let (head, tail) = bytes.split_at(bytes.len() / 2);
        let mut pieces = bytes::Buf::chain(head, tail);
        let mut wire = WireBatch::default();
        wire.merge(&mut pieces).unwrap();
        let mut whole = WireBatch::default();
        whole.merge(Bytes::from(bytes.clone())).unwrap();
        assert_eq!(wire.records, whole.records);
        assert_eq!(wire.records[2].message_id.as_str(), "m-3");
    }

    #[test]
    fn text_that_is_not_utf8_is_refused_in_prosts_words() {
        for tag in [1, 3, 4] {
            let mut bytes = field(1, &field(tag, b"\xff\xfe"));
            same_both_ways(&bytes);
            let error = Batch::decode(Bytes::from(std::mem::take(&mut bytes))).unwrap_err().to_string();
            assert!(error.contains("ConsumerBatch.records") && error.contains("UTF-8"), "{error}");
        }
        for tag in [2, 3] {
            same_both_ways(&field(tag, b"\xc3"));
        }
    }

    #[test]
    fn fields_repeated_unknown_or_malformed_decode_as_prost_decodes_them() {
        let one = record("m-1").encode_to_vec();
        let cases: Vec<Vec<u8>> = vec![
            // A record's field given twice: the last one.
            field(1, &[field(1, b"first"), field(1, b"second")].concat()),
            // A batch's text given twice.
            [field(2, b"a"), field(2, b"b")].concat(),
            // Unknown fields, of every wire type, skipped.
            [field(1, &[one.clone(), vec![0x38, 0x05], field(9, b"x")].concat()), vec![0x45, 1, 2, 3, 4]].concat(),
            // A length past the end.
            vec![0x0a, 0x20, 0x0a],
            // The wrong wire type for a record, a string and the bytes.
            vec![0x08, 0x01],
            vec![0x10, 0x01],
            vec![0x0a, 0x02, 0x10, 0x01],
            vec![0x0a, 0x02, 0x28, 0x01],
            // A record cut short inside a field.
            field(1, &one[..one.len() - 3]),
            // A group that never ends.
            vec![0x0b],
            // A key of field 0.
            vec![0x02, 0x00],
        ];
        for bytes in cases {
            same_both_ways(&bytes);
        }
    }

    #[test]
    fn encoding_gives_back_the_bytes_prost_would_write() {
        let wire = batch(vec![record("m-1"), pb::ConsumerRecord::default(), record("m-3")]);
        let bytes = Bytes::from(wire.encode_to_vec());
        let mut direct = WireBatch::default();
        direct.merge(bytes.clone()).unwrap();
        assert_eq!(direct.encode_to_vec(), bytes);
        assert_eq!(direct.encoded_len(), bytes.len());
    }
}
