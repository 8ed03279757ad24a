//! The body of the `http::Request`s and `http::Response`s the SDK hands to
//! tower services: the bytes the runtime sent, whole.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};

/// A body of bytes already in memory, as an [`http_body::Body`] (version 1):
/// what a tower service given a Celerity request reads. The runtime sends a
/// request whole, so the body is one frame, and its exact size is known.
///
/// ```
/// use celerity::http::Body;
///
/// let body = Body::from("hello");
/// assert_eq!(body.into_bytes(), "hello");
/// ```
#[derive(Debug, Clone, Default)]
pub struct Body {
    bytes: Option<Bytes>,
}

impl Body {
    /// A body of `bytes`.
    pub fn new(bytes: impl Into<Bytes>) -> Self {
        let bytes = bytes.into();
        Body { bytes: (!bytes.is_empty()).then_some(bytes) }
    }

    /// An empty body.
    pub fn empty() -> Self {
        Body { bytes: None }
    }

    /// The bytes not yet read.
    pub fn into_bytes(self) -> Bytes {
        self.bytes.unwrap_or_default()
    }
}

impl From<Bytes> for Body {
    fn from(bytes: Bytes) -> Self {
        Body::new(bytes)
    }
}

impl From<&'static str> for Body {
    fn from(text: &'static str) -> Self {
        Body::new(Bytes::from_static(text.as_bytes()))
    }
}

impl From<String> for Body {
    fn from(text: String) -> Self {
        Body::new(text)
    }
}

impl From<Vec<u8>> for Body {
    fn from(bytes: Vec<u8>) -> Self {
        Body::new(bytes)
    }
}

impl http_body::Body for Body {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, _cx: &mut TaskContext<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.get_mut().bytes.take().map(|bytes| Ok(Frame::data(bytes))))
    }

    fn is_end_stream(&self) -> bool {
        self.bytes.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.bytes.as_ref().map_or(0, |bytes| bytes.len() as u64))
    }
}
