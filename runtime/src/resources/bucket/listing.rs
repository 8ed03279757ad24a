//! Listing a bucket by prefix, a page at a time, resumed from a cursor.

use std::fmt;

use super::ObjectInfo;
use crate::resources::error::Fault;

/// The most objects one page holds, as S3 answers at most.
pub const MAX_PAGE: usize = 1000;

/// A position in a listing, to resume it from. Opaque: only the bucket
/// that gave it can read it (S3's continuation token, or the folder and
/// in-memory buckets' own).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Cursor(String);

impl Cursor {
    /// The cursor as text, to hand to a caller (in a response, say).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A cursor handed back as text by a caller. One the bucket did not
    /// give is refused when the listing is read.
    pub fn from_text(text: impl Into<String>) -> Self {
        Cursor(text.into())
    }

    /// The cursor of the folder and in-memory buckets: after `key`.
    pub(crate) fn after(key: &str) -> Self {
        let mut text = String::with_capacity(1 + key.len() * 2);
        text.push('k');
        for byte in key.bytes() {
            text.push_str(&format!("{byte:02x}"));
        }
        Cursor(text)
    }

    /// The key this cursor of the folder and in-memory buckets resumes
    /// after, or why it is none of theirs.
    pub(crate) fn key_after(&self) -> Result<String, Fault> {
        let invalid = || Fault::invalid("InvalidCursor", "the cursor was not given by a listing of this bucket");
        let hex = self.0.strip_prefix('k').ok_or_else(invalid)?;
        if hex.len() % 2 != 0 || !hex.is_ascii() {
            return Err(invalid());
        }
        let bytes = (0..hex.len())
            .step_by(2)
            .map(|at| u8::from_str_radix(&hex[at..at + 2], 16))
            .collect::<Result<Vec<u8>, _>>()
            .map_err(|_| invalid())?;
        String::from_utf8(bytes).map_err(|_| invalid())
    }
}

impl fmt::Debug for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Cursor").field(&self.0).finish()
    }
}

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How a page of a listing is read: how many objects at most, and where
/// to resume.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListOptions {
    pub(crate) limit: Option<usize>,
    pub(crate) cursor: Option<Cursor>,
}

impl ListOptions {
    /// The first page, as large as the bucket gives ([`MAX_PAGE`]).
    pub fn new() -> Self {
        ListOptions::default()
    }

    /// At most `limit` objects (at most [`MAX_PAGE`]; 0 counts as 1).
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit.clamp(1, MAX_PAGE));
        self
    }

    /// The page after the one that gave `cursor`.
    pub fn after(mut self, cursor: Cursor) -> Self {
        self.cursor = Some(cursor);
        self
    }

    /// The most objects the page holds.
    pub(crate) fn page_size(&self) -> usize {
        self.limit.unwrap_or(MAX_PAGE)
    }
}

/// One page of a listing, in the order of the keys' bytes, as S3 lists.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Page {
    /// The objects: key, size, entity tag and last modification (a
    /// listing carries no content type or metadata).
    pub objects: Vec<ObjectInfo>,
    /// Where the next page starts, `None` at the end of the listing.
    pub cursor: Option<Cursor>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_gives_back_the_key_it_was_made_from() {
        for key in ["a", "photos/2026/é.jpg", "with space"] {
            assert_eq!(Cursor::after(key).key_after().unwrap(), key);
        }
        for foreign in ["", "k1", "kzz", "abc", "kff"] {
            let fault = Cursor::from_text(foreign).key_after().unwrap_err();
            assert_eq!(fault.code.as_deref(), Some("InvalidCursor"), "{foreign}");
        }
        assert_eq!(ListOptions::new().limit(0).page_size(), 1);
        assert_eq!(ListOptions::new().limit(5000).page_size(), MAX_PAGE);
    }
}
