//! What HTTP handlers can return.

use std::borrow::Cow;

use bytes::Bytes;
use celerity_proto::v1::{self as pb, result::Outcome};
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use serde::Serialize;

use super::{Http, HttpError, Json, Response, response_to_wire};
use crate::pipeline::IntoAnswer;
use crate::reply::{Answered, HttpReply, Reply};

/// A value an HTTP handler can answer with: `Response`, `Json<T>`,
/// `String`, `&'static str`, `Bytes`, `Vec<u8>`, `StatusCode`,
/// `(StatusCode, R)`, `(H, R)` and `(StatusCode, H, R)` where `H` is a
/// `HeaderMap` or an array of `(name, value)` pairs ([`ResponseHeaders`]),
/// `HttpError`, `()`. A handler may also return a `Result` of one.
pub trait IntoResponse {
    /// Builds the response.
    fn into_response(self) -> Response;

    /// The response as it goes to the wire: `into_response`, converted. The
    /// SDK's own types make it directly, without a `HeaderMap` in between,
    /// and keep it as a status, a static content type and a body until it
    /// is written (see `reply.rs`); what goes on the wire is the same. Not a
    /// public API.
    #[doc(hidden)]
    fn __into_http_answer(self) -> Answered
    where
        Self: Sized,
    {
        Answered::Wire(response_to_wire(self.into_response()))
    }

    /// The response in the protocol's form. Not a public API.
    #[doc(hidden)]
    fn __into_wire_response(self) -> pb::HttpResponse
    where
        Self: Sized,
    {
        self.__into_http_answer().into_wire()
    }
}

const TEXT: &str = "text/plain; charset=utf-8";
const OCTETS: &str = "application/octet-stream";
const JSON: &str = "application/json";

/// A response with `status`, `body` and no header but `content-type`, when
/// there is one: what `response_to_wire` makes of it, kept as it is.
fn own(status: StatusCode, content_type: Option<&'static str>, body: Bytes) -> Answered {
    Answered::Own(HttpReply::new(status, content_type, body))
}

impl IntoResponse for Response {
    fn into_response(self) -> Response {
        self
    }
}

impl IntoResponse for () {
    fn into_response(self) -> Response {
        with_status(StatusCode::NO_CONTENT, Response::new(Bytes::new()))
    }

    fn __into_http_answer(self) -> Answered {
        own(StatusCode::NO_CONTENT, None, Bytes::new())
    }
}

impl IntoResponse for StatusCode {
    fn into_response(self) -> Response {
        with_status(self, Response::new(Bytes::new()))
    }

    fn __into_http_answer(self) -> Answered {
        own(self, None, Bytes::new())
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        self.to_response()
    }
}

fn text(body: Bytes) -> Response {
    let mut response = Response::new(body);
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(TEXT));
    response
}

fn octets(body: Bytes) -> Response {
    let mut response = Response::new(body);
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(OCTETS));
    response
}

fn with_status(status: StatusCode, mut response: Response) -> Response {
    *response.status_mut() = status;
    response
}

impl IntoResponse for String {
    fn into_response(self) -> Response {
        text(Bytes::from(self))
    }

    fn __into_http_answer(self) -> Answered {
        own(StatusCode::OK, Some(TEXT), Bytes::from(self))
    }
}

impl IntoResponse for &'static str {
    fn into_response(self) -> Response {
        text(Bytes::from_static(self.as_bytes()))
    }

    fn __into_http_answer(self) -> Answered {
        own(StatusCode::OK, Some(TEXT), Bytes::from_static(self.as_bytes()))
    }
}

impl IntoResponse for Cow<'static, str> {
    fn into_response(self) -> Response {
        match self {
            Cow::Borrowed(s) => s.into_response(),
            Cow::Owned(s) => s.into_response(),
        }
    }

    fn __into_http_answer(self) -> Answered {
        match self {
            Cow::Borrowed(s) => s.__into_http_answer(),
            Cow::Owned(s) => s.__into_http_answer(),
        }
    }
}

impl IntoResponse for Bytes {
    fn into_response(self) -> Response {
        octets(self)
    }

    fn __into_http_answer(self) -> Answered {
        own(StatusCode::OK, Some(OCTETS), self)
    }
}

impl IntoResponse for Vec<u8> {
    fn into_response(self) -> Response {
        octets(Bytes::from(self))
    }

    fn __into_http_answer(self) -> Answered {
        own(StatusCode::OK, Some(OCTETS), Bytes::from(self))
    }
}

fn json_body<T: Serialize>(value: &T) -> Result<Bytes, HttpError> {
    serde_json::to_vec(value)
        .map(Bytes::from)
        .map_err(|error| HttpError::internal(format!("the response could not be serialized as JSON: {error}")))
}

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        match json_body(&self.0) {
            Ok(body) => {
                let mut response = Response::new(body);
                response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
                response
            }
            Err(error) => error.into_response(),
        }
    }

    fn __into_http_answer(self) -> Answered {
        match json_body(&self.0) {
            Ok(body) => own(StatusCode::OK, Some(JSON), body),
            Err(error) => error.__into_http_answer(),
        }
    }
}

impl<R: IntoResponse> IntoResponse for (StatusCode, R) {
    fn into_response(self) -> Response {
        with_status(self.0, self.1.into_response())
    }

    fn __into_http_answer(self) -> Answered {
        self.1.__into_http_answer().with_status(self.0)
    }
}

/// Headers a handler sets beside its body: a `HeaderMap`, or an array of
/// `(name, value)` pairs such as `[(header::LOCATION, "/orders/7")]`. Each
/// name given replaces what the body set for it (a `content-type`, say);
/// a name given twice keeps both values, as `set-cookie` needs. A name or
/// value that is not valid is answered with a `500` naming it.
///
/// ```
/// use celerity::http::{HeaderName, StatusCode, header};
///
/// async fn create() -> (StatusCode, [(HeaderName, String); 1], &'static str) {
///     let id = 7;
///     (StatusCode::CREATED, [(header::LOCATION, format!("/orders/{id}"))], "created")
/// }
/// ```
pub trait ResponseHeaders: sealed::Sealed {
    /// The headers, or the error answered when one is not a valid header.
    #[doc(hidden)]
    fn __into_header_map(self) -> Result<HeaderMap, HttpError>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for http::HeaderMap {}
    impl<K, V, const N: usize> Sealed for [(K, V); N] {}
}

impl ResponseHeaders for HeaderMap {
    fn __into_header_map(self) -> Result<HeaderMap, HttpError> {
        Ok(self)
    }
}

impl<K, V, const N: usize> ResponseHeaders for [(K, V); N]
where
    K: TryInto<HeaderName>,
    K::Error: std::fmt::Display,
    V: TryInto<HeaderValue>,
    V::Error: std::fmt::Display,
{
    fn __into_header_map(self) -> Result<HeaderMap, HttpError> {
        let mut headers = HeaderMap::with_capacity(N);
        for (name, value) in self {
            let name = name.try_into().map_err(|error| {
                HttpError::internal(format!("the handler answered with a header name that is not valid: {error}"))
            })?;
            let value = value.try_into().map_err(|error| {
                HttpError::internal(format!("the handler answered with a value of `{name}` that is not valid: {error}"))
            })?;
            headers.append(name, value);
        }
        Ok(headers)
    }
}

/// `response` with `headers` set: each name in `headers` replaces what the
/// response had for it.
fn with_headers(mut response: Response, headers: HeaderMap) -> Response {
    let mut last = None;
    for (name, value) in headers {
        // `HeaderMap`'s owned iterator yields the name once, then `None`
        // for each further value of the same name.
        let name = match name {
            Some(name) => {
                response.headers_mut().remove(&name);
                last = Some(name.clone());
                name
            }
            None => match &last {
                Some(name) => name.clone(),
                None => continue,
            },
        };
        response.headers_mut().append(name, value);
    }
    response
}

impl<H: ResponseHeaders, R: IntoResponse> IntoResponse for (H, R) {
    fn into_response(self) -> Response {
        match self.0.__into_header_map() {
            Ok(headers) => with_headers(self.1.into_response(), headers),
            Err(error) => error.into_response(),
        }
    }
}

impl<H: ResponseHeaders, R: IntoResponse> IntoResponse for (StatusCode, H, R) {
    fn into_response(self) -> Response {
        // A header that is not valid is answered as the error it is, not
        // with the handler's status.
        match self.1.__into_header_map() {
            Ok(headers) => with_status(self.0, with_headers(self.2.into_response(), headers)),
            Err(error) => error.into_response(),
        }
    }
}

/// A response, on the wire.
impl<R: IntoResponse> IntoAnswer<Http> for R {
    fn into_answer(self) -> Reply {
        self.__into_http_answer().into()
    }
}

/// A response, or an error: an [`HttpError`] (directly or carried in a
/// `celerity::Error`) is answered as the response it describes, any other
/// error as a `HandlerError`, which the runtime answers with a 500.
impl<R: IntoResponse, E: Into<crate::error::Error>> IntoAnswer<Http> for Result<R, E> {
    fn into_answer(self) -> Reply {
        match self {
            Ok(value) => IntoAnswer::<Http>::into_answer(value),
            Err(error) => match error.into().into_http() {
                Ok(http) => IntoAnswer::<Http>::into_answer(http),
                Err(error) => Outcome::Error(error.to_handler_error()).into(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(value: impl IntoAnswer<Http>) -> Outcome {
        IntoAnswer::<Http>::into_answer(value).into_outcome()
    }

    fn response(outcome: Outcome) -> celerity_proto::v1::HttpResponse {
        match outcome {
            Outcome::Http(response) => response,
            other => panic!("expected an HTTP response, got {other:?}"),
        }
    }

    #[test]
    fn plain_values() {
        let r = response(answer("hi"));
        assert_eq!(r.status, 200);
        assert_eq!(r.headers["content-type"].values, ["text/plain; charset=utf-8"]);
        assert_eq!(response(answer(())).status, 204);
        assert_eq!(response(answer(StatusCode::ACCEPTED)).status, 202);
        let r = response(answer((StatusCode::CREATED, Json(serde_json::json!({"id": 1})))));
        assert_eq!(r.status, 201);
        assert_eq!(r.body, Bytes::from_static(br#"{"id":1}"#));
    }

    #[test]
    fn headers_tuple_keeps_repeated_values() {
        let mut headers = HeaderMap::new();
        headers.append("set-cookie", HeaderValue::from_static("a=1"));
        headers.append("set-cookie", HeaderValue::from_static("b=2"));
        let r = response(answer((StatusCode::OK, headers, "x")));
        assert_eq!(r.headers["set-cookie"].values, ["a=1", "b=2"]);
    }

    #[test]
    fn header_arrays_set_headers_beside_the_body() {
        let r = response(answer((StatusCode::CREATED, [(header::LOCATION, "/orders/7")], "made")));
        assert_eq!(r.status, 201);
        assert_eq!(r.headers["location"].values, ["/orders/7"]);
        assert_eq!(r.headers["content-type"].values, ["text/plain; charset=utf-8"]);
        assert_eq!(r.body, Bytes::from_static(b"made"));

        // A name replaces what the body set; a name given twice keeps both.
        let r = response(answer((
            [("content-type", "text/csv"), ("set-cookie", "a=1"), ("set-cookie", "b=2")],
            String::from("id\n7\n"),
        )));
        assert_eq!(r.status, 200);
        assert_eq!(r.headers["content-type"].values, ["text/csv"]);
        assert_eq!(r.headers["set-cookie"].values, ["a=1", "b=2"]);

        // Owned names and values, as built at run time.
        let r = response(answer(([(String::from("x-order"), 7.to_string())], ())));
        assert_eq!((r.status, r.headers["x-order"].values.as_slice()), (204, ["7".to_string()].as_slice()));
    }

    #[test]
    fn a_header_that_is_not_valid_is_a_500_naming_it() {
        let r = response(answer((StatusCode::CREATED, [("bad name", "v")], "x")));
        assert_eq!(r.status, 500);
        assert!(String::from_utf8_lossy(&r.body).contains("header name that is not valid"), "{r:?}");
        let r = response(answer(([("x-note", "line\nbreak")], "x")));
        assert_eq!(r.status, 500);
        assert!(String::from_utf8_lossy(&r.body).contains("value of `x-note` that is not valid"), "{r:?}");
    }

    #[test]
    fn errors() {
        let ok: Result<&'static str, HttpError> = Err(HttpError::not_found("no"));
        assert_eq!(response(answer(ok)).status, 404);
        let failed: Result<&'static str, std::io::Error> = Err(std::io::Error::other("boom"));
        match answer(failed) {
            Outcome::Error(error) => {
                assert_eq!(error.message, "boom");
                assert_eq!(error.r#type, "Error");
            }
            other => panic!("expected a handler error, got {other:?}"),
        }
        let via_error: Result<(), crate::error::Error> = Err(HttpError::conflict("taken").into());
        assert_eq!(response(answer(via_error)).status, 409);
    }

    /// The SDK's own types build the wire response directly: it must be what
    /// converting their `Response` gives.
    #[test]
    fn the_direct_wire_form_is_the_converted_response() {
        fn same<R: IntoResponse + Clone + std::fmt::Debug>(value: R) {
            assert_eq!(
                value.clone().__into_wire_response(),
                response_to_wire(value.clone().into_response()),
                "{value:?}"
            );
            let with_status = (StatusCode::ACCEPTED, value);
            assert_eq!(
                with_status.clone().__into_wire_response(),
                response_to_wire(with_status.into_response()),
                "with a status"
            );
        }
        same(());
        same(StatusCode::IM_A_TEAPOT);
        same(String::from("hello"));
        same("static");
        same(Cow::Borrowed("borrowed"));
        same(Cow::<'static, str>::Owned("owned".to_string()));
        same(Bytes::from_static(b"\x00\x01"));
        same(vec![1u8, 2, 3]);
        same(Json(serde_json::json!({"id": 1, "tags": ["a"]})));
        same(HttpError::not_found("no such order"));
        let mut headers = HeaderMap::new();
        headers.append("set-cookie", HeaderValue::from_static("a=1"));
        same((StatusCode::CREATED, headers, Bytes::from_static(b"x")));
        same((StatusCode::SEE_OTHER, [(header::LOCATION, "/orders/7")], ()));

        struct NotJson;
        impl Serialize for NotJson {
            fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("no"))
            }
        }
        assert_eq!(Json(NotJson).__into_wire_response(), response_to_wire(Json(NotJson).into_response()));
        assert_eq!(Json(NotJson).__into_wire_response().status, 500);
    }
}
