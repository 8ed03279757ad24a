//! Building an HTTP request event.

use std::collections::HashMap;
use std::net::IpAddr;

use bytes::Bytes;
use celerity_proto::v1 as pb;
use http::{Method, header};
use percent_encoding::percent_decode_str;
use serde::Serialize;

use celerity_tags::route::Route;

use crate::http::{Params, Request};

/// An HTTP request to call a handler with, built the way the runtime would
/// send it.
///
/// The path may carry a query string (`/orders?page=2&tag=a`), which becomes
/// the query parameters. The route defaults to the route of the tag the
/// request is sent to (`GET::/orders/{id}` gives `/orders/{id}`), and the
/// path parameters are read from the path by the route, as the runtime
/// does; [`path_param`](Self::path_param) sets them instead.
///
/// ```
/// use celerity::testing::TestRequest;
///
/// #[derive(serde::Serialize)]
/// struct Item { sku: &'static str, quantity: u32 }
///
/// let request = TestRequest::post("/orders/42/items?notify=true")
///     .route("/orders/{id}/items")
///     .header("x-request-source", "test")
///     .json(&Item { sku: "A-1", quantity: 2 });
/// let wire = request.into_wire(None);
/// assert_eq!(wire.method, "POST");
/// assert_eq!(wire.path, "/orders/42/items");
/// assert_eq!(wire.path_params["id"].values, ["42"]);
/// assert_eq!(wire.query_params["notify"].values, ["true"]);
/// assert_eq!(wire.headers["content-type"].values, ["application/json"]);
/// ```
#[derive(Debug, Clone)]
pub struct TestRequest {
    /// Everything but the route and path parameters.
    request: Request,
    route: Option<String>,
    /// Set explicitly, decoded as the handler sees them.
    path_params: Option<Params>,
}

impl TestRequest {
    /// A request with `method` for `path`, which may end in a query string.
    pub fn new(method: Method, path: &str) -> Self {
        let (path, query) = match path.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (path, None),
        };
        let mut request = Request::new(method, path);
        for (name, value) in query.map(parse_query).unwrap_or_default() {
            request = request.with_query(name, value);
        }
        TestRequest { request, route: None, path_params: None }
    }

    /// A `GET` request.
    pub fn get(path: &str) -> Self {
        TestRequest::new(Method::GET, path)
    }

    /// A `POST` request.
    pub fn post(path: &str) -> Self {
        TestRequest::new(Method::POST, path)
    }

    /// A `PUT` request.
    pub fn put(path: &str) -> Self {
        TestRequest::new(Method::PUT, path)
    }

    /// A `PATCH` request.
    pub fn patch(path: &str) -> Self {
        TestRequest::new(Method::PATCH, path)
    }

    /// A `DELETE` request.
    pub fn delete(path: &str) -> Self {
        TestRequest::new(Method::DELETE, path)
    }

    /// Sets the route template that matched, such as `/orders/{id}`; the
    /// path parameters are read from the path by it.
    pub fn route(mut self, route: impl Into<String>) -> Self {
        self.route = Some(route.into());
        self
    }

    /// Adds a path parameter value, as the handler sees it (decoded). Once
    /// one is set, none is read from the path.
    pub fn path_param(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.path_params.get_or_insert_with(Params::new).push(name, value);
        self
    }

    /// Adds a query parameter value.
    pub fn query(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.request = self.request.with_query(name, value);
        self
    }

    /// Adds a header value; the name is made lower case, as the runtime
    /// sends it.
    ///
    /// # Panics
    ///
    /// When the name or value is not valid HTTP.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.request = self.request.with_header(name, value);
        self
    }

    /// Sets the body.
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.request = self.request.with_body(body);
        self
    }

    /// Sets the body to `value` as JSON, and the `content-type` to
    /// `application/json` unless one is set.
    ///
    /// # Panics
    ///
    /// When `value` cannot be serialized as JSON.
    pub fn json(mut self, value: &impl Serialize) -> Self {
        let body = serde_json::to_vec(value).unwrap_or_else(|error| panic!("the body is not serializable: {error}"));
        if !self.request.headers().contains_key(header::CONTENT_TYPE) {
            self.request = self.request.with_header("content-type", "application/json");
        }
        self.request = self.request.with_body(body);
        self
    }

    /// Sets the caller's address.
    pub fn source_ip(mut self, ip: IpAddr) -> Self {
        self.request = self.request.with_source_ip(ip);
        self
    }

    /// Sets the runtime's request id.
    pub fn request_id(mut self, id: impl Into<String>) -> Self {
        self.request = self.request.with_request_id(id);
        self
    }

    /// The wire request, for the handler bound to `tag` (whose route is the
    /// default route).
    ///
    /// # Panics
    ///
    /// When the route has parameters, none was set with
    /// [`path_param`](Self::path_param), and the path does not match the
    /// route.
    pub fn into_wire(self, tag: Option<&str>) -> pb::HttpRequest {
        let route =
            self.route.or_else(|| tag.and_then(route_of_tag)).unwrap_or_else(|| self.request.path().to_string());
        let path_params = match &self.path_params {
            Some(params) => wire_params(params),
            None if !route.contains('{') => HashMap::new(),
            None => match path_params(self.request.method(), &route, self.request.path()) {
                Some(params) => params,
                None => panic!(
                    "the path {:?} does not match the route {route:?}: set the route with `.route(..)` or the \
                     parameters with `.path_param(..)`",
                    self.request.path()
                ),
            },
        };
        let mut wire = request_to_wire(self.request);
        wire.route = route;
        wire.path_params = path_params;
        wire
    }
}

/// A request built with [`Request`]'s own builders: its route and path
/// parameters are taken as they are.
impl From<Request> for TestRequest {
    fn from(request: Request) -> Self {
        let route = Some(request.route().to_string());
        let path_params = Some(request.path_params().clone());
        TestRequest { request, route, path_params }
    }
}

/// The route of an HTTP tag, `METHOD::/route`.
fn route_of_tag(tag: &str) -> Option<String> {
    let (_, route) = tag.split_once("::")?;
    route.starts_with('/').then(|| route.to_string())
}

/// The wire form of a request, path parameters included: their values are
/// what the handler sees, which is what the runtime sends (decoded).
pub(crate) fn request_to_wire(request: Request) -> pb::HttpRequest {
    let path_params = wire_params(request.path_params());
    let query_params = request
        .query()
        .iter()
        .map(|(name, values)| (name.to_string(), pb::Values { values: values.to_vec() }))
        .collect();
    let mut headers: HashMap<String, pb::Values> = HashMap::new();
    for (name, value) in request.headers() {
        let value = match value.to_str() {
            Ok(text) => text.to_string(),
            Err(_) => String::from_utf8_lossy(value.as_bytes()).into_owned(),
        };
        headers.entry(name.as_str().to_string()).or_default().values.push(value);
    }
    pb::HttpRequest {
        method: request.method().as_str().to_string(),
        path: request.path().to_string(),
        route: request.route().to_string(),
        path_params,
        query_params,
        headers,
        source_ip: request.source_ip().map(|ip| ip.to_string()).unwrap_or_default(),
        request_id: request.request_id().to_string(),
        body: request.into_body(),
    }
}

fn wire_params(params: &Params) -> HashMap<String, pb::Values> {
    params.iter().map(|(name, values)| (name.to_string(), pb::Values { values: values.to_vec() })).collect()
}

/// The path parameters of `path` by `route`, matched and decoded by the
/// route matcher the test kit and the dev runtime use, as the runtime does.
/// `None` when the path does not match.
fn path_params(method: &Method, route: &str, path: &str) -> Option<HashMap<String, pb::Values>> {
    let route = Route::from_tag(&format!("{method}::{route}"))?;
    let params = route.matches(path)?;
    Some(params.into_iter().map(|(name, values)| (name, pb::Values { values })).collect())
}

/// The pairs of a query string, decoded as a form: `+` is a space.
fn parse_query(query: &str) -> Vec<(String, String)> {
    let decode = |s: &str| percent_decode_str(&s.replace('+', " ")).decode_utf8_lossy().into_owned();
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) => (decode(name), decode(value)),
            None => (decode(pair), String::new()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(wire: &HashMap<String, pb::Values>, name: &str) -> Vec<String> {
        wire.get(name).map(|v| v.values.clone()).unwrap_or_default()
    }

    #[test]
    fn the_route_comes_from_the_tag_and_the_parameters_from_the_path() {
        let wire = TestRequest::get("/orders/7/items/a%2520b").into_wire(Some("GET::/orders/{id}/items/{item}"));
        assert_eq!(wire.route, "/orders/{id}/items/{item}");
        assert_eq!(values(&wire.path_params, "id"), ["7"]);
        // Decoded once, as the runtime sends it; the SDK takes it as it is.
        assert_eq!(values(&wire.path_params, "item"), ["a%20b"]);
    }

    #[test]
    fn a_catch_all_is_split_first_then_each_segment_decoded() {
        for route in ["/files/{*path}", "/files/{path+}"] {
            let wire = TestRequest::get("/files/a%2Fb/c%2520d/e.txt").route(route).into_wire(None);
            assert_eq!(values(&wire.path_params, "path"), ["a/b", "c%20d", "e.txt"]);
        }
    }

    #[test]
    #[should_panic(expected = "does not match the route")]
    fn a_path_that_does_not_match_the_route_is_refused() {
        TestRequest::get("/customers/7").into_wire(Some("GET::/orders/{id}"));
    }

    #[test]
    fn explicit_path_parameters_win_as_given() {
        let wire = TestRequest::get("/anything").route("/orders/{id}").path_param("id", "100%").into_wire(None);
        assert_eq!(values(&wire.path_params, "id"), ["100%"]);
        let request = Request::from_wire(wire).unwrap();
        assert_eq!(request.path_params().get("id"), Some("100%"));
    }

    #[test]
    fn the_query_string_is_parsed_and_repeated_values_kept() {
        let wire = TestRequest::get("/search?q=red+shoes&tag=a&tag=b%26c&flag").query("tag", "d").into_wire(None);
        assert_eq!(wire.path, "/search");
        assert_eq!(values(&wire.query_params, "q"), ["red shoes"]);
        assert_eq!(values(&wire.query_params, "tag"), ["a", "b&c", "d"]);
        assert_eq!(values(&wire.query_params, "flag"), [""]);
    }

    #[test]
    fn headers_are_lower_case_and_multi_valued() {
        let wire = TestRequest::get("/").header("X-Thing", "1").header("x-thing", "2").into_wire(None);
        assert_eq!(values(&wire.headers, "x-thing"), ["1", "2"]);
    }

    #[test]
    fn json_keeps_a_content_type_already_set() {
        let wire = TestRequest::post("/")
            .header("content-type", "application/merge-patch+json")
            .json(&serde_json::json!({"a": 1}))
            .into_wire(None);
        assert_eq!(values(&wire.headers, "content-type"), ["application/merge-patch+json"]);
        assert_eq!(wire.body, Bytes::from_static(br#"{"a":1}"#));
    }

    #[test]
    fn a_request_from_the_sdk_builders_round_trips() {
        let request = Request::new(Method::PUT, "/orders/a%2Fb")
            .with_route("/orders/{id}")
            .with_path_param("id", "a/b")
            .with_query("x", "1")
            .with_header("accept", "text/plain")
            .with_source_ip("10.0.0.1".parse().unwrap())
            .with_request_id("r-1")
            .with_body("hi");
        let back = Request::from_wire(TestRequest::from(request).into_wire(Some("PUT::/other"))).unwrap();
        assert_eq!(back.method(), Method::PUT);
        assert_eq!(back.route(), "/orders/{id}");
        assert_eq!(back.path_params().get("id"), Some("a/b"));
        assert_eq!(back.query().get("x"), Some("1"));
        assert_eq!(back.headers()["accept"], "text/plain");
        assert_eq!(back.source_ip(), Some("10.0.0.1".parse().unwrap()));
        assert_eq!((back.request_id(), back.body().as_ref()), ("r-1", &b"hi"[..]));
    }
}
