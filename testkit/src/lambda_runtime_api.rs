//! A local AWS Lambda Runtime API, for end-to-end tests of a handler binary
//! running as a Lambda function would, without AWS.
//!
//! It serves, over HTTP on loopback, what a function's run loop calls, as
//! AWS publishes the API (version 2018-06-01, its OpenAPI document and the
//! Runtime Interface Emulator):
//!
//! | call | answer |
//! | --- | --- |
//! | `GET /2018-06-01/runtime/invocation/next` | held until an invocation is queued; `200`, the payload as the body (`Content-Type: application/json`), and the headers `Lambda-Runtime-Aws-Request-Id`, `Lambda-Runtime-Deadline-Ms`, `Lambda-Runtime-Invoked-Function-Arn` and, when given, `Lambda-Runtime-Trace-Id` |
//! | `POST .../invocation/{id}/response` | `202 {"status":"OK"}`; over 6 MiB (6,291,456 bytes), `413` `RequestEntityTooLarge`, and the invocation fails with `Function.ResponseSizeTooLarge` |
//! | `POST .../invocation/{id}/error` | `202 {"status":"OK"}` |
//! | either, for an id not in flight (never handed out, or answered) | `400 {"errorMessage":"Invalid request ID","errorType":"InvalidRequestID"}` |
//! | `POST /2018-06-01/runtime/init/error` | `202`; after an invocation was handed out, `403` `InvalidStateTransition` |
//! | another method on those paths | `405`; another path, `404` |
//!
//! A test queues invocations with [`LambdaRuntimeApi::invoke`] and gets back
//! what the function answered. What a function must not do is a
//! [violation](LambdaRuntimeApi::violations): answer an invocation twice or
//! one never handed out, or post an error whose body is not
//! `{"errorType", "errorMessage"}` JSON, whose
//! `Lambda-Runtime-Function-Error-Type` is missing or differs from the
//! body's `errorType`, or whose type is not of the form Lambda classifies
//! (`Runtime.{Name}` or `Function.{Name}`, the name ASCII letters; any other
//! Lambda reports as `Runtime.Unknown`).

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::{Notify, mpsc, oneshot};

/// The API's path prefix.
const PREFIX: &str = "/2018-06-01/runtime";

/// The largest response Lambda takes for a synchronous invocation.
pub const MAX_RESPONSE_BYTES: usize = 6 * 1024 * 1024;

/// The function ARN handed out with every invocation.
pub const FUNCTION_ARN: &str = "arn:aws:lambda:eu-west-1:123456789012:function:celerity-test";

/// One invocation to queue: its payload, and what Lambda says beside it.
#[derive(Debug, Clone)]
pub struct LambdaInvocation {
    payload: Bytes,
    request_id: Option<String>,
    deadline_in: Duration,
    trace_id: Option<String>,
    wait: Duration,
}

impl LambdaInvocation {
    /// An invocation with `payload` (sent as is, JSON or not), a deadline
    /// 30 s after it is handed out, and a fresh request id.
    pub fn new(payload: impl Into<Bytes>) -> Self {
        LambdaInvocation {
            payload: payload.into(),
            request_id: None,
            deadline_in: Duration::from_secs(30),
            trace_id: None,
            wait: Duration::from_secs(60),
        }
    }

    /// Sets the request id.
    pub fn request_id(mut self, id: impl Into<String>) -> Self {
        self.request_id = Some(id.into());
        self
    }

    /// Sets the deadline to `budget` after the invocation is handed out.
    pub fn deadline_in(mut self, budget: Duration) -> Self {
        self.deadline_in = budget;
        self
    }

    /// Sets the X-Ray trace header (`Lambda-Runtime-Trace-Id`).
    pub fn trace_id(mut self, header: impl Into<String>) -> Self {
        self.trace_id = Some(header.into());
        self
    }

    /// Sets how long [`LambdaRuntimeApi::invoke`] waits for the answer.
    pub fn wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }
}

impl<T: Into<Bytes>> From<T> for LambdaInvocation {
    fn from(payload: T) -> Self {
        LambdaInvocation::new(payload)
    }
}

/// A Lambda error: what a function posts to `/error` (or `/init/error`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LambdaError {
    /// `errorType` of the body.
    pub error_type: String,
    /// `errorMessage` of the body.
    pub error_message: String,
    /// The `Lambda-Runtime-Function-Error-Type` header, if sent.
    pub header_type: Option<String>,
    /// The `Content-Type` of the post, if sent.
    pub content_type: Option<String>,
    /// The body as posted.
    pub body: Bytes,
}

/// How a function answered one invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LambdaAnswer {
    /// `/response`: the function's output.
    Response(Bytes),
    /// `/error`: the invocation failed.
    Error(LambdaError),
}

impl LambdaAnswer {
    /// The response, as JSON.
    ///
    /// # Panics
    ///
    /// When the answer is an error, or the response not JSON.
    pub fn json(&self) -> serde_json::Value {
        match self {
            LambdaAnswer::Response(body) => serde_json::from_slice(body).unwrap_or_else(|error| {
                panic!("the response is not JSON ({error}): {}", String::from_utf8_lossy(body))
            }),
            LambdaAnswer::Error(error) => panic!("expected a response, got the Lambda error {error:?}"),
        }
    }

    /// The Lambda error, if the invocation failed.
    pub fn error(&self) -> Option<&LambdaError> {
        match self {
            LambdaAnswer::Error(error) => Some(error),
            LambdaAnswer::Response(_) => None,
        }
    }
}

struct Queued {
    request_id: String,
    invocation: LambdaInvocation,
}

#[derive(Default)]
struct Shared {
    /// Handed out, not yet answered.
    waiting: Mutex<HashMap<String, oneshot::Sender<LambdaAnswer>>>,
    answered: Mutex<HashSet<String>>,
    violations: Mutex<Vec<String>>,
    init_error: Mutex<Option<LambdaError>>,
    init_failed: Notify,
    polls: AtomicU64,
    polled: Notify,
    handed_out: AtomicU64,
}

impl Shared {
    fn violation(&self, what: String) {
        self.violations.lock().unwrap_or_else(PoisonError::into_inner).push(what);
    }
}

/// A local Lambda Runtime API on 127.0.0.1. Dropping it stops serving.
///
/// ```no_run
/// use celerity_testkit::{DeployedFunction, HandlerProcess, LambdaInvocation, LambdaRuntimeApi};
///
/// # async fn example() -> std::io::Result<()> {
/// let api = LambdaRuntimeApi::start().await?;
/// let mut function = HandlerProcess::command("target/debug/orders")
///     .envs(api.env())
///     .envs(DeployedFunction::new("quoteOrder", "custom").env())
///     .spawn()?;
/// let answer = api.invoke(LambdaInvocation::new(r#"{"items": []}"#)).await.expect("an answer");
/// println!("{:?}", answer.error());
/// function.kill().await?;
/// # Ok(())
/// # }
/// ```
pub struct LambdaRuntimeApi {
    addr: SocketAddr,
    queue: mpsc::UnboundedSender<Queued>,
    shared: Arc<Shared>,
    next_id: AtomicU64,
    task: tokio::task::JoinHandle<()>,
}

impl LambdaRuntimeApi {
    /// Binds a free port on loopback and serves there.
    pub async fn start() -> io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let (queue, queued) = mpsc::unbounded_channel();
        let queued = Arc::new(tokio::sync::Mutex::new(queued));
        let served = Arc::clone(&shared);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (shared, queued) = (Arc::clone(&served), Arc::clone(&queued));
                tokio::spawn(async move {
                    let service = service_fn(move |request| {
                        let (shared, queued) = (Arc::clone(&shared), Arc::clone(&queued));
                        async move { Ok::<_, Infallible>(route(&shared, &queued, request).await) }
                    });
                    let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
        });
        Ok(LambdaRuntimeApi { addr, queue, shared, next_id: AtomicU64::new(1), task })
    }

    /// `host:port`, as `AWS_LAMBDA_RUNTIME_API` holds it.
    pub fn address(&self) -> String {
        self.addr.to_string()
    }

    /// The environment Lambda gives a function, pointing at this API: the
    /// Runtime API's address, the function's name, memory and version, a
    /// region and (made up) credentials.
    pub fn env(&self) -> Vec<(String, String)> {
        [
            ("AWS_LAMBDA_RUNTIME_API", self.address().as_str()),
            ("AWS_LAMBDA_FUNCTION_NAME", "celerity-test-function"),
            ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "256"),
            ("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST"),
            ("AWS_REGION", "eu-west-1"),
            ("AWS_ACCESS_KEY_ID", "AKIDTESTKIT"),
            ("AWS_SECRET_ACCESS_KEY", "testkit-secret"),
            ("AWS_SESSION_TOKEN", "testkit-session"),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
    }

    /// Queues `invocation` and waits for the function's answer: `None` when
    /// none came within the invocation's wait (60 s by default).
    pub async fn invoke(&self, invocation: impl Into<LambdaInvocation>) -> Option<LambdaAnswer> {
        let invocation = invocation.into();
        let request_id = invocation
            .request_id
            .clone()
            .unwrap_or_else(|| format!("req-{}", self.next_id.fetch_add(1, Ordering::Relaxed)));
        let wait = invocation.wait;
        let (answered, answer) = oneshot::channel();
        self.shared.waiting.lock().unwrap_or_else(PoisonError::into_inner).insert(request_id.clone(), answered);
        if self.queue.send(Queued { request_id, invocation }).is_err() {
            return None;
        }
        tokio::time::timeout(wait, answer).await.ok().and_then(Result::ok)
    }

    /// Waits, up to `wait`, for the function to report an init error.
    pub async fn init_error(&self, wait: Duration) -> Option<LambdaError> {
        let reported = async {
            loop {
                let notified = self.shared.init_failed.notified();
                if let Some(error) = self.shared.init_error.lock().unwrap_or_else(PoisonError::into_inner).clone() {
                    return error;
                }
                notified.await;
            }
        };
        tokio::time::timeout(wait, reported).await.ok()
    }

    /// Waits, up to `wait`, until the function has asked for an invocation
    /// `count` times in all: it is ready, and has answered the ones before.
    pub async fn wait_for_polls(&self, count: u64, wait: Duration) -> bool {
        let polled = async {
            loop {
                let notified = self.shared.polled.notified();
                if self.shared.polls.load(Ordering::SeqCst) >= count {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(wait, polled).await.is_ok()
    }

    /// What the function did that a Lambda function must not: answer an
    /// invocation twice, or one it was never given.
    pub fn violations(&self) -> Vec<String> {
        self.shared.violations.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

impl Drop for LambdaRuntimeApi {
    fn drop(&mut self) {
        self.task.abort();
    }
}

type Queue = tokio::sync::Mutex<mpsc::UnboundedReceiver<Queued>>;

async fn route(shared: &Shared, queued: &Queue, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let path = request.uri().path().to_string();
    let Some(rest) = path.strip_prefix(PREFIX) else { return status(StatusCode::NOT_FOUND, "unknown path") };
    let method = request.method().clone();
    let answer = rest.strip_prefix("/invocation/").and_then(|rest| rest.rsplit_once('/'));
    let answer =
        answer.filter(|(id, what)| !id.is_empty() && !id.contains('/') && matches!(*what, "response" | "error"));
    let known = rest == "/invocation/next" || rest == "/init/error" || answer.is_some();
    match (method, rest) {
        (Method::GET, "/invocation/next") => next(shared, queued).await,
        (Method::POST, "/init/error") => {
            let error = lambda_error(shared, "/init/error", request).await;
            if shared.handed_out.load(Ordering::SeqCst) > 0 {
                return error_status(
                    StatusCode::FORBIDDEN,
                    "InvalidStateTransition",
                    "State transition from Invoke to InitError failed",
                );
            }
            *shared.init_error.lock().unwrap_or_else(PoisonError::into_inner) = Some(error);
            shared.init_failed.notify_waiters();
            status(StatusCode::ACCEPTED, r#"{"status":"OK"}"#)
        }
        (Method::POST, _) if answer.is_some() => {
            let Some((id, what)) = answer else { return status(StatusCode::NOT_FOUND, "unknown path") };
            let answer = if what == "response" {
                let body = request.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                if body.len() > MAX_RESPONSE_BYTES {
                    let error = LambdaError {
                        error_type: "Function.ResponseSizeTooLarge".to_string(),
                        error_message: format!(
                            "Response payload size exceeded maximum allowed payload size ({MAX_RESPONSE_BYTES} bytes)."
                        ),
                        header_type: None,
                        content_type: None,
                        body: Bytes::new(),
                    };
                    if answer_invocation(shared, id, LambdaAnswer::Error(error)).status() != StatusCode::ACCEPTED {
                        return invalid_request_id();
                    }
                    return error_status(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        "RequestEntityTooLarge",
                        &format!("Exceeded maximum allowed payload size ({MAX_RESPONSE_BYTES} bytes)."),
                    );
                }
                LambdaAnswer::Response(body)
            } else {
                LambdaAnswer::Error(lambda_error(shared, &path, request).await)
            };
            answer_invocation(shared, id, answer)
        }
        _ if known => status(StatusCode::METHOD_NOT_ALLOWED, "method not allowed"),
        _ => status(StatusCode::NOT_FOUND, "unknown path"),
    }
}

/// Hands out the next queued invocation, waiting for one.
async fn next(shared: &Shared, queued: &Queue) -> Response<Full<Bytes>> {
    shared.polls.fetch_add(1, Ordering::SeqCst);
    shared.polled.notify_waiters();
    let Some(Queued { request_id, invocation }) = queued.lock().await.recv().await else {
        return status(StatusCode::GONE, "shutting down");
    };
    shared.handed_out.fetch_add(1, Ordering::SeqCst);
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let deadline = (now + invocation.deadline_in).as_millis();
    let mut response = Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "application/json")
        .header("lambda-runtime-aws-request-id", &request_id)
        .header("lambda-runtime-deadline-ms", deadline.to_string())
        .header("lambda-runtime-invoked-function-arn", FUNCTION_ARN);
    if let Some(trace) = &invocation.trace_id {
        response = response.header("lambda-runtime-trace-id", trace);
    }
    response.body(Full::new(invocation.payload)).unwrap_or_else(|_| status(StatusCode::INTERNAL_SERVER_ERROR, ""))
}

fn answer_invocation(shared: &Shared, id: &str, answer: LambdaAnswer) -> Response<Full<Bytes>> {
    let waiter = shared.waiting.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
    let first = shared.answered.lock().unwrap_or_else(PoisonError::into_inner).insert(id.to_string());
    match waiter {
        Some(waiter) => {
            let _ = waiter.send(answer);
            status(StatusCode::ACCEPTED, r#"{"status":"OK"}"#)
        }
        None => {
            let what = if first { "an invocation never handed out" } else { "an invocation a second time" };
            shared.violation(format!("the function answered {what}: {id}"));
            invalid_request_id()
        }
    }
}

/// The error a function posted, checked against the shape Lambda takes.
async fn lambda_error(shared: &Shared, path: &str, request: Request<Incoming>) -> LambdaError {
    let header =
        |name: &str| request.headers().get(name).map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
    let header_type = header("lambda-runtime-function-error-type");
    let content_type = header("content-type");
    let body = request.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let field = |name: &str| json.get(name).and_then(|value| value.as_str()).map(str::to_string);
    let (error_type, error_message) = (field("errorType"), field("errorMessage"));
    if error_type.is_none() || error_message.is_none() {
        let body = String::from_utf8_lossy(&body);
        shared.violation(format!("{path}: the error body is not {{\"errorType\", \"errorMessage\"}} JSON: {body}"));
    }
    match &header_type {
        None => shared.violation(format!("{path}: no Lambda-Runtime-Function-Error-Type header")),
        Some(header) => {
            if let Some(body) = error_type.as_ref().filter(|body| *body != header) {
                shared.violation(format!("{path}: the header says the error type is {header:?} and the body {body:?}"));
            }
            if !classified(header) {
                shared.violation(format!(
                    "{path}: the error type {header:?} is not Runtime.{{Name}} or Function.{{Name}}: Lambda reports \
                     it as Runtime.Unknown"
                ));
            }
        }
    }
    LambdaError {
        error_type: error_type.unwrap_or_default(),
        error_message: error_message.unwrap_or_default(),
        header_type,
        content_type,
        body,
    }
}

/// Whether Lambda takes `error_type` as it is: `Runtime.` or `Function.`,
/// then an upper-case ASCII letter and more letters.
fn classified(error_type: &str) -> bool {
    let Some(name) = error_type.strip_prefix("Runtime.").or_else(|| error_type.strip_prefix("Function.")) else {
        return false;
    };
    name.len() >= 2
        && name.starts_with(|c: char| c.is_ascii_uppercase())
        && name.chars().all(|c| c.is_ascii_alphabetic())
}

fn invalid_request_id() -> Response<Full<Bytes>> {
    error_status(StatusCode::BAD_REQUEST, "InvalidRequestID", "Invalid request ID")
}

/// An error answer of the API: `{"errorMessage", "errorType"}`.
fn error_status(code: StatusCode, error_type: &str, message: &str) -> Response<Full<Bytes>> {
    let body = serde_json::json!({"errorMessage": message, "errorType": error_type}).to_string();
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = code;
    response.headers_mut().insert("content-type", hyper::header::HeaderValue::from_static("application/json"));
    response
}

fn status(status: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() = status;
    let content_type = if body.starts_with('{') { "application/json" } else { "text/plain; charset=utf-8" };
    response.headers_mut().insert("content-type", hyper::header::HeaderValue::from_static(content_type));
    response
}
