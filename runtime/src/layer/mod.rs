//! Layers: behaviour around handlers without touching each one.
//!
//! A layer is a [`tower::Layer`] over [`Next`], the rest of the way to the
//! handler: its service takes the [`Event`] (kind, tag, [`Context`],
//! [`Payload`]) and gives the [`Answer`]. It may answer on its own without
//! going on (a rate limit's `429`, a consumer batch failed whole), change
//! the event, or look at what comes back. [`from_fn`] makes one from an
//! `async` function; tower's own generic layers (`ConcurrencyLimitLayer`,
//! `ServiceBuilder` stacks, ...) work as they are.
//!
//! For HTTP handlers, any tower layer over `http::Request` works too
//! ([`App::http_layer`](crate::App::http_layer)), such as `tower-http`'s:
//! the request reaches it as an `http::Request<`[`Body`](crate::http::Body)`>`.
//!
//! Layers go on the whole application ([`App::layer`](crate::App::layer)),
//! on one kind of handler ([`App::layer_for`](crate::App::layer_for),
//! [`App::http_layer`](crate::App::http_layer)), and on one handler
//! ([`Registration::layer`](crate::Registration::layer), or `layer = ...` in
//! the attribute). An event passes them outermost first: the application's,
//! then its kind's, then its handler's, each group in the order added; then
//! the handler's guards, then the handler. A layer runs inside the SDK's
//! panic and deadline handling: a panic in it is answered as a handler's
//! panic is, and the event's deadline covers the layers and the handler
//! together. A handler with no layer and no guard is called directly, at no
//! cost.
//!
//! ```no_run
//! use std::time::Instant;
//! use celerity::App;
//! use celerity::layer::{self, Event, Next};
//!
//! async fn hello() -> &'static str { "hello" }
//!
//! # async fn run() -> celerity::Result<()> {
//! // How long every event of every kind took, and how it ended.
//! let timing = layer::from_fn(|event: Event, next: Next| async move {
//!     let (tag, started) = (event.tag().to_string(), Instant::now());
//!     let answer = next.run(event).await;
//!     eprintln!("{tag}: {:?}, success {}", started.elapsed(), answer.is_success());
//!     answer
//! });
//! App::new().layer(timing).http("GET::/hello", hello).run().await
//! # }
//! ```

mod answer;
mod event;
mod from_fn;
mod http_step;
mod next;

use std::sync::Arc;

use tower::Service;

pub use answer::Answer;
pub(crate) use event::event_head;
pub use event::{Event, Payload};
pub use from_fn::{FromFn, FromFnLayer, from_fn};
pub use http_step::HttpNext;
pub(crate) use next::Way;
pub use next::{BoxError, Next, NextFuture, ServiceFuture};

use crate::context::Context;
use crate::kind::HandlerKind;
use crate::pipeline::{Endpoint, HandlerFuture};
use http_step::TowerHttp;
pub(crate) use http_step::{ServesHttp, answer_of};

/// A layer of the SDK's events: a [`tower::Layer`] over [`Next`] whose
/// service takes an [`Event`] and answers with an [`Answer`]. Implemented
/// for every such layer; named in bounds only.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a layer of Celerity handlers",
    label = "not a layer",
    note = "a layer is a `tower::Layer<celerity::layer::Next>` whose service is a `Service<celerity::layer::Event, Response = celerity::layer::Answer>` that is `Clone + Send + Sync`",
    note = "`celerity::layer::from_fn(|event, next| async move {{ next.run(event).await }})` makes one from an `async` function",
    note = "a layer over `http::Request`, such as one from `tower-http`, goes on HTTP handlers with `http_layer`"
)]
pub trait EventLayer: Send + Sync + 'static {
    /// Wraps `next`.
    #[doc(hidden)]
    fn __wrap(&self, next: Next) -> Next;
}

#[diagnostic::do_not_recommend]
impl<L> EventLayer for L
where
    L: tower::Layer<Next> + Send + Sync + 'static,
    L::Service: Service<Event, Response = Answer> + Clone + Send + Sync + 'static,
    <L::Service as Service<Event>>::Error: Into<BoxError>,
    <L::Service as Service<Event>>::Future: Send + 'static,
{
    fn __wrap(&self, next: Next) -> Next {
        Next::service(self.layer(next))
    }
}

/// A tower layer over `http::Request`s, for HTTP handlers: a
/// [`tower::Layer`] over [`HttpNext`] whose service takes an
/// `http::Request<`[`Body`](crate::http::Body)`>` and answers with an
/// `http::Response` of any body. Implemented for every such layer, such as
/// `tower-http`'s; named in bounds only.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tower layer of HTTP requests",
    label = "not a layer of `http::Request`s",
    note = "an HTTP layer is a `tower::Layer<celerity::layer::HttpNext>` whose service takes an `http::Request<celerity::http::Body>`, answers with an `http::Response<B>` and is `Clone + Send + Sync`",
    note = "a layer of the SDK's events, such as one from `celerity::layer::from_fn`, goes on with `layer`"
)]
pub trait HttpLayer: Send + Sync + 'static {
    /// Wraps `next`, whose HTTP events go through the layer.
    #[doc(hidden)]
    fn __wrap(&self, next: Next, limit: usize) -> Next;
}

#[diagnostic::do_not_recommend]
impl<L> HttpLayer for L
where
    L: tower::Layer<HttpNext, Service: ServesHttp> + Send + Sync + 'static,
{
    fn __wrap(&self, next: Next, limit: usize) -> Next {
        Next::way(TowerHttp::new(self, next, limit))
    }
}

/// One layer, kept until the application is composed: what it wraps the
/// way with, given the body limit.
#[derive(Clone)]
pub(crate) struct Step(Arc<dyn Fn(Next, usize) -> Next + Send + Sync>);

impl Step {
    pub(crate) fn event<L: EventLayer>(layer: L) -> Self {
        Step(Arc::new(move |next, _limit| layer.__wrap(next)))
    }

    pub(crate) fn http<L: HttpLayer>(layer: L) -> Self {
        Step(Arc::new(move |next, limit| layer.__wrap(next, limit)))
    }

    /// A step of the SDK's own, such as a handler's guards.
    pub(crate) fn from_fn(wrap: impl Fn(Next, usize) -> Next + Send + Sync + 'static) -> Self {
        Step(Arc::new(wrap))
    }

    fn wrap(&self, next: Next, limit: usize) -> Next {
        (self.0)(next, limit)
    }
}

/// The layers of an application: its own, and those of each kind, in the
/// order added.
#[derive(Clone, Default)]
pub(crate) struct Layers {
    app: Vec<Step>,
    by_kind: Vec<(HandlerKind, Step)>,
}

impl Layers {
    pub(crate) fn add(&mut self, step: Step) {
        self.app.push(step);
    }

    pub(crate) fn add_for(&mut self, kind: HandlerKind, step: Step) {
        self.by_kind.push((kind, step));
    }

    /// A tower layer over `http::Request`s is a layer of the HTTP kind,
    /// beside the others of that kind, in the order added.
    pub(crate) fn add_http<L: HttpLayer>(&mut self, layer: L) {
        self.add_for(HandlerKind::Http, Step::http(layer));
    }

    /// `endpoint`, a handler of `kind`, behind this application's layers for
    /// its kind, then `own` (its own), then `guard` (its guards): the
    /// endpoint itself when there is none.
    pub(crate) fn around(
        &self,
        kind: HandlerKind,
        own: &[Step],
        guard: Option<Step>,
        endpoint: &Arc<dyn Endpoint>,
        limit: usize,
    ) -> Arc<dyn Endpoint> {
        let kind_steps = self.by_kind.iter().filter(|(k, _)| *k == kind).map(|(_, step)| step);
        let steps: Vec<&Step> = self.app.iter().chain(kind_steps).chain(own).collect();
        if steps.is_empty() && guard.is_none() {
            return Arc::clone(endpoint);
        }
        let mut next = Next::endpoint(Arc::clone(endpoint));
        if let Some(guard) = &guard {
            next = guard.wrap(next, limit);
        }
        for step in steps.into_iter().rev() {
            next = step.wrap(next, limit);
        }
        Arc::new(Layered { kind, next, inner: Arc::clone(endpoint) })
    }
}

/// A handler behind its layers.
struct Layered {
    kind: HandlerKind,
    next: Next,
    /// The handler, for what reaches it without an event (nothing does).
    inner: Arc<dyn Endpoint>,
}

impl Endpoint for Layered {
    fn call(&self, source: Option<celerity_proto::v1::dispatch::Source>, cx: Context) -> HandlerFuture {
        let Some(source) = source else { return self.inner.call(None, cx) };
        match Payload::from_source(source) {
            Ok(payload) => self.call_payload(payload, cx),
            Err(outcome) => Box::pin(std::future::ready(outcome.into())),
        }
    }

    fn call_payload(&self, payload: Payload, cx: Context) -> HandlerFuture {
        let event = Event::new(self.kind, cx, payload);
        let next = self.next.clone();
        Box::pin(run(next, event))
    }
}

async fn run(next: Next, event: Event) -> crate::reply::Reply {
    next.run(event).await.into_wire().into()
}
