//! Protobuf fields as [`Text`]: a `string` field decoded as prost decodes
//! one, into the thread's arena rather than a `String` of its own, and
//! encoded as prost writes one. The SDK's own decoders of hot messages
//! (`consumer::wire`, `http::wire`) are written on these and on prost's own
//! primitives, field for field as prost generates them.

use bytes::{Buf, BufMut, Bytes};
use prost::DecodeError;
use prost::encoding::{self, DecodeContext, WireType};

use super::Text;

/// Merges a `string` field into `value` as `encoding::string::merge`
/// does, copying the text into the thread's arena ([`Text::copied`])
/// rather than into a `String` of its own.
///
/// When the whole field lies in the buffer's first chunk (always, for a
/// frame's bytes) and is UTF-8, it is read here, taking exactly what prost
/// would take. Anything else (another wire type, a length past the end, a
/// varint that does not decode, text that is not UTF-8, a buffer in
/// pieces) goes to prost's own decoding of a string, for its result and
/// its error.
pub(crate) fn merge(
    wire_type: WireType,
    value: &mut Text,
    buf: &mut impl Buf,
    ctx: DecodeContext,
) -> Result<(), DecodeError> {
    if wire_type == WireType::LengthDelimited {
        let chunk = buf.chunk();
        let mut rest = chunk;
        if let Ok(len) = encoding::decode_varint(&mut rest)
            && let Some(field) = usize::try_from(len).ok().and_then(|len| rest.get(..len))
            && let Some(text) = utf8(field)
        {
            *value = Text::copied(text);
            let taken = chunk.len() - rest.len() + field.len();
            buf.advance(taken);
            return Ok(());
        }
    }
    let mut text = String::new();
    let merged = encoding::string::merge(wire_type, &mut text, buf, ctx);
    // Empty after an error, as prost leaves a string.
    *value = Text::from(text);
    merged
}

/// `bytes` as text, when they are UTF-8. Record ids, sources and event
/// types are nearly always ASCII, which is checked a word at a time, far
/// faster than UTF-8 is for short text.
fn utf8(bytes: &[u8]) -> Option<&str> {
    if bytes.is_ascii() {
        // SAFETY: ASCII is UTF-8.
        return Some(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    std::str::from_utf8(bytes).ok()
}

/// Merges one value of a `repeated string` field into `values`, as
/// `encoding::string::merge_repeated` does.
pub(crate) fn merge_repeated(
    wire_type: WireType,
    values: &mut Vec<Text>,
    buf: &mut impl Buf,
    ctx: DecodeContext,
) -> Result<(), DecodeError> {
    encoding::check_wire_type(WireType::LengthDelimited, wire_type)?;
    let mut value = Text::default();
    merge(wire_type, &mut value, buf, ctx)?;
    values.push(value);
    Ok(())
}

/// What prost's generated `merge_field` does with an error: names the field.
pub(crate) fn named(message: &'static str, field: &'static str) -> impl FnOnce(DecodeError) -> DecodeError {
    move |mut error| {
        error.push(message, field);
        error
    }
}

/// A `bytes` field, left out when empty as proto3 leaves it.
pub(crate) fn encode_bytes(tag: u32, bytes: &Bytes, buf: &mut impl BufMut) {
    if !bytes.is_empty() {
        encoding::bytes::encode(tag, bytes, buf);
    }
}

pub(crate) fn bytes_len(tag: u32, bytes: &Bytes) -> usize {
    if bytes.is_empty() { 0 } else { encoding::bytes::encoded_len(tag, bytes) }
}

/// A `string` field: on the wire, a `bytes` field of UTF-8.
pub(crate) fn encode(tag: u32, text: &Text, buf: &mut impl BufMut) {
    encode_bytes(tag, text.as_bytes(), buf);
}

pub(crate) fn encoded_len(tag: u32, text: &Text) -> usize {
    bytes_len(tag, text.as_bytes())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A length-delimited field, for the decoders' tests.
    pub(crate) fn field(tag: u32, contents: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        encoding::bytes::encode(tag, &Bytes::copy_from_slice(contents), &mut out);
        out
    }
}
