//! What HTTP handlers can return.

use std::borrow::Cow;

use bytes::Bytes;
use celerity_proto::v1::result::Outcome;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use serde::Serialize;

use super::{HttpError, Json, Response, response_to_wire};

/// A value an HTTP handler can answer with.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an HTTP handler",
    label = "not an HTTP response",
    note = "an HTTP handler returns: `Response`, `Json<T>`, `String`, `&'static str`, `Bytes`, `Vec<u8>`, `StatusCode`, `(StatusCode, R)`, `(StatusCode, HeaderMap, R)`, `HttpError`, `()`, or `Result<R, E>` where `E` is `HttpError`, `celerity::Error` or any `std::error::Error`",
    note = "a type of your own can be one by implementing `celerity::http::IntoResponse`"
)]
pub trait IntoResponse {
    /// Builds the response.
    fn into_response(self) -> Response;
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
}

impl IntoResponse for StatusCode {
    fn into_response(self) -> Response {
        with_status(self, Response::new(Bytes::new()))
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        self.to_response()
    }
}

fn text(body: Bytes) -> Response {
    let mut response = Response::new(body);
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}

fn octets(body: Bytes) -> Response {
    let mut response = Response::new(body);
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"));
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
}

impl IntoResponse for &'static str {
    fn into_response(self) -> Response {
        text(Bytes::from_static(self.as_bytes()))
    }
}

impl IntoResponse for Cow<'static, str> {
    fn into_response(self) -> Response {
        match self {
            Cow::Borrowed(s) => s.into_response(),
            Cow::Owned(s) => s.into_response(),
        }
    }
}

impl IntoResponse for Bytes {
    fn into_response(self) -> Response {
        octets(self)
    }
}

impl IntoResponse for Vec<u8> {
    fn into_response(self) -> Response {
        octets(Bytes::from(self))
    }
}

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        match serde_json::to_vec(&self.0) {
            Ok(body) => {
                let mut response = Response::new(Bytes::from(body));
                response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
                response
            }
            Err(error) => {
                HttpError::internal(format!("the response could not be serialized as JSON: {error}")).into_response()
            }
        }
    }
}

impl<R: IntoResponse> IntoResponse for (StatusCode, R) {
    fn into_response(self) -> Response {
        with_status(self.0, self.1.into_response())
    }
}

impl<R: IntoResponse> IntoResponse for (StatusCode, HeaderMap, R) {
    fn into_response(self) -> Response {
        let mut response = with_status(self.0, self.2.into_response());
        let mut last = None;
        for (name, value) in self.1 {
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
}

/// What an HTTP handler's return value becomes on the wire: a response, or a
/// `HandlerError` for an unhandled error.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an HTTP handler",
    label = "not an HTTP response",
    note = "an HTTP handler returns: `Response`, `Json<T>`, `String`, `&'static str`, `Bytes`, `Vec<u8>`, `StatusCode`, `(StatusCode, R)`, `(StatusCode, HeaderMap, R)`, `HttpError`, `()`, or `Result<R, E>` where `E` is `HttpError`, `celerity::Error` or any `std::error::Error`"
)]
pub trait IntoHttpOutcome {
    /// Converts the return value.
    fn into_http_outcome(self) -> Outcome;
}

impl<R: IntoResponse> IntoHttpOutcome for R {
    fn into_http_outcome(self) -> Outcome {
        Outcome::Http(response_to_wire(self.into_response()))
    }
}

impl<R: IntoResponse, E: Into<crate::Error>> IntoHttpOutcome for Result<R, E> {
    fn into_http_outcome(self) -> Outcome {
        match self {
            Ok(value) => value.into_http_outcome(),
            Err(error) => match error.into().into_http() {
                Ok(http) => http.into_http_outcome(),
                Err(error) => Outcome::Error(error.to_handler_error()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(outcome: Outcome) -> celerity_proto::v1::HttpResponse {
        match outcome {
            Outcome::Http(response) => response,
            other => panic!("expected an HTTP response, got {other:?}"),
        }
    }

    #[test]
    fn plain_values() {
        let r = response("hi".into_http_outcome());
        assert_eq!(r.status, 200);
        assert_eq!(r.headers["content-type"].values, ["text/plain; charset=utf-8"]);
        assert_eq!(response(().into_http_outcome()).status, 204);
        assert_eq!(response(StatusCode::ACCEPTED.into_http_outcome()).status, 202);
        let r = response((StatusCode::CREATED, Json(serde_json::json!({"id": 1}))).into_http_outcome());
        assert_eq!(r.status, 201);
        assert_eq!(r.body, Bytes::from_static(br#"{"id":1}"#));
    }

    #[test]
    fn headers_tuple_keeps_repeated_values() {
        let mut headers = HeaderMap::new();
        headers.append("set-cookie", HeaderValue::from_static("a=1"));
        headers.append("set-cookie", HeaderValue::from_static("b=2"));
        let r = response((StatusCode::OK, headers, "x").into_http_outcome());
        assert_eq!(r.headers["set-cookie"].values, ["a=1", "b=2"]);
    }

    #[test]
    fn errors() {
        let ok: Result<&'static str, HttpError> = Err(HttpError::not_found("no"));
        assert_eq!(response(ok.into_http_outcome()).status, 404);
        let failed: Result<&'static str, std::io::Error> = Err(std::io::Error::other("boom"));
        match failed.into_http_outcome() {
            Outcome::Error(error) => {
                assert_eq!(error.message, "boom");
                assert_eq!(error.r#type, "Error");
            }
            other => panic!("expected a handler error, got {other:?}"),
        }
        let via_error: Result<(), crate::Error> = Err(HttpError::conflict("taken").into());
        assert_eq!(response(via_error.into_http_outcome()).status, 409);
    }
}
