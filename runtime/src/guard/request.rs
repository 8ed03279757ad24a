//! What a guard sees of an event.

use std::net::IpAddr;

use http::{HeaderMap, Method};

use crate::context::Context;
use crate::http::Params;
use crate::kind::HandlerKind;
use crate::layer::{Event, Payload};

/// What a guard sees of the event it decides on: its kind and tag, and the
/// caller's request as far as the event carries one. An HTTP request has a
/// method, path, route, headers and query; a WebSocket message a
/// connection id; both have the caller's address and the runtime's request
/// id; a custom invocation has only its kind and tag.
#[derive(Debug, Clone)]
pub struct GuardRequest {
    kind: HandlerKind,
    cx: Context,
    method: Option<Method>,
    path: Option<String>,
    route: Option<String>,
    headers: HeaderMap,
    query: Params,
    connection_id: Option<String>,
    source_ip: Option<IpAddr>,
    request_id: Option<String>,
}

impl GuardRequest {
    /// What a guard sees of `event`.
    pub(crate) fn of(event: &Event) -> Self {
        let mut request = GuardRequest::bare(event.kind(), event.context().clone());
        match event.payload() {
            Payload::Http(http) => {
                request.method = Some(http.method().clone());
                request.path = Some(http.path().to_string());
                request.route = Some(http.route().to_string());
                request.headers = http.headers().clone();
                request.query = http.query().clone();
                request.source_ip = http.source_ip();
                request.request_id = Some(http.request_id().to_string());
            }
            Payload::WebSocket(message) => {
                request.route = Some(message.route().to_string());
                request.connection_id = Some(message.connection_id().to_string());
                request.source_ip = message.source_ip();
                request.request_id = Some(message.request_id().to_string());
            }
            _ => {}
        }
        request
    }

    /// A request of `kind` for `tag` with nothing else, to build on with the
    /// `with_` methods: for testing a guard on its own.
    ///
    /// ```
    /// use celerity::HandlerKind;
    /// use celerity::guard::GuardRequest;
    ///
    /// let request = GuardRequest::new(HandlerKind::Http, "GET::/orders").with_header("authorization", "Bearer x");
    /// assert_eq!(request.header("authorization"), Some("Bearer x"));
    /// ```
    pub fn new(kind: HandlerKind, tag: &str) -> Self {
        GuardRequest::bare(kind, Context::detached(tag))
    }

    /// A request of `kind` with its context and nothing else.
    fn bare(kind: HandlerKind, cx: Context) -> Self {
        GuardRequest {
            kind,
            cx,
            method: None,
            path: None,
            route: None,
            headers: HeaderMap::new(),
            query: Params::new(),
            connection_id: None,
            source_ip: None,
            request_id: None,
        }
    }

    /// Adds a header value.
    ///
    /// # Panics
    ///
    /// When the name or value is not valid HTTP; this is a test helper.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        let name = http::HeaderName::from_bytes(name.to_ascii_lowercase().as_bytes()).expect("a valid header name");
        self.headers.append(name, http::HeaderValue::from_str(value).expect("a valid header value"));
        self
    }

    crate::layer::event_head!();

    /// The HTTP method.
    pub fn method(&self) -> Option<&Method> {
        self.method.as_ref()
    }

    /// The HTTP path as requested, still percent-encoded.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// The HTTP route template, or the WebSocket route.
    pub fn route(&self) -> Option<&str> {
        self.route.as_deref()
    }

    /// The HTTP headers (empty for other kinds).
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The first value of the header `name`, as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }

    /// The HTTP query parameters (empty for other kinds).
    pub fn query(&self) -> &Params {
        &self.query
    }

    /// The WebSocket connection.
    pub fn connection_id(&self) -> Option<&str> {
        self.connection_id.as_deref()
    }

    /// The caller's address, when the runtime knows it.
    pub fn source_ip(&self) -> Option<IpAddr> {
        self.source_ip
    }

    /// The runtime's id for the request.
    pub fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }

    /// The bearer token of the `authorization` header, when it has one.
    pub fn bearer_token(&self) -> Option<&str> {
        let value = self.header("authorization")?;
        let (scheme, token) = value.split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|token| !token.is_empty())
    }
}
