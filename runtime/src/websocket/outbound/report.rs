//! Reading the runtime's `WsSendAck` against the batch as it was sent: which
//! messages failed, on which connections and why, what in the answer made
//! no sense, and the exact messages to send again.

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use celerity_proto::v1 as pb;

use super::{MAX_BATCH_MESSAGES, Outbound, OutboundError};
use crate::excerpt::{excerpt, quoted};

/// What the runtime's `WsSendAck` says became of a batch.
///
/// Built with [`from_ack`](Self::from_ack) from the acknowledgement and the
/// batch exactly as it was sent. It keeps a copy of each failed message (a
/// large payload is shared rather than copied), so
/// [`retry_batch`](Self::retry_batch) can send exactly those again with the
/// same ids and bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct SendReport {
    correlation_id: String,
    len: usize,
    /// Ordered by index, one per index.
    failures: Vec<Failure>,
    anomalies: Vec<AckAnomaly>,
    /// The messages that asked for their client's acknowledgement under a
    /// runtime that never waits for one, as sent, ordered by index.
    unconfirmed: Vec<(usize, pb::WsOutbound)>,
}

impl SendReport {
    /// Reads `ack` against `sent`, the messages of the `WsSend` it answers.
    ///
    /// Whatever the acknowledgement holds, this never panics: a failure
    /// naming an index outside the batch, an index named twice, a connection
    /// that is not the one the message went to, or a `success` flag that
    /// contradicts the failures listed, is recorded as an [`AckAnomaly`].
    pub fn from_ack(ack: pb::WsSendAck, sent: &[pb::WsOutbound]) -> SendReport {
        SendReport::read(ack, sent)
    }

    /// [`from_ack`](Self::from_ack) against the batch as the sender keeps it.
    pub(crate) fn from_ack_kept(ack: pb::WsSendAck, sent: &SentBatch) -> SendReport {
        SendReport::read(ack, sent)
    }

    /// The answer of a runtime that predates protocol version negotiation,
    /// against the batch as the sender keeps it. Such a runtime never reads
    /// `wait_for_ack`, so a message that asked for its client's
    /// acknowledgement and did not fail is unconfirmed, not a success.
    pub(crate) fn from_written_kept(ack: pb::WsSendAck, sent: &SentBatch) -> SendReport {
        let mut report = SendReport::read(ack, sent);
        report.unconfirmed = (0..sent.len())
            .filter(|&index| sent.messages[index].wait_for_ack && report.failed(index).is_none())
            .map(|index| (index, Sent::message(sent, index)))
            .collect();
        report
    }

    fn read(ack: pb::WsSendAck, sent: &(impl Sent + ?Sized)) -> SendReport {
        let mut failures = Vec::with_capacity(ack.failures.len());
        let mut anomalies = Vec::new();
        if ack.success && !ack.failures.is_empty() {
            anomalies.push(AckAnomaly::SucceededWithFailures);
        }
        if !ack.success && ack.failures.is_empty() {
            anomalies.push(AckAnomaly::FailedWithoutFailures);
        }
        for failure in ack.failures {
            let Some(index) = usize::try_from(failure.index).ok().filter(|&index| index < sent.len()) else {
                anomalies.push(AckAnomaly::IndexOutOfRange {
                    index: failure.index,
                    connection_id: failure.connection_id,
                    error: failure.error_message,
                });
                continue;
            };
            let connection_id = sent.connection_id(index);
            if !failure.connection_id.is_empty() && failure.connection_id != connection_id {
                anomalies.push(AckAnomaly::ConnectionMismatch {
                    index,
                    sent: connection_id.to_owned(),
                    reported: failure.connection_id,
                });
            }
            failures.push((index, failure.error_message));
        }
        // The runtime reports failures in send order; sorting anyway makes
        // `failed` a binary search whatever it sent. Stable, so of an index
        // named twice the first report is kept.
        failures.sort_by_key(|&(index, _)| index);
        let mut unique: Vec<Failure> = Vec::with_capacity(failures.len());
        for (index, error) in failures {
            match unique.last() {
                Some(last) if last.index == index => {
                    anomalies.push(AckAnomaly::DuplicateIndex { index, error });
                }
                _ => unique.push(Failure { index, error, message: sent.message(index) }),
            }
        }
        SendReport {
            correlation_id: ack.correlation_id,
            len: sent.len(),
            failures: unique,
            anomalies,
            unconfirmed: Vec::new(),
        }
    }

    /// The correlation id of the acknowledgement.
    pub fn correlation_id(&self) -> &str {
        &self.correlation_id
    }

    /// How many messages the batch held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the batch was empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether every message succeeded, none is
    /// [unconfirmed](Self::unconfirmed_indexes), and the acknowledgement
    /// was consistent.
    pub fn is_success(&self) -> bool {
        self.failures.is_empty() && self.anomalies.is_empty() && self.unconfirmed.is_empty()
    }

    /// The failure of message `index`, if it failed.
    pub fn failed(&self, index: usize) -> Option<&Failure> {
        self.failures
            .binary_search_by_key(&index, |failure| failure.index)
            .ok()
            .map(|position| &self.failures[position])
    }

    /// Whether message `index` is known to have succeeded: it is in the
    /// batch, it is not among the failures nor the
    /// [unconfirmed](Self::unconfirmed_indexes), and the acknowledgement
    /// does not report a failure it could not place.
    pub fn succeeded(&self, index: usize) -> bool {
        let unplaced = self
            .anomalies
            .iter()
            .any(|anomaly| matches!(anomaly, AckAnomaly::IndexOutOfRange { .. } | AckAnomaly::FailedWithoutFailures));
        index < self.len && !unplaced && self.failed(index).is_none() && !self.is_unconfirmed(index)
    }

    /// Whether message `index` asked for its client's acknowledgement
    /// (`wait_for_ack`) from a runtime that predates protocol version
    /// negotiation: the runtime wrote it to the connection and never
    /// waited for the client, so whether the client received it is
    /// unknown.
    pub fn is_unconfirmed(&self, index: usize) -> bool {
        self.unconfirmed.binary_search_by_key(&index, |(at, _)| *at).is_ok()
    }

    /// The indexes of the [unconfirmed](Self::is_unconfirmed) messages, in
    /// batch order.
    pub fn unconfirmed_indexes(&self) -> Vec<usize> {
        self.unconfirmed.iter().map(|(index, _)| *index).collect()
    }

    /// The [unconfirmed](Self::is_unconfirmed) messages, in batch order,
    /// each with the id and bytes it was sent with, for an application
    /// that would rather a client receive one twice (it can tell by the
    /// id) than not at all. Under the same runtime, sending them again is
    /// unconfirmed again.
    pub fn unconfirmed_batch(&self) -> Vec<Outbound> {
        self.unconfirmed.iter().map(|(_, message)| Outbound::from(message.clone())).collect()
    }

    /// The failed messages, in batch order.
    pub fn failures(&self) -> &[Failure] {
        &self.failures
    }

    /// The indexes of the failed messages, in batch order.
    pub fn failed_indexes(&self) -> Vec<usize> {
        self.failures.iter().map(Failure::index).collect()
    }

    /// Where the acknowledgement did not make sense against the batch.
    pub fn anomalies(&self) -> &[AckAnomaly] {
        &self.anomalies
    }

    /// Exactly the failed messages, in batch order, to send again. Each
    /// keeps the id and bytes it was sent with, so a client that did receive
    /// it can tell the retry is the same message.
    pub fn retry_batch(&self) -> Vec<Outbound> {
        self.failures.iter().map(Failure::to_outbound).collect()
    }

    /// `Ok` when [`is_success`](Self::is_success); otherwise
    /// [`SendError::Failed`] holding this report where a message failed or
    /// the acknowledgement was inconsistent, and [`SendError::Unconfirmed`]
    /// where the only shortfall is unconfirmed messages.
    pub fn into_result(self) -> Result<SendReport, SendError> {
        if self.is_success() {
            Ok(self)
        } else if self.failures.is_empty() && self.anomalies.is_empty() {
            Err(SendError::Unconfirmed(self))
        } else {
            Err(SendError::Failed(self))
        }
    }
}

/// A batch as sent, as [`SendReport`] reads it: how many messages, which
/// connection each went to, and each message whole (for a failure, made only
/// for the messages that failed).
trait Sent {
    fn len(&self) -> usize;
    /// The connection message `index` (< `len`) went to.
    fn connection_id(&self, index: usize) -> &str;
    /// Message `index` (< `len`) as it was sent.
    fn message(&self, index: usize) -> pb::WsOutbound;
}

impl Sent for [pb::WsOutbound] {
    fn len(&self) -> usize {
        <[pb::WsOutbound]>::len(self)
    }

    fn connection_id(&self, index: usize) -> &str {
        &self[index].connection_id
    }

    fn message(&self, index: usize) -> pb::WsOutbound {
        self[index].clone()
    }
}

/// A `WsSend` as it was sent, kept by the sender until the runtime says what
/// became of it: to read the acknowledgement against, and to give back the
/// messages to send again when it names failures or never comes.
///
/// Most sends succeed and need none of it, so it is kept cheaply rather than
/// as a copy of the messages: every id and connection id of the send in one
/// buffer, small payloads in another, and larger payloads shared with the
/// message sent (a `Bytes` clone). Messages are rebuilt from it only for a
/// failure.
#[derive(Debug)]
pub(crate) struct SentBatch {
    /// The correlation id, then for each message its connection id, message
    /// id, caller and informed connections.
    text: String,
    correlation_id: Span,
    /// The payloads of [`Payload::Copied`] messages.
    pub(super) payloads: Vec<u8>,
    messages: Vec<SentMessage>,
    /// The informed connections of every message, in order.
    informed: Vec<Span>,
}

#[derive(Debug)]
struct SentMessage {
    payload: Payload,
    is_binary: bool,
    wait_for_ack: bool,
    connection_id: Span,
    message_id: Span,
    caller: Span,
    /// A range of `SentBatch::informed`.
    informed: Span,
}

/// A kept message's payload.
#[derive(Debug)]
enum Payload {
    /// A range of `SentBatch::payloads`. Copying a small payload costs less
    /// than sharing it: the first clone of a `Bytes` made from a `String` or a
    /// `Vec` allocates, and dropping it frees again.
    Copied(Span),
    Shared(Bytes),
}

/// A range of `SentBatch::text`, `payloads` or `informed`.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
}

impl SentBatch {
    /// Payloads up to this size are copied rather than shared...
    pub(super) const COPIED_PAYLOAD: usize = 256;
    /// ...while the copies of a batch add up to no more than this, so that
    /// keeping a batch stays a small allocation.
    pub(super) const COPIED_PAYLOADS: usize = 64 * 1024;

    /// Keeps what [`SendReport`] and [`SendError`] need of a `WsSend`.
    pub(crate) fn new(correlation_id: &str, messages: &[pb::WsOutbound]) -> SentBatch {
        let (mut text_len, mut payloads_len, mut informed_len) = (correlation_id.len(), 0, 0);
        for message in messages {
            text_len += message.connection_id.len() + message.message_id.len() + message.caller.len();
            text_len += message.inform_clients_on_loss.iter().map(String::len).sum::<usize>();
            informed_len += message.inform_clients_on_loss.len();
            if message.message.len() <= Self::COPIED_PAYLOAD {
                payloads_len += message.message.len();
            }
        }
        let mut text = String::with_capacity(text_len);
        let mut push = |s: &str| {
            let start = text.len();
            text.push_str(s);
            Span { start, end: text.len() }
        };
        let correlation_id = push(correlation_id);
        let mut payloads = Vec::with_capacity(payloads_len.min(Self::COPIED_PAYLOADS));
        let mut informed = Vec::with_capacity(informed_len);
        let messages = messages
            .iter()
            .map(|message| {
                let payload = if message.message.len() <= Self::COPIED_PAYLOAD
                    && payloads.len() + message.message.len() <= Self::COPIED_PAYLOADS
                {
                    let start = payloads.len();
                    payloads.extend_from_slice(&message.message);
                    Payload::Copied(Span { start, end: payloads.len() })
                } else {
                    Payload::Shared(message.message.clone())
                };
                let start = informed.len();
                informed.extend(message.inform_clients_on_loss.iter().map(|id| push(id)));
                SentMessage {
                    payload,
                    is_binary: message.is_binary,
                    wait_for_ack: message.wait_for_ack,
                    connection_id: push(&message.connection_id),
                    message_id: push(&message.message_id),
                    caller: push(&message.caller),
                    informed: Span { start, end: informed.len() },
                }
            })
            .collect();
        SentBatch { text, correlation_id, payloads, messages, informed }
    }

    fn str(&self, span: Span) -> &str {
        &self.text[span.start..span.end]
    }

    /// The correlation id of the `WsSend`.
    pub(crate) fn correlation_id(&self) -> String {
        self.str(self.correlation_id).to_owned()
    }

    /// How many messages the `WsSend` held.
    pub(crate) fn len(&self) -> usize {
        self.messages.len()
    }

    /// The messages, as sent.
    pub(crate) fn to_wire(&self) -> Vec<pb::WsOutbound> {
        (0..self.messages.len()).map(|index| Sent::message(self, index)).collect()
    }
}

impl Sent for SentBatch {
    fn len(&self) -> usize {
        self.messages.len()
    }

    fn connection_id(&self, index: usize) -> &str {
        self.str(self.messages[index].connection_id)
    }

    fn message(&self, index: usize) -> pb::WsOutbound {
        let message = &self.messages[index];
        let informed = &self.informed[message.informed.start..message.informed.end];
        pb::WsOutbound {
            connection_id: self.str(message.connection_id).to_owned(),
            message: match &message.payload {
                Payload::Copied(span) => Bytes::copy_from_slice(&self.payloads[span.start..span.end]),
                Payload::Shared(payload) => payload.clone(),
            },
            is_binary: message.is_binary,
            inform_clients_on_loss: informed.iter().map(|&span| self.str(span).to_owned()).collect(),
            message_id: self.str(message.message_id).to_owned(),
            caller: self.str(message.caller).to_owned(),
            wait_for_ack: message.wait_for_ack,
        }
    }
}

/// One message of a batch that the runtime reported failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    index: usize,
    error: String,
    message: pb::WsOutbound,
}

impl Failure {
    /// The message's position in the batch.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The connection the message was for.
    pub fn connection_id(&self) -> &str {
        &self.message.connection_id
    }

    /// Why it failed, as the runtime put it.
    pub fn error(&self) -> &str {
        &self.error
    }

    /// The id it was sent with; `None` where it was sent without one and
    /// the runtime generated its own.
    pub fn message_id(&self) -> Option<&str> {
        Some(self.message.message_id.as_str()).filter(|id| !id.is_empty())
    }

    /// The message as it was sent.
    pub fn message(&self) -> &pb::WsOutbound {
        &self.message
    }

    /// The message, to send again unchanged.
    pub fn to_outbound(&self) -> Outbound {
        Outbound::from(self.message.clone())
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "message {} to connection {:?}", self.index, self.message.connection_id)?;
        if let Some(id) = self.message_id() {
            write!(f, " (id {id:?})")?;
        }
        if self.error.is_empty() { f.write_str(": no reason given") } else { write!(f, ": {}", excerpt(&self.error)) }
    }
}

/// Something in a `WsSendAck` that does not fit the batch it answers.
///
/// None of these should happen; they are recorded rather than trusted or
/// panicked on, and make the send an error.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AckAnomaly {
    /// A failure names an index outside the batch: some message failed, and
    /// which one is unknown.
    IndexOutOfRange {
        /// The index reported.
        index: u32,
        /// The connection reported.
        connection_id: String,
        /// The error reported.
        error: String,
    },
    /// A failure names an index already reported; the first report is kept.
    DuplicateIndex {
        /// The index.
        index: usize,
        /// The second report's error.
        error: String,
    },
    /// A failure names a different connection from the one its message went
    /// to. The failure is kept, under the connection the message went to.
    ConnectionMismatch {
        /// The index.
        index: usize,
        /// The connection the message went to.
        sent: String,
        /// The connection the failure named.
        reported: String,
    },
    /// `success` is false but no failure is listed: which messages failed is
    /// unknown.
    FailedWithoutFailures,
    /// `success` is true but failures are listed. The failures are kept.
    SucceededWithFailures,
}

impl fmt::Display for AckAnomaly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AckAnomaly::IndexOutOfRange { index, connection_id, error } => write!(
                f,
                "a failure names message {index}, which is not in the batch (connection {}: {})",
                quoted(connection_id),
                excerpt(error)
            ),
            AckAnomaly::DuplicateIndex { index, error } => {
                write!(f, "message {index} is reported failed twice (the second time: {})", excerpt(error))
            }
            AckAnomaly::ConnectionMismatch { index, sent, reported } => {
                write!(f, "message {index} went to connection {sent:?} but its failure names {}", quoted(reported))
            }
            AckAnomaly::FailedWithoutFailures => f.write_str("the batch is reported failed with no failure listed"),
            AckAnomaly::SucceededWithFailures => f.write_str("the batch is reported successful with failures listed"),
        }
    }
}

/// Why a send did not fully succeed.
///
/// Every variant says which messages are worth sending again:
/// [`retry_batch`](Self::retry_batch).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SendError {
    /// A message was refused before anything was sent; nothing was.
    Invalid {
        /// The refused message's position in the batch.
        index: usize,
        /// The connection it was for.
        connection_id: String,
        /// Why.
        error: OutboundError,
    },
    /// The runtime reported failures, or an acknowledgement that does not
    /// fit the batch.
    Failed(SendReport),
    /// Nothing failed, but some messages asked for their client's
    /// acknowledgement (`wait_for_ack`) from a runtime that predates
    /// protocol version negotiation. Such a runtime writes a message to its
    /// connection and answers at once, never waiting for the client, so
    /// the report's [`unconfirmed_indexes`](SendReport::unconfirmed_indexes)
    /// were written but not confirmed received. The rest succeeded.
    Unconfirmed(SendReport),
    /// No acknowledgement came in time. The messages may or may not have
    /// been delivered.
    TimedOut {
        /// The `WsSend`'s correlation id.
        correlation_id: String,
        /// How long the send waited.
        after: Duration,
        /// The batch as sent.
        sent: Vec<pb::WsOutbound>,
    },
    /// The stream to the runtime ended before the acknowledgement came. The
    /// messages may or may not have been delivered.
    Disconnected {
        /// The `WsSend`'s correlation id.
        correlation_id: String,
        /// The batch as sent.
        sent: Vec<pb::WsOutbound>,
    },
    /// The batch is larger than one `WsSend` may be
    /// ([`MAX_BATCH_MESSAGES`], [`MAX_BATCH_BYTES`](super::MAX_BATCH_BYTES), or the largest frame);
    /// nothing was sent. Send it in smaller batches.
    TooLarge {
        /// Messages in the batch.
        messages: usize,
        /// Its size in bytes: payloads and ids, or the encoded frame when the
        /// frame limit refused it.
        bytes: usize,
        /// The limit in bytes it was measured against.
        limit: usize,
    },
}

impl SendError {
    /// The runtime's report, when it answered.
    pub fn report(&self) -> Option<&SendReport> {
        match self {
            SendError::Failed(report) | SendError::Unconfirmed(report) => Some(report),
            _ => None,
        }
    }

    /// The failure of message `index`, when the runtime reported one.
    pub fn failed(&self, index: usize) -> Option<&Failure> {
        self.report()?.failed(index)
    }

    /// The failures the runtime reported, in batch order; empty when it did
    /// not answer.
    pub fn failures(&self) -> &[Failure] {
        self.report().map_or(&[], SendReport::failures)
    }

    /// The indexes of the failures the runtime reported.
    pub fn failed_indexes(&self) -> Vec<usize> {
        self.report().map(SendReport::failed_indexes).unwrap_or_default()
    }

    /// The messages to send again, each with the id and bytes it was sent
    /// with:
    ///
    /// - [`Failed`](Self::Failed): exactly the failed messages;
    /// - [`Unconfirmed`](Self::Unconfirmed): the unconfirmed messages, which
    ///   a client may then receive twice (each carries its id, as
    ///   `wait_for_ack` requires), and which the same runtime cannot
    ///   confirm the second time either;
    /// - [`TimedOut`](Self::TimedOut), [`Disconnected`](Self::Disconnected):
    ///   the whole batch, since any of it may have failed. Some may then
    ///   arrive twice; a client can deduplicate those it can identify, which
    ///   is those carrying an id (`wait_for_ack` puts one in every message);
    /// - [`Invalid`](Self::Invalid): none, since sending the same batch again
    ///   would be refused again.
    pub fn retry_batch(&self) -> Vec<Outbound> {
        match self {
            SendError::Invalid { .. } | SendError::TooLarge { .. } => Vec::new(),
            SendError::Failed(report) => report.retry_batch(),
            SendError::Unconfirmed(report) => report.unconfirmed_batch(),
            SendError::TimedOut { sent, .. } | SendError::Disconnected { sent, .. } => {
                sent.iter().cloned().map(Outbound::from).collect()
            }
        }
    }
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        /// Failures listed in full; a larger batch is summarised.
        const LISTED: usize = 5;
        match self {
            SendError::Invalid { index, connection_id, error } => {
                write!(f, "message {index} to connection {connection_id:?} was refused, and nothing sent: {error}")
            }
            SendError::Failed(report) => {
                write!(f, "{} of {} WebSocket messages failed", report.failures.len(), report.len)?;
                for (i, failure) in report.failures.iter().take(LISTED).enumerate() {
                    f.write_str(if i == 0 { ": " } else { "; " })?;
                    write!(f, "{failure}")?;
                }
                if report.failures.len() > LISTED {
                    write!(f, "; and {} more", report.failures.len() - LISTED)?;
                }
                for anomaly in &report.anomalies {
                    write!(f, "; the acknowledgement is inconsistent: {anomaly}")?;
                }
                Ok(())
            }
            SendError::Unconfirmed(report) => write!(
                f,
                "{} of {} WebSocket messages asked for their client's acknowledgement, which the runtime cannot \
                 give: it predates protocol version negotiation and answers once a message is written, so \
                 whether those clients received them is unknown",
                report.unconfirmed.len(),
                report.len
            ),
            SendError::TimedOut { correlation_id, after, sent } => write!(
                f,
                "no acknowledgement for WebSocket send {correlation_id:?} ({} messages) within {after:?}; \
                 whether they were delivered is unknown",
                sent.len()
            ),
            SendError::Disconnected { correlation_id, sent } => write!(
                f,
                "the stream to the runtime ended before WebSocket send {correlation_id:?} ({} messages) was \
                 acknowledged; whether they were delivered is unknown",
                sent.len()
            ),
            SendError::TooLarge { messages, bytes, limit } => write!(
                f,
                "a WebSocket batch of {messages} messages and {bytes} bytes is larger than one send may be \
                 (at most {MAX_BATCH_MESSAGES} messages and {limit} bytes); nothing was sent, send it in smaller batches"
            ),
        }
    }
}

impl std::error::Error for SendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SendError::Invalid { error, .. } => Some(error),
            _ => None,
        }
    }
}
