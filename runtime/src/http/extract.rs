//! Handler arguments taken from an HTTP request.

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode, header};
use serde::de::DeserializeOwned;

use super::de::{ParamsKind, from_params};
use super::path_shape::path_fits;
use super::{ErrorDetail, Http, HttpError, PathSegment, Request};
use crate::context::Context;
use crate::json::decode_json;
use crate::pipeline::{FromEvent, Needs};

/// `Json<T>` is shared by every kind of handler; HTTP names it here too.
pub use crate::json::Json;

/// How a JSON decoding error names the body.
pub(crate) const REQUEST_BODY: &str = "the request body";

impl FromEvent<Http> for Request {
    const READS_BODY: bool = true;

    fn from_event(request: &mut Request, _cx: &Context) -> Result<Self, HttpError> {
        let body = request.take_body();
        Ok(Request { body, ..request.clone() })
    }

    fn from_event_owned(request: Request, _cx: &Context) -> Result<Self, HttpError> {
        Ok(request)
    }
}

impl FromEvent<Http> for Bytes {
    const READS_BODY: bool = true;

    fn from_event(request: &mut Request, _cx: &Context) -> Result<Self, HttpError> {
        Ok(request.take_body())
    }
}

impl FromEvent<Http> for String {
    const READS_BODY: bool = true;

    fn from_event(request: &mut Request, _cx: &Context) -> Result<Self, HttpError> {
        String::from_utf8(request.take_body().to_vec()).map_err(|error| {
            HttpError::bad_request("the request body is not valid UTF-8").with_detail(ErrorDetail::new(
                "malformed",
                [],
                error.to_string(),
            ))
        })
    }
}

impl FromEvent<Http> for HeaderMap {
    fn from_event(request: &mut Request, _cx: &Context) -> Result<Self, HttpError> {
        Ok(request.headers().clone())
    }

    fn from_event_owned(request: Request, _cx: &Context) -> Result<Self, HttpError> {
        Ok(request.into_headers())
    }
}

impl FromEvent<Http> for Method {
    fn from_event(request: &mut Request, _cx: &Context) -> Result<Self, HttpError> {
        Ok(request.method().clone())
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

impl<T: DeserializeOwned> FromEvent<Http> for Path<T> {
    fn from_event(request: &mut Request, cx: &Context) -> Result<Self, HttpError> {
        from_params(request.path_params(), ParamsKind::Path).map(Path).map_err(|error| {
            // A parameter the route does not have is not the caller's doing:
            // the handler reads more than its route offers (checked at
            // startup for a handler bound by tag).
            if error.code() == "missing" {
                return HttpError::internal(format!(
                    "handler `{}` reads a path parameter its route {} does not have: {}",
                    cx.handler_name(),
                    crate::excerpt::quoted(request.route()),
                    error.message()
                ));
            }
            params_error(&error)
        })
    }

    /// The route must have the parameters `T` reads.
    fn needs(needs: &mut Needs) {
        needs.route(path_fits::<T>);
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

impl<T: DeserializeOwned> FromEvent<Http> for Query<T> {
    fn from_event(request: &mut Request, _cx: &Context) -> Result<Self, HttpError> {
        from_params(request.query(), ParamsKind::Query).map(Query).map_err(|error| params_error(&error))
    }
}

/// A query that may be absent: `None` when the request has no query
/// parameters at all, the parsed value when it has some. Parameters that are
/// there but do not fit `T` are still a `400` naming the field, so that a
/// caller's typo is not silently read as "no query".
///
/// ```
/// use celerity::http::Query;
/// #[derive(serde::Deserialize)]
/// struct Filter { status: String }
/// async fn list(filter: Option<Query<Filter>>) -> String {
///     match filter {
///         Some(Query(filter)) => format!("orders that are {}", filter.status),
///         None => "every order".to_string(),
///     }
/// }
/// ```
impl<T: DeserializeOwned> FromEvent<Http> for Option<Query<T>> {
    fn from_event(request: &mut Request, cx: &Context) -> Result<Self, HttpError> {
        if request.query().is_empty() {
            return Ok(None);
        }
        Query::from_event(request, cx).map(Some)
    }
}

fn params_error(error: &super::ParamsError) -> HttpError {
    HttpError::bad_request(error.message().to_string()).with_detail(ErrorDetail::new(
        error.code(),
        error.path().iter().map(|s| PathSegment::Key(s.clone())).collect::<Vec<_>>(),
        error.message(),
    ))
}

impl<T: DeserializeOwned> FromEvent<Http> for Json<T> {
    const READS_BODY: bool = true;

    fn from_event(request: &mut Request, _cx: &Context) -> Result<Self, HttpError> {
        check_json_content_type(request)?;
        decode_json(&request.take_body(), REQUEST_BODY).map(Json).map_err(HttpError::from)
    }
}

impl<T: DeserializeOwned> FromEvent<Http> for Option<Json<T>> {
    const READS_BODY: bool = true;

    fn from_event(request: &mut Request, _cx: &Context) -> Result<Self, HttpError> {
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
    use crate::context::State;
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

    /// Takes `T` from `request` as an argument of an HTTP handler.
    fn take<T: FromEvent<Http>>(request: &mut Request, cx: &Context) -> Result<T, HttpError> {
        T::from_event(request, cx)
    }

    #[test]
    fn json_names_the_field_that_does_not_fit() {
        let mut request = Request::new(Method::POST, "/orders").with_body(r#"{"name":"a","items":[{"qty":"x"}]}"#);
        let error = take::<Json<Order>>(&mut request, &cx()).unwrap_err();
        assert_eq!(error.status(), 400);
        let detail = &error.details()[0];
        assert_eq!(detail.code, "invalid_type");
        assert_eq!(detail.path, vec![PathSegment::from("items"), PathSegment::from(0), PathSegment::from("qty")]);
        assert!(error.message().contains("items[0].qty"), "{}", error.message());
    }

    #[test]
    fn json_reports_malformed_and_missing() {
        let mut request = Request::new(Method::POST, "/").with_body("{");
        let error = take::<Json<Order>>(&mut request, &cx()).unwrap_err();
        assert_eq!(error.details()[0].code, "malformed");
        let mut request = Request::new(Method::POST, "/").with_body(r#"{"items":[]}"#);
        let error = take::<Json<Order>>(&mut request, &cx()).unwrap_err();
        assert_eq!(error.details()[0].code, "missing");
        assert!(error.details()[0].message.contains("name"));
    }

    #[test]
    fn json_refuses_another_media_type() {
        let mut request = Request::new(Method::POST, "/").with_header("content-type", "text/plain").with_body("{}");
        let error = take::<Json<serde_json::Value>>(&mut request, &cx()).unwrap_err();
        assert_eq!(error.status(), 415);
    }

    #[test]
    fn optional_json_allows_an_empty_body() {
        let mut request = Request::new(Method::POST, "/");
        let value = take::<Option<Json<Order>>>(&mut request, &cx()).unwrap();
        assert!(value.is_none());
        let mut request = Request::new(Method::POST, "/").with_body("nope");
        assert!(take::<Option<Json<Order>>>(&mut request, &cx()).is_err());
    }

    #[test]
    fn optional_query_is_none_without_parameters_and_refuses_ones_that_do_not_fit() {
        #[derive(Debug, serde::Deserialize)]
        struct Limit {
            limit: usize,
        }
        let mut request = Request::new(Method::GET, "/orders");
        assert!(take::<Option<Query<Limit>>>(&mut request, &cx()).unwrap().is_none());
        let mut request = Request::new(Method::GET, "/orders").with_query("limit", "5");
        assert_eq!(take::<Option<Query<Limit>>>(&mut request, &cx()).unwrap().unwrap().0.limit, 5);
        let mut request = Request::new(Method::GET, "/orders").with_query("limit", "x");
        let error = take::<Option<Query<Limit>>>(&mut request, &cx()).unwrap_err();
        assert_eq!(error.status(), 400);
        assert_eq!(error.details()[0].path, [PathSegment::from("limit")]);
    }

    #[test]
    fn string_body_must_be_utf8() {
        let mut request = Request::new(Method::POST, "/").with_body(vec![0xff, 0xfe]);
        assert_eq!(take::<String>(&mut request, &cx()).unwrap_err().status(), 400);
    }

    #[test]
    fn path_and_query_deserialize() {
        let mut request = Request::new(Method::GET, "/orders/7")
            .with_route("/orders/{id}")
            .with_path_param("id", "7")
            .with_query("tag", "a")
            .with_query("tag", "b");
        let Path(id) = take::<Path<u64>>(&mut request, &cx()).unwrap();
        assert_eq!(id, 7);
        #[derive(Deserialize)]
        struct Q {
            tag: Vec<String>,
        }
        let Query(q) = take::<Query<Q>>(&mut request, &cx()).unwrap();
        assert_eq!(q.tag, ["a", "b"]);
        let error =
            take::<Path<u64>>(&mut Request::new(Method::GET, "/").with_path_param("id", "x"), &cx()).unwrap_err();
        assert_eq!(error.status(), 400);
        assert_eq!(error.details()[0].path, vec![PathSegment::from("id")]);
    }

    #[test]
    fn missing_state_is_an_internal_error() {
        let error = take::<State<u8>>(&mut Request::default(), &cx()).unwrap_err();
        assert_eq!(error.status(), 500);
        assert!(error.message().contains("App::state"));
    }
}
