//! What a handler answered, as the runtime receives it, in typed views.

use std::fmt;

use bytes::Bytes;
use celerity_proto::v1::{self as pb, result::Outcome as WireOutcome};
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use serde::de::DeserializeOwned;

use crate::excerpt::quoted_bytes;
use crate::session::error_type;

/// The answer a handler gave to one event: exactly the `Result.outcome` the
/// runtime would receive, one typed view per shape.
///
/// The `expect_*` methods take the shape a test expects and panic, naming
/// what came instead, for anything else:
///
/// ```
/// use celerity::App;
/// use celerity::testing::{Outcome, TestApp, TestRequest};
///
/// async fn hello() -> &'static str {
///     "hello"
/// }
///
/// let app = App::new().without_compiled_handlers().http("GET::/hello", hello).into_test();
/// let outcome: Outcome = celerity::testing::block_on(app.call("GET::/hello", TestRequest::get("/hello")));
/// let response = outcome.expect_http();
/// assert_eq!(response.status(), 200);
/// assert_eq!(response.text(), "hello");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// An HTTP response.
    Http(HttpOutcome),
    /// The `Ack` of a WebSocket message.
    WebSocket(Ack),
    /// The `BatchResult` of a consumer batch.
    Consumer(BatchResult),
    /// The `Ack` of a schedule trigger.
    Schedule(Ack),
    /// The result of a custom invocation.
    Custom(CustomResult),
    /// A `HandlerError`: an unhandled error, a panic, a deadline or
    /// cancellation overrun, an unknown tag.
    Error(HandlerError),
}

impl Outcome {
    /// The typed view of a wire outcome.
    pub fn from_wire(outcome: WireOutcome) -> Self {
        match outcome {
            WireOutcome::Http(response) => Outcome::Http(HttpOutcome::from_wire(response)),
            WireOutcome::Websocket(ack) => Outcome::WebSocket(Ack::from_wire(ack)),
            WireOutcome::Consumer(result) => Outcome::Consumer(BatchResult::from_wire(result)),
            WireOutcome::Schedule(ack) => Outcome::Schedule(Ack::from_wire(ack)),
            WireOutcome::Custom(result) => Outcome::Custom(CustomResult::from_wire(result)),
            WireOutcome::Error(error) => Outcome::Error(HandlerError::from_wire(error)),
        }
    }

    /// The wire outcome, byte for byte what the SDK would send.
    pub fn into_wire(self) -> WireOutcome {
        match self {
            Outcome::Http(response) => WireOutcome::Http(response.wire),
            Outcome::WebSocket(ack) => WireOutcome::Websocket(ack.wire),
            Outcome::Consumer(result) => WireOutcome::Consumer(result.wire),
            Outcome::Schedule(ack) => WireOutcome::Schedule(ack.wire),
            Outcome::Custom(result) => WireOutcome::Custom(result.wire),
            Outcome::Error(error) => WireOutcome::Error(error.wire),
        }
    }

    /// Whether this is a `HandlerError`.
    pub fn is_error(&self) -> bool {
        matches!(self, Outcome::Error(_))
    }

    /// The `HandlerError`, if this is one.
    pub fn as_error(&self) -> Option<&HandlerError> {
        match self {
            Outcome::Error(error) => Some(error),
            _ => None,
        }
    }

    /// The HTTP response.
    ///
    /// # Panics
    ///
    /// When the handler answered with anything else, naming it.
    #[track_caller]
    pub fn expect_http(self) -> HttpOutcome {
        match self {
            Outcome::Http(response) => response,
            other => other.unexpected("an HTTP response"),
        }
    }

    /// The batch result of a consumer.
    ///
    /// # Panics
    ///
    /// When the handler answered with anything else, naming it.
    #[track_caller]
    pub fn expect_batch(self) -> BatchResult {
        match self {
            Outcome::Consumer(result) => result,
            other => other.unexpected("a batch result"),
        }
    }

    /// The `Ack` of a WebSocket message or a schedule trigger.
    ///
    /// # Panics
    ///
    /// When the handler answered with anything else, naming it.
    #[track_caller]
    pub fn expect_ack(self) -> Ack {
        match self {
            Outcome::WebSocket(ack) | Outcome::Schedule(ack) => ack,
            other => other.unexpected("an Ack"),
        }
    }

    /// The result of a custom invocation.
    ///
    /// # Panics
    ///
    /// When the handler answered with anything else, naming it.
    #[track_caller]
    pub fn expect_custom(self) -> CustomResult {
        match self {
            Outcome::Custom(result) => result,
            other => other.unexpected("a custom invocation result"),
        }
    }

    /// The `HandlerError`.
    ///
    /// # Panics
    ///
    /// When the handler answered with anything else, naming it.
    #[track_caller]
    pub fn expect_error(self) -> HandlerError {
        match self {
            Outcome::Error(error) => error,
            other => other.unexpected("a HandlerError"),
        }
    }

    #[track_caller]
    fn unexpected(self, expected: &str) -> ! {
        panic!("expected {expected}, but the handler answered with {self}")
    }
}

impl From<WireOutcome> for Outcome {
    fn from(outcome: WireOutcome) -> Self {
        Outcome::from_wire(outcome)
    }
}

impl From<Outcome> for WireOutcome {
    fn from(outcome: Outcome) -> Self {
        outcome.into_wire()
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Http(response) => response.fmt(f),
            Outcome::WebSocket(ack) => write!(f, "a WebSocket {ack}"),
            Outcome::Consumer(result) => result.fmt(f),
            Outcome::Schedule(ack) => write!(f, "a schedule {ack}"),
            Outcome::Custom(result) => result.fmt(f),
            Outcome::Error(error) => error.fmt(f),
        }
    }
}

/// An HTTP response as the runtime receives it: the status, every header
/// value, and the body.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpOutcome {
    headers: HeaderMap,
    wire: pb::HttpResponse,
}

impl HttpOutcome {
    /// The view of a wire response. Headers whose name or value is not valid
    /// HTTP (which no SDK response has) are left out of
    /// [`headers`](Self::headers) and kept in [`wire`](Self::wire).
    pub fn from_wire(wire: pb::HttpResponse) -> Self {
        let mut names: Vec<&String> = wire.headers.keys().collect();
        names.sort();
        let mut headers = HeaderMap::new();
        for name in names {
            let Ok(header) = HeaderName::from_bytes(name.as_bytes()) else { continue };
            for value in &wire.headers[name].values {
                if let Ok(value) = HeaderValue::from_str(value) {
                    headers.append(header.clone(), value);
                }
            }
        }
        HttpOutcome { headers, wire }
    }

    /// The status.
    ///
    /// # Panics
    ///
    /// When the wire status is not an HTTP status (100 to 999), which only a
    /// hand-written [`crate::Handler`] can produce; read
    /// [`wire`](Self::wire) for it.
    #[track_caller]
    pub fn status(&self) -> StatusCode {
        u16::try_from(self.wire.status)
            .ok()
            .and_then(|status| StatusCode::from_u16(status).ok())
            .unwrap_or_else(|| panic!("the response's status {} is not an HTTP status", self.wire.status))
    }

    /// Every header, with every value.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The first value of header `name`, if present and text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }

    /// Every value of header `name`, in order.
    pub fn header_all(&self, name: &str) -> Vec<&str> {
        self.headers.get_all(name).iter().filter_map(|value| value.to_str().ok()).collect()
    }

    /// The body.
    pub fn body(&self) -> &Bytes {
        &self.wire.body
    }

    /// The body as text.
    ///
    /// # Panics
    ///
    /// When the body is not UTF-8.
    #[track_caller]
    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.wire.body)
            .unwrap_or_else(|_| panic!("the response body is not UTF-8 ({} bytes)", self.wire.body.len()))
    }

    /// The body deserialized from JSON.
    ///
    /// # Panics
    ///
    /// When the body is not JSON that fits `T`, with the body and serde's
    /// message.
    #[track_caller]
    pub fn json<T: DeserializeOwned>(&self) -> T {
        serde_json::from_slice(&self.wire.body).unwrap_or_else(|error| {
            panic!(
                "the response body is not JSON that fits {}: {error}; the body: {}",
                std::any::type_name::<T>(),
                quoted_bytes(&self.wire.body)
            )
        })
    }

    /// The response exactly as it goes on the wire.
    pub fn wire(&self) -> &pb::HttpResponse {
        &self.wire
    }

    /// Takes the wire response.
    pub fn into_wire(self) -> pb::HttpResponse {
        self.wire
    }
}

impl fmt::Display for HttpOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an HTTP response with status {}", self.wire.status)?;
        if self.wire.body.is_empty() {
            f.write_str(" and no body")
        } else {
            write!(f, ": {}", quoted_bytes(&self.wire.body))
        }
    }
}

/// A consumer's `BatchResult` as the runtime receives it: success, or the
/// records that failed, each named by its id with a message.
///
/// The runtime leaves a failed record on its source to be delivered again
/// and acknowledges the others; a failure with no record named fails the
/// whole batch.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchResult {
    wire: pb::BatchResult,
}

impl BatchResult {
    /// The view of a wire result.
    pub fn from_wire(wire: pb::BatchResult) -> Self {
        BatchResult { wire }
    }

    /// Whether every record succeeded.
    pub fn is_success(&self) -> bool {
        self.wire.success && self.wire.failures.is_empty()
    }

    /// Whether the batch failed with no record named: none of it is
    /// acknowledged (a batch handler's `Err`, a record without an id).
    pub fn is_whole_batch_failure(&self) -> bool {
        !self.wire.success && self.wire.failures.is_empty()
    }

    /// The ids of the failed records, in the order the result lists them.
    pub fn failed_ids(&self) -> Vec<&str> {
        self.wire.failures.iter().map(|failure| failure.message_id.as_str()).collect()
    }

    /// The message of the failure of record `message_id`, if it failed.
    pub fn failure(&self, message_id: &str) -> Option<&str> {
        self.wire
            .failures
            .iter()
            .find(|failure| failure.message_id == message_id)
            .map(|failure| failure.error_message.as_str())
    }

    /// The failures, as on the wire.
    pub fn failures(&self) -> &[pb::RecordFailure] {
        &self.wire.failures
    }

    /// The result exactly as it goes on the wire.
    pub fn wire(&self) -> &pb::BatchResult {
        &self.wire
    }

    /// Takes the wire result.
    pub fn into_wire(self) -> pb::BatchResult {
        self.wire
    }
}

impl fmt::Display for BatchResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_success() {
            return f.write_str("a batch result in which every record succeeded");
        }
        if self.is_whole_batch_failure() {
            return f.write_str("a batch result failing the whole batch");
        }
        write!(f, "a batch result with {} failed record(s): ", self.wire.failures.len())?;
        for (i, failure) in self.wire.failures.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{:?} ({})", failure.message_id, failure.error_message)?;
        }
        Ok(())
    }
}

/// The `Ack` of a WebSocket message or a schedule trigger.
#[derive(Debug, Clone, PartialEq)]
pub struct Ack {
    wire: pb::Ack,
}

impl Ack {
    /// The view of a wire `Ack`.
    pub fn from_wire(wire: pb::Ack) -> Self {
        Ack { wire }
    }

    /// Whether the event was processed.
    pub fn is_success(&self) -> bool {
        self.wire.success
    }

    /// What went wrong, for a failed `Ack`.
    pub fn error_message(&self) -> Option<&str> {
        Some(self.wire.error_message.as_str()).filter(|message| !message.is_empty())
    }

    /// The `Ack` exactly as it goes on the wire.
    pub fn wire(&self) -> &pb::Ack {
        &self.wire
    }
}

impl fmt::Display for Ack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.wire.success {
            f.write_str("Ack (success)")
        } else {
            write!(f, "Ack (failed: {:?})", self.wire.error_message)
        }
    }
}

/// The result of a custom invocation: its output, or the message of a
/// `CustomError`.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomResult {
    wire: pb::CustomInvokeResult,
}

impl CustomResult {
    /// The view of a wire result.
    pub fn from_wire(wire: pb::CustomInvokeResult) -> Self {
        CustomResult { wire }
    }

    /// The output's bytes.
    pub fn output(&self) -> &Bytes {
        &self.wire.output
    }

    /// The output as text.
    ///
    /// # Panics
    ///
    /// When the output is not UTF-8.
    #[track_caller]
    pub fn output_text(&self) -> &str {
        std::str::from_utf8(&self.wire.output)
            .unwrap_or_else(|_| panic!("the output is not UTF-8 ({} bytes)", self.wire.output.len()))
    }

    /// The output deserialized from JSON.
    ///
    /// # Panics
    ///
    /// When the output is not JSON that fits `T`, with the output and serde's
    /// message.
    #[track_caller]
    pub fn output_json<T: DeserializeOwned>(&self) -> T {
        serde_json::from_slice(&self.wire.output).unwrap_or_else(|error| {
            panic!(
                "the output is not JSON that fits {}: {error}; the output: {}",
                std::any::type_name::<T>(),
                quoted_bytes(&self.wire.output)
            )
        })
    }

    /// The `error_message` of a deliberate failure (a `CustomError`).
    pub fn error_message(&self) -> Option<&str> {
        Some(self.wire.error_message.as_str()).filter(|message| !message.is_empty())
    }

    /// Whether the handler answered with a `CustomError`.
    pub fn is_error(&self) -> bool {
        !self.wire.error_message.is_empty()
    }

    /// The result exactly as it goes on the wire.
    pub fn wire(&self) -> &pb::CustomInvokeResult {
        &self.wire
    }
}

impl fmt::Display for CustomResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.error_message() {
            Some(message) => write!(f, "a custom result with error_message {message:?}"),
            None => write!(f, "a custom result with output {}", quoted_bytes(&self.wire.output)),
        }
    }
}

/// A `HandlerError`: what the runtime receives for an unhandled error, a
/// panic (type `panic`), a handler that overran its deadline
/// (`DeadlineExceeded`) or a cancellation (`Cancelled`), or a tag no handler
/// serves (`UnknownHandlerTag`).
#[derive(Debug, Clone, PartialEq)]
pub struct HandlerError {
    wire: pb::HandlerError,
}

impl HandlerError {
    /// The view of a wire error.
    pub fn from_wire(wire: pb::HandlerError) -> Self {
        HandlerError { wire }
    }

    /// The error's type: `panic`, `DeadlineExceeded`, `Cancelled`, or the
    /// type the handler's error named.
    pub fn error_type(&self) -> &str {
        &self.wire.r#type
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.wire.message
    }

    /// The stack, when one was sent (never by default).
    pub fn stack(&self) -> &str {
        &self.wire.stack
    }

    /// Whether the handler panicked.
    pub fn is_panic(&self) -> bool {
        self.wire.r#type == error_type::PANIC
    }

    /// Whether the handler ran past its deadline and was answered for.
    pub fn is_deadline_exceeded(&self) -> bool {
        self.wire.r#type == error_type::DEADLINE_EXCEEDED
    }

    /// Whether the handler was cancelled and answered for.
    pub fn is_cancelled(&self) -> bool {
        self.wire.r#type == error_type::CANCELLED
    }

    /// The error exactly as it goes on the wire.
    pub fn wire(&self) -> &pb::HandlerError {
        &self.wire
    }
}

impl fmt::Display for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a HandlerError of type {:?}: {}", self.wire.r#type, self.wire.message)
    }
}
