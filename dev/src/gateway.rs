//! The HTTP side of the dev runtime: each request becomes a `Dispatch` on
//! the handler stream, and its `Result` becomes the response, the way the
//! Celerity runtime answers callers.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use celerity_testkit::proto::v1::{self as pb, cancel, result::Outcome};
use celerity_testkit::{Connection, DispatchRefusal, Error, event};
use http::{Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use percent_encoding::percent_decode_str;
use tokio::net::TcpListener;

use crate::router::{NoMatch, Router};

/// The runtime refuses bodies over 2 MiB before any dispatch; so does this.
const MAX_BODY: usize = 2 * 1024 * 1024;

/// What the gateway needs to serve.
pub struct Gateway {
    /// The routes.
    pub router: Router,
    /// The handler stream.
    pub conn: Arc<Connection>,
    /// The deadline given to each event.
    pub timeout: Duration,
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
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

type Reply = Response<Full<Bytes>>;

fn reply(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Reply {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    if let Ok(value) = content_type.parse() {
        response.headers_mut().insert(http::header::CONTENT_TYPE, value);
    }
    response
}

fn json_error(status: StatusCode, message: &str) -> Reply {
    reply(status, "application/json", serde_json::json!({ "message": message }).to_string())
}

/// Sends `Cancel(CALLER_GONE)` when dropped before [`CancelOnDrop::disarm`]:
/// hyper drops the request future when the client goes away.
struct CancelOnDrop<'a> {
    conn: &'a Connection,
    id: String,
    armed: bool,
}

impl CancelOnDrop<'_> {
    fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if self.armed {
            eprintln!("[dev] {} client went away: Cancel(CALLER_GONE)", self.id);
            let _ = self.conn.cancel(&self.id, cancel::Reason::CallerGone);
        }
    }
}

impl Gateway {
    async fn handle(&self, request: hyper::Request<Incoming>, source_ip: String) -> Reply {
        let started = Instant::now();
        let (parts, body) = request.into_parts();
        let method = parts.method.as_str().to_string();
        let path = parts.uri.path().to_string();
        let matched = match self.router.route(&method, &path) {
            Ok(matched) => matched,
            Err(NoMatch::NotFound) => {
                eprintln!("[dev] {method} {path}: no route (404)");
                return json_error(StatusCode::NOT_FOUND, "no handler serves this path");
            }
            Err(NoMatch::MethodNotAllowed(allowed)) => {
                eprintln!("[dev] {method} {path}: method not allowed (405)");
                let mut response = json_error(StatusCode::METHOD_NOT_ALLOWED, "method not allowed");
                if let Ok(value) = allowed.join(", ").parse() {
                    response.headers_mut().insert(http::header::ALLOW, value);
                }
                return response;
            }
        };
        let body = match Limited::new(body, MAX_BODY).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(_) => return json_error(StatusCode::PAYLOAD_TOO_LARGE, "request body over 2 MiB"),
        };

        let mut dispatch = event::http(method.as_str(), path.as_str())
            .route(matched.route.template.as_str())
            .tag(matched.route.tag.as_str())
            .source_ip(source_ip)
            .body(body)
            .deadline_in(self.timeout);
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
        let tag = matched.route.tag.clone();

        let id = match self.dispatch(dispatch.build()).await {
            Ok(id) => id,
            Err(message) => {
                eprintln!("[dev] {tag}: not dispatched: {message}");
                return json_error(StatusCode::SERVICE_UNAVAILABLE, &message);
            }
        };
        let mut guard = CancelOnDrop { conn: &self.conn, id: id.clone(), armed: true };
        let result = self.conn.result_timeout(&id, self.timeout).await;
        guard.disarm();
        let elapsed = started.elapsed();
        match result {
            Ok(result) => {
                let (response, summary) = to_response(result);
                eprintln!("[dev] {id} {tag} -> {summary} in {:.1} ms", elapsed.as_secs_f64() * 1000.0);
                response
            }
            Err(Error::Timeout { .. }) => {
                let _ = self.conn.cancel(&id, cancel::Reason::DeadlineExceeded);
                eprintln!("[dev] {id} {tag} -> 504 after {:.1} s: Cancel(DEADLINE_EXCEEDED)", elapsed.as_secs_f64());
                json_error(StatusCode::GATEWAY_TIMEOUT, "the handler did not answer before its deadline")
            }
            Err(error) => {
                eprintln!("[dev] {id} {tag} -> 502: {error}");
                json_error(StatusCode::BAD_GATEWAY, &error.to_string())
            }
        }
    }

    /// Dispatches, waiting for credit when the window is full.
    async fn dispatch(&self, dispatch: pb::Dispatch) -> Result<String, String> {
        let deadline = Instant::now() + self.timeout;
        loop {
            match self.conn.dispatch(dispatch.clone()) {
                Ok(id) => return Ok(id),
                Err(Error::DispatchRefused(
                    DispatchRefusal::NoCredit { .. } | DispatchRefusal::Withheld | DispatchRefusal::TagCap { .. },
                )) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err("the handler had no free capacity before the deadline".to_string());
                    }
                    let _ = self.conn.wait_for_credit_timeout(left.min(Duration::from_millis(50))).await;
                }
                Err(error) => return Err(error.to_string()),
            }
        }
    }
}

/// The response the runtime gives a caller for a `Result`.
fn to_response(result: pb::Result) -> (Reply, String) {
    match result.outcome {
        Some(Outcome::Http(response)) => {
            let status = u16::try_from(response.status)
                .ok()
                .and_then(|s| StatusCode::from_u16(s).ok())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut reply = Response::new(Full::new(response.body));
            *reply.status_mut() = status;
            for (name, values) in response.headers {
                let Ok(name) = http::HeaderName::from_bytes(name.as_bytes()) else { continue };
                for value in values.values {
                    if let Ok(value) = value.parse() {
                        reply.headers_mut().append(name.clone(), value);
                    }
                }
            }
            (reply, status.to_string())
        }
        Some(Outcome::Error(error)) => {
            let text = format!("{}: {}", error.r#type, error.message);
            let summary = format!("500 HandlerError {text}");
            (reply(StatusCode::INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8", text), summary)
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

    #[test]
    fn query_pairs_are_decoded_and_repeated() {
        assert_eq!(
            query_pairs("tag=a&tag=b%20c&q=x+y&flag"),
            [("tag".into(), "a".into()), ("tag".into(), "b c".into()), ("q".into(), "x y".into()), ("flag".into(), "".into())]
        );
    }

    #[test]
    fn handler_error_is_a_plain_500_with_type_and_message() {
        let (reply, _) = to_response(pb::Result {
            id: "1".into(),
            credit_grant: 1,
            outcome: Some(Outcome::Error(pb::HandlerError { message: "boom".into(), r#type: "panic".into(), stack: String::new() })),
        });
        assert_eq!(reply.status(), 500);
    }

    #[test]
    fn status_out_of_range_is_a_500() {
        let (reply, _) = to_response(pb::Result {
            id: "1".into(),
            credit_grant: 1,
            outcome: Some(Outcome::Http(pb::HttpResponse { status: 1000, ..Default::default() })),
        });
        assert_eq!(reply.status(), 500);
    }
}
