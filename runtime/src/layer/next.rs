//! The rest of the way to the handler, as a tower service: what a layer
//! calls to go on.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, ready};

use celerity_proto::v1::result::Outcome;
use tower::{Service, ServiceExt};

use super::{Answer, Event};
use crate::error::Error;
use crate::kind;
use crate::pipeline::{Endpoint, HandlerFuture};

/// An error a layer's service may fail with: any error, boxed.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The rest of the way to the handler: the layers inside this one, then the
/// handler. A tower [`Service`] of [`Event`]s that never fails (a failure is
/// an [`Answer`]) and is always ready; cloning it is a reference count.
///
/// A layer is a [`tower::Layer<Next>`]; [`super::from_fn`] makes one from
/// an `async` function that takes the event and `Next`.
#[derive(Clone)]
pub struct Next {
    way: Arc<dyn Way>,
}

/// One step of the way, shared by every event that takes it.
pub(crate) trait Way: Send + Sync + 'static {
    fn call(&self, event: Event) -> NextFuture;
}

impl Next {
    /// The handler itself, at the end of the way.
    pub(crate) fn endpoint(endpoint: Arc<dyn Endpoint>) -> Self {
        Next::way(HandlerStep { endpoint })
    }

    /// A step of the SDK's own.
    pub(crate) fn way(way: impl Way) -> Self {
        Next { way: Arc::new(way) }
    }

    /// `service` as the way on: made ready for each event on a clone of its
    /// own (so that a layer that is not ready, such as a concurrency limit,
    /// holds back that event only), its errors answered as `HandlerError`s.
    pub(crate) fn service<S>(service: S) -> Self
    where
        S: Service<Event, Response = Answer> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        Next::way(ServiceStep { service })
    }

    /// Sends `event` on and waits for its answer.
    pub fn run(self, event: Event) -> NextFuture {
        self.way.call(event)
    }
}

impl Service<Event> for Next {
    type Response = Answer;
    type Error = Infallible;
    type Future = ServiceFuture<NextFuture>;

    fn poll_ready(&mut self, _cx: &mut TaskContext<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, event: Event) -> Self::Future {
        ServiceFuture { future: self.way.call(event) }
    }
}

/// The future of an event's answer from the rest of the way.
#[must_use = "the event goes on only when its answer is awaited"]
pub struct NextFuture {
    inner: Running,
}

enum Running {
    /// The handler's own future: its outcome is the answer.
    Handler(HandlerFuture),
    /// A layer's.
    Layer(Pin<Box<dyn Future<Output = Answer> + Send>>),
}

impl NextFuture {
    pub(crate) fn layer(future: impl Future<Output = Answer> + Send + 'static) -> Self {
        NextFuture { inner: Running::Layer(Box::pin(future)) }
    }
}

impl Future for NextFuture {
    type Output = Answer;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Answer> {
        match &mut self.get_mut().inner {
            Running::Handler(future) => future.as_mut().poll(cx).map(|reply| Answer::from_wire(reply.into_outcome())),
            Running::Layer(future) => future.as_mut().poll(cx),
        }
    }
}

/// The future of [`Next`] called as a tower service: its answer, as a
/// result that cannot fail.
#[must_use = "futures do nothing unless polled"]
pub struct ServiceFuture<F> {
    future: F,
}

impl<F: Future<Output = Answer> + Unpin> Future for ServiceFuture<F> {
    type Output = Result<Answer, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let answer = ready!(Pin::new(&mut self.get_mut().future).poll(cx));
        Poll::Ready(Ok(answer))
    }
}

/// A layer's service, as a step.
struct ServiceStep<S> {
    service: S,
}

impl<S> Way for ServiceStep<S>
where
    S: Service<Event, Response = Answer> + Clone + Send + Sync + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    fn call(&self, event: Event) -> NextFuture {
        let service = self.service.clone();
        NextFuture::layer(async move {
            match service.oneshot(event).await {
                Ok(answer) => answer,
                Err(error) => Answer::error(Error::from(error.into())),
            }
        })
    }
}

/// The handler, as the last step.
struct HandlerStep {
    endpoint: Arc<dyn Endpoint>,
}

impl Way for HandlerStep {
    fn call(&self, event: Event) -> NextFuture {
        let (kind, cx, payload) = event.into_parts();
        if payload.kind() != kind {
            // A layer turned the payload into another kind's.
            let outcome: Outcome = kind::wrong_source(kind, cx.handler_name(), Some(payload.kind()), cx.tag());
            return NextFuture { inner: Running::Handler(Box::pin(std::future::ready(outcome.into()))) };
        }
        NextFuture { inner: Running::Handler(self.endpoint.call_payload(payload, cx)) }
    }
}
