//! A tower service of `http::Request`s, such as an axum `Router`, served as
//! HTTP handlers: [`App::service`](crate::App::service) names the tags it
//! serves, and each request of those tags reaches it as it came.
//!
//! The service gets an `http::Request<`[`Body`](super::Body)`>` with the original
//! method, the raw path (still percent-encoded, as the caller sent it), the
//! query written back from the parameters the runtime decoded, every header
//! and the body. The event's [`Context`] is in the request's extensions
//! (`Extension<celerity::Context>` in axum). The service does its own
//! routing, so axum's `Path`, `Query`, `Json`, `State` and its layers work
//! as they do behind hyper.
//!
//! Its response goes back with its status and every header value, its body
//! collected up to the largest message the runtime takes
//! (`CELERITY_MAX_MESSAGE_BYTES`); a body past that is a `HandlerError`
//! naming the limit, never a response cut short. An error from the service
//! is a `HandlerError` too, and a panic in it is answered as a handler's
//! panic. The application's layers and guards wrap a service as they wrap
//! any HTTP handler.

use std::sync::Arc;

use celerity_proto::v1::dispatch::Source;

use super::bridge;
use crate::context::Context;
use crate::kind::{self, HandlerKind};
use crate::layer::{self, Payload, ServesHttp};
use crate::pipeline::{Endpoint, HandlerFuture};
use crate::session::DEFAULT_MAX_MESSAGE_BYTES;

/// A service of `http::Request<Body>` that the SDK can serve: implemented
/// for every `Clone + Send + Sync` [`tower::Service`] taking an
/// `http::Request<`[`Body`](super::Body)`>` and answering with an `http::Response` of
/// any `http-body` 1 body, such as an axum `Router` (with its state given)
/// or a `tower::ServiceBuilder` stack. Named in bounds only.
///
/// ```no_run
/// use std::convert::Infallible;
///
/// use axum::http::{Request, Response};
/// use axum::{Router, routing::get};
/// use celerity::http::Body;
///
/// #[celerity::main]
/// async fn main() -> celerity::App {
///     let router = Router::new().route("/orders/{id}", get(|| async { "an order" }));
///     // Any tower service will do, such as one made from a function.
///     let version = tower::service_fn(|_request: Request<Body>| async {
///         Ok::<_, Infallible>(Response::new(Body::from("1.4.2")))
///     });
///     celerity::App::new().service(["GET::/orders/{id}"], router).service(["GET::/version"], version)
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a service of HTTP requests the SDK can serve",
    label = "not a service of `http::Request<celerity::http::Body>`",
    note = "a service is a `tower::Service<http::Request<celerity::http::Body>>` answering with an `http::Response<B>` for an `http-body` 1 body `B`, and is `Clone + Send + Sync + 'static`",
    note = "an axum `Router` is one once its state is given: `Router::new().route(..).with_state(state)`",
    note = "a handler function goes on with `App::http(tag, handler)`"
)]
pub trait HttpService: Send + Sync + 'static {
    #[doc(hidden)]
    fn __endpoint(self) -> ServiceEndpoint;
}

/// A service as the SDK serves it. Not a public API.
#[doc(hidden)]
pub struct ServiceEndpoint(pub(crate) Arc<dyn Endpoint>);

#[diagnostic::do_not_recommend]
impl<S: ServesHttp> HttpService for S {
    fn __endpoint(self) -> ServiceEndpoint {
        ServiceEndpoint(Arc::new(Served { service: self, limit: DEFAULT_MAX_MESSAGE_BYTES }))
    }
}

/// A service as a handler's endpoint, with the limit its responses'
/// bodies are collected to: the largest message the runtime takes.
struct Served<S> {
    service: S,
    limit: usize,
}

impl<S: ServesHttp> Endpoint for Served<S> {
    fn call(&self, source: Option<Source>, cx: Context) -> HandlerFuture {
        match source.map(Payload::from_source) {
            Some(Ok(payload)) => self.call_payload(payload, cx),
            // A request the SDK cannot read is answered as any HTTP
            // handler's would be.
            Some(Err(outcome)) => Box::pin(std::future::ready(outcome.into())),
            None => unserved(None, &cx),
        }
    }

    fn call_payload(&self, payload: Payload, cx: Context) -> HandlerFuture {
        match payload {
            Payload::Http(request) => {
                let request = bridge::into_http(request, &cx);
                let answer = layer::answer_of(self.service.clone(), request, self.limit);
                Box::pin(async move { answer.await.into_wire().into() })
            }
            other => unserved(Some(other.kind()), &cx),
        }
    }

    fn with_limit(&self, limit: usize) -> Option<Arc<dyn Endpoint>> {
        Some(Arc::new(Served { service: self.service.clone(), limit }))
    }
}

/// The answer to an event that is not an HTTP request.
fn unserved(source: Option<HandlerKind>, cx: &Context) -> HandlerFuture {
    let outcome = kind::wrong_source(HandlerKind::Http, cx.handler_name(), source, cx.tag());
    Box::pin(std::future::ready(outcome.into()))
}
