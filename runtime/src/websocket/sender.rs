//! Sending to WebSocket connections from any handler or background task.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use celerity_proto::v1::{WsSend, WsSendAck};
use tokio::sync::{Semaphore, mpsc, oneshot};

use super::outbound::{
    MAX_BATCH_BYTES, MAX_BATCH_MESSAGES, Outbound, SendError, SendReport, SentBatch, generate_id, into_wire_batch,
};
use crate::command::Command;
use crate::session::WsOutcome;

/// How long a send waits for the runtime's acknowledgement by default. A
/// message that asked its client to acknowledge is resent by the runtime
/// while attempts remain (3 × 10 s by default) before it is declared lost, so
/// the wait is longer than that.
pub const DEFAULT_ACK_TIMEOUT: Duration = Duration::from_secs(60);

/// How many sends may await their acknowledgement at once, in the whole
/// process. A send beyond it waits for one to end (within its own timeout,
/// and ends [`SendError::TimedOut`] if none does), so the driver's queue and
/// the table of sends awaiting acknowledgement stay bounded however many
/// tasks send at once.
pub const MAX_SENDS_IN_FLIGHT: usize = 4096;

static SENDS_IN_FLIGHT: Semaphore = Semaphore::const_new(MAX_SENDS_IN_FLIGHT);

/// Sends messages to WebSocket connections, on the handler's own stream, and
/// waits for the runtime to say what became of each.
///
/// Take it as an argument of any handler (`ws: WsSender`), from
/// [`crate::Context::ws`], or from [`crate::AppHandle::ws`] in a background task.
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
    /// Under `celerity::testing`, sends go to the test's recorder instead.
    recording: Option<Recording>,
}

/// Where a sender under `celerity::testing` sends, and for which event.
#[derive(Clone, Debug)]
struct Recording {
    recorder: Arc<dyn SendRecorder>,
    event_id: Option<Arc<str>>,
}

/// The future of the runtime's acknowledgement of a recorded send: `None`
/// when the stream ended before one came.
pub(crate) type AckFuture = Pin<Box<dyn Future<Output = Option<WsSendAck>> + Send>>;

/// Where sends go in place of a stream: `celerity::testing` records each
/// and answers it as the test scripts.
pub(crate) trait SendRecorder: Send + Sync + fmt::Debug {
    /// Records `send`, made for the event `event_id` (or outside any event),
    /// and answers it.
    fn record(&self, event_id: Option<&str>, send: WsSend) -> AckFuture;
}

impl WsSender {
    pub(crate) fn new(commands: mpsc::UnboundedSender<Command>) -> Self {
        WsSender { commands, timeout: DEFAULT_ACK_TIMEOUT, recording: None }
    }

    /// A sender whose sends go to `recorder`, made for the event `event_id`.
    pub(crate) fn recorded(
        commands: mpsc::UnboundedSender<Command>,
        recorder: Arc<dyn SendRecorder>,
        event_id: Option<Arc<str>>,
    ) -> Self {
        WsSender { commands, timeout: DEFAULT_ACK_TIMEOUT, recording: Some(Recording { recorder, event_id }) }
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
    /// sent, and so does a batch of more than [`MAX_BATCH_MESSAGES`]
    /// messages or [`MAX_BATCH_BYTES`] bytes ([`SendError::TooLarge`]). On
    /// partial failure the error lists the failed messages and can build
    /// exactly the batch to retry.
    pub async fn send_all(&self, messages: impl IntoIterator<Item = Outbound>) -> Result<SendReport, SendError> {
        let messages = into_wire_batch(messages)?;
        if messages.is_empty() {
            let ack = WsSendAck { correlation_id: String::new(), success: true, failures: Vec::new() };
            return Ok(SendReport::from_ack(ack, &messages));
        }
        let bytes: usize = messages.iter().map(|m| m.message.len() + m.connection_id.len() + m.message_id.len()).sum();
        if messages.len() > MAX_BATCH_MESSAGES || bytes > MAX_BATCH_BYTES {
            return Err(SendError::TooLarge { messages: messages.len(), bytes, limit: MAX_BATCH_BYTES });
        }
        let correlation_id = generate_id();
        if let Some(Recording { recorder, event_id }) = &self.recording {
            let sent = SentBatch::new(&correlation_id, &messages);
            let reply = recorder.record(event_id.as_deref(), WsSend { correlation_id, messages });
            return match tokio::time::timeout(self.timeout, reply).await {
                Ok(Some(ack)) => SendReport::from_ack_kept(ack, &sent).into_result(),
                Ok(None) => Err(disconnected(&sent)),
                Err(_) => Err(self.timed_out(&sent)),
            };
        }
        // Held until the acknowledgement (or the end of waiting for it).
        let _permit = match tokio::time::timeout(self.timeout, SENDS_IN_FLIGHT.acquire()).await {
            Ok(Ok(permit)) => permit,
            Ok(Err(_)) => return Err(SendError::Disconnected { correlation_id, sent: messages }),
            Err(_) => return Err(SendError::TimedOut { correlation_id, after: self.timeout, sent: messages }),
        };
        // The messages go to the driver; what the outcome is read against is
        // kept here, in a form much cheaper than a copy of them.
        let sent = SentBatch::new(&correlation_id, &messages);
        let (reply, outcome) = oneshot::channel();
        let command = Command::WsSend {
            correlation_id,
            messages,
            timeout_ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
            reply,
        };
        if self.commands.send(command).is_err() {
            return Err(disconnected(&sent));
        }
        match outcome.await {
            Ok(WsOutcome::Acked(ack)) => SendReport::from_ack_kept(ack, &sent).into_result(),
            Ok(WsOutcome::Written(ack)) => SendReport::from_written_kept(ack, &sent).into_result(),
            Ok(WsOutcome::TimedOut) => Err(self.timed_out(&sent)),
            Ok(WsOutcome::TooLarge { bytes, limit }) => Err(SendError::TooLarge { messages: sent.len(), bytes, limit }),
            Ok(WsOutcome::Disconnected) | Err(_) => Err(disconnected(&sent)),
        }
    }

    fn timed_out(&self, sent: &SentBatch) -> SendError {
        SendError::TimedOut { correlation_id: sent.correlation_id(), after: self.timeout, sent: sent.to_wire() }
    }
}

fn disconnected(sent: &SentBatch) -> SendError {
    SendError::Disconnected { correlation_id: sent.correlation_id(), sent: sent.to_wire() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_batch_over_the_limits_is_refused_before_anything_is_sent() {
        let (commands, mut sent) = mpsc::unbounded_channel();
        let ws = WsSender::new(commands);
        let many = (0..=MAX_BATCH_MESSAGES).map(|i| Outbound::text(format!("c-{i}"), "{}"));
        match ws.send_all(many).await {
            Err(SendError::TooLarge { messages, .. }) => assert_eq!(messages, MAX_BATCH_MESSAGES + 1),
            other => panic!("expected TooLarge, got {other:?}"),
        }
        let large = (0..3).map(|i| Outbound::text(format!("c-{i}"), "x".repeat(MAX_BATCH_BYTES / 2)));
        let error = ws.send_all(large).await.unwrap_err();
        assert!(matches!(error, SendError::TooLarge { messages: 3, .. }), "{error:?}");
        assert!(error.to_string().contains("smaller batches"), "{error}");
        assert!(error.retry_batch().is_empty());
        assert!(sent.try_recv().is_err(), "nothing reached the driver");
    }

    /// Sends three messages through a driver that answers with `outcome`,
    /// and gives back what the driver was handed and what the send ended with.
    async fn send_answered(
        outcome: impl FnOnce(&str) -> WsOutcome,
    ) -> (String, Vec<celerity_proto::v1::WsOutbound>, Result<SendReport, SendError>) {
        let (commands, mut driver) = mpsc::unbounded_channel();
        let ws = WsSender::new(commands);
        let batch = [
            Outbound::text("c-1", r#"{"n":1}"#).wait_for_ack(true),
            Outbound::text("c-2", "two").inform_clients_on_loss(["c-9"]).caller("c-0"),
            Outbound::binary("c-3", super::super::frame::BinaryMessage::new("r", vec![3u8])).message_id("m-3"),
        ];
        let send = tokio::spawn(async move { ws.send_all(batch).await });
        let Some(Command::WsSend { correlation_id, messages, reply, .. }) = driver.recv().await else {
            panic!("expected the send");
        };
        let _ = reply.send(outcome(&correlation_id));
        (correlation_id, messages, send.await.unwrap())
    }

    /// The runtime's answer to the send `correlation_id`: a success.
    fn success(correlation_id: &str) -> WsSendAck {
        WsSendAck { correlation_id: correlation_id.to_owned(), success: true, failures: vec![] }
    }

    /// The runtime's answer to the send `correlation_id`: the second
    /// message, to `c-2`, failed.
    fn second_failed(correlation_id: &str) -> WsSendAck {
        WsSendAck {
            correlation_id: correlation_id.to_owned(),
            success: false,
            failures: vec![celerity_proto::v1::WsSendFailure {
                index: 1,
                connection_id: "c-2".into(),
                error_message: "gone".into(),
            }],
        }
    }

    #[tokio::test]
    async fn a_failure_in_the_ack_gives_back_exactly_that_message() {
        let (correlation_id, messages, result) = send_answered(|id| WsOutcome::Acked(second_failed(id))).await;
        let error = result.unwrap_err();
        let report = error.report().unwrap();
        assert_eq!((report.correlation_id(), report.len()), (correlation_id.as_str(), 3));
        assert_eq!(error.failed(1).unwrap().message(), &messages[1]);
        assert_eq!(into_wire_batch(error.retry_batch()).unwrap(), [messages[1].clone()]);
    }

    #[tokio::test]
    async fn a_success_reports_the_whole_batch() {
        let (correlation_id, _, result) = send_answered(|id| WsOutcome::Acked(success(id))).await;
        let report = result.unwrap();
        assert_eq!((report.correlation_id(), report.len()), (correlation_id.as_str(), 3));
        assert!(report.is_success() && (0..3).all(|index| report.succeeded(index)));
    }

    #[tokio::test]
    async fn a_runtime_that_never_waits_for_clients_leaves_wait_for_ack_unconfirmed() {
        let (_, messages, result) = send_answered(|id| WsOutcome::Written(success(id))).await;
        let error = result.unwrap_err();
        assert!(matches!(error, SendError::Unconfirmed(_)), "{error:?}");
        let report = error.report().unwrap();
        assert_eq!(report.unconfirmed_indexes(), [0], "only the first message asked for its client's acknowledgement");
        assert!(!report.succeeded(0) && report.succeeded(1) && report.succeeded(2));
        assert!(error.failures().is_empty());
        assert_eq!(into_wire_batch(error.retry_batch()).unwrap(), [messages[0].clone()]);
        assert!(
            error.to_string().starts_with("1 of 3 WebSocket messages asked for their client's acknowledgement"),
            "{error}"
        );

        // A failure is a failure first; the report still names what is unconfirmed.
        let (_, _, result) = send_answered(|id| WsOutcome::Written(second_failed(id))).await;
        let error = result.unwrap_err();
        assert!(matches!(&error, SendError::Failed(report) if report.unconfirmed_indexes() == [0]), "{error:?}");
        assert_eq!(error.failed_indexes(), [1]);

        // Without wait_for_ack, what the runtime wrote is all there is to know.
        let (commands, mut driver) = mpsc::unbounded_channel();
        let ws = WsSender::new(commands);
        let send = tokio::spawn(async move { ws.send(Outbound::text("c-1", "plain")).await });
        let Some(Command::WsSend { correlation_id, reply, .. }) = driver.recv().await else {
            panic!("expected the send")
        };
        let _ = reply.send(WsOutcome::Written(success(&correlation_id)));
        assert!(send.await.unwrap().unwrap().is_success());
    }

    #[tokio::test]
    async fn an_unanswered_send_gives_back_the_batch_as_sent() {
        let (correlation_id, messages, result) = send_answered(|_| WsOutcome::TimedOut).await;
        match result {
            Err(SendError::TimedOut { correlation_id: id, after, sent }) => {
                assert_eq!((id, after, &sent), (correlation_id, DEFAULT_ACK_TIMEOUT, &messages));
            }
            other => panic!("expected TimedOut, got {other:?}"),
        }
        let (correlation_id, messages, result) = send_answered(|_| WsOutcome::Disconnected).await;
        let error = result.unwrap_err();
        assert!(
            matches!(&error, SendError::Disconnected { correlation_id: id, sent } if *id == correlation_id && *sent == messages),
            "{error:?}"
        );
        assert_eq!(into_wire_batch(error.retry_batch()).unwrap(), messages);
    }

    #[tokio::test]
    async fn a_send_the_session_finds_too_large_for_a_frame_ends_too_large() {
        let (commands, mut sent) = mpsc::unbounded_channel();
        let ws = WsSender::new(commands);
        let send = tokio::spawn(async move { ws.send(Outbound::text("c-1", "{}")).await });
        match sent.recv().await {
            Some(Command::WsSend { reply, .. }) => {
                let _ = reply.send(WsOutcome::TooLarge { bytes: 70_000, limit: 65_536 });
            }
            other => panic!("expected the send, got {other:?}"),
        }
        match send.await.unwrap() {
            Err(SendError::TooLarge { messages: 1, bytes: 70_000, limit: 65_536 }) => {}
            other => panic!("expected TooLarge, got {other:?}"),
        }
    }
}
