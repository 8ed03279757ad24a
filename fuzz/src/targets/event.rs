//! A `Dispatch` decoded in two steps, as the driver decodes one (its head on
//! the stream's thread, its source in the handler's task), against the same
//! bytes decoded whole. Whatever the bytes:
//! - nothing panics;
//! - when the whole `Dispatch` decodes, so do the head and then the source,
//!   to the same values, and the source's kind and record count are read
//!   right without decoding it;
//! - when it does not, either the head does not either, or the source
//!   fails when it is decoded; the one exception is nesting past prost's
//!   recursion limit, which a source decoded on its own starts counting
//!   two levels lower.

use celerity::__private::session::{Event, LazySource};
use celerity::proto::prost::Message as _;
use celerity::proto::v1::{Dispatch, dispatch::Source};

pub fn run(data: &[u8]) {
    let whole = Dispatch::decode(data);
    let head = Event::decode(data);
    match (whole, head) {
        (Ok(whole), Ok(mut event)) => {
            let lazy = event.source.take();
            if let (Some(lazy), Some(source)) = (&lazy, &whole.source) {
                let decoded = LazySource::Decoded(Box::new(source.clone()));
                assert_eq!(lazy.kind(), decoded.kind(), "the kind is read from the field number");
                let records = match source {
                    Source::Consumer(batch) => Some(batch.records.len()),
                    _ => None,
                };
                assert_eq!(lazy.records(), records, "the records are counted without decoding them");
            }
            let source = lazy.map(|lazy| lazy.decode().expect("a source that decodes whole decodes on its own"));
            assert_eq!(source, whole.source);
            assert_eq!(
                (event.id, event.handler_tag, event.timestamp_ms, event.deadline_unix_ms, event.trace_context),
                (whole.id, whole.handler_tag, whole.timestamp_ms, whole.deadline_unix_ms, whole.trace_context)
            );
        }
        (Ok(_), Err(error)) => panic!("a Dispatch that decodes whole has a head that does not: {error}"),
        (Err(whole), Ok(mut event)) => {
            if let Some(Ok(_)) = event.source.take().map(|lazy| lazy.decode()) {
                assert!(whole.to_string().contains("recursion limit"), "decoded in two steps, not whole: {whole}");
            }
        }
        (Err(_), Err(_)) => {}
    }
}
