//! tower layers over `http::Request`s around HTTP handlers: the request is
//! handed to the layers as an `http::Request<Body>`, and comes back to the
//! handler as the SDK's own once they are done with it.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use celerity_proto::v1::result::Outcome;
use http::StatusCode;
use tower::{Service, ServiceExt};

use super::{Answer, BoxError, Event, Next, NextFuture, Payload, Way};
use crate::context::Context;
use crate::error::Error;
use crate::http::{Body, HttpError, IntoResponse, bridge};
use crate::kind::HandlerKind;

/// The rest of the way to an HTTP handler, as the innermost service of a
/// tower HTTP layer: a [`Service`] of `http::Request<B>` for any body `B`,
/// which reads the body (up to the SDK's message limit), hands the request
/// on as the SDK's and gives back the handler's response as an
/// `http::Response<Body>`.
///
/// A handler's answer that is not a response (a `HandlerError`, which the
/// runtime answers with a 500) passes the layers as a `500` and reaches the
/// runtime as the error it was.
#[derive(Clone)]
pub struct HttpNext {
    next: Next,
    limit: usize,
}

/// A tower service of `http::Request`s the SDK can call: cloned per
/// request, its future and its response's body sent across tasks, its
/// errors made into the SDK's. What the blanket impls of
/// [`HttpService`](crate::http::HttpService) and
/// [`HttpLayer`](super::HttpLayer) ask of a user's service (a service, or
/// the service a layer makes), said once. Public only so that those public
/// impls may name it: it is not exported.
pub trait ServesHttp:
    Service<
        http::Request<Body>,
        Response = http::Response<<Self as ServesHttp>::ResponseBody>,
        Error: Into<BoxError>,
        Future: Send + 'static,
    > + Clone
    + Send
    + Sync
    + 'static
{
    /// The body of its responses.
    type ResponseBody: http_body::Body<Data: Send, Error: Into<BoxError>> + Send + 'static;
}

impl<S, B> ServesHttp for S
where
    S: Service<http::Request<Body>, Response = http::Response<B>> + Clone + Send + Sync + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type ResponseBody = B;
}

/// A non-HTTP answer crossing the tower layers inside a `500`.
#[derive(Clone)]
struct Unsent(Answer);

impl<B> Service<http::Request<B>> for HttpNext
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<http::Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut TaskContext<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let next = self.next.clone();
        let limit = self.limit;
        let cx = request.extensions().get::<Context>().cloned();
        Box::pin(async move {
            let Some(cx) = cx else {
                let error =
                    HttpError::internal("a tower layer dropped the request's extensions, and with them its event");
                return Ok(bridge::response_into_http(error.__into_wire_response()));
            };
            let request = match bridge::from_http(request, limit).await {
                Ok(request) => request,
                Err(refused) => return Ok(bridge::response_into_http(refused.__into_wire_response())),
            };
            let answer = next.run(Event::new(HandlerKind::Http, cx, Payload::Http(request))).await;
            Ok(match answer.into_wire() {
                Outcome::Http(response) => bridge::response_into_http(response),
                other => {
                    let mut response = http::Response::new(Body::empty());
                    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
                    response.extensions_mut().insert(Unsent(Answer::from_wire(other)));
                    response
                }
            })
        })
    }
}

/// A tower HTTP layer's service around [`HttpNext`], as a step of the way
/// for events of every kind: HTTP events go through it, others straight on.
pub(crate) struct TowerHttp<S> {
    service: S,
    next: Next,
    limit: usize,
}

impl<S> TowerHttp<S> {
    /// The step made by `layer` around the rest of the way, `next`.
    pub(crate) fn new<L>(layer: &L, next: Next, limit: usize) -> Self
    where
        L: tower::Layer<HttpNext, Service = S>,
    {
        let service = layer.layer(HttpNext { next: next.clone(), limit });
        TowerHttp { service, next, limit }
    }
}

impl<S: ServesHttp> Way for TowerHttp<S> {
    fn call(&self, event: Event) -> NextFuture {
        if event.kind() != HandlerKind::Http || !matches!(event.payload(), Payload::Http(_)) {
            return self.next.clone().run(event);
        }
        let (_, cx, payload) = event.into_parts();
        let Payload::Http(request) = payload else { unreachable!("checked above") };
        let request = bridge::into_http(request, &cx);
        NextFuture::layer(answer_of(self.service.clone(), request, self.limit))
    }
}

/// What `service` answers `request` with, as an [`Answer`]: its response,
/// the body collected up to `limit` bytes; a non-HTTP answer that crossed
/// it inside a `500` as it was; its error as a `HandlerError`.
pub(crate) async fn answer_of<S: ServesHttp>(service: S, request: http::Request<Body>, limit: usize) -> Answer {
    let response = match service.oneshot(request).await {
        Ok(response) => response,
        Err(error) => return Answer::error(Error::from(error.into())),
    };
    if let Some(Unsent(answer)) = response.extensions().get::<Unsent>() {
        return answer.clone();
    }
    match bridge::response_from_http(response, limit).await {
        Ok(response) => Answer::from_wire(Outcome::Http(response)),
        Err(error) => Answer::error(error),
    }
}
