//! The rest of the way to the handler, as a tower service: what a layer
//! calls to go on.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use futures_util::FutureExt;
use tower::util::BoxCloneSyncService;
use tower::{Service, ServiceExt};

use super::{Answer, Event};
use crate::error::Error;
use crate::kind;
use crate::pipeline::Endpoint;

/// An error a layer's service may fail with: any error, boxed.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The rest of the way to the handler: the layers inside this one, then the
/// handler. A tower [`Service`] of [`Event`]s that never fails (a failure is
/// an [`Answer`]), cheap to clone.
///
/// A layer is a [`tower::Layer<Next>`]; [`super::from_fn`] makes one from
/// an `async` function that takes the event and `Next`.
#[derive(Clone)]
pub struct Next {
    service: BoxCloneSyncService<Event, Answer, Infallible>,
}

impl Next {
    /// The handler itself, at the end of the way.
    pub(crate) fn endpoint(endpoint: Arc<dyn Endpoint>) -> Self {
        Next::service(HandlerService { endpoint })
    }

    /// `service` as the way on: its errors answered as `HandlerError`s.
    pub(crate) fn service<S>(service: S) -> Self
    where
        S: Service<Event, Response = Answer> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        Next { service: BoxCloneSyncService::new(Failsafe { service }) }
    }

    /// Sends `event` on and waits for its answer.
    pub async fn run(self, event: Event) -> Answer {
        match self.service.oneshot(event).await {
            Ok(answer) => answer,
            Err(never) => match never {},
        }
    }
}

impl Service<Event> for Next {
    type Response = Answer;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Answer, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), Infallible>> {
        self.service.poll_ready(cx)
    }

    fn call(&mut self, event: Event) -> Self::Future {
        self.service.call(event)
    }
}

/// A layer's service that may fail, or not be ready: made ready for each
/// event, its failures answered as `HandlerError`s.
#[derive(Clone)]
struct Failsafe<S> {
    service: S,
}

impl<S> Service<Event> for Failsafe<S>
where
    S: Service<Event, Response = Answer> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = Answer;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Answer, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut TaskContext<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, event: Event) -> Self::Future {
        // Readiness is awaited per event, on a clone, as `oneshot` does: a
        // layer that is not ready (a concurrency limit) holds that event
        // back, not the way for every other.
        let service = self.service.clone();
        Box::pin(async move {
            Ok(match service.oneshot(event).await {
                Ok(answer) => answer,
                Err(error) => Answer::error(Error::from(error.into())),
            })
        })
    }
}

/// The handler, as the innermost service.
#[derive(Clone)]
struct HandlerService {
    endpoint: Arc<dyn Endpoint>,
}

impl Service<Event> for HandlerService {
    type Response = Answer;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Answer, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut TaskContext<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, event: Event) -> Self::Future {
        let (kind, cx, payload) = event.into_parts();
        if payload.kind() != kind {
            // A layer turned the payload into another kind's.
            let outcome = kind::wrong_source(kind, cx.handler_name(), Some(payload.kind()), cx.tag());
            return Box::pin(std::future::ready(Ok(Answer::from_wire(outcome))));
        }
        Box::pin(self.endpoint.call_payload(payload, cx).map(|outcome| Ok(Answer::from_wire(outcome))))
    }
}
