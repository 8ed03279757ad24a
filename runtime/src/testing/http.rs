//! Building an HTTP request event.

use std::collections::HashMap;
use std::fmt;
use std::time::SystemTime;

use bytes::Bytes;
use celerity_proto::v1::{self as pb, dispatch::Source};
use celerity_tags::route::Route;
use http::{Method, header};
use percent_encoding::percent_decode_str;
use serde::Serialize;

use super::envelope::{Envelope, envelope_setters};
use crate::http::{Request, request_to_wire};

/// An HTTP request event, built the way the runtime would send it: to call
/// a handler in process, or, built into a whole `Dispatch` ([`build`](Self::build)),
/// to send over a socket with the test kit.
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
#[must_use]
pub struct TestRequest {
    pub(super) envelope: Envelope,
    /// Everything but the route and path parameters, in the wire's form.
    request: pb::HttpRequest,
    route: Option<String>,
    /// Set explicitly, decoded as the handler sees them.
    path_params: Option<HashMap<String, pb::Values>>,
}

impl TestRequest {
    /// A request with `method` (sent as given: the runtime sends upper
    /// case) for `path`, which may end in a query string.
    pub fn new(method: impl AsRef<str>, path: impl AsRef<str>) -> Self {
        let (path, query) = match path.as_ref().split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (path.as_ref(), None),
        };
        let request =
            pb::HttpRequest { method: method.as_ref().to_string(), path: path.to_string(), ..Default::default() };
        let mut built = TestRequest { envelope: Envelope::default(), request, route: None, path_params: None };
        for (name, value) in query.map(parse_query).unwrap_or_default() {
            built = built.query(name, value);
        }
        built
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

    envelope_setters!();

    /// Sets the route template that matched, such as `/orders/{id}`; the
    /// path parameters are read from the path by it.
    pub fn route(mut self, route: impl Into<String>) -> Self {
        self.route = Some(route.into());
        self
    }

    /// Adds a path parameter value (a catch-all has one per segment), as
    /// the handler sees it and the runtime sends it: decoded. Once one is
    /// set, none is read from the path.
    pub fn path_param(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        push_value(self.path_params.get_or_insert_with(HashMap::new), name.into(), value.into());
        self
    }

    /// Adds a query parameter value.
    pub fn query(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        push_value(&mut self.request.query_params, name.into(), value.into());
        self
    }

    /// Adds a header value; the name is made lower case, as the runtime
    /// sends it. Names and values go as given, as the runtime could send
    /// them: what the SDK makes of one that is not valid HTTP is what a
    /// handler would see in production.
    pub fn header(mut self, name: impl AsRef<str>, value: impl AsRef<str>) -> Self {
        push_value(&mut self.request.headers, name.as_ref().to_ascii_lowercase(), value.as_ref().to_string());
        self
    }

    /// Adds `authorization: Bearer <token>`.
    pub fn bearer(self, token: impl AsRef<str>) -> Self {
        let value = format!("Bearer {}", token.as_ref());
        self.header("authorization", value)
    }

    /// Sets the body.
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.request.body = body.into();
        self
    }

    /// Sets the body to `value` as JSON, and the `content-type` to
    /// `application/json` unless one is set.
    ///
    /// # Panics
    ///
    /// When `value` cannot be serialized as JSON.
    pub fn json(self, value: &impl Serialize) -> Self {
        let body = serde_json::to_vec(value).unwrap_or_else(|error| panic!("the body is not serializable: {error}"));
        self.json_text(body)
    }

    /// Sets the body to `text`, as given (it need not be valid JSON: a test
    /// of what a handler answers to a broken body), and the `content-type`
    /// to `application/json` unless one is set.
    pub fn json_text(self, text: impl Into<Bytes>) -> Self {
        let typed = self.request.headers.contains_key(header::CONTENT_TYPE.as_str());
        let request = if typed { self } else { self.header("content-type", "application/json") };
        request.body(text)
    }

    /// Sets the caller's address, as the runtime sends it (text).
    pub fn source_ip(mut self, ip: impl fmt::Display) -> Self {
        self.request.source_ip = ip.to_string();
        self
    }

    /// Sets the runtime's request id.
    pub fn request_id(mut self, id: impl Into<String>) -> Self {
        self.request.request_id = id.into();
        self
    }

    /// The tag the runtime would send this request under, `METHOD::route`
    /// (the route defaulting to the path).
    pub(crate) fn default_tag(&self) -> String {
        format!("{}::{}", self.request.method, self.route.as_deref().unwrap_or(&self.request.path))
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
            self.route.clone().or_else(|| tag.and_then(route_of_tag)).unwrap_or_else(|| self.request.path.clone());
        match self.with_route(route) {
            (wire, true) => wire,
            (wire, false) => panic!(
                "the path {:?} does not match the route {:?}: set the route with `.route(..)` or the parameters \
                 with `.path_param(..)`",
                wire.path, wire.route
            ),
        }
    }

    /// The whole `Dispatch`, as the test kit sends it: for the tag set with
    /// `tag`, or by default `METHOD::route` (the route defaulting to the
    /// path). Unless set, the path parameters are read from the path by the
    /// route, and there are none when it does not match: the request goes
    /// as given, as a runtime could send it.
    pub fn build(mut self) -> pb::Dispatch {
        let tag = self.envelope.tag().map_or_else(|| self.default_tag(), str::to_string);
        let route = self.route.clone().unwrap_or_else(|| self.request.path.clone());
        let envelope = std::mem::take(&mut self.envelope);
        let (request, _) = self.with_route(route);
        envelope.into_dispatch(tag, String::new(), SystemTime::now(), Some(Source::Http(request)))
    }

    /// The wire request with `route`, its path parameters as set or read
    /// from the path by the route, and whether they could be (when not, it
    /// has none).
    fn with_route(self, route: String) -> (pb::HttpRequest, bool) {
        let read = match self.path_params {
            Some(params) => Some(params),
            None if !route.contains('{') => Some(HashMap::new()),
            None => path_params(&self.request.method, &route, &self.request.path),
        };
        let matched = read.is_some();
        (pb::HttpRequest { route, path_params: read.unwrap_or_default(), ..self.request }, matched)
    }

    /// The request a wire request is, every field kept.
    pub(crate) fn from_wire(request: pb::HttpRequest) -> Self {
        let route = Some(request.route.clone());
        let path_params = Some(request.path_params.clone());
        TestRequest { envelope: Envelope::default(), request, route, path_params }
    }
}

/// A request built with [`Request`]'s own builders: its route and path
/// parameters are taken as they are.
impl From<Request> for TestRequest {
    fn from(request: Request) -> Self {
        TestRequest::from_wire(request_to_wire(request))
    }
}

impl From<TestRequest> for pb::Dispatch {
    fn from(request: TestRequest) -> Self {
        request.build()
    }
}

/// The route of an HTTP tag, `METHOD::/route`.
fn route_of_tag(tag: &str) -> Option<String> {
    let (_, route) = tag.split_once("::")?;
    route.starts_with('/').then(|| route.to_string())
}

/// Appends `value` to the multi-valued `name` of `map`.
fn push_value(map: &mut HashMap<String, pb::Values>, name: String, value: String) {
    map.entry(name).or_default().values.push(value);
}

/// The path parameters of `path` by `route`, matched and decoded by the
/// route matcher the test kit and the dev runtime use, as the runtime does.
/// `None` when the path does not match.
fn path_params(method: &str, route: &str, path: &str) -> Option<HashMap<String, pb::Values>> {
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
