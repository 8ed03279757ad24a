//! The HTTP side of the dev runtime: application routes, `/ws`, the local
//! invoke endpoint and the dev endpoints, each request becoming an event
//! submitted to the dispatcher and its outcome the answer, the way the
//! Celerity runtime answers callers: `HEAD` from the `GET` handler without
//! the body (with the length the handler gave, else its body's), no route
//! 404 (a path ending in `/` is another path than the one without) and a
//! method not served 405 (`allow` in the blueprint's order), both with no
//! body, a body over 2 MiB 413 and a deadline passed 504 in plain text, a
//! `HandlerError` 500 with no media type, and the request id in
//! `x-request-id` on every answer.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use celerity_testkit::dispatcher::{AbandonReason, Dispatcher, EventOutcome};
use celerity_testkit::event;
use celerity_testkit::proto::v1::{self as pb, ScheduleTrigger, dispatch::Source, result::Outcome};
use http::{Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Body as _;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use percent_encoding::percent_decode_str;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;

use crate::config::App;
use crate::log;
use crate::sources::{self, InvocationType};
use crate::websocket::{self, WsContext};
use celerity_tags::route::{NoMatch, Route, Router};

/// The runtime refuses bodies over 2 MiB before any dispatch; so does this.
const MAX_BODY: usize = 2 * 1024 * 1024;

/// Consumer pushes and invocations may be larger.
const MAX_DEV_BODY: usize = 64 * 1024 * 1024;

/// How much of a body over the limit is read on and dropped before the
/// answer, so that the client, still sending, can read it: closing a
/// connection with bytes unread resets it, and the answer is lost with it.
const DRAIN_BUDGET: usize = 16 * 1024 * 1024;

/// What the runtime answers a body over its limit with.
const TOO_LARGE: &str = "the request body is larger than the runtime accepts";

/// What the runtime answers a request past its deadline with.
const TIMED_OUT: &str = "handler timed out";

/// The header carrying the request id, in both directions.
const REQUEST_ID: &str = "x-request-id";

/// The longest request id taken from a client.
const MAX_REQUEST_ID: usize = 128;

/// Counts the requests being served, so a shutdown can let them finish.
#[derive(Default)]
pub struct Active {
    count: AtomicUsize,
    idle: Notify,
}

impl Active {
    fn enter(self: &Arc<Self>) -> ActiveGuard {
        self.count.fetch_add(1, Ordering::SeqCst);
        ActiveGuard(Arc::clone(self))
    }

    /// Requests being served now.
    pub fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// Waits at most `timeout` until no request is being served.
    pub async fn wait_idle(&self, timeout: Duration) -> bool {
        let wait = async {
            loop {
                let idle = self.idle.notified();
                if self.count() == 0 {
                    return;
                }
                idle.await;
            }
        };
        tokio::time::timeout(timeout, wait).await.is_ok()
    }
}

struct ActiveGuard(Arc<Active>);

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// What the gateway needs to serve.
pub struct Gateway {
    /// The application.
    pub app: Arc<App>,
    /// Its HTTP routes.
    pub router: Router,
    /// Where events go.
    pub dispatcher: Dispatcher,
    /// The WebSocket side.
    pub ws: Arc<WsContext>,
    /// Requests in progress.
    pub active: Arc<Active>,
}

/// Serves HTTP on `listener` until the task is dropped.
pub async fn serve(listener: TcpListener, gateway: Arc<Gateway>) {
    loop {
        let Ok((stream, peer)) = listener.accept().await else {
            continue;
        };
        let gateway = Arc::clone(&gateway);
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let gateway = Arc::clone(&gateway);
                async move { Ok::<_, Infallible>(gateway.handle(request, peer.ip().to_string()).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades()
                .await;
        });
    }
}

/// A response.
pub type Reply = Response<Full<Bytes>>;

fn reply(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Reply {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    if let Ok(value) = content_type.parse() {
        response.headers_mut().insert(http::header::CONTENT_TYPE, value);
    }
    response
}

fn json_reply(status: StatusCode, body: &serde_json::Value) -> Reply {
    reply(status, "application/json", body.to_string())
}

fn json_error(status: StatusCode, message: &str) -> Reply {
    json_reply(status, &json!({ "message": message }))
}

/// Logs when a request is dropped before it was answered: the client went
/// away, and dropping its submission sent `Cancel(CALLER_GONE)`.
struct GoneLog {
    id: String,
    tag: String,
    started: Instant,
    armed: bool,
}

impl Drop for GoneLog {
    fn drop(&mut self) {
        if self.armed {
            log::event(&self.id, &self.tag, "client went away: Cancel(CALLER_GONE)", self.started.elapsed());
        }
    }
}

/// Why a request body was not read.
enum BodyError {
    /// It is larger than the limit.
    TooLarge,
    /// The client stopped sending it.
    Broken,
}

impl BodyError {
    /// For the log.
    fn describe(&self) -> &'static str {
        match self {
            BodyError::TooLarge => "body over the limit (413)",
            BodyError::Broken => "body not received whole (400)",
        }
    }

    fn reply(&self) -> Reply {
        match self {
            BodyError::TooLarge => reply(StatusCode::PAYLOAD_TOO_LARGE, "text/plain; charset=utf-8", TOO_LARGE),
            BodyError::Broken => {
                reply(StatusCode::BAD_REQUEST, "text/plain; charset=utf-8", "the request body could not be read")
            }
        }
    }
}

/// Reads a body of at most `limit` bytes.
///
/// A larger one is refused without reading it when the client waits for a
/// `100 Continue` first, or declares a length past the drain budget; else
/// it is read on, and dropped, up to [`DRAIN_BUDGET`] past the limit.
async fn read_body(headers: &http::HeaderMap, mut body: Incoming, limit: usize) -> Result<Bytes, BodyError> {
    let declared = headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let waits_to_send = headers
        .get(http::header::EXPECT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"));
    if let Some(declared) = declared
        && declared > limit as u64
        && (waits_to_send || declared > (limit + DRAIN_BUDGET) as u64)
    {
        return Err(BodyError::TooLarge);
    }
    let mut collected = bytes::BytesMut::new();
    let mut dropped = 0usize;
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else { return Err(BodyError::Broken) };
        let Ok(data) = frame.into_data() else { continue };
        if dropped > 0 || collected.len() + data.len() > limit {
            dropped += data.len();
            collected.clear();
            if dropped > DRAIN_BUDGET {
                break;
            }
            continue;
        }
        collected.extend_from_slice(&data);
    }
    if dropped > 0 { Err(BodyError::TooLarge) } else { Ok(collected.freeze()) }
}

/// The request id of a request: the client's `x-request-id` when it sent
/// a usable one, else a fresh one.
fn request_id(headers: &http::HeaderMap) -> String {
    headers
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty() && v.len() <= MAX_REQUEST_ID && v.bytes().all(|b| b.is_ascii_graphic()))
        .map_or_else(|| log::next_id("req"), str::to_owned)
}

/// `Allow` for a path served for `methods`, given in the order the
/// blueprint declares their handlers, as the runtime's router lists them:
/// that order, `HEAD` right after `GET` (a `GET` route is also served for
/// `HEAD`), each once, separated by bare commas.
fn allow(methods: &[&str]) -> String {
    let mut allowed: Vec<&str> = Vec::with_capacity(methods.len() + 1);
    for method in methods {
        for method in if *method == "GET" { &["GET", "HEAD"][..] } else { std::slice::from_ref(method) } {
            if !allowed.contains(method) {
                allowed.push(method);
            }
        }
    }
    allowed.join(",")
}

/// Whether the runtime's router takes `path` for another path than the one
/// without its last `/`: it does for any path ending in `/` but the root,
/// which then only a catch-all route matches (it takes the rest as it is).
fn ends_in_slash(path: &str) -> bool {
    path.len() > 1 && path.ends_with('/')
}

/// An answer with no body.
fn empty(status: StatusCode) -> Reply {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = status;
    response
}

impl Gateway {
    /// Every answer carries the request's id, as the runtime's do.
    async fn handle(self: Arc<Self>, request: hyper::Request<Incoming>, source_ip: String) -> Reply {
        let id = request_id(request.headers());
        let mut response = self.route(request, source_ip, &id).await;
        if let Ok(value) = http::HeaderValue::from_str(&id) {
            response.headers_mut().insert(REQUEST_ID, value);
        }
        response
    }

    async fn route(self: Arc<Self>, mut request: hyper::Request<Incoming>, source_ip: String, id: &str) -> Reply {
        let _active = self.active.enter();
        let path = request.uri().path().to_owned();
        let method = request.method().as_str().to_owned();
        if path == "/ws" && request.headers().contains_key(http::header::SEC_WEBSOCKET_KEY) {
            return self.upgrade(&mut request, source_ip);
        }
        if method == "POST" && path == "/runtime/handlers/invoke" {
            return self.invoke(request).await;
        }
        if method == "POST" && path.starts_with("/dev/consumers/") {
            return self.push_consumer(request, &path).await;
        }
        if method == "POST" && path.starts_with("/dev/schedules/") {
            return self.fire_schedule(request, &path).await;
        }
        self.http(request, source_ip, id).await
    }

    fn upgrade(self: &Arc<Self>, request: &mut hyper::Request<Incoming>, source_ip: String) -> Reply {
        let Some(key) = request.headers().get(http::header::SEC_WEBSOCKET_KEY) else {
            return json_error(StatusCode::BAD_REQUEST, "missing Sec-WebSocket-Key");
        };
        let accept = derive_accept_key(key.as_bytes());
        let upgrade = hyper::upgrade::on(request);
        let ctx = Arc::clone(&self.ws);
        tokio::spawn(async move {
            match upgrade.await {
                Ok(upgraded) => {
                    let ws = WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, None).await;
                    websocket::serve(ws, log::next_id("conn"), source_ip, ctx).await;
                }
                Err(e) => log::line(&format!("ws upgrade failed: {e}")),
            }
        });
        let mut response = reply(StatusCode::SWITCHING_PROTOCOLS, "text/plain", Bytes::new());
        response.headers_mut().remove(http::header::CONTENT_TYPE);
        let headers = response.headers_mut();
        headers.insert(http::header::CONNECTION, http::HeaderValue::from_static("Upgrade"));
        headers.insert(http::header::UPGRADE, http::HeaderValue::from_static("websocket"));
        if let Ok(value) = accept.parse() {
            headers.insert(http::header::SEC_WEBSOCKET_ACCEPT, value);
        }
        response
    }

    async fn http(&self, request: hyper::Request<Incoming>, source_ip: String, request_id: &str) -> Reply {
        let started = Instant::now();
        let (parts, body) = request.into_parts();
        let method = parts.method.as_str().to_owned();
        let path = parts.uri.path().to_owned();
        let head = method == "HEAD";
        let catch_alls;
        let router = if ends_in_slash(&path) {
            catch_alls = Router::new(
                self.router.routes().iter().filter(|route| route.template().contains("{*")).map(Route::tag),
            );
            &catch_alls
        } else {
            &self.router
        };
        let matched = match router.route(&method, &path) {
            // HEAD is answered from the GET handler, without the body.
            Err(NoMatch::MethodNotAllowed(allowed)) if head && allowed.iter().any(|m| m == "GET") => {
                router.route("GET", &path)
            }
            other => other,
        };
        let matched = match matched {
            Ok(matched) => matched,
            Err(NoMatch::NotFound) => {
                log::line(&format!("{method} {path}: no route (404)"));
                return empty(StatusCode::NOT_FOUND);
            }
            Err(NoMatch::MethodNotAllowed(_)) => {
                log::line(&format!("{method} {path}: method not allowed (405)"));
                // The methods of the routes at this path, in the order of
                // the handlers (the blueprint's).
                let routes: Vec<Route> = self.app.handlers.iter().filter_map(|h| Route::from_tag(&h.tag)).collect();
                let methods: Vec<&str> = routes
                    .iter()
                    .filter(|route| route.matches(&path).is_some())
                    .filter(|route| router.routes().iter().any(|served| served.tag() == route.tag()))
                    .map(Route::method)
                    .collect();
                let mut response = empty(StatusCode::METHOD_NOT_ALLOWED);
                if let Ok(value) = allow(&methods).parse() {
                    response.headers_mut().insert(http::header::ALLOW, value);
                }
                return response;
            }
        };
        let body = match read_body(&parts.headers, body, MAX_BODY).await {
            Ok(body) => body,
            Err(error) => {
                log::line(&format!("{method} {path}: {}", error.describe()));
                return error.reply();
            }
        };
        let tag = matched.route.tag().to_string();
        let mut dispatch = event::http(method.as_str(), path.as_str())
            .route(matched.route.template())
            .tag(tag.as_str())
            .source_ip(source_ip)
            .request_id(request_id)
            .body(body)
            .deadline_in(self.app.timeout(&tag));
        for (name, values) in &matched.params {
            for value in values {
                dispatch = dispatch.path_param(name.as_str(), value.as_str());
            }
        }
        for (name, value) in query_pairs(parts.uri.query().unwrap_or("")) {
            dispatch = dispatch.query(name, value);
        }
        for (name, value) in &parts.headers {
            if let Ok(value) = value.to_str() {
                dispatch = dispatch.header(name.as_str(), value);
            }
        }
        let submission = self.dispatcher.submit(dispatch);
        let id = submission.id().to_owned();
        let mut gone = GoneLog { id: id.clone(), tag: tag.clone(), started, armed: true };
        let outcome = submission.await;
        gone.armed = false;
        let (mut response, summary) = to_response(&outcome);
        if head {
            // The length the handler gave stands: a tower service (an axum
            // router) answers HEAD itself, with the GET body's length and
            // no body. Else it is the length of the body left out.
            if !response.headers().contains_key(http::header::CONTENT_LENGTH) {
                let length = response.body().size_hint().exact().unwrap_or(0);
                response.headers_mut().insert(http::header::CONTENT_LENGTH, http::HeaderValue::from(length));
            }
            *response.body_mut() = Full::new(Bytes::new());
        }
        log::event(&id, &tag, &format!("{summary} [{REQUEST_ID}: {request_id}]"), started.elapsed());
        response
    }

    async fn invoke(&self, request: hyper::Request<Incoming>) -> Reply {
        let started = Instant::now();
        let (parts, body) = request.into_parts();
        let body = match read_body(&parts.headers, body, MAX_DEV_BODY).await {
            Ok(body) => body,
            Err(error) => return error.reply(),
        };
        let invoke = match sources::parse_invoke(&body) {
            Ok(invoke) => invoke,
            Err(e) => return json_error(StatusCode::BAD_REQUEST, &e),
        };
        let Some(handler) = self.app.by_name(&invoke.handler_name) else {
            return json_error(StatusCode::NOT_FOUND, &no_handler_named(&invoke.handler_name));
        };
        let tag = handler.tag.clone();
        let d = event::custom(invoke.handler_name.as_str())
            .tag(tag.as_str())
            .input(invoke.input())
            .deadline_in(self.app.timeout(&tag));
        let submission = self.dispatcher.submit(d);
        let id = submission.id().to_owned();
        if invoke.invocation_type == InvocationType::Async {
            tokio::spawn(async move {
                let outcome = submission.await;
                log::event(&id, &tag, &log::summary(&outcome), started.elapsed());
            });
            // The runtime answers an async invocation 200 once it is started.
            return json_reply(StatusCode::OK, &json!({ "message": "Handler invocation started" }));
        }
        let mut gone = GoneLog { id: id.clone(), tag: tag.clone(), started, armed: true };
        let outcome = submission.await;
        gone.armed = false;
        log::event(&id, &tag, &log::summary(&outcome), started.elapsed());
        let (status, answer) = sources::invoke_answer(&outcome);
        reply(status, "application/json", answer.to_json())
    }

    async fn push_consumer(&self, request: hyper::Request<Incoming>, path: &str) -> Reply {
        let started = Instant::now();
        let Some((source_id, handler_name)) = sources::two_segments(path, "/dev/consumers/") else {
            return json_error(StatusCode::NOT_FOUND, "expected /dev/consumers/{sourceId}/{handlerName}");
        };
        let tag = format!("source::{source_id}::{handler_name}");
        if self.app.by_tag(&tag).is_none() {
            return json_error(StatusCode::NOT_FOUND, &format!("no handler serves {tag}"));
        }
        let (parts, body) = request.into_parts();
        let body = match read_body(&parts.headers, body, MAX_DEV_BODY).await {
            Ok(body) => body,
            Err(error) => return error.reply(),
        };
        let records = match sources::parse_records(&body) {
            Ok(records) => records,
            Err(e) => return json_error(StatusCode::BAD_REQUEST, &e),
        };
        let d = sources::consumer_dispatch(&tag, source_id, "dev", records.clone(), self.app.timeout(&tag));
        let id = d.id.clone();
        let outcome = self.dispatcher.submit(d).await;
        let summary = sources::summarize_batch(&records, &outcome);
        log::event(&id, &tag, &summary.describe(), started.elapsed());
        json_reply(status_of(&outcome), &summary.to_json())
    }

    async fn fire_schedule(&self, request: hyper::Request<Incoming>, path: &str) -> Reply {
        let started = Instant::now();
        let Some((schedule_id, handler_name)) = sources::two_segments(path, "/dev/schedules/") else {
            return json_error(StatusCode::NOT_FOUND, "expected /dev/schedules/{scheduleId}/{handlerName}");
        };
        let tag = format!("source::{schedule_id}::{handler_name}");
        let Some(handler) = self.app.by_tag(&tag) else {
            return json_error(StatusCode::NOT_FOUND, &format!("no handler serves {tag}"));
        };
        let (parts, body) = request.into_parts();
        let body = match read_body(&parts.headers, body, MAX_DEV_BODY).await {
            Ok(body) => body,
            Err(error) => return error.reply(),
        };
        // What the blueprint's schedule sends with every trigger; a request
        // body replaces its input, to try other input by hand.
        let schedule = handler.schedule.as_ref();
        let expression = schedule.map(|s| s.expression.clone()).unwrap_or_default();
        let input = match schedule.and_then(|s| s.input.as_ref()) {
            Some(input) if body.is_empty() => Bytes::from(input.to_string()),
            _ => body,
        };
        let message_id = log::next_id("sched");
        let d = pb::Dispatch {
            id: message_id.clone(),
            handler_tag: tag.clone(),
            timestamp_ms: log::unix_ms().max(0) as u64,
            deadline_unix_ms: log::unix_ms() + self.app.timeout(&tag).as_millis() as i64,
            trace_context: Default::default(),
            source: Some(Source::Schedule(ScheduleTrigger {
                schedule_id,
                message_id: message_id.clone(),
                schedule: expression,
                input,
                vendor: Bytes::new(),
            })),
        };
        let outcome = self.dispatcher.submit(d).await;
        let (acknowledged, detail) = sources::schedule_answer(&outcome);
        log::event(&message_id, &tag, &log::summary(&outcome), started.elapsed());
        json_reply(
            status_of(&outcome),
            &json!({ "messageId": message_id, "acknowledged": acknowledged, "detail": detail }),
        )
    }
}

/// The runtime's answer to an invocation of a name no handler has.
fn no_handler_named(name: &str) -> String {
    format!(
        "no handler named '{name}', which should be either the blueprint's spec.handlerName or the resource \
         the handler is declared as"
    )
}

fn status_of(outcome: &EventOutcome) -> StatusCode {
    match outcome {
        EventOutcome::Result(_) => StatusCode::OK,
        EventOutcome::Shed(_) => StatusCode::SERVICE_UNAVAILABLE,
        EventOutcome::Abandoned(AbandonReason::Deadline) => StatusCode::GATEWAY_TIMEOUT,
        EventOutcome::Abandoned(_) => StatusCode::BAD_GATEWAY,
    }
}

/// The response the runtime gives an HTTP caller for an outcome, and a
/// summary for the log.
pub fn to_response(outcome: &EventOutcome) -> (Reply, String) {
    let result = match outcome {
        EventOutcome::Result(result) => result,
        EventOutcome::Shed(reason) => {
            return (json_error(StatusCode::SERVICE_UNAVAILABLE, &reason.to_string()), format!("503 shed ({reason})"));
        }
        EventOutcome::Abandoned(AbandonReason::Deadline) => {
            return (
                reply(StatusCode::GATEWAY_TIMEOUT, "text/plain; charset=utf-8", TIMED_OUT),
                "504 deadline passed: Cancel(DEADLINE_EXCEEDED)".to_owned(),
            );
        }
        EventOutcome::Abandoned(reason) => {
            return (json_error(StatusCode::BAD_GATEWAY, &reason.to_string()), format!("502 no answer ({reason})"));
        }
    };
    match &result.outcome {
        Some(Outcome::Http(response)) => {
            let status = u16::try_from(response.status)
                .ok()
                .filter(|s| (100..=999).contains(s))
                .and_then(|s| StatusCode::from_u16(s).ok())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut reply = Response::new(Full::new(response.body.clone()));
            *reply.status_mut() = status;
            for (name, values) in &response.headers {
                let Ok(name) = http::HeaderName::from_bytes(name.as_bytes()) else { continue };
                for value in &values.values {
                    if let Ok(value) = value.parse() {
                        reply.headers_mut().append(name.clone(), value);
                    }
                }
            }
            (reply, status.as_u16().to_string())
        }
        Some(Outcome::Error(error)) => {
            // As the runtime answers it: the text, with no media type.
            let text = format!("{}: {}", error.r#type, error.message);
            let summary = format!("500 HandlerError {text}");
            let mut reply = Response::new(Full::new(Bytes::from(text)));
            *reply.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
            (reply, summary)
        }
        other => (
            json_error(StatusCode::INTERNAL_SERVER_ERROR, "the handler answered with no HTTP response"),
            format!("500 (outcome {other:?})"),
        ),
    }
}

/// `a=1&b=x+y&a=2` → decoded pairs, `+` as a space as in HTML forms.
pub fn query_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(name), decode(value))
        })
        .collect()
}

fn decode(text: &str) -> String {
    percent_decode_str(&text.replace('+', " ")).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use celerity_testkit::dispatcher::ShedReason;

    fn answered(outcome: Outcome) -> EventOutcome {
        EventOutcome::Result(pb::Result { id: "1".into(), credit_grant: 1, outcome: Some(outcome) })
    }

    async fn body(reply: Reply) -> String {
        String::from_utf8(reply.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap()
    }

    #[test]
    fn query_pairs_are_decoded_and_repeated() {
        assert_eq!(
            query_pairs("tag=a&tag=b%20c&q=x+y&flag"),
            [
                ("tag".into(), "a".into()),
                ("tag".into(), "b c".into()),
                ("q".into(), "x y".into()),
                ("flag".into(), "".into())
            ]
        );
    }

    #[tokio::test]
    async fn handler_error_is_a_500_with_type_and_message_and_no_media_type() {
        let (reply, _) = to_response(&answered(Outcome::Error(pb::HandlerError {
            message: "boom".into(),
            r#type: "panic".into(),
            stack: String::new(),
        })));
        assert_eq!(reply.status(), 500);
        assert_eq!(reply.headers().get(http::header::CONTENT_TYPE), None);
        assert_eq!(body(reply).await, "panic: boom");
    }

    #[test]
    fn status_out_of_range_is_a_500() {
        let (reply, _) = to_response(&answered(Outcome::Http(pb::HttpResponse { status: 1000, ..Default::default() })));
        assert_eq!(reply.status(), 500);
        let (reply, _) = to_response(&answered(Outcome::Http(pb::HttpResponse { status: 99, ..Default::default() })));
        assert_eq!(reply.status(), 500);
    }

    #[test]
    fn allow_keeps_the_given_order_with_head_after_get() {
        assert_eq!(allow(&["GET", "PATCH", "DELETE"]), "GET,HEAD,PATCH,DELETE");
        assert_eq!(allow(&["DELETE", "GET"]), "DELETE,GET,HEAD");
        assert_eq!(allow(&["POST"]), "POST");
        assert_eq!(allow(&["HEAD", "GET"]), "HEAD,GET");
    }

    #[test]
    fn only_a_path_ending_in_a_slash_past_the_root_is_another_path() {
        assert!(ends_in_slash("/notes/"));
        assert!(ends_in_slash("/notes//"));
        assert!(!ends_in_slash("/notes"));
        assert!(!ends_in_slash("/"));
    }

    #[test]
    fn a_request_id_is_the_clients_when_it_is_usable() {
        let with = |value: &str| {
            let mut headers = http::HeaderMap::new();
            headers.insert(REQUEST_ID, value.parse().unwrap());
            request_id(&headers)
        };
        assert_eq!(with("abc-123"), "abc-123");
        for unusable in ["", "two words", &"x".repeat(MAX_REQUEST_ID + 1)] {
            assert!(with(unusable).starts_with("req-"), "{unusable:?}");
        }
        assert_ne!(request_id(&http::HeaderMap::new()), request_id(&http::HeaderMap::new()));
    }

    #[tokio::test]
    async fn a_deadline_is_a_plain_text_504() {
        let (reply, _) = to_response(&EventOutcome::Abandoned(AbandonReason::Deadline));
        assert_eq!(reply.status(), 504);
        assert!(reply.headers()[http::header::CONTENT_TYPE].to_str().unwrap().starts_with("text/plain"));
        assert_eq!(body(reply).await, "handler timed out");
    }

    #[test]
    fn no_answer_and_shed_events() {
        assert_eq!(to_response(&EventOutcome::Abandoned(AbandonReason::Deadline)).0.status(), 504);
        assert_eq!(to_response(&EventOutcome::Abandoned(AbandonReason::StreamGone)).0.status(), 502);
        assert_eq!(to_response(&EventOutcome::Shed(ShedReason::Draining)).0.status(), 503);
        let wrong = answered(Outcome::Schedule(pb::Ack { success: true, error_message: String::new() }));
        assert_eq!(to_response(&wrong).0.status(), 500);
    }
}
