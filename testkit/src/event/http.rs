//! HTTP request events.

use std::collections::HashMap;

use bytes::Bytes;
use celerity_proto::v1::{Dispatch, HttpRequest, Values, dispatch::Source};
use celerity_tags::route::Route;

use super::envelope::{Envelope, envelope_setters};
use super::push_value;

/// Starts an HTTP request event. `method` is sent as given (the runtime sends
/// upper case); `path` is the raw request path, and also the route unless
/// [`route`](HttpEvent::route) sets it.
pub fn http(method: impl Into<String>, path: impl Into<String>) -> HttpEvent {
    HttpEvent {
        envelope: Envelope::default(),
        method: method.into(),
        path: path.into(),
        route: None,
        path_params: HashMap::new(),
        query_params: HashMap::new(),
        headers: HashMap::new(),
        source_ip: String::new(),
        request_id: String::new(),
        body: Bytes::new(),
    }
}

/// Builds a Dispatch with an `HttpRequest` source; tag `{METHOD}::{route}`.
#[derive(Debug, Clone)]
#[must_use]
pub struct HttpEvent {
    envelope: Envelope,
    method: String,
    path: String,
    route: Option<String>,
    path_params: HashMap<String, Values>,
    query_params: HashMap<String, Values>,
    headers: HashMap<String, Values>,
    source_ip: String,
    request_id: String,
    body: Bytes,
}

impl HttpEvent {
    envelope_setters!();

    /// Sets the matched route template, e.g. `/orders/{id}`. Unless
    /// [`path_param`](Self::path_param) sets them, the path parameters are
    /// then read from the path by it as the runtime reads them: decoded, a
    /// catch-all one value per segment.
    pub fn route(mut self, route: impl Into<String>) -> Self {
        self.route = Some(route.into());
        self
    }

    /// Adds a value to a path parameter (a catch-all has one per segment),
    /// as the runtime sends it: decoded. Once one is set, none is read from
    /// the path.
    pub fn path_param(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        push_value(&mut self.path_params, name.into(), value.into());
        self
    }

    /// Adds a value to a query parameter.
    pub fn query(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        push_value(&mut self.query_params, name.into(), value.into());
        self
    }

    /// Adds a header value; the name is lower-cased as the runtime does.
    pub fn header(mut self, name: impl AsRef<str>, value: impl Into<String>) -> Self {
        push_value(&mut self.headers, name.as_ref().to_ascii_lowercase(), value.into());
        self
    }

    /// Sets the body.
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    /// Sets the body and `content-type: application/json`.
    pub fn json(self, body: impl Into<Bytes>) -> Self {
        self.header("content-type", "application/json").body(body)
    }

    /// Sets the client's IP address.
    pub fn source_ip(mut self, ip: impl Into<String>) -> Self {
        self.source_ip = ip.into();
        self
    }

    /// Sets the request id.
    pub fn request_id(mut self, id: impl Into<String>) -> Self {
        self.request_id = id.into();
        self
    }

    /// The Dispatch.
    pub fn build(self) -> Dispatch {
        let route = self.route.unwrap_or_else(|| self.path.clone());
        let tag = format!("{}::{}", self.method, route);
        let mut path_params = self.path_params;
        if path_params.is_empty()
            && let Some(params) = Route::from_tag(&tag).and_then(|route| route.matches(&self.path))
        {
            path_params = params.into_iter().map(|(name, values)| (name, Values { values })).collect();
        }
        self.envelope.into_dispatch(
            tag,
            Source::Http(HttpRequest {
                method: self.method,
                path: self.path,
                route,
                path_params,
                query_params: self.query_params,
                headers: self.headers,
                source_ip: self.source_ip,
                request_id: self.request_id,
                body: self.body,
            }),
        )
    }
}

impl From<HttpEvent> for Dispatch {
    fn from(e: HttpEvent) -> Dispatch {
        e.build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_request() {
        let d = http("GET", "/files/a/b")
            .route("/files/{*path}")
            .path_param("path", "a")
            .path_param("path", "b")
            .query("x", "1")
            .query("x", "2")
            .header("X-Trace", "t1")
            .header("x-trace", "t2")
            .request_id("r1")
            .trace_context("traceparent", "00-abc")
            .build();
        assert_eq!(d.handler_tag, "GET::/files/{*path}");
        assert!(d.timestamp_ms > 0);
        assert!(d.deadline_unix_ms > d.timestamp_ms as i64);
        let Some(Source::Http(req)) = d.source else { panic!("not http") };
        assert_eq!(req.path_params["path"].values, vec!["a", "b"]);
        assert_eq!(req.query_params["x"].values, vec!["1", "2"]);
        assert_eq!(req.headers["x-trace"].values, vec!["t1", "t2"]);
        assert_eq!(d.trace_context["traceparent"], "00-abc");
    }

    #[test]
    fn path_parameters_are_read_from_the_path_as_the_runtime_decodes_them() {
        let params = |path: &str, route: &str| match http("GET", path).route(route).build().source {
            Some(Source::Http(req)) => req.path_params,
            other => panic!("not http: {other:?}"),
        };
        assert_eq!(params("/customers/a%2520b/orders", "/customers/{id}/orders")["id"].values, ["a%20b"]);
        assert_eq!(params("/orders/%25FF", "/orders/{id}")["id"].values, ["%FF"]);
        assert_eq!(params("/files/a%2520b/c", "/files/{*path}")["path"].values, ["a%20b", "c"]);
        assert!(params("/elsewhere", "/orders/{id}").is_empty(), "a path the route does not match has none");
    }

    #[test]
    fn route_defaults_to_path() {
        let d = http("GET", "/health").no_deadline().build();
        assert_eq!(d.handler_tag, "GET::/health");
        assert_eq!(d.deadline_unix_ms, 0);
    }
}
