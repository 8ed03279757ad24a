//! Text kept in the bytes it arrived in.
//!
//! A protobuf `string` decoded by prost is copied into a `String` of its
//! own: an allocation per field, and a free when the field is dropped. A
//! consumer batch has three such fields per record. Kept as a slice of the
//! frame's buffer instead, and checked to be UTF-8 once, a field costs a
//! reference count.

use std::fmt;
use std::ops::Deref;

use bytes::Bytes;

/// UTF-8 text held as [`Bytes`]. Every way of making one checks, or knows,
/// that the bytes are UTF-8.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct Text(Bytes);

impl Text {
    /// `bytes` as text, when they are UTF-8; otherwise the bytes back.
    pub(crate) fn new(bytes: Bytes) -> Result<Text, Bytes> {
        match std::str::from_utf8(&bytes) {
            Ok(_) => Ok(Text(bytes)),
            Err(_) => Err(bytes),
        }
    }

    /// The text.
    pub(crate) fn as_str(&self) -> &str {
        // Checked when the text was made, so this never falls back to the
        // empty string; checking again costs a pass over a short field,
        // and keeps the SDK's own code free of `unsafe`.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }

    /// The bytes of the text.
    pub(crate) fn as_bytes(&self) -> &Bytes {
        &self.0
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        Text(Bytes::from(text))
    }
}

impl From<&'static str> for Text {
    fn from(text: &'static str) -> Self {
        Text(Bytes::from_static(text.as_bytes()))
    }
}

impl Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_utf8_makes_text() {
        assert_eq!(Text::new(Bytes::from_static("naïve".as_bytes())).unwrap().as_str(), "naïve");
        assert!(Text::new(Bytes::from_static(b"\xff\xfe")).is_err());
        assert_eq!(Text::from("m-1".to_string()).as_str(), "m-1");
        assert_eq!(&*Text::from("m-2"), "m-2");
        assert_eq!(format!("{:?}", Text::from("a\"b")), r#""a\"b""#);
    }

    #[test]
    fn text_shares_the_bytes_it_came_in() {
        let frame = Bytes::from_static(b"m-1 and more");
        let text = Text::new(frame.slice(0..3)).unwrap();
        assert_eq!(text.as_bytes().as_ptr(), frame.as_ptr());
    }
}
