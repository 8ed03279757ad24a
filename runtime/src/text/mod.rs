//! Short text of an event, kept in a worker's arena rather than a `String`
//! of its own.
//!
//! A protobuf `string` decoded by prost is copied into a `String` of its
//! own: an allocation per field, and a free when the field is dropped. A
//! consumer batch has three such fields per record. Copied instead into
//! the current chunk of an arena of the decoding thread's own, a field
//! costs a copy and a reference count on that chunk, and a chunk of a few
//! kilobytes holds the text of many records.
//!
//! The text is copied rather than kept as a slice of the frame it came in:
//! the frame's buffer is shared with the stream's thread, which goes on
//! reading into it, and a reference count per field on that buffer is a
//! cache line fought over by two threads.

use std::cell::RefCell;
use std::fmt;
use std::ops::Deref;

use bytes::{Bytes, BytesMut};

pub(crate) mod proto;

/// UTF-8 text held as [`Bytes`]. Made only from `str`s and `String`s, so it
/// is always UTF-8.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Text(Bytes);

/// The first chunk of a thread's arena; each next one is twice the size,
/// up to [`MAX_CHUNK`].
const FIRST_CHUNK: usize = 4 << 10;

/// The largest chunk. A text longer than this is copied on its own.
const MAX_CHUNK: usize = 64 << 10;

/// Where a thread copies text: the rest of its current chunk.
struct Arena {
    /// None until the thread first copies text.
    chunk: Option<BytesMut>,
    next: usize,
}

thread_local! {
    static ARENA: RefCell<Arena> = const { RefCell::new(Arena { chunk: None, next: FIRST_CHUNK }) };
}

impl Arena {
    fn copy(&mut self, text: &[u8]) -> Bytes {
        if text.len() > MAX_CHUNK {
            return Bytes::copy_from_slice(text);
        }
        let chunk = match &mut self.chunk {
            Some(chunk) if chunk.capacity() - chunk.len() >= text.len() => chunk,
            _ => {
                // A chunk is freed once every text copied into it is dropped.
                let size = self.next;
                self.next = (self.next * 2).min(MAX_CHUNK);
                self.chunk.insert(BytesMut::with_capacity(size.max(text.len())))
            }
        };
        chunk.extend_from_slice(text);
        chunk.split().freeze()
    }
}

impl Text {
    /// `text`, copied into this thread's arena.
    pub(crate) fn copied(text: &str) -> Text {
        if text.is_empty() {
            return Text::default();
        }
        Text(ARENA.with(|arena| arena.borrow_mut().copy(text.as_bytes())))
    }

    /// The text.
    pub(crate) fn as_str(&self) -> &str {
        // SAFETY: every `Text` is made from a `str` or a `String` (see the
        // constructors above and below), whose bytes are UTF-8, and its
        // bytes are never changed.
        unsafe { std::str::from_utf8_unchecked(&self.0) }
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
    fn text_reads_back_as_it_was_made() {
        assert_eq!(Text::copied("naïve").as_str(), "naïve");
        assert_eq!(Text::copied("").as_str(), "");
        assert_eq!(Text::from("m-1".to_string()).as_str(), "m-1");
        assert_eq!(&*Text::from("m-2"), "m-2");
        assert_eq!(format!("{:?}", Text::copied("a\"b")), r#""a\"b""#);
        assert_eq!(Text::copied("same"), Text::from("same"));
    }

    #[test]
    fn short_texts_share_a_chunk_and_long_ones_do_not() {
        let first = Text::copied("m-1");
        let second = Text::copied("m-2");
        // Copied one after the other into the same chunk.
        let (end_of_first, start_of_second) = (first.as_bytes().as_ptr_range().end, second.as_bytes().as_ptr());
        assert_eq!(end_of_first, start_of_second);
        let long = "x".repeat(MAX_CHUNK + 1);
        assert_eq!(Text::copied(&long).as_str(), long);
        let after = Text::copied("m-3");
        assert_eq!(after.as_bytes().as_ptr(), second.as_bytes().as_ptr_range().end, "the long text took no room");
    }

    #[test]
    fn a_full_chunk_gives_way_to_a_larger_one_and_stays_readable() {
        let texts: Vec<Text> = (0..2_000).map(|i| Text::copied(&format!("message-{i:05}"))).collect();
        for (i, text) in texts.iter().enumerate() {
            assert_eq!(text.as_str(), format!("message-{i:05}"));
        }
    }
}
