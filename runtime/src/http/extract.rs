//! Handler arguments taken from an HTTP request.

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode, header};
use serde::de::DeserializeOwned;

use super::de::{ParamsKind, from_params};
use super::{ErrorDetail, HttpError, PathSegment, Request};
use crate::context::{Context, State};
use crate::json::decode_json;

/// `Json<T>` is shared by every kind of handler; HTTP names it here too.
pub use crate::json::Json;

/// How a JSON decoding error names the body.
const REQUEST_BODY: &str = "the request body";

/// A value an HTTP handler can take as an argument.
///
/// Extraction happens before the handler runs; a failure answers the request
/// with the returned [`HttpError`] (a 400 naming the problem, for bad input)
/// and the handler is not called.
///
/// At most one argument may read the body ([`FromRequest::READS_BODY`]):
/// `Json<T>`, `Bytes`, `String` or the whole `Request`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an argument of an HTTP handler",
    label = "not something an HTTP handler can take",
    note = "an HTTP handler takes: `Request`, `Path<T>`, `Query<T>`, `Json<T>`, `Option<Json<T>>`, `HeaderMap`, `Method`, `Bytes`, `String`, `Context`, `State<T>` and `WsSender`",
    note = "a type of your own can be one by implementing `celerity::http::FromRequest`"
)]
pub trait FromRequest: Sized {
    /// Whether this argument consumes the request body.
    const READS_BODY: bool = false;

    /// Takes the value from the request. Arguments that read the body take it
    /// out of `request`; the others only look.
    fn from_request(request: &mut Request, cx: &Context) -> Result<Self, HttpError>;

    /// Takes the value when it is the handler's last argument and may have
    /// the whole request. Defaults to [`FromRequest::from_request`].
    fn from_request_owned(mut request: Request, cx: &Context) -> Result<Self, HttpError> {
        Self::from_request(&mut request, cx)
    }
}

impl FromRequest for Request {
    const READS_BODY: bool = true;

    fn from_request(request: &mut Request, _cx: &Context) -> Result<Self, HttpError> {
        let body = request.take_body();
        Ok(Request { body, ..request.clone() })
    }

    fn from_request_owned(request: Request, _cx: &Context) -> Result<Self, HttpError> {
        Ok(request)
    }
}

impl FromRequest for Bytes {
    const READS_BODY: bool = true;

    fn from_request(request: &mut Request, _cx: &Context) -> Result<Self, HttpError> {
        Ok(request.take_body())
    }
}

impl FromRequest for String {
    const READS_BODY: bool = true;

    fn from_request(request: &mut Request, _cx: &Context) -> Result<Self, HttpError> {
        String::from_utf8(request.take_body().to_vec()).map_err(|error| {
            HttpError::bad_request("the request body is not valid UTF-8").with_detail(ErrorDetail::new(
                "malformed",
                Vec::new(),
                error.to_string(),
            ))
        })
    }
}

impl FromRequest for HeaderMap {
    fn from_request(request: &mut Request, _cx: &Context) -> Result<Self, HttpError> {
        Ok(request.headers().clone())
    }

    fn from_request_owned(request: Request, _cx: &Context) -> Result<Self, HttpError> {
        Ok(request.into_headers())
    }
}

impl FromRequest for Method {
    fn from_request(request: &mut Request, _cx: &Context) -> Result<Self, HttpError> {
        Ok(request.method().clone())
    }
}

impl FromRequest for Context {
    fn from_request(_request: &mut Request, cx: &Context) -> Result<Self, HttpError> {
        Ok(cx.clone())
    }
}

impl<T: Send + Sync + 'static> FromRequest for State<T> {
    fn from_request(_request: &mut Request, cx: &Context) -> Result<Self, HttpError> {
        State::from_context(cx).map_err(|error| HttpError::internal(error.message().to_string()))
    }
}

/// Path parameters, deserialized: a single value (`Path<u64>`), a tuple in
/// route order (`Path<(String, u32)>`), or a struct by name.
///
/// ```
/// use celerity::http::Path;
/// async fn get_order(Path(id): Path<u64>) -> String {
///     format!("order {id}")
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Path<T>(pub T);

impl<T: DeserializeOwned> FromRequest for Path<T> {
    fn from_request(request: &mut Request, _cx: &Context) -> Result<Self, HttpError> {
        from_params(request.path_params(), ParamsKind::Path).map(Path).map_err(|error| params_error(&error))
    }
}

/// Query parameters, deserialized into a struct by name; a `Vec` field takes
/// every value of a repeated parameter.
///
/// ```
/// use celerity::http::Query;
/// #[derive(serde::Deserialize)]
/// struct Page { page: Option<u32>, tag: Vec<String> }
/// async fn list(Query(page): Query<Page>) -> String {
///     format!("page {:?}, tags {:?}", page.page, page.tag)
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Query<T>(pub T);

impl<T: DeserializeOwned> FromRequest for Query<T> {
    fn from_request(request: &mut Request, _cx: &Context) -> Result<Self, HttpError> {
        from_params(request.query(), ParamsKind::Query).map(Query).map_err(|error| params_error(&error))
    }
}

fn params_error(error: &super::ParamsError) -> HttpError {
    HttpError::bad_request(error.message().to_string()).with_detail(ErrorDetail::new(
        error.code(),
        error.path().iter().map(|s| PathSegment::Key(s.clone())).collect(),
        error.message(),
    ))
}

impl<T: DeserializeOwned> FromRequest for Json<T> {
    const READS_BODY: bool = true;

    fn from_request(request: &mut Request, _cx: &Context) -> Result<Self, HttpError> {
        check_json_content_type(request)?;
        decode_json(&request.take_body(), REQUEST_BODY).map(Json).map_err(HttpError::from)
    }
}

impl<T: DeserializeOwned> FromRequest for Option<Json<T>> {
    const READS_BODY: bool = true;

    fn from_request(request: &mut Request, _cx: &Context) -> Result<Self, HttpError> {
        let body = request.take_body();
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        check_json_content_type(request)?;
        decode_json(&body, REQUEST_BODY).map(|v| Some(Json(v))).map_err(HttpError::from)
    }
}

fn check_json_content_type(request: &Request) -> Result<(), HttpError> {
    let Some(value) = request.header_text(&header::CONTENT_TYPE) else {
        return Ok(());
    };
    let essence = value.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    if essence == "application/json" || essence.ends_with("+json") {
        return Ok(());
    }
    Err(HttpError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        format!(
            "expected a JSON body (content-type application/json), got content-type {}",
            crate::excerpt::quoted(&essence)
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Item {
        qty: u32,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Order {
        name: String,
        items: Vec<Item>,
    }

    fn cx() -> Context {
        Context::detached("POST::/orders")
    }

    #[test]
    fn json_names_the_field_that_does_not_fit() {
        let mut request = Request::new(Method::POST, "/orders").with_body(r#"{"name":"a","items":[{"qty":"x"}]}"#);
        let error = Json::<Order>::from_request(&mut request, &cx()).unwrap_err();
        assert_eq!(error.status(), 400);
        let detail = &error.details()[0];
        assert_eq!(detail.code, "invalid_type");
        assert_eq!(detail.path, vec![PathSegment::from("items"), PathSegment::from(0), PathSegment::from("qty")]);
        assert!(error.message().contains("items[0].qty"), "{}", error.message());
    }

    #[test]
    fn json_reports_malformed_and_missing() {
        let mut request = Request::new(Method::POST, "/").with_body("{");
        let error = Json::<Order>::from_request(&mut request, &cx()).unwrap_err();
        assert_eq!(error.details()[0].code, "malformed");
        let mut request = Request::new(Method::POST, "/").with_body(r#"{"items":[]}"#);
        let error = Json::<Order>::from_request(&mut request, &cx()).unwrap_err();
        assert_eq!(error.details()[0].code, "missing");
        assert!(error.details()[0].message.contains("name"));
    }

    #[test]
    fn json_refuses_another_media_type() {
        let mut request = Request::new(Method::POST, "/").with_header("content-type", "text/plain").with_body("{}");
        let error = Json::<serde_json::Value>::from_request(&mut request, &cx()).unwrap_err();
        assert_eq!(error.status(), 415);
    }

    #[test]
    fn optional_json_allows_an_empty_body() {
        let mut request = Request::new(Method::POST, "/");
        let value = Option::<Json<Order>>::from_request(&mut request, &cx()).unwrap();
        assert!(value.is_none());
        let mut request = Request::new(Method::POST, "/").with_body("nope");
        assert!(Option::<Json<Order>>::from_request(&mut request, &cx()).is_err());
    }

    #[test]
    fn string_body_must_be_utf8() {
        let mut request = Request::new(Method::POST, "/").with_body(vec![0xff, 0xfe]);
        assert_eq!(String::from_request(&mut request, &cx()).unwrap_err().status(), 400);
    }

    #[test]
    fn path_and_query_deserialize() {
        let mut request = Request::new(Method::GET, "/orders/7")
            .with_route("/orders/{id}")
            .with_path_param("id", "7")
            .with_query("tag", "a")
            .with_query("tag", "b");
        let Path(id) = Path::<u64>::from_request(&mut request, &cx()).unwrap();
        assert_eq!(id, 7);
        #[derive(Deserialize)]
        struct Q {
            tag: Vec<String>,
        }
        let Query(q) = Query::<Q>::from_request(&mut request, &cx()).unwrap();
        assert_eq!(q.tag, ["a", "b"]);
        let error = Path::<u64>::from_request(&mut Request::new(Method::GET, "/").with_path_param("id", "x"), &cx())
            .unwrap_err();
        assert_eq!(error.status(), 400);
        assert_eq!(error.details()[0].path, vec![PathSegment::from("id")]);
    }

    #[test]
    fn missing_state_is_an_internal_error() {
        let error = State::<u8>::from_request(&mut Request::default(), &cx()).unwrap_err();
        assert_eq!(error.status(), 500);
        assert!(error.message().contains("App::state"));
    }
}
