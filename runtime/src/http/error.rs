//! Errors a handler answers over HTTP on purpose.

use std::fmt;

use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use serde::Serialize;

use super::Response;

/// An HTTP error response a handler raises on purpose: a status and the JSON
/// body the Celerity SDKs agree on, `{"message": "...", "details": [...]}`.
///
/// ```
/// use celerity::http::{HttpError, StatusCode};
/// let error = HttpError::not_found("no such order");
/// assert_eq!(error.status(), StatusCode::NOT_FOUND);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpError {
    status: StatusCode,
    message: String,
    details: Vec<ErrorDetail>,
}

/// One detail of an [`HttpError`], such as a field that failed validation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorDetail {
    /// A machine-readable code: `invalid`, `invalid_type`, `malformed`, `missing`, ...
    pub code: String,
    /// Where the problem is: field names and array indexes.
    pub path: Vec<PathSegment>,
    /// A sentence for a person.
    pub message: String,
}

/// One step of an [`ErrorDetail`] path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum PathSegment {
    /// A field or parameter name.
    Key(String),
    /// An index into an array.
    Index(usize),
}

impl From<&str> for PathSegment {
    fn from(key: &str) -> Self {
        PathSegment::Key(key.to_string())
    }
}

impl From<String> for PathSegment {
    fn from(key: String) -> Self {
        PathSegment::Key(key)
    }
}

impl From<usize> for PathSegment {
    fn from(index: usize) -> Self {
        PathSegment::Index(index)
    }
}

impl ErrorDetail {
    /// A detail with a code, the path of the field it is about, and a
    /// message. The path is field names (`["customer", "email"]`), or
    /// [`PathSegment`]s where it has indexes:
    ///
    /// ```
    /// use celerity::http::{ErrorDetail, HttpError, PathSegment};
    ///
    /// let detail = ErrorDetail::new("invalid", ["customer", "email"], "not an email address");
    /// let nested = ErrorDetail::new("invalid", vec!["items".into(), 0.into(), "quantity".into()], "must be positive");
    /// let whole = ErrorDetail::new("malformed", [], "the body is not JSON");
    /// let error = HttpError::bad_request("the order is not valid").with_detail(detail).with_detail(nested).with_detail(whole);
    /// assert_eq!(error.details()[1].path, [PathSegment::from("items"), PathSegment::from(0), PathSegment::from("quantity")]);
    /// ```
    pub fn new(code: impl Into<String>, path: impl IntoDetailPath, message: impl Into<String>) -> Self {
        ErrorDetail { code: code.into(), path: path.into_detail_path(), message: message.into() }
    }
}

/// The path of an [`ErrorDetail`]: field names (`["customer", "email"]`,
/// `&["customer"][..]`), or [`PathSegment`]s
/// (`vec!["items".into(), 0.into()]`).
pub trait IntoDetailPath {
    /// The path's segments.
    fn into_detail_path(self) -> Vec<PathSegment>;
}

impl IntoDetailPath for Vec<PathSegment> {
    fn into_detail_path(self) -> Vec<PathSegment> {
        self
    }
}

impl<const N: usize> IntoDetailPath for [&str; N] {
    fn into_detail_path(self) -> Vec<PathSegment> {
        self.into_iter().map(PathSegment::from).collect()
    }
}

impl IntoDetailPath for &[&str] {
    fn into_detail_path(self) -> Vec<PathSegment> {
        self.iter().copied().map(PathSegment::from).collect()
    }
}

impl HttpError {
    /// An error with any status.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        HttpError { status, message: message.into(), details: Vec::new() }
    }

    /// 400 Bad Request.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// 401 Unauthorized.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, message)
    }

    /// 403 Forbidden.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, message)
    }

    /// 404 Not Found.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }

    /// 409 Conflict.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, message)
    }

    /// 422 Unprocessable Entity.
    pub fn unprocessable(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, message)
    }

    /// 500 Internal Server Error.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }

    /// Adds a detail.
    pub fn with_detail(mut self, detail: ErrorDetail) -> Self {
        self.details.push(detail);
        self
    }

    /// The status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The details.
    pub fn details(&self) -> &[ErrorDetail] {
        &self.details
    }

    /// The response: the status, `content-type: application/json`, and the
    /// body `{"message", "details"}` (`details` left out when empty).
    pub fn to_response(&self) -> Response {
        #[derive(Serialize)]
        struct Body<'a> {
            message: &'a str,
            #[serde(skip_serializing_if = "<[ErrorDetail]>::is_empty")]
            details: &'a [ErrorDetail],
        }
        let body = serde_json::to_vec(&Body { message: &self.message, details: &self.details })
            .unwrap_or_else(|_| br#"{"message":"error"}"#.to_vec());
        let mut response = Response::new(Bytes::from(body));
        *response.status_mut() = self.status;
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        response
    }
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status, self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_is_the_agreed_json_shape() {
        let error = HttpError::bad_request("invalid body").with_detail(ErrorDetail::new(
            "invalid_type",
            vec!["items".into(), 0.into(), "qty".into()],
            "expected u32",
        ));
        let response = error.to_response();
        assert_eq!(response.status(), 400);
        assert_eq!(response.headers()["content-type"], "application/json");
        let body: serde_json::Value = serde_json::from_slice(response.body()).unwrap();
        assert_eq!(
            body,
            serde_json::json!({
                "message": "invalid body",
                "details": [{"code": "invalid_type", "path": ["items", 0, "qty"], "message": "expected u32"}]
            })
        );
    }

    #[test]
    fn details_are_left_out_when_empty() {
        let response = HttpError::not_found("gone").to_response();
        let body: serde_json::Value = serde_json::from_slice(response.body()).unwrap();
        assert_eq!(body, serde_json::json!({"message": "gone"}));
    }
}
