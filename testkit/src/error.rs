//! The kit's error type and the ways a handler stream can end.

use std::fmt;
use std::io;
use std::time::Duration;

use celerity_proto::v1::{HandlerMessage, ReadyAck};

use crate::frame;
use crate::violation::Violation;

/// How a handler's stream ended, as seen by the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEnd {
    /// The handler closed its side of the stream normally (end of stream).
    Clean,
    /// The stream ended with a gRPC error: the handler reset it, the
    /// connection broke, or the process died.
    Status {
        /// The gRPC status code.
        code: tonic::Code,
        /// The status message.
        message: String,
    },
}

impl StreamEnd {
    /// Whether the stream ended without an error.
    pub fn is_clean(&self) -> bool {
        matches!(self, StreamEnd::Clean)
    }

    pub(crate) fn from_status(status: &tonic::Status) -> Self {
        StreamEnd::Status { code: status.code(), message: status.message().to_owned() }
    }
}

impl fmt::Display for StreamEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamEnd::Clean => f.write_str("the handler ended the stream cleanly"),
            StreamEnd::Status { code, message } => {
                write!(f, "the stream ended with status {code:?}: {message}")
            }
        }
    }
}

/// Why [`Connection::dispatch`](crate::Connection::dispatch) refused to send
/// an event. Each one is something the real runtime would never do; use
/// [`Connection::dispatch_unchecked`](crate::Connection::dispatch_unchecked)
/// to do it anyway.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DispatchRefusal {
    /// The credit window has no place left.
    NoCredit {
        /// Credit available (zero or less).
        available: i64,
    },
    /// The handler asked to withhold (a Result with `credit_grant` 0) and has
    /// not sent a `CreditGrant` since.
    Withheld,
    /// The tag's concurrency cap from `Ready.limits` is reached.
    TagCap {
        /// The handler tag.
        tag: String,
        /// The cap the handler declared.
        cap: u32,
        /// Events of that tag in flight now.
        in_flight: u32,
    },
    /// The handler did not declare this tag in `Ready`.
    UnknownTag(String),
    /// This id was already dispatched on this stream.
    DuplicateId(String),
    /// The handler sent `Draining`: the runtime sends it nothing further.
    HandlerDraining,
    /// The runtime sent `Drain`: it dispatches nothing further.
    RuntimeDraining,
    /// The handler's stream has ended.
    StreamEnded(StreamEnd),
}

impl fmt::Display for DispatchRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DispatchRefusal::NoCredit { available } => {
                write!(f, "no credit available (credit is {available})")
            }
            DispatchRefusal::Withheld => f.write_str(
                "the handler is withholding credit (a Result with credit_grant 0) and has sent no CreditGrant since",
            ),
            DispatchRefusal::TagCap { tag, cap, in_flight } => {
                write!(f, "tag {tag:?} is at its concurrency cap ({in_flight} in flight, cap {cap})")
            }
            DispatchRefusal::UnknownTag(tag) => {
                write!(f, "the handler did not declare tag {tag:?} in Ready")
            }
            DispatchRefusal::DuplicateId(id) => write!(f, "id {id:?} was already dispatched"),
            DispatchRefusal::HandlerDraining => f.write_str("the handler sent Draining"),
            DispatchRefusal::RuntimeDraining => f.write_str("the runtime already sent Drain"),
            DispatchRefusal::StreamEnded(end) => write!(f, "{end}"),
        }
    }
}

/// Everything that can go wrong in the kit. The `Display` text says what
/// happened, so a test can simply `.unwrap()` or `?` it.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// An I/O error (binding the socket, spawning a process, ...).
    Io(io::Error),
    /// Another process is already serving the Unix socket path.
    AlreadyServing(std::path::PathBuf),
    /// A wait ran out of time.
    Timeout {
        /// What was being waited for.
        waiting_for: String,
        /// How long it waited.
        after: Duration,
        /// A summary of the connection's state at the time.
        state: String,
    },
    /// The handler's first frame was not `Ready`; the runtime closed the stream.
    UnexpectedFirstFrame(Box<HandlerMessage>),
    /// The handler's stream ended before it sent `Ready`.
    ClosedBeforeReady(StreamEnd),
    /// The handler sent no `Ready` within the Ready timeout; the runtime
    /// closed the stream.
    ReadyTimeout(Duration),
    /// The handshake was refused (see [`Handshake::accepted`](crate::Handshake::accepted)).
    Refused(ReadyAck),
    /// [`Connection::dispatch`](crate::Connection::dispatch) refused to send.
    DispatchRefused(DispatchRefusal),
    /// The handler broke the protocol; see [`Violation`].
    Violations(Vec<Violation>),
    /// The handler's stream ended while something was still awaited.
    StreamClosed {
        /// What was being waited for.
        waiting_for: String,
        /// How the stream ended.
        end: StreamEnd,
    },
    /// The runtime side of the stream is already closed (by
    /// [`Connection::close`](crate::Connection::close), or because the
    /// transport dropped it), so nothing more can be sent.
    SenderClosed,
    /// An id was awaited that was never dispatched on this connection.
    NotDispatched(String),
    /// The test runtime's server has stopped; no more handler streams arrive.
    RuntimeStopped,
    /// A handler stream connected while the runtime was draining; it was
    /// refused (closed with status UNAVAILABLE).
    RefusedDraining,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "I/O error: {e}"),
            Error::AlreadyServing(path) => {
                write!(f, "another process is already serving the socket {}", path.display())
            }
            Error::Timeout { waiting_for, after, state } => {
                write!(f, "timed out after {after:?} waiting for {waiting_for} ({state})")
            }
            Error::UnexpectedFirstFrame(msg) => write!(
                f,
                "protocol error: the handler's first frame was {} instead of Ready; the stream was closed: {msg:?}",
                frame::handler_frame_name(msg)
            ),
            Error::ClosedBeforeReady(end) => {
                write!(f, "the handler's stream ended before Ready: {end}")
            }
            Error::ReadyTimeout(after) => {
                write!(f, "the handler sent no Ready within {after:?}; the stream was closed")
            }
            Error::Refused(ack) => write!(f, "the handshake was refused: {ack:?}"),
            Error::DispatchRefused(r) => write!(f, "dispatch refused: {r}"),
            Error::Violations(vs) => {
                write!(f, "the handler broke the protocol:")?;
                for v in vs {
                    write!(f, "\n  - {v}")?;
                }
                Ok(())
            }
            Error::StreamClosed { waiting_for, end } => {
                write!(f, "stream closed while waiting for {waiting_for}: {end}")
            }
            Error::SenderClosed => f.write_str("the runtime side of the stream is closed"),
            Error::NotDispatched(id) => {
                write!(f, "id {id:?} was never dispatched on this connection")
            }
            Error::RuntimeStopped => f.write_str("the test runtime's server has stopped"),
            Error::RefusedDraining => {
                f.write_str("a handler stream connected while the runtime was draining; it was refused")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::Io(e)
    }
}

impl From<DispatchRefusal> for Error {
    fn from(r: DispatchRefusal) -> Self {
        Error::DispatchRefused(r)
    }
}
