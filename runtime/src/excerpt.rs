//! How much of a value from outside goes into a message the SDK composes.
//!
//! What the runtime sends (tags, ids, correlation ids) and what a request
//! carries (a content type, a query value, a JSON key) may each be up to a
//! frame long. A log line or an error message that echoed one whole could be
//! made as large as the frame, and an answer larger than a frame holds, so
//! every such echo is cut here, to at most [`QUOTED_BYTES`] bytes, with the
//! full length noted. Bytes from outside (the body of an API's refusal, a
//! handler's answer named in a test's message) are echoed as their text
//! when they are UTF-8, cut the same way, and by their length otherwise.

use std::borrow::Cow;

/// How many bytes of a value from outside (a runtime string, a request
/// value) a log line or error message quotes.
pub const QUOTED_BYTES: usize = 256;

/// The part of `text` that is echoed, and the full length when that is not
/// all of it: at most [`QUOTED_BYTES`] bytes, ending at a character
/// boundary.
fn cut(text: &str) -> (&str, Option<usize>) {
    if text.len() <= QUOTED_BYTES {
        return (text, None);
    }
    let mut end = QUOTED_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], Some(text.len()))
}

/// `text` as it may be echoed: unchanged when short, otherwise cut (see
/// [`QUOTED_BYTES`]) and followed by `... (N bytes)`.
pub(crate) fn excerpt(text: &str) -> Cow<'_, str> {
    match cut(text) {
        (kept, None) => Cow::Borrowed(kept),
        (kept, Some(len)) => Cow::Owned(format!("{kept}... ({len} bytes)")),
    }
}

/// `text` quoted with escapes, so that it cannot start a log line of its
/// own, and cut to at most [`QUOTED_BYTES`] bytes, with its full length
/// noted.
pub fn quoted(text: &str) -> String {
    match cut(text) {
        (kept, None) => format!("{kept:?}"),
        (kept, Some(len)) => format!("{kept:?}... ({len} bytes)"),
    }
}

/// `bytes` as they may be echoed: as text, cut as [`excerpt`] cuts it, when
/// they are UTF-8, and otherwise only their length, `N bytes of binary`
/// (bytes that are not text say nothing a reader could use, and may not be
/// printed). Only the Lambda clients echo bytes unquoted.
#[cfg(feature = "aws-lambda")]
pub(crate) fn excerpt_bytes(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => excerpt(text),
        Err(_) => Cow::Owned(binary(bytes)),
    }
}

/// `bytes` quoted as [`quoted`] quotes text when they are UTF-8, and
/// otherwise only their length, as [`excerpt_bytes`] gives it.
pub(crate) fn quoted_bytes(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => quoted(text),
        Err(_) => binary(bytes),
    }
}

/// What is said of bytes that are not text.
fn binary(bytes: &[u8]) -> String {
    format!("{} bytes of binary", bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_value_is_echoed_whole() {
        assert_eq!(excerpt("application/xml"), "application/xml");
        assert!(matches!(excerpt("x"), Cow::Borrowed(_)));
        assert_eq!(quoted("a\nb"), r#""a\nb""#);
    }

    #[test]
    fn a_long_value_is_cut_with_its_length_noted() {
        let long = "x".repeat(200_000);
        let cut = excerpt(&long);
        assert_eq!(cut, format!("{}... (200000 bytes)", "x".repeat(QUOTED_BYTES)));
        assert_eq!(quoted(&long), format!("{:?}... (200000 bytes)", "x".repeat(QUOTED_BYTES)));
    }

    #[test]
    fn bytes_are_quoted_as_their_text_or_named_by_their_length() {
        assert_eq!(quoted_bytes(b"a\nb"), r#""a\nb""#);
        let long = "y".repeat(1000);
        assert_eq!(quoted_bytes(long.as_bytes()), quoted(&long));
        assert_eq!(quoted_bytes(b"\xff\xfe\x00"), "3 bytes of binary");
        assert_eq!(quoted_bytes(b""), r#""""#);
    }

    #[cfg(feature = "aws-lambda")]
    #[test]
    fn bytes_are_echoed_as_their_text_or_named_by_their_length() {
        assert_eq!(excerpt_bytes(b"{\"message\": \"no\"}"), r#"{"message": "no"}"#);
        let long = "y".repeat(1000);
        assert_eq!(excerpt_bytes(long.as_bytes()), excerpt(&long));
        assert_eq!(excerpt_bytes(b"\xff\xfe\x00"), "3 bytes of binary");
    }

    #[test]
    fn a_cut_ends_at_a_character_boundary() {
        let text = "é".repeat(QUOTED_BYTES);
        let (kept, len) = cut(&text);
        assert!(kept.len() <= QUOTED_BYTES && kept.chars().all(|c| c == 'é'));
        assert_eq!(len, Some(text.len()));
    }
}
