//! The handshake on a new handler stream: RuntimeConfig, Ready, ReadyAck.

use std::sync::Arc;

use celerity_proto::v1::{
    HandlerMessage, ProtocolVersion, Ready, ReadyAck, RuntimeMessage, handler_message, ready_ack::RefusedReason,
    runtime_message,
};
use tokio::time::Instant;
use tonic::{Status, Streaming};

use crate::codec::Outgoing;
use crate::connection::{Connection, Outbound};
use crate::error::{Error, StreamEnd};
use crate::frame;
use crate::negotiate::{is_later_minor, negotiate};
use crate::settings::Settings;

/// The outcome of a completed handshake: the handler's `Ready`, the
/// `ReadyAck` the runtime answered, and, when that accepted the handler, the
/// [`Connection`]. A refused handler's stream has already been closed.
#[derive(Debug)]
pub struct Handshake {
    first_frame: RuntimeMessage,
    ready: Ready,
    ack: ReadyAck,
    later_minor: bool,
    connection: Option<Connection>,
}

impl Handshake {
    /// The first frame the runtime sent (normally the `RuntimeConfig`).
    pub fn first_frame(&self) -> &RuntimeMessage {
        &self.first_frame
    }

    /// The `Ready` the handler sent.
    pub fn ready(&self) -> &Ready {
        &self.ready
    }

    /// The `ReadyAck` the runtime sent.
    pub fn ack(&self) -> &ReadyAck {
        &self.ack
    }

    /// Whether the runtime accepted the handler.
    pub fn is_accepted(&self) -> bool {
        self.ack.accepted
    }

    /// The `refused_reason` of the ack (`Unspecified` when accepted).
    pub fn refused_reason(&self) -> RefusedReason {
        RefusedReason::try_from(self.ack.refused_reason).unwrap_or(RefusedReason::Unspecified)
    }

    /// The protocol version the handler declared.
    pub fn handler_version(&self) -> Option<ProtocolVersion> {
        self.ready.protocol_version
    }

    /// Whether the handler declared a later minor of the served major (served,
    /// and recorded here as the specification asks).
    pub fn served_later_minor(&self) -> bool {
        self.later_minor
    }

    /// The connection, when accepted.
    pub fn connection(&self) -> Option<&Connection> {
        self.connection.as_ref()
    }

    /// The connection, or [`Error::Refused`] with the ack.
    pub fn accepted(self) -> Result<Connection, Error> {
        match self.connection {
            Some(c) => Ok(c),
            None => Err(Error::Refused(self.ack)),
        }
    }

    /// The connection, when accepted.
    pub fn into_connection(self) -> Option<Connection> {
        self.connection
    }
}

/// Runs the runtime's side of the handshake on a freshly opened stream.
/// `connected_at` starts the Ready timeout.
pub(crate) async fn run(
    settings: Arc<Settings>,
    mut inbound: Streaming<HandlerMessage>,
    outbound: Outbound,
    connected_at: Instant,
) -> Result<Handshake, Error> {
    let first_frame = settings
        .first_frame
        .clone()
        .unwrap_or_else(|| RuntimeMessage { frame: Some(runtime_message::Frame::Config(settings.config.clone())) });
    if outbound.send(Ok(Outgoing::Message(first_frame.clone()))).is_err() {
        return Err(Error::ClosedBeforeReady(StreamEnd::Status {
            code: tonic::Code::Cancelled,
            message: "the transport dropped the response stream".to_owned(),
        }));
    }

    let deadline = connected_at + settings.ready_timeout;
    let ready = match tokio::time::timeout_at(deadline, inbound.message()).await {
        Err(_) => {
            let _ = outbound.send(Err(Status::deadline_exceeded(format!(
                "no Ready within {:?} of connecting",
                settings.ready_timeout
            ))));
            return Err(Error::ReadyTimeout(settings.ready_timeout));
        }
        Ok(Ok(None)) => return Err(Error::ClosedBeforeReady(StreamEnd::Clean)),
        Ok(Err(status)) => {
            return Err(Error::ClosedBeforeReady(StreamEnd::from_status(&status)));
        }
        Ok(Ok(Some(msg))) => match msg.frame {
            Some(handler_message::Frame::Ready(ready)) => ready,
            frame => {
                let msg = HandlerMessage { frame };
                let _ = outbound.send(Err(Status::failed_precondition(format!(
                    "protocol error: expected Ready as the first frame, got {}",
                    frame::handler_frame_name(&msg)
                ))));
                return Err(Error::UnexpectedFirstFrame(Box::new(msg)));
            }
        },
    };

    if settings.refusing.load(std::sync::atomic::Ordering::SeqCst) {
        let _ = outbound.send(Err(Status::unavailable("the runtime is draining and accepts no new handler streams")));
        return Err(Error::RefusedDraining);
    }

    let mut ack = negotiate(&settings.config, &ready);
    if let Some(override_ack) = &settings.ack_override {
        ack = override_ack(&ready, ack);
    }
    let later_minor = is_later_minor(settings.config.protocol_version, ready.protocol_version);
    // If the handler is already gone this send fails; the connection's reader
    // then records how the stream ended.
    let ack_frame = RuntimeMessage { frame: Some(runtime_message::Frame::ReadyAck(ack.clone())) };
    let _ = outbound.send(Ok(Outgoing::Message(ack_frame)));

    let connection = if ack.accepted {
        Some(Connection::start(ready.clone(), settings.config.clone(), inbound, outbound, settings.wait_timeout))
    } else {
        // Refused: close the stream (dropping both halves ends it with OK).
        drop(outbound);
        drop(inbound);
        None
    };
    Ok(Handshake { first_frame, ready, ack, later_minor, connection })
}
