//! The W3C Trace Context `traceparent` header, parsed strictly.
//!
//! ```text
//! traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
//!              version-trace id (32 hex)-parent id (16 hex)-flags
//! ```
//!
//! The rules (W3C Trace Context, level 1): every field is lower-case hex;
//! version `ff` is invalid; version `00` is exactly 55 characters; a later
//! version is read by its first four fields and may carry more after a `-`;
//! a trace id or parent id of all zeros is invalid. A value that breaks any
//! rule is ignored whole, and the event starts a trace of its own.

use std::collections::HashMap;
use std::fmt;

/// A valid W3C `traceparent`: the caller's trace id, its span (the parent of
/// the event's span) and its trace flags.
///
/// ```
/// use celerity::observe::TraceParent;
///
/// let parent = TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
/// assert_eq!(parent.trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
/// assert_eq!(parent.parent_id_hex(), "00f067aa0ba902b7");
/// assert!(parent.is_sampled());
/// assert!(TraceParent::parse("00-00000000000000000000000000000000-00f067aa0ba902b7-01").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceParent {
    version: u8,
    trace_id: [u8; 16],
    parent_id: [u8; 8],
    flags: u8,
}

/// Why a `traceparent` value was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TraceParentError {
    /// Shorter than 55 characters, or (version `00`) longer.
    Length(usize),
    /// A `-` is missing where one belongs, or a later version carries extra
    /// text not set off by `-`.
    Delimiter,
    /// A field holds something other than lower-case hex digits.
    NotHex(&'static str),
    /// Version `ff`, which the specification forbids.
    Version,
    /// The trace id is all zeros.
    ZeroTraceId,
    /// The parent id is all zeros.
    ZeroParentId,
}

impl fmt::Display for TraceParentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceParentError::Length(length) => {
                write!(f, "a traceparent of version 00 is 55 characters long, this one has {length}")
            }
            TraceParentError::Delimiter => write!(f, "the fields of a traceparent are separated by `-`"),
            TraceParentError::NotHex(field) => write!(f, "the {field} of a traceparent must be lower-case hex"),
            TraceParentError::Version => write!(f, "traceparent version ff is invalid"),
            TraceParentError::ZeroTraceId => write!(f, "a traceparent's trace id must not be all zeros"),
            TraceParentError::ZeroParentId => write!(f, "a traceparent's parent id must not be all zeros"),
        }
    }
}

impl std::error::Error for TraceParentError {}

impl TraceParent {
    /// Parses a `traceparent` value. Optional whitespace around it (as HTTP
    /// allows around a header value) is ignored; nothing else is forgiven.
    pub fn parse(value: &str) -> Result<Self, TraceParentError> {
        let value = value.trim_matches([' ', '\t']).as_bytes();
        if value.len() < 55 {
            return Err(TraceParentError::Length(value.len()));
        }
        let version = hex_byte(&value[0..2]).ok_or(TraceParentError::NotHex("version"))?;
        if version == 0xff {
            return Err(TraceParentError::Version);
        }
        if version == 0 && value.len() != 55 {
            return Err(TraceParentError::Length(value.len()));
        }
        // A later version may go on, after a `-`, with fields this one does
        // not know.
        if value.len() > 55 && value[55] != b'-' {
            return Err(TraceParentError::Delimiter);
        }
        if value[2] != b'-' || value[35] != b'-' || value[52] != b'-' {
            return Err(TraceParentError::Delimiter);
        }
        let mut trace_id = [0u8; 16];
        hex_into(&value[3..35], &mut trace_id).ok_or(TraceParentError::NotHex("trace id"))?;
        let mut parent_id = [0u8; 8];
        hex_into(&value[36..52], &mut parent_id).ok_or(TraceParentError::NotHex("parent id"))?;
        let flags = hex_byte(&value[53..55]).ok_or(TraceParentError::NotHex("flags"))?;
        if trace_id == [0; 16] {
            return Err(TraceParentError::ZeroTraceId);
        }
        if parent_id == [0; 8] {
            return Err(TraceParentError::ZeroParentId);
        }
        Ok(TraceParent { version, trace_id, parent_id, flags })
    }

    /// A `traceparent` of version `00` from its parts, or `None` when either
    /// id is all zeros.
    pub fn new(trace_id: [u8; 16], parent_id: [u8; 8], flags: u8) -> Option<Self> {
        (trace_id != [0; 16] && parent_id != [0; 8]).then_some(TraceParent { version: 0, trace_id, parent_id, flags })
    }

    /// The version the caller sent (`0` almost always).
    pub fn version(&self) -> u8 {
        self.version
    }

    /// The trace id.
    pub fn trace_id(&self) -> [u8; 16] {
        self.trace_id
    }

    /// The caller's span id: the parent of the event's span.
    pub fn parent_id(&self) -> [u8; 8] {
        self.parent_id
    }

    /// The trace flags.
    pub fn flags(&self) -> u8 {
        self.flags
    }

    /// Whether the caller recorded its part of the trace (flag `01`).
    pub fn is_sampled(&self) -> bool {
        self.flags & 1 == 1
    }

    /// The trace id as 32 lower-case hex digits.
    pub fn trace_id_hex(&self) -> String {
        hex(&self.trace_id)
    }

    /// The parent id as 16 lower-case hex digits.
    pub fn parent_id_hex(&self) -> String {
        hex(&self.parent_id)
    }
}

/// The value to send onward: always version `00`, as the specification asks
/// of a sender, with the flags this version defines.
impl fmt::Display for TraceParent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "00-{}-{}-{:02x}", self.trace_id_hex(), self.parent_id_hex(), self.flags & 1)
    }
}

/// The value of `key` in a trace context map, whatever the case of its name
/// (header names are case-insensitive; the runtime sends them lower case).
pub(crate) fn lookup<'a>(trace_context: &'a HashMap<String, String>, key: &str) -> Option<&'a str> {
    if let Some(value) = trace_context.get(key) {
        return Some(value);
    }
    trace_context.iter().find(|(name, _)| name.eq_ignore_ascii_case(key)).map(|(_, value)| value.as_str())
}

/// The caller's parent from a dispatch's trace context: `None` when there is
/// no `traceparent`, `Some(Err)` when there is one that is not valid.
pub(crate) fn from_map(trace_context: &HashMap<String, String>) -> Option<Result<TraceParent, TraceParentError>> {
    if trace_context.is_empty() {
        return None;
    }
    lookup(trace_context, "traceparent").map(TraceParent::parse)
}

fn nibble(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

fn hex_byte(pair: &[u8]) -> Option<u8> {
    Some(nibble(pair[0])? << 4 | nibble(pair[1])?)
}

fn hex_into(digits: &[u8], out: &mut [u8]) -> Option<()> {
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        *byte = hex_byte(pair)?;
    }
    Some(())
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(DIGITS[(byte >> 4) as usize] as char);
        out.push(DIGITS[(byte & 0xf) as usize] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_valid_traceparent_is_read_field_by_field() {
        let parent = TraceParent::parse(VALID).unwrap();
        assert_eq!(parent.version(), 0);
        assert_eq!(parent.trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(parent.parent_id_hex(), "00f067aa0ba902b7");
        assert_eq!(parent.trace_id()[0], 0x4b);
        assert_eq!(parent.parent_id()[7], 0xb7);
        assert_eq!(parent.flags(), 1);
        assert!(parent.is_sampled());
        assert_eq!(parent.to_string(), VALID);
        let unsampled = TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00").unwrap();
        assert!(!unsampled.is_sampled());
    }

    #[test]
    fn whitespace_around_the_value_is_allowed() {
        assert!(TraceParent::parse(&format!(" \t{VALID} ")).is_ok());
    }

    #[test]
    fn malformed_values_are_refused_with_the_reason() {
        let cases: &[(&str, TraceParentError)] = &[
            ("", TraceParentError::Length(0)),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1", TraceParentError::Length(54)),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-", TraceParentError::Length(56)),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", TraceParentError::Length(61)),
            ("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", TraceParentError::Version),
            ("0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", TraceParentError::NotHex("version")),
            ("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", TraceParentError::NotHex("trace id")),
            ("00-4bf92f3577b34da6a3ce929d0e0e473z-00f067aa0ba902b7-01", TraceParentError::NotHex("trace id")),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01", TraceParentError::NotHex("parent id")),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x", TraceParentError::NotHex("flags")),
            ("00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", TraceParentError::Delimiter),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01", TraceParentError::Delimiter),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7_01", TraceParentError::Delimiter),
            ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", TraceParentError::ZeroTraceId),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", TraceParentError::ZeroParentId),
            // A sign or space inside a field is not hex, even where a
            // lenient integer parser would take it.
            ("00-+bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", TraceParentError::NotHex("trace id")),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7- 1", TraceParentError::NotHex("flags")),
        ];
        for (value, expected) in cases {
            assert_eq!(TraceParent::parse(value), Err(*expected), "{value:?}");
            assert!(!expected.to_string().is_empty());
        }
    }

    #[test]
    fn a_later_version_is_read_by_its_first_four_fields() {
        let later =
            TraceParent::parse("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes-next").unwrap();
        assert_eq!(later.version(), 0xcc);
        assert_eq!(later.trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
        // Sent onward as version 00.
        assert_eq!(later.to_string(), VALID);
        assert!(TraceParent::parse("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").is_ok());
        assert_eq!(
            TraceParent::parse("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x"),
            Err(TraceParentError::Delimiter)
        );
    }

    #[test]
    fn non_ascii_input_is_refused_not_panicked_on() {
        // 55 bytes with a multi-byte character across a field boundary.
        let value = format!("00-{}é-00f067aa0ba902b7-01", "4".repeat(30));
        assert!(TraceParent::parse(&value).is_err());
        assert!(TraceParent::parse(&"é".repeat(40)).is_err());
    }

    #[test]
    fn the_map_is_searched_without_regard_to_case() {
        let mut map = HashMap::new();
        assert!(from_map(&map).is_none());
        map.insert("TraceParent".to_string(), VALID.to_string());
        assert_eq!(from_map(&map), Some(Ok(TraceParent::parse(VALID).unwrap())));
        map.clear();
        map.insert("traceparent".to_string(), "garbage".to_string());
        assert_eq!(from_map(&map), Some(Err(TraceParentError::Length(7))));
        map.clear();
        map.insert("tracestate".to_string(), "a=b".to_string());
        assert!(from_map(&map).is_none());
    }

    #[test]
    fn new_refuses_zero_ids() {
        assert!(TraceParent::new([0; 16], [1; 8], 1).is_none());
        assert!(TraceParent::new([1; 16], [0; 8], 1).is_none());
        let parent = TraceParent::new([0xab; 16], [0xcd; 8], 1).unwrap();
        assert_eq!(TraceParent::parse(&parent.to_string()), Ok(parent));
    }

    proptest! {
        #[test]
        fn any_input_is_answered_without_panicking(value in ".{0,80}") {
            let _ = TraceParent::parse(&value);
        }

        #[test]
        fn near_misses_are_answered_without_panicking(
            value in "[0-9a-fA-F-]{50,60}",
        ) {
            if let Ok(parent) = TraceParent::parse(&value) {
                prop_assert!(parent.trace_id() != [0; 16] && parent.parent_id() != [0; 8]);
            }
        }

        #[test]
        fn what_is_formatted_parses_back(trace in any::<[u8; 16]>(), parent in any::<[u8; 8]>(), flags in 0u8..2) {
            if let Some(value) = TraceParent::new(trace, parent, flags) {
                prop_assert_eq!(TraceParent::parse(&value.to_string()), Ok(value));
            }
        }
    }
}
