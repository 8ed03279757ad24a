//! A layer from an `async` function of the event and the way on.

use std::convert::Infallible;
use std::future::Future;
use std::task::{Context as TaskContext, Poll};

use futures_util::FutureExt;
use futures_util::future::Map;
use tower::{Layer, Service};

use super::{Answer, Event, Next};

/// A layer from an `async` function that takes the [`Event`] and the
/// [`Next`] step, and gives the [`Answer`]: it may look at the event,
/// change it, answer on its own without calling `next`, or call
/// `next.run(event)` and look at (or change) what comes back.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use celerity::http::StatusCode;
/// use celerity::layer::{self, Answer, Event, Next};
///
/// // Answers 429 once the application has served 1000 events.
/// let served = Arc::new(AtomicU64::new(0));
/// let at_most_1000 = layer::from_fn(move |event: Event, next: Next| {
///     let served = Arc::clone(&served);
///     async move {
///         if served.fetch_add(1, Ordering::Relaxed) >= 1000 {
///             return Answer::http((StatusCode::TOO_MANY_REQUESTS, "try again later"));
///         }
///         next.run(event).await
///     }
/// });
///
/// async fn hello() -> &'static str { "hello" }
/// let app = celerity::App::new().layer(at_most_1000).http("GET::/hello", hello);
/// # drop(app);
/// ```
pub fn from_fn<F, Fut>(f: F) -> FromFnLayer<F>
where
    F: Fn(Event, Next) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Answer> + Send + 'static,
{
    FromFnLayer { f }
}

/// The layer [`from_fn`] makes.
#[derive(Debug, Clone)]
pub struct FromFnLayer<F> {
    f: F,
}

impl<F: Clone> Layer<Next> for FromFnLayer<F> {
    type Service = FromFn<F>;

    fn layer(&self, next: Next) -> FromFn<F> {
        FromFn { f: self.f.clone(), next }
    }
}

/// The service of a [`FromFnLayer`]: its function, with the way on.
#[derive(Clone)]
pub struct FromFn<F> {
    f: F,
    next: Next,
}

impl<F, Fut> Service<Event> for FromFn<F>
where
    F: Fn(Event, Next) -> Fut,
    Fut: Future<Output = Answer>,
{
    type Response = Answer;
    type Error = Infallible;
    type Future = Map<Fut, fn(Answer) -> Result<Answer, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut TaskContext<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, event: Event) -> Self::Future {
        (self.f)(event, self.next.clone()).map(Ok)
    }
}
