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

/// How each kind of field is written, read and measured, as prost's
/// generated code does it for that kind: what [`wire_message!`] is built
/// on.
pub(crate) mod field {
    use std::collections::HashMap;

    use ::bytes::{Buf, BufMut, Bytes};
    use prost::DecodeError;
    use prost::encoding::{self, DecodeContext, WireType};

    use super::Text;

    /// A `string` field held as [`Text`], left out when empty.
    pub(crate) mod text {
        use super::*;

        pub(crate) fn encode(tag: u32, text: &Text, buf: &mut impl BufMut) {
            super::super::encode(tag, text, buf);
        }

        pub(crate) fn merge(
            wire_type: WireType,
            text: &mut Text,
            buf: &mut impl Buf,
            ctx: DecodeContext,
        ) -> Result<(), DecodeError> {
            super::super::merge(wire_type, text, buf, ctx)
        }

        pub(crate) fn encoded_len(tag: u32, text: &Text) -> usize {
            super::super::encoded_len(tag, text)
        }
    }

    /// A `repeated string` field held as [`Text`]s: every value written,
    /// even an empty one.
    pub(crate) mod texts {
        use super::*;

        pub(crate) fn encode(tag: u32, texts: &[Text], buf: &mut impl BufMut) {
            for text in texts {
                encoding::bytes::encode(tag, text.as_bytes(), buf);
            }
        }

        pub(crate) fn merge(
            wire_type: WireType,
            texts: &mut Vec<Text>,
            buf: &mut impl Buf,
            ctx: DecodeContext,
        ) -> Result<(), DecodeError> {
            super::super::merge_repeated(wire_type, texts, buf, ctx)
        }

        pub(crate) fn encoded_len(tag: u32, texts: &[Text]) -> usize {
            texts.iter().map(|text| encoding::bytes::encoded_len(tag, text.as_bytes())).sum()
        }
    }

    /// A `bytes` field, left out when empty.
    pub(crate) mod bytes {
        use super::*;

        pub(crate) fn encode(tag: u32, bytes: &Bytes, buf: &mut impl BufMut) {
            super::super::encode_bytes(tag, bytes, buf);
        }

        pub(crate) fn merge(
            wire_type: WireType,
            bytes: &mut Bytes,
            buf: &mut impl Buf,
            ctx: DecodeContext,
        ) -> Result<(), DecodeError> {
            encoding::bytes::merge(wire_type, bytes, buf, ctx)
        }

        pub(crate) fn encoded_len(tag: u32, bytes: &Bytes) -> usize {
            super::super::bytes_len(tag, bytes)
        }
    }

    /// A `string` field held as a `String`, left out when empty.
    pub(crate) mod string {
        use super::*;

        pub(crate) fn encode(tag: u32, text: &String, buf: &mut impl BufMut) {
            if !text.is_empty() {
                encoding::string::encode(tag, text, buf);
            }
        }

        pub(crate) fn merge(
            wire_type: WireType,
            text: &mut String,
            buf: &mut impl Buf,
            ctx: DecodeContext,
        ) -> Result<(), DecodeError> {
            encoding::string::merge(wire_type, text, buf, ctx)
        }

        pub(crate) fn encoded_len(tag: u32, text: &String) -> usize {
            if text.is_empty() { 0 } else { encoding::string::encoded_len(tag, text) }
        }
    }

    /// A `uint64` (`u64`) or `int64` (`i64`) field, left out when zero.
    macro_rules! number {
        ($name:ident, $ty:ty) => {
            pub(crate) mod $name {
                use super::*;

                pub(crate) fn encode(tag: u32, value: &$ty, buf: &mut impl BufMut) {
                    if *value != 0 {
                        encoding::$name::encode(tag, value, buf);
                    }
                }

                pub(crate) fn merge(
                    wire_type: WireType,
                    value: &mut $ty,
                    buf: &mut impl Buf,
                    ctx: DecodeContext,
                ) -> Result<(), DecodeError> {
                    encoding::$name::merge(wire_type, value, buf, ctx)
                }

                pub(crate) fn encoded_len(tag: u32, value: &$ty) -> usize {
                    if *value == 0 { 0 } else { encoding::$name::encoded_len(tag, value) }
                }
            }
        };
    }

    number!(uint64, u64);
    number!(int64, i64);

    /// A `repeated` message field.
    pub(crate) mod messages {
        use super::*;

        pub(crate) fn encode<M: prost::Message>(tag: u32, messages: &[M], buf: &mut impl BufMut) {
            for message in messages {
                encoding::message::encode(tag, message, buf);
            }
        }

        pub(crate) fn merge<M: prost::Message + Default>(
            wire_type: WireType,
            messages: &mut Vec<M>,
            buf: &mut impl Buf,
            ctx: DecodeContext,
        ) -> Result<(), DecodeError> {
            encoding::message::merge_repeated(wire_type, messages, buf, ctx)
        }

        pub(crate) fn encoded_len<M: prost::Message>(tag: u32, messages: &[M]) -> usize {
            encoding::message::encoded_len_repeated(tag, messages)
        }
    }

    /// A `map<string, M>` field of text keys and message values.
    pub(crate) mod message_map {
        use super::*;

        pub(crate) fn encode<M: prost::Message + Default + PartialEq>(
            tag: u32,
            map: &HashMap<Text, M>,
            buf: &mut impl BufMut,
        ) {
            encoding::hash_map::encode(
                super::super::encode,
                super::super::encoded_len,
                encoding::message::encode,
                encoding::message::encoded_len,
                tag,
                map,
                buf,
            );
        }

        /// As prost's generated code merges one: the wire type checked
        /// first (a map's merge reads an entry without looking at it), then
        /// each entry.
        pub(crate) fn merge<M: prost::Message + Default>(
            wire_type: WireType,
            map: &mut HashMap<Text, M>,
            buf: &mut impl Buf,
            ctx: DecodeContext,
        ) -> Result<(), DecodeError> {
            encoding::check_wire_type(WireType::LengthDelimited, wire_type)?;
            encoding::hash_map::merge(super::super::merge, encoding::message::merge, map, buf, ctx)
        }

        pub(crate) fn encoded_len<M: prost::Message + Default + PartialEq>(tag: u32, map: &HashMap<Text, M>) -> usize {
            encoding::hash_map::encoded_len(super::super::encoded_len, encoding::message::encoded_len, tag, map)
        }
    }

    /// A `map<string, string>` field.
    pub(crate) mod string_map {
        use super::*;

        pub(crate) fn encode(tag: u32, map: &HashMap<String, String>, buf: &mut impl BufMut) {
            encoding::hash_map::encode(
                encoding::string::encode,
                encoding::string::encoded_len,
                encoding::string::encode,
                encoding::string::encoded_len,
                tag,
                map,
                buf,
            );
        }

        /// The wire type checked first, as for [`message_map`](super::message_map).
        pub(crate) fn merge(
            wire_type: WireType,
            map: &mut HashMap<String, String>,
            buf: &mut impl Buf,
            ctx: DecodeContext,
        ) -> Result<(), DecodeError> {
            encoding::check_wire_type(WireType::LengthDelimited, wire_type)?;
            encoding::hash_map::merge(encoding::string::merge, encoding::string::merge, map, buf, ctx)
        }

        pub(crate) fn encoded_len(tag: u32, map: &HashMap<String, String>) -> usize {
            encoding::hash_map::encoded_len(encoding::string::encoded_len, encoding::string::encoded_len, tag, map)
        }
    }
}

/// A prost `Message` for `$ty`, the message `$name` of the protocol, written
/// field for field as prost generates one: each field (`$tag => $field:
/// $kind`, `$kind` one of [`field`]'s; a tuple field names its protocol
/// field as `0 ("values")`) written, read and measured by its
/// kind, an error naming the message and the field as prost's does, and
/// any other field skipped, or, with `else`, handed to the message's own
/// `$other` (`fn(&mut self, tag, wire_type, buf, ctx)`), which also writes
/// and measures what it holds (`$other_encode`, `$other_len`).
macro_rules! wire_message {
    (@call $self:ident.none($buf:ident)) => {};
    (@call $self:ident.$f:ident($buf:ident)) => { $self.$f($buf) };
    (@other $self:ident.skip($tag:ident, $wire_type:ident, $buf:ident, $ctx:ident)) => {
        prost::encoding::skip_field($wire_type, $tag, $buf, $ctx)
    };
    (@other $self:ident.$f:ident($tag:ident, $wire_type:ident, $buf:ident, $ctx:ident)) => {
        $self.$f($tag, $wire_type, $buf, $ctx)
    };
    (@len $self:ident.none()) => { 0 };
    (@len $self:ident.$f:ident()) => { $self.$f() };
    (@name $field:tt $named:literal) => { $named };
    (@name $field:tt) => { stringify!($field) };
    ($ty:ty, $name:literal { $($tag:literal => $field:tt $(($named:literal))?: $kind:ident),* $(,)? }) => {
        $crate::text::proto::wire_message!($ty, $name { $($tag => $field $(($named))?: $kind),* } else skip, none, none);
    };
    ($ty:ty, $name:literal { $($tag:literal => $field:tt $(($named:literal))?: $kind:ident),* $(,)? } else $other:ident, $other_encode:ident, $other_len:ident) => {
        impl prost::Message for $ty {
            fn encode_raw(&self, buf: &mut impl ::bytes::BufMut) {
                $($crate::text::proto::field::$kind::encode($tag, &self.$field, buf);)*
                $crate::text::proto::wire_message!(@call self.$other_encode(buf));
            }

            fn merge_field(
                &mut self,
                tag: u32,
                wire_type: prost::encoding::WireType,
                buf: &mut impl ::bytes::Buf,
                ctx: prost::encoding::DecodeContext,
            ) -> Result<(), prost::DecodeError> {
                match tag {
                    $($tag => $crate::text::proto::field::$kind::merge(wire_type, &mut self.$field, buf, ctx)
                        .map_err($crate::text::proto::named($name, $crate::text::proto::wire_message!(@name $field $($named)?))),)*
                    _ => $crate::text::proto::wire_message!(@other self.$other(tag, wire_type, buf, ctx)),
                }
            }

            fn encoded_len(&self) -> usize {
                0 $(+ $crate::text::proto::field::$kind::encoded_len($tag, &self.$field))*
                    + $crate::text::proto::wire_message!(@len self.$other_len())
            }

            fn clear(&mut self) {
                *self = <$ty>::default();
            }
        }
    };
}

pub(crate) use wire_message;

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
