//! Why a session ends with a failure.

use std::fmt;

use celerity_proto::v1 as pb;

use crate::excerpt::excerpt;
use crate::version::{PROTOCOL_MAJOR, PROTOCOL_MINOR};

/// Why a session ended with a failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionError {
    /// The first frame was not `RuntimeConfig`.
    UnexpectedFirstFrame(&'static str),
    /// A frame other than `ReadyAck` arrived before it.
    UnexpectedFrame {
        /// What arrived.
        frame: &'static str,
        /// What the handshake was waiting for.
        expected: &'static str,
    },
    /// The stream ended before the handshake completed.
    EndedDuringHandshake {
        /// What the handshake was waiting for.
        expected: &'static str,
        /// The transport's error, if any.
        error: Option<String>,
    },
    /// The handshake did not progress in time.
    HandshakeTimeout {
        /// What it was waiting for.
        expected: &'static str,
        /// How long it waited.
        waited_ms: u64,
    },
    /// The runtime serves a protocol major this SDK does not speak.
    VersionMismatch {
        /// Ours.
        ours: (u32, u32),
        /// The runtime's.
        theirs: (u32, u32),
    },
    /// A handler bound by name names nothing the blueprint declares.
    UnknownHandlerName {
        /// The name asked for.
        name: String,
        /// The handler that asked.
        handler: String,
        /// The names the blueprint does declare.
        declared: Vec<String>,
    },
    /// A handler bound by name cannot take its arguments from the route of
    /// the tag the blueprint gives that name.
    RouteMismatch {
        /// The handler.
        handler: String,
        /// The name it is bound to.
        name: String,
        /// The tag the blueprint gives it.
        tag: String,
        /// What does not fit.
        problem: String,
    },
    /// Two handlers resolved to one tag.
    DuplicateTag {
        /// The tag.
        tag: String,
        /// One handler.
        first: String,
        /// The other.
        second: String,
    },
    /// The runtime refused `Ready`.
    Refused {
        /// The reason it gave (`UNSPECIFIED` from runtimes that predate it).
        reason: pb::ready_ack::RefusedReason,
        /// Tags we declared that the blueprint does not.
        unknown_tags: Vec<String>,
        /// Tags the blueprint declares that we did not.
        unhandled_tags: Vec<String>,
    },
    /// The stream ended without a drain: the runtime went away.
    StreamEnded {
        /// Events that were still in flight and are lost.
        in_flight: usize,
        /// The transport's error, if any.
        error: Option<String>,
    },
    /// A second shutdown request arrived while draining.
    Interrupted,
    /// A frame the handshake needed did not decode.
    Undecodable {
        /// What kind of frame it was, as far as could be read.
        frame: &'static str,
        /// What the handshake was waiting for.
        expected: &'static str,
        /// The decoder's error, naming the field.
        error: String,
    },
    /// The runtime sent a frame over the largest this process accepts
    /// (`CELERITY_MAX_MESSAGE_BYTES`): refused, and the stream cannot be
    /// read past it.
    FrameTooLarge {
        /// The frame's length.
        bytes: usize,
        /// The largest frame accepted.
        limit: usize,
        /// Events that were in flight and are lost.
        in_flight: usize,
    },
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::UnexpectedFirstFrame(frame) => {
                write!(f, "protocol error: the runtime's first frame must be RuntimeConfig, but it sent {frame}")
            }
            SessionError::UnexpectedFrame { frame, expected } => {
                write!(f, "protocol error: expected {expected} from the runtime, but it sent {frame}")
            }
            SessionError::EndedDuringHandshake { expected, error } => {
                write!(f, "the runtime closed the stream while the handshake waited for {expected}")?;
                if let Some(error) = error {
                    write!(f, ": {}", excerpt(error))?;
                }
                Ok(())
            }
            SessionError::HandshakeTimeout { expected, waited_ms } => {
                write!(f, "the runtime sent no {expected} within {:.1} s of connecting", *waited_ms as f64 / 1000.0)
            }
            SessionError::VersionMismatch { ours, theirs } => write!(
                f,
                "protocol version mismatch: this handler speaks protocol {}.{} (celerity SDK {}), the runtime serves {}.{}; \
                 a different major version cannot be served, so Ready was not sent. Rebuild the handler with an SDK for protocol {}.x",
                ours.0,
                ours.1,
                crate::version::SDK_VERSION,
                theirs.0,
                theirs.1,
                theirs.0
            ),
            SessionError::UnknownHandlerName { name, handler, declared } => {
                write!(f, "handler {handler} is bound to name {name:?}, which the blueprint does not declare; ")?;
                if declared.is_empty() {
                    write!(f, "the blueprint declares no handlers")
                } else {
                    write!(f, "it declares: {}", declared.join(", "))
                }
            }
            SessionError::RouteMismatch { handler, name, tag, problem } => {
                write!(
                    f,
                    "handler {handler} is bound to name {name:?}, whose tag in the blueprint is {tag}, and cannot serve it: {problem}"
                )
            }
            SessionError::DuplicateTag { tag, first, second } => {
                write!(f, "two handlers serve tag {tag}: {first} and {second}; a tag must have exactly one handler")
            }
            SessionError::Refused { reason, unknown_tags, unhandled_tags } => {
                let version_refusal = *reason == pb::ready_ack::RefusedReason::ProtocolVersion;
                if version_refusal {
                    write!(
                        f,
                        "the runtime refused this handler's protocol version {PROTOCOL_MAJOR}.{PROTOCOL_MINOR} (celerity SDK {})",
                        crate::version::SDK_VERSION
                    )?;
                } else {
                    write!(f, "the runtime refused this handler's tags")?;
                }
                if !unknown_tags.is_empty() {
                    write!(f, "; registered here but not declared by the blueprint: {}", unknown_tags.join(", "))?;
                }
                if !unhandled_tags.is_empty() {
                    write!(f, "; declared by the blueprint but not registered here: {}", unhandled_tags.join(", "))?;
                }
                if !version_refusal && unknown_tags.is_empty() && unhandled_tags.is_empty() {
                    write!(f, " (it gave no reason)")?;
                }
                Ok(())
            }
            SessionError::StreamEnded { in_flight, error } => {
                write!(f, "the runtime closed the stream without draining")?;
                if let Some(error) = error {
                    write!(f, " ({})", excerpt(error))?;
                }
                if *in_flight > 0 {
                    write!(f, "; {in_flight} event(s) in flight were abandoned")?;
                }
                Ok(())
            }
            SessionError::Interrupted => write!(f, "stopped by a second shutdown signal while draining"),
            SessionError::Undecodable { frame, expected, error } => write!(
                f,
                "the SDK could not decode the {frame} the runtime sent while the handshake waited for {expected}: {error}"
            ),
            SessionError::FrameTooLarge { bytes, limit, in_flight } => {
                write!(
                    f,
                    "the SDK refused a frame of {bytes} bytes from the runtime: the largest it accepts is {limit} bytes \
                     (CELERITY_MAX_MESSAGE_BYTES). A frame cannot be skipped unread, so the stream ended there"
                )?;
                if *in_flight > 0 {
                    write!(f, "; {in_flight} event(s) in flight were abandoned")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for SessionError {}
