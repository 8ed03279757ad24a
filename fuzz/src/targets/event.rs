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
//!   two levels lower;
//! - a consumer batch that arrived as one field decodes straight into the
//!   SDK's batch, as handlers get it, to what prost's decoding of the same
//!   bytes converts to, or fails with the same error.

use celerity::__private::consumer;
use celerity::__private::session::{Event, LazySource};
use celerity::proto::prost::Message as _;
use celerity::proto::v1::{ConsumerBatch, Dispatch, dispatch::Source};

pub fn run(data: &[u8]) {
    let whole = Dispatch::decode(data);
    let head = Event::decode(data);
    if let Ok(Event { source: Some(source), .. }) = &head
        && let Ok(bytes) = source.clone().into_consumer_bytes()
    {
        let direct = consumer::decode(bytes.clone());
        let through_prost = ConsumerBatch::decode(bytes).map(consumer::from_wire);
        match (direct, through_prost) {
            (Ok(direct), Ok(through_prost)) => assert_eq!(direct, through_prost),
            (Err(direct), Err(through_prost)) => assert_eq!(direct.to_string(), through_prost.to_string()),
            (direct, through_prost) => panic!("decoded straight: {direct:?}; through prost: {through_prost:?}"),
        }
    }
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
