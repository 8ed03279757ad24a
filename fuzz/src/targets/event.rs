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
//! - a consumer batch or an HTTP request that arrived as one field decodes
//!   straight into the SDK's batch or request, as handlers get it, to what
//!   prost's decoding of the same bytes converts to (a request the SDK
//!   refuses, refused the same), or fails with the same error.

use celerity::__private::session::{Event, LazySource};
use celerity::__private::{consumer, http};
use celerity::HandlerKind;
use celerity::proto::prost::Message as _;
use celerity::proto::prost::bytes::Bytes;
use celerity::proto::v1::{ConsumerBatch, Dispatch, HttpRequest, dispatch::Source};

pub fn run(data: &[u8]) {
    let whole = Dispatch::decode(data);
    let head = Event::decode(data);
    if let Ok(Event { source: Some(source), .. }) = &head
        && let Ok((kind, bytes)) = source.clone().into_single()
    {
        match kind {
            HandlerKind::Consumer => same_batch(bytes),
            HandlerKind::Http => same_request(bytes),
            _ => {}
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

/// A consumer batch decoded straight, against prost's decoding converted.
fn same_batch(bytes: Bytes) {
    let direct = consumer::decode(bytes.clone());
    let through_prost = ConsumerBatch::decode(bytes).map(consumer::from_wire);
    match (direct, through_prost) {
        (Ok(direct), Ok(through_prost)) => assert_eq!(direct, through_prost),
        (Err(direct), Err(through_prost)) => assert_eq!(direct.to_string(), through_prost.to_string()),
        (direct, through_prost) => panic!("decoded straight: {direct:?}; through prost: {through_prost:?}"),
    }
}

/// An HTTP request decoded straight, against prost's decoding converted.
fn same_request(bytes: Bytes) {
    let direct = http::decode(bytes.clone());
    let through_prost = HttpRequest::decode(bytes).map(http::from_wire);
    match (direct, through_prost) {
        (Ok(Ok(direct)), Ok(Ok(through_prost))) => assert_eq!(http::parts(&direct), http::parts(&through_prost)),
        (Ok(Err(direct)), Ok(Err(through_prost))) => assert_eq!(direct.to_string(), through_prost.to_string()),
        (Err(direct), Err(through_prost)) => assert_eq!(direct.to_string(), through_prost.to_string()),
        (direct, through_prost) => panic!("decoded straight: {direct:?}; through prost: {through_prost:?}"),
    }
}
