//! HTTP as a kind of event: its marker, how a request is served, and the
//! words compile errors use for what an HTTP handler takes and returns.

use super::{HttpError, Request};
use crate::pipeline::{IntoAnswer, kind_diagnostics, whole_event_kind};

whole_event_kind! {
    /// The HTTP kind of event: a handler takes arguments from a [`Request`]
    /// and answers with a response.
    ///
    /// Name it to implement [`crate::FromEvent`] for an argument of your own
    /// (see there), or [`crate::Handler`]`<Http, _>` for a function.
    pub struct Http;
    serves: Http from Source::Http,
    event: Request = Request::from_wire,
    rejection: HttpError = |rejection: HttpError| IntoAnswer::<Http>::into_answer(rejection),
    answer: crate::reply::Reply,
}

kind_diagnostics! {
    kind: Http,
    argument: HttpArgument {
        message: "`{Self}` cannot be an argument of an HTTP handler",
        label: "not something an HTTP handler can take",
        notes: [
            "an HTTP handler takes: `Request`, `Path<T>`, `Query<T>`, `Option<Query<T>>`, `Json<T>`, `Option<Json<T>>`, `HeaderMap`, `Method`, `Bytes`, `String`, `Context`, `State<T>` and `WsSender`",
            "a type of your own can be one by implementing `celerity::FromEvent<celerity::http::Http>`",
        ],
    },
    answer: HttpAnswer {
        message: "`{Self}` cannot be returned from an HTTP handler",
        label: "not an HTTP response",
        notes: [
            "an HTTP handler returns: `Response`, `Json<T>`, `String`, `&'static str`, `Bytes`, `Vec<u8>`, `StatusCode`, `(StatusCode, R)`, `(StatusCode, H, R)` and `(H, R)` where `H` is a `HeaderMap` or an array `[(name, value); N]`, `HttpError`, `()`, or `Result<R, E>` where `E` is `HttpError`, `celerity::Error` or any `std::error::Error`",
            "a type of your own can be one by implementing `celerity::http::IntoResponse`",
        ],
    },
    handler:
        /// An `async fn` usable as an HTTP handler: every argument can be
        /// taken from a request ([`crate::FromEvent`]`<Http>`) and the return
        /// value is a response or a `Result` of one. The same as
        /// [`crate::Handler`]`<Http, Args>`, in the words of an HTTP handler.
        HttpHandler {
        message: "`{Self}` is not an HTTP handler",
        label: "not an HTTP handler",
        notes: [
            "an HTTP handler is an `async fn` whose arguments are HTTP extractors (`Request`, `Path<T>`, `Query<T>`, `Json<T>`, `HeaderMap`, `Bytes`, `String`, `Context`, `State<T>`, and `Option` of a query or JSON body) and that returns an HTTP response or `Result` of one",
        ],
    },
}
