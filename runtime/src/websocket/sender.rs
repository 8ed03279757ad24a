//! Sending to WebSocket connections from any handler or background task.

use std::time::Duration;

use celerity_proto::v1::WsSendAck;
use tokio::sync::{mpsc, oneshot};

use super::outbound::{Outbound, SendError, SendReport, generate_id, into_wire_batch};
use crate::context::Context;
use crate::driver::Command;
use crate::error::Error;
use crate::http::{FromRequest, HttpError, Request};
use crate::session::WsOutcome;

/// How long a send waits for the runtime's acknowledgement by default. A
/// message that asked its client to acknowledge is resent by the runtime
/// while attempts remain (3 × 10 s by default) before it is declared lost, so
/// the wait is longer than that.
pub const DEFAULT_ACK_TIMEOUT: Duration = Duration::from_secs(60);

/// Sends messages to WebSocket connections, on the handler's own stream, and
/// waits for the runtime to say what became of each.
///
/// Take it as an argument of any handler (`ws: WsSender`), from
/// [`Context::ws`], or from [`crate::AppHandle::ws`] in a background task.
/// Cloning is cheap.
///
/// ```no_run
/// use celerity::websocket::{Outbound, WsSender};
/// use celerity::websocket::outbound::SendError;
///
/// async fn notify(ws: WsSender, connection: &str) -> Result<(), SendError> {
///     let update = Outbound::text(connection, r#"{"event":"orderShipped","data":{"id":7}}"#)
///         .message_id("order-7-shipped")
///         .wait_for_ack(true);
///     match ws.send(update).await {
///         Ok(_) => Ok(()),
///         // Exactly what failed, with its original ids, ready to send again.
///         Err(error) => ws.send_all(error.retry_batch()).await.map(|_| ()),
///     }
/// }
/// ```
#[derive(Clone, Debug)]
pub struct WsSender {
    commands: mpsc::UnboundedSender<Command>,
    timeout: Duration,
}

impl WsSender {
    pub(crate) fn new(commands: mpsc::UnboundedSender<Command>) -> Self {
        WsSender { commands, timeout: DEFAULT_ACK_TIMEOUT }
    }

    /// A sender with no stream behind it: every send ends
    /// [`SendError::Disconnected`]. What a context outside any runtime holds.
    pub(crate) fn disconnected() -> Self {
        let (commands, _) = mpsc::unbounded_channel();
        WsSender::new(commands)
    }

    /// The same sender, waiting at most `timeout` for each acknowledgement.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long each send waits for its acknowledgement.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Sends one message and waits for its outcome.
    pub async fn send(&self, message: Outbound) -> Result<SendReport, SendError> {
        self.send_all([message]).await
    }

    /// Sends a batch as one `WsSend` and waits for the outcome of every
    /// message. Messages are validated first: one that could not be sent
    /// (a binary message the SDK cannot decode itself, `wait_for_ack` on text
    /// that is not a JSON object) refuses the whole batch before anything is
    /// sent. On partial failure the error lists the failed messages and can
    /// build exactly the batch to retry.
    pub async fn send_all(&self, messages: impl IntoIterator<Item = Outbound>) -> Result<SendReport, SendError> {
        let sent = into_wire_batch(messages)?;
        if sent.is_empty() {
            let ack = WsSendAck { correlation_id: String::new(), success: true, failures: Vec::new() };
            return Ok(SendReport::from_ack(ack, &sent));
        }
        let correlation_id = generate_id();
        let (reply, outcome) = oneshot::channel();
        let command = Command::WsSend {
            correlation_id: correlation_id.clone(),
            messages: sent.clone(),
            timeout_ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
            reply,
        };
        if self.commands.send(command).is_err() {
            return Err(SendError::Disconnected { correlation_id, sent });
        }
        match outcome.await {
            Ok(WsOutcome::Acked(ack)) => SendReport::from_ack(ack, &sent).into_result(),
            Ok(WsOutcome::TimedOut) => Err(SendError::TimedOut { correlation_id, after: self.timeout, sent }),
            Ok(WsOutcome::Disconnected) | Err(_) => Err(SendError::Disconnected { correlation_id, sent }),
        }
    }
}

impl FromRequest for WsSender {
    fn from_request(_request: &mut Request, cx: &Context) -> Result<Self, HttpError> {
        Ok(cx.ws())
    }
}

impl super::FromMessage for WsSender {
    fn from_message(_message: &mut super::Message, cx: &Context) -> Result<Self, Error> {
        Ok(cx.ws())
    }
}

impl crate::consumer::FromRecord for WsSender {
    fn from_record(_record: &mut crate::consumer::RawRecord, cx: &Context) -> Result<Self, Error> {
        Ok(cx.ws())
    }
}

impl crate::consumer::FromBatch for WsSender {
    fn from_batch(_batch: &mut crate::consumer::Batch, cx: &Context) -> Result<Self, Error> {
        Ok(cx.ws())
    }
}

impl crate::schedule::FromTrigger for WsSender {
    fn from_trigger(_trigger: &mut crate::schedule::Trigger, cx: &Context) -> Result<Self, Error> {
        Ok(cx.ws())
    }
}

impl crate::custom::FromInvocation for WsSender {
    fn from_invocation(_invocation: &mut crate::custom::Invocation, cx: &Context) -> Result<Self, Error> {
        Ok(cx.ws())
    }
}
