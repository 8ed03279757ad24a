//! The tag parser of the attribute macros on arbitrary text: it never
//! panics, a tag it accepts is normalised idempotently (parsing its
//! normalised form gives it back), a tag it refuses gets a message, and a
//! suggested correction differs from the input.

use celerity_tags::{TagKind, parse_tag};

pub fn run(data: &[u8]) {
    let Some((&kind, text)) = data.split_first() else {
        return;
    };
    let Ok(tag) = std::str::from_utf8(text) else {
        return;
    };
    let kind = TagKind::ALL[usize::from(kind) % TagKind::ALL.len()];
    match parse_tag(kind, tag) {
        Ok(parsed) => {
            assert_eq!(parsed.kind, kind);
            assert_eq!(parse_tag(kind, &parsed.tag), Ok(parsed.clone()), "normalising {tag:?} is not idempotent");
        }
        Err(error) => {
            assert!(!error.message.is_empty(), "no message for {tag:?}");
            if let Some(suggestion) = &error.suggestion {
                assert_ne!(suggestion, tag, "the suggestion for {tag:?} is the tag itself");
            }
        }
    }
}
