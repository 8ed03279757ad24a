//! HTTP events: the request a handler receives, what it can extract from it,
//! and what it can answer with.
//!
//! The everyday types of the `http` crate are here too, so a handler needs
//! no dependency of its own on it:
//!
//! ```
//! use celerity::Bytes;
//! use celerity::http::{HeaderName, Response, StatusCode, Uri, header, response};
//!
//! async fn create() -> Result<Response, celerity::Error> {
//!     let location: Uri = "/orders/ord-1".parse()?;
//!     let built: Response = response::Builder::new()
//!         .status(StatusCode::CREATED)
//!         .header(header::LOCATION, location.to_string())
//!         .header(HeaderName::from_static("x-order-id"), "ord-1")
//!         .body(Bytes::new())?;
//!     Ok(built)
//! }
//! # let response = celerity::testing::block_on(create()).unwrap();
//! # assert_eq!(response.headers()[header::LOCATION], "/orders/ord-1");
//! ```

mod body;
pub(crate) mod bridge;
mod de;
mod error;
mod extract;
mod kind;
mod params;
mod path_shape;
mod respond;
mod service;
mod wire;

use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;
use std::sync::OnceLock;

use bytes::Bytes;
use celerity_proto::v1 as pb;

pub use body::Body;
pub use de::{ParamsError, ParamsKind};
pub use error::{ErrorDetail, HttpError, IntoDetailPath, PathSegment};
#[cfg(feature = "validation")]
pub(crate) use extract::REQUEST_BODY;
pub use extract::{Json, Path, Query};
pub use kind::{Http, HttpHandler};
#[doc(hidden)]
pub use kind::{HttpAnswer, HttpArgument};
pub use params::Params;
pub use respond::{IntoResponse, ResponseHeaders};
pub use service::HttpService;

use crate::text::Text;
use wire::{WireRequest, WireValues};

/// Header names as constants (`header::LOCATION`, `header::CONTENT_TYPE`,
/// ...) and the header types, from the `http` crate.
///
/// ```
/// use celerity::http::{HeaderMap, StatusCode, header};
///
/// async fn moved() -> (StatusCode, HeaderMap, &'static str) {
///     let mut headers = HeaderMap::new();
///     headers.insert(header::LOCATION, "/new".parse().unwrap());
///     (StatusCode::MOVED_PERMANENTLY, headers, "moved")
/// }
/// ```
pub use http::header;
/// Building a [`Response`] step by step: `response::Builder`, from the
/// `http` crate.
///
/// ```
/// use celerity::Bytes;
/// use celerity::http::{Response, response};
///
/// let response: Response = response::Builder::new().status(204).body(Bytes::new()).unwrap();
/// assert_eq!(response.status(), 204);
/// ```
pub use http::response;
/// The `http` crate's everyday types: headers, methods, status codes, URIs
/// and versions.
///
/// ```
/// use celerity::http::{HeaderName, HeaderValue, Method, StatusCode, Uri, Version};
///
/// let name = HeaderName::from_static("x-trace");
/// let value = HeaderValue::from_static("abc");
/// let uri: Uri = "/orders?page=2".parse().unwrap();
/// assert_eq!((uri.path(), uri.query()), ("/orders", Some("page=2")));
/// assert_eq!((Method::GET, StatusCode::OK, Version::HTTP_11), (Method::GET, StatusCode::from_u16(200).unwrap(), Version::HTTP_11));
/// assert_eq!((name.as_str(), value.to_str().unwrap()), ("x-trace", "abc"));
/// ```
pub use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri, Version};

/// The response type handlers build: an `http::Response` with a `Bytes` body.
pub type Response = http::Response<Bytes>;

/// An HTTP request as the runtime delivered it.
///
/// Header names are lower case and every multi-valued field keeps all of its
/// values. The body is the bytes the caller sent, not copied.
///
/// The headers are kept as the runtime sent them until something asks for
/// them ([`headers`](Self::headers), a `HeaderMap` or `Json` argument), and
/// converted then, once: a handler that never looks at them never pays for
/// them.
#[derive(Clone, Default)]
pub struct Request {
    method: Method,
    path: Text,
    route: Text,
    path_params: Params,
    query: Params,
    headers: Headers,
    source_ip: SourceIp,
    request_id: Text,
    body: Bytes,
}

/// A request's headers: the wire map, turned into a [`HeaderMap`] on first
/// use. Once the map is built it is the headers, and the wire map is no
/// longer read.
#[derive(Clone, Default)]
struct Headers {
    wire: HashMap<Text, WireValues>,
    map: OnceLock<HeaderMap>,
}

impl Headers {
    fn get(&self) -> &HeaderMap {
        self.map.get_or_init(|| header_map(&self.wire))
    }

    /// Takes the map, building it if it was not, to change it and put it
    /// back with [`Headers::from_map`].
    fn take_map(&mut self) -> HeaderMap {
        let wire = std::mem::take(&mut self.wire);
        self.map.take().unwrap_or_else(|| header_map(&wire))
    }

    fn from_map(map: HeaderMap) -> Headers {
        Headers { wire: HashMap::new(), map: OnceLock::from(map) }
    }

    /// The text of the first valid value of `name`, as
    /// `headers().get(name)` and `HeaderValue::to_str` would give it (`""`
    /// for a value that is not visible ASCII), without building the map when
    /// it can be read off the wire map.
    fn first_text(&self, name: &HeaderName) -> Option<&str> {
        if let Some(map) = self.map.get() {
            return map.get(name).map(|value| value.to_str().unwrap_or(""));
        }
        let name = name.as_str();
        let mut matching = self.wire.iter().filter(|(key, _)| key.eq_ignore_ascii_case(name));
        let (_, values) = matching.next()?;
        if matching.next().is_some() {
            // Several spellings of the name, merged in the map: let it say.
            return self.get().get(name).map(|value| value.to_str().unwrap_or(""));
        }
        let value = values.0.iter().find(|value| value.bytes().all(is_valid_value_byte))?;
        Some(if value.bytes().all(is_visible_ascii) { value.as_str() } else { "" })
    }
}

/// What `HeaderValue::from_str` accepts.
fn is_valid_value_byte(b: u8) -> bool {
    b >= 32 && b != 127 || b == b'\t'
}

/// What `HeaderValue::to_str` accepts.
fn is_visible_ascii(b: u8) -> bool {
    (32..127).contains(&b) || b == b'\t'
}

/// The most header names a request may carry (each with any number of
/// values): as many as a [`HeaderMap`] can hold. A request with more is
/// answered `431 Request Header Fields Too Large`, with a JSON body naming
/// the count and the limit, before any layer, guard, service or handler sees
/// it, whether or not it would have read the headers.
///
/// ```
/// assert_eq!(celerity::http::MAX_HEADER_NAMES, 24_576);
/// ```
pub const MAX_HEADER_NAMES: usize = 24_576;

/// The refusal of a request whose header names [`MAX_HEADER_NAMES`] cannot
/// hold.
fn too_many_header_names(names: usize) -> HttpError {
    HttpError::new(
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        format!("the request has {names} header names; at most {MAX_HEADER_NAMES} are accepted"),
    )
}

/// The wire header map as a [`HeaderMap`]. The runtime sends lower-case
/// names; a name or value that is not valid HTTP cannot be represented and
/// is left out, with a trace. The request was refused if it has more names
/// than [`MAX_HEADER_NAMES`], so every name fits; each name's values are
/// added through its entry, which reserves room once per name (a plain
/// `append` reserves for every value, and fails on a full map even for a
/// name it holds).
fn header_map(wire: &HashMap<Text, WireValues>) -> HeaderMap {
    let mut headers = HeaderMap::try_with_capacity(wire.len().min(MAX_HEADER_NAMES)).unwrap_or_default();
    for (name, values) in wire {
        let Ok(name) = HeaderName::from_bytes(name.as_bytes()) else {
            tracing::debug!(header = %crate::excerpt::quoted(name), "dropping a request header whose name is not valid HTTP");
            continue;
        };
        let mut valid = values.0.iter().filter_map(|value| match HeaderValue::from_str(value) {
            Ok(value) => Some(value),
            Err(_) => {
                tracing::debug!(
                    header = %crate::excerpt::quoted(name.as_str()),
                    "dropping a request header value that is not valid HTTP"
                );
                None
            }
        });
        let Some(first) = valid.next() else { continue };
        let entry = match headers.try_entry(name.clone()) {
            Ok(http::header::Entry::Occupied(mut entry)) => {
                entry.append(first);
                Ok(entry)
            }
            Ok(http::header::Entry::Vacant(entry)) => entry.try_insert_entry(first).map_err(drop),
            Err(_) => Err(()),
        };
        let Ok(mut entry) = entry else {
            tracing::warn!(header = %crate::excerpt::quoted(name.as_str()), "dropping a request header: the header map is full");
            continue;
        };
        valid.for_each(|value| entry.append(value));
    }
    headers
}

/// The caller's address: as the runtime sent it, parsed when asked for.
#[derive(Clone)]
enum SourceIp {
    Wire(Text),
    Known(Option<IpAddr>),
}

impl Default for SourceIp {
    fn default() -> Self {
        SourceIp::Known(None)
    }
}

impl SourceIp {
    fn get(&self) -> Option<IpAddr> {
        match self {
            SourceIp::Wire(text) => text.parse().ok(),
            SourceIp::Known(ip) => *ip,
        }
    }
}

impl fmt::Debug for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Request")
            .field("method", &self.method)
            .field("path", &self.path)
            .field("route", &self.route)
            .field("path_params", &self.path_params)
            .field("query", &self.query)
            .field("headers", self.headers())
            .field("source_ip", &self.source_ip())
            .field("request_id", &self.request_id)
            .field("body", &self.body)
            .finish()
    }
}

impl Request {
    /// A request with a method and a path, for calling a handler directly in
    /// a test. The route defaults to the path.
    ///
    /// ```
    /// use celerity::http::{Method, Request};
    /// let request = Request::new(Method::GET, "/orders/42");
    /// assert_eq!(request.route(), "/orders/42");
    /// ```
    pub fn new(method: Method, path: impl Into<String>) -> Self {
        let path = Text::from(path.into());
        Request { method, route: path.clone(), path, ..Request::default() }
    }

    /// Converts the wire form. Path parameters are taken as they arrive: the
    /// runtime has decoded them already, and decoding again would turn an
    /// id of `%20` into a space. The headers and the source address are
    /// converted when first asked for.
    pub(crate) fn from_wire(request: pb::HttpRequest) -> Result<Self, HttpError> {
        Request::from_decoded(WireRequest::from(request))
    }

    /// The request a decoded `HttpRequest` stands for (see
    /// [`Request::from_wire`]): a 400 for a method that is not valid HTTP,
    /// a 431 for more header names than [`MAX_HEADER_NAMES`].
    fn from_decoded(request: WireRequest) -> Result<Self, HttpError> {
        if request.headers.len() > MAX_HEADER_NAMES {
            return Err(too_many_header_names(request.headers.len()));
        }
        let method = Method::from_bytes(request.method.as_bytes()).map_err(|_| {
            HttpError::bad_request(format!("invalid HTTP method {}", crate::excerpt::quoted(&request.method)))
        })?;
        let path_params = if request.path_params.is_empty() {
            Params::new()
        } else {
            Params::from_wire_in_route_order(values(request.path_params), &request.route)
        };
        let query = if request.query_params.is_empty() {
            Params::new()
        } else {
            Params::from_wire_sorted(values(request.query_params))
        };
        Ok(Request {
            method,
            path: request.path,
            route: request.route,
            path_params,
            query,
            headers: Headers { wire: request.headers, map: OnceLock::new() },
            source_ip: SourceIp::Wire(request.source_ip),
            request_id: request.request_id,
            body: request.body,
        })
    }

    /// The method, such as `GET`.
    pub fn method(&self) -> &Method {
        &self.method
    }

    /// The path as requested, still percent-encoded, without the query.
    pub fn path(&self) -> &str {
        self.path.as_str()
    }

    /// The route template that matched, such as `/orders/{id}`.
    pub fn route(&self) -> &str {
        self.route.as_str()
    }

    /// Path parameters, in the order of the route, as the runtime decoded
    /// them. A catch-all parameter has one value per path segment, each
    /// decoded on its own (an encoded `/` stays inside its segment).
    pub fn path_params(&self) -> &Params {
        &self.path_params
    }

    /// Query parameters, each with all of its values.
    pub fn query(&self) -> &Params {
        &self.query
    }

    /// Headers, with lower-case names and every value.
    pub fn headers(&self) -> &HeaderMap {
        self.headers.get()
    }

    /// The caller's IP address, when the runtime knows it.
    pub fn source_ip(&self) -> Option<IpAddr> {
        self.source_ip.get()
    }

    /// The runtime's id for the request.
    pub fn request_id(&self) -> &str {
        self.request_id.as_str()
    }

    /// The body.
    pub fn body(&self) -> &Bytes {
        &self.body
    }

    /// Takes the body.
    pub fn into_body(self) -> Bytes {
        self.body
    }

    /// Sets the matched route.
    pub fn with_route(mut self, route: impl Into<String>) -> Self {
        self.route = Text::from(route.into());
        self
    }

    /// Adds a path parameter value.
    pub fn with_path_param(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.path_params.push(name, value);
        self
    }

    /// Adds a query parameter value.
    pub fn with_query(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.query.push(name, value);
        self
    }

    /// Adds a header value.
    ///
    /// # Panics
    ///
    /// When the name or value is not valid HTTP; this is a test helper.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        let mut headers = self.headers.take_map();
        append_header(&mut headers, name, value);
        self.headers = Headers::from_map(headers);
        self
    }

    /// Sets the body.
    pub fn with_body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    /// Sets the source IP.
    pub fn with_source_ip(mut self, ip: IpAddr) -> Self {
        self.source_ip = SourceIp::Known(Some(ip));
        self
    }

    /// Sets the request id.
    pub fn with_request_id(mut self, id: impl Into<String>) -> Self {
        self.request_id = Text::from(id.into());
        self
    }

    /// Takes the headers, converting them if nothing has yet.
    pub(crate) fn into_headers(mut self) -> HeaderMap {
        self.headers.take_map()
    }

    pub(crate) fn take_body(&mut self) -> Bytes {
        std::mem::take(&mut self.body)
    }

    /// The text of the first value of the header `name` (`""` when it is not
    /// visible ASCII), read without converting every header when it can be.
    pub(crate) fn header_text(&self, name: &HeaderName) -> Option<&str> {
        self.headers.first_text(name)
    }
}

/// The wire's parameter map, each name with its values.
fn values(map: HashMap<Text, WireValues>) -> impl Iterator<Item = (String, Vec<String>)> {
    map.into_iter().map(|(name, values)| (name.to_string(), values.0.iter().map(Text::to_string).collect()))
}

/// Appends `value` to the header `name` (lower-cased) of `headers`: how a
/// test builds the headers of a request, [`Request::with_header`] and
/// `GuardRequest::with_header` alike.
///
/// # Panics
///
/// When the name or value is not valid HTTP.
pub(crate) fn append_header(headers: &mut HeaderMap, name: &str, value: &str) {
    let name = HeaderName::from_bytes(name.to_ascii_lowercase().as_bytes()).expect("a valid header name");
    headers.append(name, HeaderValue::from_str(value).expect("a valid header value"));
}

/// Converts a request to the wire, keeping every header value. Path
/// parameters are sent as the handler sees them, decoded, as the runtime
/// sends them.
pub(crate) fn request_to_wire(mut request: Request) -> pb::HttpRequest {
    let params = |params: &Params| -> HashMap<String, pb::Values> {
        params.iter().map(|(name, values)| (name.to_string(), pb::Values { values: values.to_vec() })).collect()
    };
    pb::HttpRequest {
        method: request.method.as_str().to_owned(),
        path: request.path.to_string(),
        route: request.route.to_string(),
        path_params: params(&request.path_params),
        query_params: params(&request.query),
        source_ip: request.source_ip().map(|ip| ip.to_string()).unwrap_or_default(),
        request_id: request.request_id.to_string(),
        body: request.take_body(),
        headers: headers_to_wire(request.into_headers()),
    }
}

/// Converts a response to the wire, keeping every header value. A status the
/// runtime cannot send (outside 100..=999) is impossible here: `http` only
/// builds statuses in that range.
pub(crate) fn response_to_wire(response: Response) -> pb::HttpResponse {
    let (parts, body) = response.into_parts();
    pb::HttpResponse { status: u32::from(parts.status.as_u16()), headers: headers_to_wire(parts.headers), body }
}

/// A header map in the wire's form: one entry per name, its values in order.
fn headers_to_wire(headers: HeaderMap) -> HashMap<String, pb::Values> {
    if headers.is_empty() {
        return HashMap::new();
    }
    let mut wire = HashMap::with_capacity(headers.keys_len());
    // The owned iterator yields each name once, with its first value, then
    // `None` for each further value of the same name.
    let mut current: Option<(HeaderName, Vec<String>)> = None;
    for (name, value) in headers {
        let value = value_text(&value);
        match name {
            Some(name) => {
                if let Some((name, values)) = current.replace((name, vec![value])) {
                    wire.insert(name.as_str().to_owned(), pb::Values { values });
                }
            }
            None => {
                if let Some((_, values)) = &mut current {
                    values.push(value);
                }
            }
        }
    }
    if let Some((name, values)) = current {
        wire.insert(name.as_str().to_owned(), pb::Values { values });
    }
    wire
}

/// A header value as text: it is visible ASCII unless built from raw bytes.
fn value_text(value: &HeaderValue) -> String {
    match value.to_str() {
        Ok(text) => text.to_owned(),
        Err(_) => String::from_utf8_lossy(value.as_bytes()).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(v: &[&str]) -> pb::Values {
        pb::Values { values: v.iter().map(|s| s.to_string()).collect() }
    }

    #[test]
    fn converts_the_wire_request() {
        let wire = pb::HttpRequest {
            method: "POST".into(),
            path: "/orders/a%20b/items".into(),
            route: "/orders/{id}/items".into(),
            path_params: HashMap::from([("id".to_string(), values(&["a%20b"]))]),
            query_params: HashMap::from([("tag".to_string(), values(&["x", "y"]))]),
            headers: HashMap::from([("set-thing".to_string(), values(&["1", "2"]))]),
            source_ip: "10.1.2.3".into(),
            request_id: "req-1".into(),
            body: Bytes::from_static(b"{}"),
        };
        let request = Request::from_wire(wire).unwrap();
        assert_eq!(request.method(), Method::POST);
        assert_eq!(request.path(), "/orders/a%20b/items");
        assert_eq!(request.path_params().get("id"), Some("a%20b"), "taken as the runtime decoded it");
        assert_eq!(request.query().get_all("tag"), ["x", "y"]);
        let all: Vec<_> = request.headers().get_all("set-thing").iter().collect();
        assert_eq!(all, ["1", "2"]);
        assert_eq!(request.source_ip(), Some("10.1.2.3".parse().unwrap()));
        assert_eq!(request.body(), &Bytes::from_static(b"{}"));
    }

    #[test]
    fn a_request_goes_to_the_wire_and_back_as_it_was() {
        let request = Request::new(Method::PUT, "/orders/a%20b")
            .with_route("/orders/{id}")
            .with_path_param("id", "a b")
            .with_query("tag", "x")
            .with_query("tag", "y")
            .with_header("x-b", "1")
            .with_header("X-B", "2")
            .with_source_ip("10.1.2.3".parse().unwrap())
            .with_request_id("req-1")
            .with_body("{}");
        let wire = request_to_wire(request.clone());
        assert_eq!(wire.headers["x-b"].values, ["1", "2"], "one entry per name, its values in order");
        assert_eq!(wire.path_params["id"].values, ["a b"], "sent decoded, as the handler sees it");
        let back = Request::from_wire(wire).unwrap();
        assert_eq!(format!("{back:?}"), format!("{request:?}"));
    }

    #[test]
    fn empty_source_ip_is_none() {
        let request = Request::from_wire(pb::HttpRequest { method: "GET".into(), ..Default::default() }).unwrap();
        assert_eq!(request.source_ip(), None);
    }

    #[test]
    fn response_keeps_repeated_headers() {
        let response = http::Response::builder()
            .status(201)
            .header("set-cookie", "a=1")
            .header("set-cookie", "b=2")
            .body(Bytes::from_static(b"ok"))
            .unwrap();
        let wire = response_to_wire(response);
        assert_eq!(wire.status, 201);
        assert_eq!(wire.headers["set-cookie"].values, ["a=1", "b=2"]);
        assert_eq!(wire.body, Bytes::from_static(b"ok"));
    }

    fn with_headers(headers: &[(&str, &[&str])]) -> Request {
        let headers = headers.iter().map(|(name, v)| (name.to_string(), values(v))).collect();
        Request::from_wire(pb::HttpRequest { method: "GET".into(), headers, ..Default::default() }).unwrap()
    }

    #[test]
    fn headers_are_converted_when_first_asked_for() {
        let request = with_headers(&[("x-thing", &["1", "2"]), ("accept", &["text/plain"])]);
        assert!(request.headers.map.get().is_none(), "nothing asked for them yet");
        let copy = request.clone();
        assert_eq!(request.headers().len(), 3);
        assert_eq!(request.headers()["accept"], "text/plain");
        assert!(request.headers.map.get().is_some());
        assert_eq!(copy.headers(), request.headers(), "a clone converts the same headers");
        assert!(format!("{request:?}").contains(r#""accept": "text/plain""#), "{request:?}");
    }

    #[test]
    fn invalid_header_names_and_values_are_left_out() {
        let request = with_headers(&[("bad name", &["1"]), ("x-ok", &["fine", "not\nfine", "also fine"])]);
        assert_eq!(request.headers().len(), 2);
        let all: Vec<_> = request.headers().get_all("x-ok").iter().collect();
        assert_eq!(all, ["fine", "also fine"]);
    }

    #[test]
    fn adding_a_header_keeps_the_ones_received() {
        let request = with_headers(&[("x-a", &["1"])]).with_header("X-B", "2").with_header("x-a", "3");
        let all: Vec<_> = request.headers().get_all("x-a").iter().collect();
        assert_eq!(all, ["1", "3"]);
        assert_eq!(request.headers()["x-b"], "2");
    }

    #[test]
    fn one_header_is_read_off_the_wire_as_the_map_would_give_it() {
        let cases: [&[(&str, &[&str])]; 7] = [
            &[],
            &[("accept", &["*/*"])],
            &[("content-type", &["application/json"])],
            &[("content-type", &["bad\u{7f}", "text/plain", "application/json"])],
            &[("Content-Type", &["application/json; charset=utf-8"])],
            &[("content-type", &["tëxt/plain"])],
            &[("content-type", &["bad\n"])],
        ];
        for headers in cases {
            let request = with_headers(headers);
            let from_wire = request.header_text(&http::header::CONTENT_TYPE).map(str::to_string);
            assert!(request.headers.map.get().is_none(), "read without converting: {headers:?}");
            let from_map =
                request.headers().get(http::header::CONTENT_TYPE).map(|v| v.to_str().unwrap_or("").to_string());
            assert_eq!(from_wire, from_map, "{headers:?}");
            assert_eq!(request.header_text(&http::header::CONTENT_TYPE).map(str::to_string), from_map);
        }
        // Two spellings of one name: the map merges them, and decides.
        let request = with_headers(&[("Content-Type", &["a/b"]), ("content-type", &["c/d"])]);
        let text = request.header_text(&http::header::CONTENT_TYPE).map(str::to_string);
        assert_eq!(text.as_deref(), request.headers().get("content-type").map(|v| v.to_str().unwrap()));
    }

    #[test]
    fn the_source_ip_is_parsed_when_asked_for() {
        let from = |ip: &str| {
            Request::from_wire(pb::HttpRequest { method: "GET".into(), source_ip: ip.into(), ..Default::default() })
        };
        assert_eq!(from("::1").unwrap().source_ip(), Some("::1".parse().unwrap()));
        let request = from("nope").unwrap();
        assert_eq!(request.source_ip(), None);
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        assert_eq!(request.with_source_ip(ip).source_ip(), Some(ip));
        assert_eq!(Request::default().source_ip(), None);
    }

    #[test]
    fn a_path_parameter_holding_a_percent_is_not_decoded_again() {
        let wire = pb::HttpRequest {
            method: "GET".into(),
            route: "/files/{name}/{*rest}".into(),
            path_params: HashMap::from([
                ("name".to_string(), values(&["%FF"])),
                ("rest".to_string(), values(&["a%20b", "c"])),
            ]),
            ..Default::default()
        };
        let request = Request::from_wire(wire).unwrap();
        assert_eq!(request.path_params().get("name"), Some("%FF"));
        assert_eq!(request.path_params().get_all("rest"), ["a%20b", "c"]);
    }

    #[test]
    fn response_headers_go_to_the_wire_in_one_entry_per_name() {
        let response = http::Response::builder()
            .header("x-b", "1")
            .header("content-type", "text/plain")
            .header("x-b", "2")
            .header("x-raw", HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap())
            .header("x-b", "3")
            .body(Bytes::new())
            .unwrap();
        let wire = response_to_wire(response);
        assert_eq!(wire.headers.len(), 3);
        assert_eq!(wire.headers["x-b"].values, ["1", "2", "3"]);
        assert_eq!(wire.headers["content-type"].values, ["text/plain"]);
        assert_eq!(wire.headers["x-raw"].values, ["café"]);
        assert!(response_to_wire(Response::new(Bytes::new())).headers.is_empty());
    }
}
