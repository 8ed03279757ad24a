//! What can still be read of a frame that did not decode: which kind of
//! frame it is and, for a `Dispatch`, its id and tag.
//!
//! A frame fails to decode as a whole when any field in it is malformed (a
//! string that is not UTF-8, a truncated message), but the fields before the
//! fault are usually intact. A `Dispatch` whose id can still be read can be
//! answered, which returns the place it took in the credit window. This is a
//! scan of the protobuf wire format by hand, bounded by the frame and never
//! failing on any input: where it cannot go on, it stops with what it has.
//!
//! Field numbers are those of `runtime.proto`: the `frame` oneof of
//! `RuntimeMessage` is fields 1 to 6, and `Dispatch` has its `id` in field 1
//! and its `handler_tag` in field 2.

/// The kinds of frame the runtime sends, by their field number in the
/// `RuntimeMessage.frame` oneof.
const FRAME_KINDS: [&str; 6] = ["RuntimeConfig", "ReadyAck", "Dispatch", "Cancel", "Drain", "WsSendAck"];

/// `RuntimeMessage.frame`'s field number for a `Dispatch`.
const DISPATCH_FIELD: u64 = 3;
/// `Dispatch.id`.
const ID_FIELD: u64 = 1;
/// `Dispatch.handler_tag`.
const TAG_FIELD: u64 = 2;

/// The protobuf wire types used here.
const VARINT: u64 = 0;
const FIXED64: u64 = 1;
const LENGTH_DELIMITED: u64 = 2;
const FIXED32: u64 = 5;

/// What a scan read of an undecodable frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Salvaged<'a> {
    /// The frame's kind (`"Dispatch"`, ...), when its oneof field was read.
    pub kind: Option<&'static str>,
    /// For a `Dispatch`: the bytes of its id, when that field was read whole.
    pub id: Option<&'a [u8]>,
    /// For a `Dispatch`: the bytes of its tag, when that field was read whole.
    pub tag: Option<&'a [u8]>,
}

/// Reads what it can of `frame`, an encoded `RuntimeMessage`.
pub(crate) fn salvage(frame: &[u8]) -> Salvaged<'_> {
    let mut salvaged = Salvaged::default();
    // The last field of the oneof is the one a decoder keeps; its body may
    // be cut short by the end of the frame, and is then read as far as it
    // goes.
    let mut dispatch: Option<&[u8]> = None;
    for field in Fields::new(frame) {
        if field.wire_type != LENGTH_DELIMITED {
            continue;
        }
        if let Some(&kind) = field.number.checked_sub(1).and_then(|i| FRAME_KINDS.get(i as usize)) {
            salvaged.kind = Some(kind);
            dispatch = (field.number == DISPATCH_FIELD).then_some(field.body);
        }
    }
    if let Some(body) = dispatch {
        // Only fields read whole: a string cut short is not the one sent.
        for field in Fields::new(body).filter(|f| f.wire_type == LENGTH_DELIMITED && f.whole) {
            match field.number {
                ID_FIELD => salvaged.id = Some(field.body),
                TAG_FIELD => salvaged.tag = Some(field.body),
                _ => {}
            }
        }
    }
    salvaged
}

/// One field of a message on the wire.
struct Field<'a> {
    number: u64,
    wire_type: u64,
    /// A length-delimited field's bytes (as many as the message holds);
    /// empty for the other wire types.
    body: &'a [u8],
    /// Whether the body is as long as its length said.
    whole: bool,
}

/// The fields of a message, in order, up to the first one that cannot be
/// read (a malformed key or length, a group, or the end of the bytes). A
/// length-delimited field whose length runs past the end is the last one,
/// with the bytes that are there.
struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Fields { rest: bytes }
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Field<'a>;

    fn next(&mut self) -> Option<Field<'a>> {
        let key = varint(&mut self.rest)?;
        let (number, wire_type) = (key >> 3, key & 7);
        if number == 0 {
            self.rest = &[];
            return None;
        }
        let skip = match wire_type {
            VARINT => {
                varint(&mut self.rest)?;
                0
            }
            FIXED64 => 8,
            FIXED32 => 4,
            LENGTH_DELIMITED => {
                let len = varint(&mut self.rest)?;
                let len = usize::try_from(len).unwrap_or(usize::MAX);
                let whole = len <= self.rest.len();
                let (body, rest) = self.rest.split_at(len.min(self.rest.len()));
                self.rest = if whole { rest } else { &[] };
                return Some(Field { number, wire_type, body, whole });
            }
            // Groups (3, 4) are not used by this protocol, and 6 and 7 are
            // not wire types: nothing after them can be told apart.
            _ => {
                self.rest = &[];
                return None;
            }
        };
        if skip > self.rest.len() {
            self.rest = &[];
            return None;
        }
        self.rest = &self.rest[skip..];
        Some(Field { number, wire_type, body: &[], whole: true })
    }
}

/// Takes a varint off the front of `bytes`: at most ten bytes, the last of
/// them without its continuation bit. `None`, with `bytes` emptied, when
/// there is none.
fn varint(bytes: &mut &[u8]) -> Option<u64> {
    let mut value: u64 = 0;
    for (i, &byte) in bytes.iter().enumerate().take(10) {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            *bytes = &bytes[i + 1..];
            return Some(value);
        }
    }
    *bytes = &[];
    None
}

#[cfg(test)]
mod tests {
    use celerity_proto::v1::{self as pb, RuntimeMessage, runtime_message};
    use proptest::prelude::*;
    use prost::Message as _;

    use super::*;

    fn dispatch(id: &str, tag: &str, path: &str) -> Vec<u8> {
        RuntimeMessage {
            frame: Some(runtime_message::Frame::Dispatch(pb::Dispatch {
                id: id.to_string(),
                handler_tag: tag.to_string(),
                deadline_unix_ms: 5,
                source: Some(pb::dispatch::Source::Http(pb::HttpRequest {
                    path: path.to_string(),
                    ..Default::default()
                })),
                ..Default::default()
            })),
        }
        .encode_to_vec()
    }

    /// Replaces the first occurrence of `from` in `bytes` with `to`, of the
    /// same length.
    fn patch(mut bytes: Vec<u8>, from: &[u8], to: &[u8]) -> Vec<u8> {
        let at = bytes.windows(from.len()).position(|w| w == from).expect("the bytes to patch");
        bytes[at..at + to.len()].copy_from_slice(to);
        bytes
    }

    #[test]
    fn a_dispatch_with_a_bad_string_still_gives_its_id_and_tag() {
        let frame = patch(dispatch("evt-1", "GET::/a", "/xyz"), b"/xyz", b"/\xff\xfez");
        assert!(RuntimeMessage::decode(frame.as_slice()).is_err());
        let salvaged = salvage(&frame);
        assert_eq!(salvaged.kind, Some("Dispatch"));
        assert_eq!(salvaged.id, Some(&b"evt-1"[..]));
        assert_eq!(salvaged.tag, Some(&b"GET::/a"[..]));
    }

    #[test]
    fn a_truncated_dispatch_gives_the_fields_read_whole() {
        let frame = dispatch("evt-2", "GET::/a", "/path");
        // Cut inside the tag: the id was read whole, the tag was not.
        let at = frame.windows(3).position(|w| w == b"GET").unwrap() + 2;
        let salvaged = salvage(&frame[..at]);
        assert_eq!(salvaged.kind, Some("Dispatch"));
        assert_eq!(salvaged.id, Some(&b"evt-2"[..]));
        assert_eq!(salvaged.tag, None);
    }

    #[test]
    fn other_frames_give_their_kind_and_nothing_else() {
        let cancel = RuntimeMessage {
            frame: Some(runtime_message::Frame::Cancel(pb::Cancel { id: "evt-3".into(), reason: 1 })),
        }
        .encode_to_vec();
        assert_eq!(salvage(&cancel), Salvaged { kind: Some("Cancel"), id: None, tag: None });
        assert_eq!(salvage(&[]), Salvaged::default());
        assert_eq!(salvage(&[0xff; 16]), Salvaged::default());
        // Field 0 is no field.
        assert_eq!(salvage(&[0x02, 0x00]), Salvaged::default());
    }

    #[test]
    fn a_length_past_the_end_is_read_as_far_as_it_goes() {
        // Field 3 (Dispatch), length 100, holding only its id.
        let frame = [0x1a, 100, 0x0a, 0x01, b'x'];
        let salvaged = salvage(&frame);
        assert_eq!((salvaged.kind, salvaged.id), (Some("Dispatch"), Some(&b"x"[..])));
        // A length that overflows any buffer.
        let frame = [0x1a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(salvage(&frame).kind, Some("Dispatch"));
    }

    proptest! {
        #[test]
        fn any_bytes_are_scanned_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let salvaged = salvage(&bytes);
            for part in [salvaged.id, salvaged.tag].into_iter().flatten() {
                prop_assert!(part.len() <= bytes.len());
            }
        }

        #[test]
        fn a_decodable_dispatch_gives_the_id_prost_reads(id in "\\PC{0,40}", tag in "[A-Z]{1,6}::/[a-z]{0,10}") {
            let frame = dispatch(&id, &tag, "/p");
            let salvaged = salvage(&frame);
            prop_assert_eq!(salvaged.kind, Some("Dispatch"));
            // An empty string is not written on the wire at all.
            prop_assert_eq!(salvaged.id, (!id.is_empty()).then_some(id.as_bytes()));
            prop_assert_eq!(salvaged.tag, Some(tag.as_bytes()));
        }
    }
}
