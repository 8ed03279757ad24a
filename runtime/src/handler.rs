//! Handlers with their kind's argument extraction and result conversion
//! built in, behind one object-safe trait the driver calls.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use celerity_proto::v1::{Dispatch, HandlerError, dispatch::Source, result::Outcome};

use crate::context::Context;
use crate::http::{FromRequest, IntoHttpOutcome, Request};
use crate::registry::HandlerKind;
use crate::session::error_type;

/// The future a handler call returns.
pub type HandlerFuture = Pin<Box<dyn Future<Output = Outcome> + Send + 'static>>;

/// A handler ready to run: takes the dispatched event and its context, and
/// returns the outcome to send. Built from an `async fn` by
/// [`crate::Registration`]'s constructors or the attribute macros.
pub trait Handler: Send + Sync + 'static {
    /// Runs the handler for one event.
    fn call(&self, dispatch: Dispatch, cx: Context) -> HandlerFuture;
}

/// The kind of source an event carries, for messages.
pub(crate) fn source_kind(source: &Option<Source>) -> &'static str {
    match source {
        Some(Source::Http(_)) => "an HTTP request",
        Some(Source::Websocket(_)) => "a WebSocket message",
        Some(Source::Consumer(_)) => "a consumer batch",
        Some(Source::Schedule(_)) => "a schedule trigger",
        Some(Source::Custom(_)) => "a custom invocation",
        None => "no source at all",
    }
}

/// The answer to an event whose source does not fit the handler.
pub(crate) fn wrong_source(kind: HandlerKind, source: &Option<Source>, cx: &Context) -> Outcome {
    Outcome::Error(HandlerError {
        message: format!(
            "handler `{}` serves {} events, but the runtime sent {} for tag {}",
            cx.handler_name(),
            kind,
            source_kind(source),
            crate::excerpt::quoted(cx.tag())
        ),
        r#type: error_type::WRONG_SOURCE.to_string(),
        stack: String::new(),
    })
}

/// The `HandlerError.type` answering an outcome whose shape the event's
/// source cannot use.
pub(crate) const WRONG_OUTCOME: &str = "WrongOutcomeShape";

/// Keeps an outcome the source of a `kind` handler can use (its own shape, or
/// a `HandlerError`); any other shape, which a hand-written conversion could
/// produce, becomes a `HandlerError` naming both rather than being sent.
pub(crate) fn expect_shape(kind: HandlerKind, outcome: Outcome, cx: &Context) -> Outcome {
    let fits = matches!(
        (kind, &outcome),
        (_, Outcome::Error(_))
            | (HandlerKind::Http, Outcome::Http(_))
            | (HandlerKind::WebSocket, Outcome::Websocket(_))
            | (HandlerKind::Consumer, Outcome::Consumer(_))
            | (HandlerKind::Schedule, Outcome::Schedule(_))
            | (HandlerKind::Custom, Outcome::Custom(_))
    );
    if fits {
        return outcome;
    }
    let shape = match outcome {
        Outcome::Http(_) => "an HTTP response",
        Outcome::Websocket(_) => "a WebSocket Ack",
        Outcome::Consumer(_) => "a batch result",
        Outcome::Schedule(_) => "a schedule Ack",
        Outcome::Custom(_) => "a custom invocation result",
        Outcome::Error(_) => "an error",
    };
    Outcome::Error(HandlerError {
        message: format!(
            "handler `{}` serves {} events, but answered with {shape}, which the runtime cannot use for tag {}",
            cx.handler_name(),
            kind,
            crate::excerpt::quoted(cx.tag())
        ),
        r#type: WRONG_OUTCOME.to_string(),
        stack: String::new(),
    })
}

pub(crate) fn ready(outcome: Outcome) -> HandlerFuture {
    Box::pin(std::future::ready(outcome))
}

/// An HTTP handler from a function of the request and context. The attribute
/// macro builds its argument extraction inside such a function.
pub struct HttpFn<F> {
    f: F,
}

impl<F> HttpFn<F> {
    /// Wraps `f`.
    pub fn new(f: F) -> Self {
        HttpFn { f }
    }
}

impl<F, Fut> Handler for HttpFn<F>
where
    F: Fn(Request, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Outcome> + Send + 'static,
{
    fn call(&self, dispatch: Dispatch, cx: Context) -> HandlerFuture {
        match dispatch.source {
            Some(Source::Http(request)) => match Request::from_wire(request) {
                Ok(request) => Box::pin((self.f)(request, cx)),
                Err(error) => ready(error.into_http_outcome()),
            },
            other => ready(wrong_source(HandlerKind::Http, &other, &cx)),
        }
    }
}

/// An `async fn` usable as an HTTP handler: every argument implements
/// [`FromRequest`] and the return value [`crate::http::IntoResponse`] (or a
/// `Result` of one).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an HTTP handler",
    label = "not an HTTP handler",
    note = "an HTTP handler is an `async fn` whose arguments are HTTP extractors (`Request`, `Path<T>`, `Query<T>`, `Json<T>`, `HeaderMap`, `Bytes`, `String`, `Context`, `State<T>`) and that returns an HTTP response or `Result` of one"
)]
pub trait HttpHandler<Args>: Clone + Send + Sync + 'static {
    /// Builds the type-erased handler.
    fn into_handler(self) -> Arc<dyn Handler>;
}

macro_rules! http_handler_impl {
    ($($arg:ident),*; $last:ident) => {
        impl<F, Fut, R, $($arg,)* $last> HttpHandler<($($arg,)* $last,)> for F
        where
            F: Fn($($arg,)* $last) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = R> + Send + 'static,
            R: IntoHttpOutcome,
            $($arg: FromRequest + Send + 'static,)*
            $last: FromRequest + Send + 'static,
        {
            #[allow(non_snake_case, unused_mut)]
            fn into_handler(self) -> Arc<dyn Handler> {
                const {
                    assert!(
                        0 $(+ $arg::READS_BODY as usize)* + $last::READS_BODY as usize <= 1,
                        "an HTTP handler can read the request body with one argument only"
                    )
                };
                let f = self;
                Arc::new(HttpFn::new(move |mut request: Request, cx: Context| {
                    let f = f.clone();
                    async move {
                        $(
                            let $arg = match $arg::from_request(&mut request, &cx) {
                                Ok(value) => value,
                                Err(error) => return error.into_http_outcome(),
                            };
                        )*
                        let $last = match $last::from_request_owned(request, &cx) {
                            Ok(value) => value,
                            Err(error) => return error.into_http_outcome(),
                        };
                        f($($arg,)* $last).await.into_http_outcome()
                    }
                }))
            }
        }
    };
}

impl<F, Fut, R> HttpHandler<()> for F
where
    F: Fn() -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoHttpOutcome,
{
    fn into_handler(self) -> Arc<dyn Handler> {
        let f = self;
        Arc::new(HttpFn::new(move |_request: Request, _cx: Context| {
            let f = f.clone();
            async move { f().await.into_http_outcome() }
        }))
    }
}

http_handler_impl!(; A1);
http_handler_impl!(A1; A2);
http_handler_impl!(A1, A2; A3);
http_handler_impl!(A1, A2, A3; A4);
http_handler_impl!(A1, A2, A3, A4; A5);
http_handler_impl!(A1, A2, A3, A4, A5; A6);
http_handler_impl!(A1, A2, A3, A4, A5, A6; A7);
http_handler_impl!(A1, A2, A3, A4, A5, A6, A7; A8);
