//! Object content in motion: what a read streams out, and what a write
//! takes in, a part at a time.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use futures_util::stream::{BoxStream, Stream, StreamExt};

use super::ObjectInfo;
use crate::resources::error::{Fault, ResourceError};

/// An error of the stream a write reads its content from.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// An object read from a bucket: what the bucket knows about it, and its
/// content (the part asked for, for a ranged read) as a stream.
#[non_exhaustive]
pub struct Object {
    /// What the bucket knows about the object. `size` is the whole
    /// object's, also for a ranged read.
    pub info: ObjectInfo,
    /// The bytes served, as a start and an end (excluded), for a ranged
    /// read; `None` for the whole object.
    pub range: Option<(u64, u64)>,
    /// How many bytes `body` yields.
    pub content_length: u64,
    /// The content.
    pub body: ObjectBody,
}

impl Object {
    /// The content, read to the end into one buffer.
    pub async fn bytes(self) -> Result<Bytes, ResourceError> {
        self.body.collect_bytes().await
    }
}

impl fmt::Debug for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Object")
            .field("info", &self.info)
            .field("range", &self.range)
            .field("content_length", &self.content_length)
            .finish_non_exhaustive()
    }
}

/// An object's content as a [`Stream`] of chunks. A read cut off before
/// the last byte ends with an error item
/// ([`Unreachable`](crate::resources::ResourceErrorKind::Unreachable)),
/// never with a shorter object: the stream counts what it yields against
/// the length the bucket announced.
pub struct ObjectBody {
    inner: BoxStream<'static, Result<Bytes, ResourceError>>,
}

impl ObjectBody {
    /// The chunks of `source`, each fault named by `error`, checked to add
    /// up to `length` bytes.
    pub(crate) fn new(
        source: BoxStream<'static, Result<Bytes, Fault>>,
        length: u64,
        error: impl Fn(Fault) -> ResourceError + Send + 'static,
    ) -> Self {
        let state = Counting { source, length, seen: 0, done: false };
        let inner = futures_util::stream::unfold((state, error), |(mut state, error)| async move {
            let item = state.next().await?;
            Some((item.map_err(&error), (state, error)))
        });
        ObjectBody { inner: inner.boxed() }
    }

    /// The next chunk of the content, `None` at its end.
    pub async fn chunk(&mut self) -> Option<Result<Bytes, ResourceError>> {
        self.inner.next().await
    }

    /// The content, read to the end into one buffer.
    pub async fn collect_bytes(mut self) -> Result<Bytes, ResourceError> {
        let mut first: Option<Bytes> = None;
        let mut buffer = BytesMut::new();
        while let Some(chunk) = self.inner.next().await {
            let chunk = chunk?;
            match first.take() {
                None if buffer.is_empty() => first = Some(chunk),
                None => buffer.extend_from_slice(&chunk),
                Some(held) => {
                    buffer.extend_from_slice(&held);
                    buffer.extend_from_slice(&chunk);
                }
            }
        }
        // One chunk is handed back as it came, without a copy.
        Ok(first.unwrap_or_else(|| buffer.freeze()))
    }
}

impl Stream for ObjectBody {
    type Item = Result<Bytes, ResourceError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

impl fmt::Debug for ObjectBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectBody").finish_non_exhaustive()
    }
}

/// A source of chunks that must add up to `length` bytes.
struct Counting {
    source: BoxStream<'static, Result<Bytes, Fault>>,
    length: u64,
    seen: u64,
    done: bool,
}

impl Counting {
    async fn next(&mut self) -> Option<Result<Bytes, Fault>> {
        if self.done {
            return None;
        }
        match self.source.next().await {
            Some(Ok(chunk)) => {
                self.seen += chunk.len() as u64;
                if self.seen > self.length {
                    self.done = true;
                    return Some(Err(Fault::unreachable(format!(
                        "the bucket sent more than the {} bytes it announced",
                        self.length
                    ))));
                }
                Some(Ok(chunk))
            }
            Some(Err(fault)) => {
                self.done = true;
                Some(Err(fault))
            }
            None => {
                self.done = true;
                (self.seen < self.length).then(|| {
                    Err(Fault::unreachable(format!(
                        "the object was cut off after {} of its {} bytes",
                        self.seen, self.length
                    )))
                })
            }
        }
    }
}

/// What a write stores: bytes at hand, or a stream of them.
pub(crate) enum Body {
    Whole(Option<Bytes>),
    Stream(BoxStream<'static, Result<Bytes, BoxError>>),
    /// Another object's content, read through for a copy.
    Faults(BoxStream<'static, Result<Bytes, Fault>>),
}

impl Body {
    /// The next chunk, or `None` at the end. A failure of the caller's
    /// stream stops the write.
    pub(crate) async fn next_chunk(&mut self) -> Option<Result<Bytes, Fault>> {
        match self {
            Body::Whole(bytes) => bytes.take().map(Ok),
            Body::Stream(stream) => stream.next().await.map(|chunk| {
                chunk.map_err(|error| {
                    Fault::invalid(
                        "BodyStreamFailed",
                        format!("the stream of the object's content failed, and nothing was stored: {error}"),
                    )
                })
            }),
            Body::Faults(stream) => stream.next().await,
        }
    }
}

/// A body cut into parts of `size` bytes (the last one shorter), holding
/// at most one part and one chunk of the body in memory.
pub(crate) struct Parts {
    body: Body,
    leftover: Bytes,
    size: usize,
}

impl Parts {
    pub(crate) fn new(body: Body, size: usize) -> Self {
        Parts { body, leftover: Bytes::new(), size }
    }

    /// The next part, `None` once the body is read. The first part of an
    /// empty body is empty, so that an empty object is still written.
    pub(crate) async fn next(&mut self, first: bool) -> Result<Option<Bytes>, Fault> {
        let mut part = BytesMut::new();
        loop {
            if !self.leftover.is_empty() {
                let wanted = self.size - part.len();
                if part.is_empty() && self.leftover.len() >= wanted {
                    // A part cut from a chunk as large, without a copy.
                    return Ok(Some(self.leftover.split_to(wanted)));
                }
                let take = wanted.min(self.leftover.len());
                part.extend_from_slice(&self.leftover.split_to(take));
                if part.len() == self.size {
                    return Ok(Some(part.freeze()));
                }
            }
            match self.body.next_chunk().await {
                Some(chunk) => self.leftover = chunk?,
                None if part.is_empty() && !first => return Ok(None),
                None => return Ok(Some(part.freeze())),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn streamed(chunks: Vec<&'static [u8]>) -> Body {
        Body::Stream(futures_util::stream::iter(chunks.into_iter().map(|c| Ok(Bytes::from_static(c)))).boxed())
    }

    async fn all_parts(body: Body, size: usize) -> Vec<Bytes> {
        let mut parts = Parts::new(body, size);
        let mut out = Vec::new();
        while let Some(part) = parts.next(out.is_empty()).await.unwrap() {
            out.push(part);
        }
        out
    }

    #[tokio::test]
    async fn a_body_is_cut_into_parts_of_the_size_whatever_its_chunks() {
        let parts = all_parts(streamed(vec![b"ab", b"cdefg", b"h", b"ij"]), 4).await;
        assert_eq!(parts, [&b"abcd"[..], b"efgh", b"ij"]);
        let parts = all_parts(Body::Whole(Some(Bytes::from_static(b"abcdefgh"))), 4).await;
        assert_eq!(parts, [&b"abcd"[..], b"efgh"]);
        let parts = all_parts(Body::Whole(Some(Bytes::new())), 4).await;
        assert_eq!(parts, [Bytes::new()], "an empty object is one empty part");
    }

    #[tokio::test]
    async fn a_body_that_stops_short_ends_with_an_error() {
        let name =
            |fault: Fault| ResourceError::new("b", crate::resources::ResourceKind::Bucket, "reading from", fault);
        let source = futures_util::stream::iter([Ok(Bytes::from_static(b"abc"))]).boxed();
        let error = ObjectBody::new(source, 5, name).collect_bytes().await.unwrap_err();
        assert_eq!(error.kind(), crate::resources::ResourceErrorKind::Unreachable);
        assert!(error.message().contains("after 3 of its 5 bytes"), "{error}");
        let source = futures_util::stream::iter([Ok(Bytes::from_static(b"ab")), Ok(Bytes::from_static(b"c"))]).boxed();
        assert_eq!(ObjectBody::new(source, 3, name).collect_bytes().await.unwrap(), "abc");
    }
}
