//! What a guard sees of an event.

use std::net::IpAddr;

use http::{HeaderMap, Method};

use crate::context::Context;
use crate::http::Params;
use crate::kind::HandlerKind;
use crate::layer::{Event, Payload};

use super::Verdict;

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
        crate::http::append_header(&mut self.headers, name, value);
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

    /// The first value of the header `name`, as text. A credential is read
    /// with [`sole_header`](Self::sole_header), which refuses a request
    /// that repeats it.
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

    /// The value of a header the request may carry at most once, such as
    /// a credential: `Ok(None)` when it is absent, `Ok(Some(value))` when
    /// it is present once as text.
    ///
    /// A request that carries it more than once, or whose value is not
    /// text, is refused with the 401 this returns as `Err`, for the guard
    /// to answer as it is: which of several credentials counts differs
    /// between a proxy, the runtime and the services behind them, so a
    /// guard that picked one could be checking a value another part never
    /// reads.
    ///
    /// ```
    /// use celerity::HandlerKind;
    /// use celerity::guard::GuardRequest;
    ///
    /// let once = GuardRequest::new(HandlerKind::Http, "GET::/").with_header("x-api-key", "k-1");
    /// assert_eq!(once.sole_header("x-api-key").unwrap(), Some("k-1"));
    ///
    /// let twice = once.with_header("x-api-key", "k-2");
    /// assert!(twice.sole_header("x-api-key").is_err());
    /// ```
    pub fn sole_header(&self, name: &str) -> Result<Option<&str>, Verdict> {
        let mut values = self.headers.get_all(name).iter();
        let Some(value) = values.next() else { return Ok(None) };
        if values.next().is_some() {
            return Err(Verdict::unauthorized(format!("the request carries more than one `{name}` header")));
        }
        match value.to_str() {
            Ok(text) => Ok(Some(text)),
            Err(_) => Err(Verdict::unauthorized(format!("the `{name}` header is not text"))),
        }
    }

    /// The bearer token of the `authorization` header: `Ok(None)` when the
    /// request has no such header or it is not a bearer token, and the
    /// refusal of [`sole_header`](Self::sole_header) when the request
    /// carries several `authorization` headers.
    ///
    /// ```
    /// use celerity::HandlerKind;
    /// use celerity::guard::GuardRequest;
    ///
    /// let request = GuardRequest::new(HandlerKind::Http, "GET::/").with_header("authorization", "Bearer t-1");
    /// assert_eq!(request.bearer_token().unwrap(), Some("t-1"));
    /// ```
    pub fn bearer_token(&self) -> Result<Option<&str>, Verdict> {
        let Some(value) = self.sole_header("authorization")? else { return Ok(None) };
        let Some((scheme, token)) = value.split_once(' ') else { return Ok(None) };
        Ok(scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|token| !token.is_empty()))
    }
}
