//! A dispatched event as the session and the driver hold it: the head of
//! its `Dispatch` (what is decided on before a handler runs) decoded, and
//! its source, the bulk of it, kept as the bytes it arrived in until the
//! handler's task decodes it.
//!
//! Decoding a source means a string per field, a map per header set, a
//! record per consumer message: dozens of allocations for a batch. Made on
//! the stream's thread and freed on a worker's, every one of them crosses
//! threads, and the allocator's lock between the two threads is then paid
//! on both. Decoded on the worker that runs the handler, they are made and
//! freed on one thread, and the stream's thread, which every event goes
//! through, spends its time on the stream.
//!
//! Decoding is the same protobuf decoding either way, with the same merge
//! rules: a source given twice with the same kind is the merge of the two,
//! as the whole `Dispatch` would be, and a source of another kind replaces
//! it.

use std::collections::HashMap;

use bytes::{Buf, BufMut, Bytes};
use celerity_proto::v1::{
    ConsumerBatch, CustomInvoke, Dispatch, HttpRequest, ScheduleTrigger, WebSocketMessage, dispatch::Source,
};
use prost::encoding::{self, DecodeContext, WireType};
use prost::{DecodeError, Message};

use crate::kind::HandlerKind;
use crate::text::proto::{self, wire_message};

/// A `Dispatch` with its source not yet decoded (see the module docs).
/// Decodes from a `Dispatch`'s bytes, and converts from a decoded one.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Event {
    /// The dispatch id.
    pub id: String,
    /// The handler tag it is for.
    pub handler_tag: String,
    /// When the runtime dispatched it (Unix ms).
    pub timestamp_ms: u64,
    /// When it is due (Unix ms); zero or less: see [`crate::session::event_deadline`].
    pub deadline_unix_ms: i64,
    /// W3C trace context.
    pub trace_context: HashMap<String, String>,
    /// The event's payload; `None` when the runtime sent none.
    pub source: Option<LazySource>,
}

/// An event's source: decoded, or the bytes of its field as they arrived.
#[derive(Debug, Clone, PartialEq)]
pub enum LazySource {
    /// Decoded already (an event built in this process, by the test kit's
    /// in-process runs or the Lambda adapter).
    Decoded(Box<Source>),
    /// As it arrived.
    Encoded(Encoded),
}

/// The source fields of a `Dispatch` as they arrived, in order: nearly
/// always one.
#[derive(Debug, Clone, PartialEq)]
pub struct Encoded {
    /// The last field: its kind, which is the source's, and its contents.
    kind: HandlerKind,
    bytes: Bytes,
    /// The fields before it, for a `Dispatch` that repeats its source: each
    /// is decoded in turn, as decoding the whole `Dispatch` would (the same
    /// kind merged, another replacing, and an error in any of them the
    /// `Dispatch`'s).
    earlier: Vec<(HandlerKind, Bytes)>,
}

/// The field number of each kind's source in `Dispatch.source`.
const SOURCE_FIELDS: [(HandlerKind, u32); 5] = [
    (HandlerKind::Http, 10),
    (HandlerKind::WebSocket, 11),
    (HandlerKind::Consumer, 12),
    (HandlerKind::Schedule, 13),
    (HandlerKind::Custom, 14),
];

/// The kind whose source is field `field` of `Dispatch`, if any is.
fn source_kind(field: u32) -> Option<HandlerKind> {
    SOURCE_FIELDS.iter().find(|(_, number)| *number == field).map(|(kind, _)| *kind)
}

/// The field of `Dispatch` that holds a source of `kind` (every kind is in
/// the table).
fn source_field(kind: HandlerKind) -> u32 {
    SOURCE_FIELDS.iter().find(|(of, _)| *of == kind).map_or(0, |(_, field)| *field)
}

impl LazySource {
    /// A source of `kind` as the bytes of its message, as the driver's
    /// decoder keeps one.
    pub fn encoded(kind: HandlerKind, bytes: Bytes) -> LazySource {
        LazySource::Encoded(Encoded { kind, bytes, earlier: Vec::new() })
    }

    /// The kind of handler that takes this source.
    pub fn kind(&self) -> HandlerKind {
        match self {
            LazySource::Decoded(source) => HandlerKind::of_source(source),
            LazySource::Encoded(encoded) => encoded.kind,
        }
    }

    /// The decoded source, or why it does not decode (naming the field, in
    /// the words decoding the whole `Dispatch` would use).
    pub fn decode(self) -> Result<Source, DecodeError> {
        let encoded = match self {
            LazySource::Decoded(source) => return Ok(*source),
            LazySource::Encoded(encoded) => encoded,
        };
        let Encoded { kind, bytes, earlier } = encoded;
        let mut source = None;
        for (kind, bytes) in earlier {
            source = Some(merged(source, kind, bytes)?);
        }
        merged(source, kind, bytes)
    }

    /// The kind and the bytes of a source that arrived as one field and is
    /// not decoded yet, for a decoder of the SDK's own (`consumer::wire`,
    /// `http::wire`); any other source given back.
    pub fn into_single(self) -> Result<(HandlerKind, Bytes), LazySource> {
        match self {
            LazySource::Encoded(Encoded { kind, bytes, earlier }) if earlier.is_empty() => Ok((kind, bytes)),
            other => Err(other),
        }
    }

    /// How many records a consumer batch holds, without decoding them;
    /// `None` for any other source.
    pub fn records(&self) -> Option<usize> {
        match self {
            LazySource::Decoded(source) => match source.as_ref() {
                Source::Consumer(batch) => Some(batch.records.len()),
                _ => None,
            },
            LazySource::Encoded(Encoded { kind: HandlerKind::Consumer, bytes, earlier }) => {
                // The batch is the merge of the trailing run of consumer
                // fields; those before another kind were replaced.
                let run = earlier.iter().rev().take_while(|(kind, _)| *kind == HandlerKind::Consumer);
                Some(count_field(bytes, RECORDS_FIELD) + run.map(|(_, b)| count_field(b, RECORDS_FIELD)).sum::<usize>())
            }
            LazySource::Encoded(_) => None,
        }
    }
}

/// `source` with a source field of `kind` (its contents, `bytes`) decoded
/// onto it, as prost decodes a oneof: merged into a source of the same
/// kind, replacing one of another; an error names the field as decoding
/// the whole `Dispatch` would.
fn merged(source: Option<Source>, kind: HandlerKind, bytes: Bytes) -> Result<Source, DecodeError> {
    let merged = match (source, kind) {
        (Some(Source::Http(mut message)), HandlerKind::Http) => message.merge(bytes).map(|()| Source::Http(message)),
        (Some(Source::Websocket(mut message)), HandlerKind::WebSocket) => {
            message.merge(bytes).map(|()| Source::Websocket(message))
        }
        (Some(Source::Consumer(mut message)), HandlerKind::Consumer) => {
            message.merge(bytes).map(|()| Source::Consumer(message))
        }
        (Some(Source::Schedule(mut message)), HandlerKind::Schedule) => {
            message.merge(bytes).map(|()| Source::Schedule(message))
        }
        (Some(Source::Custom(mut message)), HandlerKind::Custom) => {
            message.merge(bytes).map(|()| Source::Custom(message))
        }
        (_, HandlerKind::Http) => HttpRequest::decode(bytes).map(Source::Http),
        (_, HandlerKind::WebSocket) => WebSocketMessage::decode(bytes).map(Source::Websocket),
        (_, HandlerKind::Consumer) => {
            // Room for the records made first, counted where they lie, so
            // that decoding does not grow the vector record by record. As
            // `decode` is a merge into an empty message, it is the same
            // decoding; a count past the cap grows as before beyond it.
            let mut batch =
                ConsumerBatch { records: Vec::with_capacity(record_room(&bytes)), ..ConsumerBatch::default() };
            batch.merge(bytes).map(|()| Source::Consumer(batch))
        }
        (_, HandlerKind::Schedule) => ScheduleTrigger::decode(bytes).map(Source::Schedule),
        (_, HandlerKind::Custom) => CustomInvoke::decode(bytes).map(Source::Custom),
    };
    merged.map_err(in_source)
}

/// `error`, from decoding a source, as decoding the whole `Dispatch` names
/// it.
pub(crate) fn in_source(error: DecodeError) -> DecodeError {
    proto::named("Dispatch", "source")(error)
}

/// How many records to make room for before decoding the consumer batch
/// `bytes`: as many as it holds, up to a cap.
pub(crate) fn record_room(bytes: &[u8]) -> usize {
    count_field(bytes, RECORDS_FIELD).min(MAX_RESERVED_RECORDS)
}

/// `ConsumerBatch.records`.
const RECORDS_FIELD: u32 = 1;

/// The most records room is made for before a batch is decoded: under a
/// megabyte, whatever a hostile batch of empty records counts.
const MAX_RESERVED_RECORDS: usize = 4096;

/// How many times field `wanted` occurs in the message `buf`, counting up
/// to where it stops being readable.
fn count_field(mut buf: &[u8], wanted: u32) -> usize {
    let mut count = 0;
    while buf.has_remaining() {
        let Ok((field, wire_type)) = encoding::decode_key(&mut buf) else { break };
        if field == wanted {
            count += 1;
        }
        if encoding::skip_field(wire_type, field, &mut buf, DecodeContext::default()).is_err() {
            break;
        }
    }
    count
}

impl From<Dispatch> for Event {
    fn from(dispatch: Dispatch) -> Self {
        Event {
            id: dispatch.id,
            handler_tag: dispatch.handler_tag,
            timestamp_ms: dispatch.timestamp_ms,
            deadline_unix_ms: dispatch.deadline_unix_ms,
            trace_context: dispatch.trace_context,
            source: dispatch.source.map(|source| LazySource::Decoded(Box::new(source))),
        }
    }
}

// `Event` is decoded as `Dispatch` is, field for field, but for its
// source; and encoded as the `Dispatch` it stands for.
wire_message!(Event, "Dispatch" {
    1 => id: string,
    2 => handler_tag: string,
    3 => timestamp_ms: uint64,
    4 => deadline_unix_ms: int64,
    5 => trace_context: string_map,
} else merge_source, encode_source, source_len);

impl Event {
    /// A source field, kept as its bytes in order, to be decoded as the
    /// whole `Dispatch` would be (see `Encoded::earlier`); any other field
    /// skipped.
    fn merge_source(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        let Some(kind) = source_kind(tag) else {
            return encoding::skip_field(wire_type, tag, buf, ctx);
        };
        let mut bytes = Bytes::new();
        encoding::bytes::merge(wire_type, &mut bytes, buf, ctx).map_err(proto::named("Dispatch", "source"))?;
        self.source = Some(LazySource::Encoded(match self.source.take() {
            Some(LazySource::Encoded(mut encoded)) => {
                let last = std::mem::replace(&mut encoded.bytes, bytes);
                encoded.earlier.push((std::mem::replace(&mut encoded.kind, kind), last));
                encoded
            }
            _ => Encoded { kind, bytes, earlier: Vec::new() },
        }));
        Ok(())
    }

    fn encode_source(&self, buf: &mut impl BufMut) {
        match &self.source {
            Some(LazySource::Decoded(source)) => source.encode(buf),
            Some(LazySource::Encoded(encoded)) => {
                for (kind, bytes) in &encoded.earlier {
                    encoding::bytes::encode(source_field(*kind), bytes, buf);
                }
                encoding::bytes::encode(source_field(encoded.kind), &encoded.bytes, buf);
            }
            None => {}
        }
    }

    fn source_len(&self) -> usize {
        match &self.source {
            Some(LazySource::Decoded(source)) => source.encoded_len(),
            Some(LazySource::Encoded(encoded)) => {
                let len = |kind: HandlerKind, bytes: &Bytes| encoding::bytes::encoded_len(source_field(kind), bytes);
                encoded.earlier.iter().map(|(kind, bytes)| len(*kind, bytes)).sum::<usize>()
                    + len(encoded.kind, &encoded.bytes)
            }
            None => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use celerity_proto::v1 as pb;

    use super::*;

    fn dispatch(source: Source) -> Dispatch {
        Dispatch {
            id: "e-1".into(),
            handler_tag: "GET::/a".into(),
            timestamp_ms: 17,
            deadline_unix_ms: 99,
            trace_context: HashMap::from([("traceparent".to_string(), "00-aa-bb-01".to_string())]),
            source: Some(source),
        }
    }

    fn sources() -> Vec<Source> {
        vec![
            Source::Http(HttpRequest {
                path: "/a".into(),
                headers: HashMap::from([("accept".to_string(), pb::Values { values: vec!["*/*".into()] })]),
                body: Bytes::from_static(b"{}"),
                ..Default::default()
            }),
            Source::Websocket(WebSocketMessage { connection_id: "c".into(), ..Default::default() }),
            Source::Consumer(ConsumerBatch {
                records: vec![
                    pb::ConsumerRecord { message_id: "m1".into(), ..Default::default() },
                    pb::ConsumerRecord {
                        message_id: "m2".into(),
                        body: Bytes::from_static(b"x"),
                        ..Default::default()
                    },
                ],
                ..Default::default()
            }),
            Source::Schedule(ScheduleTrigger { schedule_id: "nightly".into(), ..Default::default() }),
            Source::Custom(CustomInvoke { input: Bytes::from_static(b"p"), ..Default::default() }),
        ]
    }

    #[test]
    fn every_source_decodes_later_to_what_the_whole_dispatch_decodes_to() {
        for source in sources() {
            let whole = dispatch(source.clone());
            let mut event = Event::decode(whole.encode_to_vec().as_slice()).unwrap();
            let payload = event.source.take().unwrap();
            assert!(matches!(payload, LazySource::Encoded(_)), "kept encoded");
            assert_eq!(payload.kind(), HandlerKind::of_source(&source));
            assert_eq!(payload.records(), LazySource::Decoded(Box::new(source.clone())).records());
            assert_eq!(payload.decode().unwrap(), source);
            let Dispatch { id, handler_tag, timestamp_ms, deadline_unix_ms, trace_context, .. } = whole;
            assert_eq!(event, Event { id, handler_tag, timestamp_ms, deadline_unix_ms, trace_context, source: None });
        }
    }

    #[test]
    fn an_event_encodes_as_its_dispatch_both_ways() {
        for source in sources() {
            let whole = dispatch(source);
            let bytes = whole.encode_to_vec();
            let lazy = Event::decode(bytes.as_slice()).unwrap();
            assert_eq!(lazy.encoded_len(), bytes.len());
            assert_eq!(Dispatch::decode(lazy.encode_to_vec().as_slice()).unwrap(), whole);
            let decoded = Event::from(whole.clone());
            assert_eq!(Dispatch::decode(decoded.encode_to_vec().as_slice()).unwrap(), whole);
        }
    }

    #[test]
    fn a_source_given_twice_merges_as_the_whole_dispatch_would() {
        let first =
            dispatch(Source::Http(HttpRequest { path: "/a".into(), method: "GET".into(), ..Default::default() }));
        let second = Dispatch {
            source: Some(Source::Http(HttpRequest { path: "/b".into(), ..Default::default() })),
            ..Default::default()
        };
        let mut bytes = first.encode_to_vec();
        bytes.extend(second.encode_to_vec());
        let whole = Dispatch::decode(bytes.as_slice()).unwrap();
        let lazy = Event::decode(bytes.as_slice()).unwrap();
        assert_eq!(lazy.source.unwrap().decode().unwrap(), whole.source.clone().unwrap());
        // A source of another kind replaces it.
        let other = Dispatch { source: Some(Source::Custom(CustomInvoke::default())), ..Default::default() };
        bytes.extend(other.encode_to_vec());
        let whole = Dispatch::decode(bytes.as_slice()).unwrap();
        let lazy = Event::decode(bytes.as_slice()).unwrap();
        assert_eq!(lazy.source.unwrap().decode().unwrap(), whole.source.unwrap());
    }

    #[test]
    fn a_source_that_does_not_decode_fails_even_when_another_kind_replaces_it() {
        let mut bytes =
            dispatch(Source::Http(HttpRequest { path: "/orders".into(), ..Default::default() })).encode_to_vec();
        let at = bytes.windows(7).position(|w| w == b"/orders").unwrap();
        bytes[at + 1] = 0xff;
        let other = Dispatch { source: Some(Source::Custom(CustomInvoke::default())), ..Default::default() };
        bytes.extend(other.encode_to_vec());
        let whole = Dispatch::decode(bytes.as_slice()).unwrap_err().to_string();
        let lazy = Event::decode(bytes.as_slice()).unwrap().source.unwrap();
        assert_eq!(lazy.kind(), HandlerKind::Custom, "the last field decides the kind");
        assert_eq!(lazy.decode().unwrap_err().to_string(), whole);
    }

    #[test]
    fn a_source_given_many_times_is_the_merge_of_them_all() {
        let mut bytes = Vec::new();
        for i in 0..2_000 {
            let part = Dispatch {
                source: Some(Source::Consumer(ConsumerBatch {
                    records: vec![pb::ConsumerRecord { message_id: format!("m{i}"), ..Default::default() }],
                    ..Default::default()
                })),
                ..Default::default()
            };
            bytes.extend(part.encode_to_vec());
        }
        let whole = Dispatch::decode(bytes.as_slice()).unwrap();
        let lazy = Event::decode(bytes::Bytes::from(bytes)).unwrap().source.unwrap();
        assert_eq!(lazy.records(), Some(2_000));
        assert_eq!(lazy.decode().unwrap(), whole.source.unwrap());
    }

    #[test]
    fn a_source_that_does_not_decode_names_its_field_when_it_is_decoded() {
        let whole = dispatch(Source::Http(HttpRequest { path: "/orders".into(), ..Default::default() }));
        let mut bytes = whole.encode_to_vec();
        let at = bytes.windows(7).position(|w| w == b"/orders").unwrap();
        bytes[at + 1] = 0xff;
        let whole_error = Dispatch::decode(bytes.as_slice()).unwrap_err().to_string();
        let event = Event::decode(bytes.as_slice()).expect("the head still decodes");
        assert_eq!(event.id, "e-1");
        let error = event.source.unwrap().decode().unwrap_err().to_string();
        assert!(error.contains("HttpRequest.path"), "{error}");
        assert_eq!(error, whole_error, "the same words as decoding it whole");
    }

    #[test]
    fn a_head_that_does_not_decode_is_refused_naming_its_field() {
        let whole = dispatch(Source::Custom(CustomInvoke::default()));
        let mut bytes = whole.encode_to_vec();
        let at = bytes.windows(3).position(|w| w == b"e-1").unwrap();
        bytes[at] = 0xff;
        let error = Event::decode(bytes.as_slice()).unwrap_err().to_string();
        assert!(error.contains("Dispatch.id"), "{error}");
    }

    #[test]
    fn every_kind_has_its_source_field_and_back() {
        for source in sources() {
            let kind = HandlerKind::of_source(&source);
            let field = source_field(kind);
            assert_eq!(source_kind(field), Some(kind));
            let dispatch = Dispatch { source: Some(source), ..Default::default() }.encode_to_vec();
            let (tag, _) = encoding::decode_key(&mut dispatch.as_slice()).unwrap();
            assert_eq!(tag, field, "the field the proto puts a {kind:?} source in");
        }
        assert_eq!(source_kind(5), None);
    }

    #[test]
    fn records_are_counted_without_being_decoded() {
        let batch = ConsumerBatch {
            records: (0..250)
                .map(|i| pb::ConsumerRecord { message_id: format!("m{i}"), ..Default::default() })
                .collect(),
            ..Default::default()
        };
        let payload = LazySource::encoded(HandlerKind::Consumer, batch.encode_to_vec().into());
        assert_eq!(payload.records(), Some(250));
        let http = LazySource::encoded(HandlerKind::Http, HttpRequest::default().encode_to_vec().into());
        assert_eq!(http.records(), None);
    }
}
