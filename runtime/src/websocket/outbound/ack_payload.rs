//! Asking a client for an acknowledgement in a text message's payload: the
//! JSON object gets `"messageId"` and `"ack": true`, written into the text
//! without parsing it into a tree, and a `"messageId"` already there is read
//! and kept.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::{OutboundError, generate_id};
use crate::json::json_kind;

/// The non-empty string `"messageId"` of a JSON object text, if it has one.
pub(super) fn json_message_id(text: &str) -> Option<String> {
    match object_message_id(text) {
        Some(id) => id.filter(|id| !id.is_empty()).map(Cow::into_owned),
        // Not an object whose id is absent or a string, or one with an id
        // that is not a string before the last: read as a `Value` to be sure.
        None => match serde_json::from_str::<Value>(text).ok()? {
            Value::Object(mut object) => match object.remove("messageId")? {
                Value::String(id) if !id.is_empty() => Some(id),
                _ => None,
            },
            _ => None,
        },
    }
}

/// Asks the client to acknowledge a JSON object text: top-level `"messageId"`
/// and `"ack": true`. Returns the new text (`None` when the text already asks)
/// and the id.
///
/// The text is edited in place rather than parsed and serialised again, so
/// key order, whitespace and number formatting survive: a round trip through
/// `serde_json::Value` would sort the keys and round integers beyond 64 bits.
pub(super) fn add_ack_request(text: &str, chosen: String) -> Result<(Option<Vec<u8>>, String), OutboundError> {
    let in_payload = match object_message_id(text) {
        Some(id) => id.unwrap_or_default(),
        // Whatever is wrong, reading the text as a `Value` says what.
        None => Cow::Owned(payload_message_id(text)?),
    };
    let id = match (chosen.is_empty(), in_payload.is_empty()) {
        (false, false) if chosen != *in_payload => {
            return Err(OutboundError::MessageIdConflict { message_id: chosen, in_payload: in_payload.into_owned() });
        }
        (false, _) => chosen,
        (true, false) => in_payload.into_owned(),
        (true, true) => generate_id(),
    };
    let rewritten = set_ack_keys(text, &id).ok_or_else(|| OutboundError::NotJsonObject {
        // Unreachable for text serde_json accepted as an object; reported
        // rather than panicking should the two ever disagree.
        found: "JSON the SDK could not rewrite".to_owned(),
    })?;
    Ok((rewritten, id))
}

/// The top-level `"messageId"` of a JSON object text, read into a `Value`
/// (empty when there is none), or why `wait_for_ack` cannot use the text.
pub(super) fn payload_message_id(text: &str) -> Result<String, OutboundError> {
    let value: Value = serde_json::from_str(text)
        .map_err(|error| OutboundError::NotJsonObject { found: format!("not valid JSON ({error})") })?;
    let Value::Object(mut object) = value else {
        return Err(OutboundError::NotJsonObject { found: json_kind(&value).to_owned() });
    };
    // serde_json keeps the last of duplicate keys, as JavaScript does.
    match object.remove("messageId") {
        None => Ok(String::new()),
        Some(Value::String(id)) => Ok(id),
        Some(other) => Err(OutboundError::MessageIdNotString { found: json_kind(&other) }),
    }
}

/// The top-level `"messageId"` of a JSON object text, read as strictly as
/// reading the text into a `Value` would but without building one: an
/// object's keys and values are checked and dropped as they are read.
///
/// `Some(None)` where the object has no `"messageId"`, `Some(Some(id))` where
/// it is a string (the last, of duplicates, as `Value` keeps). `None` where
/// the text is not JSON, is not an object, or has a `"messageId"` that is not
/// a string: reading it into a `Value` then says which.
pub(super) fn object_message_id(text: &str) -> Option<Option<Cow<'_, str>>> {
    serde_json::from_str::<ObjectMessageId<'_>>(text).ok().map(|ObjectMessageId(id)| id)
}

/// What [`object_message_id`] reads.
pub(super) struct ObjectMessageId<'a>(Option<Cow<'a, str>>);

impl<'de> Deserialize<'de> for ObjectMessageId<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;

        impl<'de> Visitor<'de> for Members {
            type Value = ObjectMessageId<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut id = None;
                while let Some(IsMessageId(is_id)) = map.next_key()? {
                    if is_id {
                        id = Some(map.next_value::<JsonString<'de>>()?.0);
                    } else {
                        map.next_value::<Checked>()?;
                    }
                }
                Ok(ObjectMessageId(id))
            }
        }

        deserializer.deserialize_map(Members)
    }
}

/// An object key, read only to see whether it is `"messageId"`.
pub(super) struct IsMessageId(bool);

impl<'de> Deserialize<'de> for IsMessageId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Key;

        impl Visitor<'_> for Key {
            type Value = IsMessageId;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }

            fn visit_str<E: de::Error>(self, key: &str) -> Result<IsMessageId, E> {
                Ok(IsMessageId(key == "messageId"))
            }
        }

        deserializer.deserialize_str(Key)
    }
}

/// A JSON string, borrowed from the text where it has no escapes.
pub(super) struct JsonString<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for JsonString<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text;

        impl<'de> Visitor<'de> for Text {
            type Value = JsonString<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(JsonString(Cow::Borrowed(text)))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Ok(JsonString(Cow::Owned(text.to_owned())))
            }

            fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
                Ok(JsonString(Cow::Owned(text)))
            }
        }

        deserializer.deserialize_str(Text)
    }
}

/// Any JSON value, read through serde_json's `deserialize_any` exactly as a
/// `Value` is (same numbers, strings, escapes and nesting limit), and
/// dropped. Not `serde::de::IgnoredAny`, which serde_json skips more
/// leniently: it takes `1e999`, which a `Value` refuses.
pub(super) struct Checked;

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Any;

        impl<'de> Visitor<'de> for Any {
            type Value = Checked;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }

            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Checked, E> {
                Ok(Checked)
            }

            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Checked, E> {
                Ok(Checked)
            }

            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Checked, E> {
                Ok(Checked)
            }

            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Checked, E> {
                Ok(Checked)
            }

            fn visit_str<E: de::Error>(self, _: &str) -> Result<Checked, E> {
                Ok(Checked)
            }

            fn visit_unit<E: de::Error>(self) -> Result<Checked, E> {
                Ok(Checked)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
                while seq.next_element::<Checked>()?.is_some() {}
                Ok(Checked)
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
                while map.next_entry::<Checked, Checked>()?.is_some() {}
                Ok(Checked)
            }
        }

        deserializer.deserialize_any(Any)
    }
}

/// Sets every top-level `"messageId"` to `id` and every `"ack"` to `true` in
/// a JSON object text, adding either where missing. `None` if the text is not
/// an object after all; `Some(None)` if it needed no change.
pub(super) fn set_ack_keys(text: &str, id: &str) -> Option<Option<Vec<u8>>> {
    // Members whose value is replaced, in text order: with the id (`true`)
    // or with `true` (`false`). Allocated only when the text has either key.
    let mut edits: Vec<(Range<usize>, bool)> = Vec::new();
    let (mut has_members, mut has_id, mut has_ack) = (false, false, false);
    let insert_at = object_members(text, |member| {
        has_members = true;
        let key = text.get(member.key.clone())?;
        let value = text.get(member.value.clone())?;
        if json_string_is(key, "messageId")? {
            has_id = true;
            // Compared as JSON: an id written with escapes is still the id.
            if json_string_is(value, id) != Some(true) {
                edits.push((member.value, true));
            }
        } else if json_string_is(key, "ack")? {
            has_ack = true;
            if value != "true" {
                edits.push((member.value, false));
            }
        }
        Some(())
    })?;
    if edits.is_empty() && has_id && has_ack {
        return Some(None);
    }

    let mut out = Vec::with_capacity(text.len() + (edits.len() + 1) * (id.len() + 2) + 24);
    let mut copied = 0;
    // Edits are in text order and end at or before the insertion point.
    for (range, with_id) in edits {
        out.extend_from_slice(text.get(copied..range.start)?.as_bytes());
        if with_id {
            serde_json::to_writer(&mut out, id).ok()?;
        } else {
            out.extend_from_slice(b"true");
        }
        copied = range.end;
    }
    out.extend_from_slice(text.get(copied..insert_at)?.as_bytes());
    let mut separate = has_members;
    if !has_id {
        out.extend_from_slice(if separate { b",\"messageId\":" } else { b"\"messageId\":" });
        serde_json::to_writer(&mut out, id).ok()?;
        separate = true;
    }
    if !has_ack {
        out.extend_from_slice(if separate { b",\"ack\":true" } else { b"\"ack\":true" });
    }
    out.extend_from_slice(text.get(insert_at..)?.as_bytes());
    Some(Some(out))
}

/// Whether `raw`, a JSON string with its quotes, reads as `expected`; `None`
/// if it is not a JSON string.
pub(super) fn json_string_is(raw: &str, expected: &str) -> Option<bool> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    if !inner.contains('\\') {
        // Nothing to unescape (in text serde_json accepted, there is no
        // quote inside either).
        return Some(inner == expected);
    }
    let unescaped: String = serde_json::from_str(raw).ok()?;
    Some(unescaped == expected)
}

/// One `"key": value` of a JSON object, as byte ranges of its text.
pub(super) struct Member {
    /// The key, quotes included.
    key: Range<usize>,
    value: Range<usize>,
}

/// Calls `each` with the top-level members of a JSON object text in order,
/// and returns where a new member goes: just after the last value, or just
/// after `{` in an empty object. `None` where `each` gives `None`.
///
/// Meant for text serde_json has already accepted, so it only finds
/// boundaries rather than checking grammar; every index is bounds-checked,
/// so other input gives `None` rather than a panic.
pub(super) fn object_members(text: &str, mut each: impl FnMut(Member) -> Option<()>) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = skip_whitespace(bytes, 0);
    if *bytes.get(i)? != b'{' {
        return None;
    }
    let mut insert_at = i + 1;
    i = skip_whitespace(bytes, i + 1);
    if *bytes.get(i)? == b'}' {
        return Some(insert_at);
    }
    loop {
        let key_start = i;
        i = skip_string(bytes, i)?;
        let key = key_start..i;
        i = skip_whitespace(bytes, i);
        if *bytes.get(i)? != b':' {
            return None;
        }
        let value_start = skip_whitespace(bytes, i + 1);
        i = skip_value(bytes, value_start)?;
        each(Member { key, value: value_start..i })?;
        insert_at = i;
        i = skip_whitespace(bytes, i);
        match *bytes.get(i)? {
            b',' => i = skip_whitespace(bytes, i + 1),
            b'}' => return Some(insert_at),
            _ => return None,
        }
    }
}

/// Past JSON whitespace (the four characters JSON allows).
pub(super) fn skip_whitespace(bytes: &[u8], mut i: usize) -> usize {
    while matches!(bytes.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// Past the string starting at `i`. An escape is a backslash and one more
/// character; the hex digits of `\uXXXX` need no special case, since they are
/// never a quote or a backslash.
pub(super) fn skip_string(bytes: &[u8], mut i: usize) -> Option<usize> {
    if *bytes.get(i)? != b'"' {
        return None;
    }
    i += 1;
    loop {
        match *bytes.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// Past the value starting at `i`.
pub(super) fn skip_value(bytes: &[u8], mut i: usize) -> Option<usize> {
    match *bytes.get(i)? {
        b'"' => skip_string(bytes, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            loop {
                match *bytes.get(i)? {
                    b'"' => {
                        i = skip_string(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        // A number, true, false or null: up to the next delimiter.
        _ => {
            while !matches!(bytes.get(i), None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')) {
                i += 1;
            }
            Some(i)
        }
    }
}
