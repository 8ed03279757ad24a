//! HTTP events: the request a handler receives, what it can extract from it,
//! and what it can answer with.

mod de;
mod error;
mod extract;
mod params;
mod respond;

use std::collections::HashMap;
use std::net::IpAddr;

use bytes::Bytes;
use celerity_proto::v1 as pb;
use http::HeaderName;

pub use de::{ParamsError, ParamsKind};
pub use error::{ErrorDetail, HttpError, PathSegment};
pub use extract::{FromRequest, Json, Path, Query};
pub use params::Params;
pub use respond::IntoResponse;

#[doc(hidden)]
pub use respond::IntoHttpOutcome;

pub use http::{HeaderMap, HeaderValue, Method, StatusCode};

/// The response type handlers build: an `http::Response` with a `Bytes` body.
pub type Response = http::Response<Bytes>;

/// An HTTP request as the runtime delivered it.
///
/// Header names are lower case and every multi-valued field keeps all of its
/// values. The body is the bytes the caller sent, not copied.
#[derive(Debug, Clone, Default)]
pub struct Request {
    method: Method,
    path: String,
    route: String,
    path_params: Params,
    query: Params,
    headers: HeaderMap,
    source_ip: Option<IpAddr>,
    request_id: String,
    body: Bytes,
}

impl Request {
    /// A request with a method and a path, for calling a handler directly in
    /// a test. The route defaults to the path.
    ///
    /// ```
    /// use celerity::http::Request;
    /// let request = Request::new(http::Method::GET, "/orders/42");
    /// assert_eq!(request.route(), "/orders/42");
    /// ```
    pub fn new(method: Method, path: impl Into<String>) -> Self {
        let path = path.into();
        Request { method, route: path.clone(), path, ..Request::default() }
    }

    /// Converts the wire form, percent-decoding path parameters.
    pub(crate) fn from_wire(request: pb::HttpRequest) -> Result<Self, HttpError> {
        let method = Method::from_bytes(request.method.as_bytes())
            .map_err(|_| HttpError::bad_request(format!("invalid HTTP method {:?}", request.method)))?;
        let mut path_params = Params::from_wire_in_route_order(values_map(request.path_params), &request.route);
        path_params.percent_decode_values().map_err(|error| {
            HttpError::bad_request(error.message().to_string()).with_detail(ErrorDetail::new(
                error.code(),
                error.path().iter().map(|s| PathSegment::Key(s.clone())).collect(),
                error.message(),
            ))
        })?;
        let query = Params::from_wire_sorted(values_map(request.query_params));
        let mut headers = HeaderMap::with_capacity(request.headers.len());
        for (name, values) in request.headers {
            // The runtime sends lower-case names; anything that is not a valid
            // header cannot be represented and is left out, with a trace.
            let Ok(name) = HeaderName::from_bytes(name.as_bytes()) else {
                tracing::debug!(header = %name, "dropping a request header whose name is not valid HTTP");
                continue;
            };
            for value in values.values {
                match HeaderValue::from_str(&value) {
                    Ok(value) => {
                        headers.append(name.clone(), value);
                    }
                    Err(_) => tracing::debug!(header = %name, "dropping a request header value that is not valid HTTP"),
                }
            }
        }
        Ok(Request {
            method,
            path: request.path,
            route: request.route,
            path_params,
            query,
            headers,
            source_ip: request.source_ip.parse().ok(),
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
        &self.path
    }

    /// The route template that matched, such as `/orders/{id}`.
    pub fn route(&self) -> &str {
        &self.route
    }

    /// Path parameters, percent-decoded, in the order of the route. A
    /// catch-all parameter has one value per path segment.
    pub fn path_params(&self) -> &Params {
        &self.path_params
    }

    /// Query parameters, each with all of its values.
    pub fn query(&self) -> &Params {
        &self.query
    }

    /// Headers, with lower-case names and every value.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The caller's IP address, when the runtime knows it.
    pub fn source_ip(&self) -> Option<IpAddr> {
        self.source_ip
    }

    /// The runtime's id for the request.
    pub fn request_id(&self) -> &str {
        &self.request_id
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
        self.route = route.into();
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
        let name = HeaderName::from_bytes(name.to_ascii_lowercase().as_bytes()).expect("a valid header name");
        self.headers.append(name, HeaderValue::from_str(value).expect("a valid header value"));
        self
    }

    /// Sets the body.
    pub fn with_body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    /// Sets the source IP.
    pub fn with_source_ip(mut self, ip: IpAddr) -> Self {
        self.source_ip = Some(ip);
        self
    }

    /// Sets the request id.
    pub fn with_request_id(mut self, id: impl Into<String>) -> Self {
        self.request_id = id.into();
        self
    }

    pub(crate) fn take_body(&mut self) -> Bytes {
        std::mem::take(&mut self.body)
    }
}

fn values_map(map: HashMap<String, pb::Values>) -> HashMap<String, Vec<String>> {
    map.into_iter().map(|(k, v)| (k, v.values)).collect()
}

/// Converts a response to the wire, keeping every header value. A status the
/// runtime cannot send (outside 100..=999) is impossible here: `http` only
/// builds statuses in that range.
pub(crate) fn response_to_wire(response: Response) -> pb::HttpResponse {
    let (parts, body) = response.into_parts();
    let mut headers: HashMap<String, pb::Values> = HashMap::with_capacity(parts.headers.keys_len());
    for (name, value) in parts.headers.iter() {
        let value = match value.to_str() {
            Ok(text) => text.to_string(),
            Err(_) => String::from_utf8_lossy(value.as_bytes()).into_owned(),
        };
        headers.entry(name.as_str().to_string()).or_default().values.push(value);
    }
    pb::HttpResponse { status: u32::from(parts.status.as_u16()), headers, body }
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
        assert_eq!(request.path_params().get("id"), Some("a b"));
        assert_eq!(request.query().get_all("tag"), ["x", "y"]);
        let all: Vec<_> = request.headers().get_all("set-thing").iter().collect();
        assert_eq!(all, ["1", "2"]);
        assert_eq!(request.source_ip(), Some("10.1.2.3".parse().unwrap()));
        assert_eq!(request.body(), &Bytes::from_static(b"{}"));
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
}
