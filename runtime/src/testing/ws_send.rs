//! The runtime's side of the WebSocket side channel, for tests: every
//! `WsSend` a handler makes is recorded, and answered with the `WsSendAck`
//! the test chose.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use celerity_proto::v1 as pb;

use crate::websocket::{AckFuture, SendRecorder};

type Responder = Arc<dyn Fn(&pb::WsSend) -> WsAnswer + Send + Sync>;

/// Records the WebSocket sends made by handlers under test, and answers each
/// as scripted: one recorder per [`TestApp`](super::TestApp)
/// ([`TestApp::ws`](super::TestApp::ws)).
///
/// Each `WsSend` takes the next answer queued with
/// [`answer_next`](Self::answer_next); once the queue is empty, the one
/// [`answer_with`](Self::answer_with) gives; by default every message
/// succeeds.
///
/// ```
/// use celerity::proto::v1::{WsOutbound, WsSend};
/// use celerity::testing::{WsAnswer, WsRecorder};
///
/// let ws = WsRecorder::new();
/// ws.answer_next(WsAnswer::fail(1, "connection gone"));
///
/// // What the SDK's sender does with a batch of two messages:
/// let send = WsSend {
///     correlation_id: "corr-1".into(),
///     messages: vec![
///         WsOutbound { connection_id: "c-1".into(), message: "a".into(), ..Default::default() },
///         WsOutbound { connection_id: "c-2".into(), message: "b".into(), ..Default::default() },
///     ],
/// };
/// let ack = celerity::testing::block_on(ws.send(send)).unwrap();
/// assert!(!ack.success);
/// assert_eq!(ack.correlation_id, "corr-1");
/// assert_eq!((ack.failures[0].index, ack.failures[0].connection_id.as_str()), (1, "c-2"));
///
/// assert_eq!(ws.sends().len(), 1);
/// assert_eq!(ws.messages_to("c-1")[0].message, "a");
/// ```
#[derive(Clone, Default)]
pub struct WsRecorder {
    inner: Arc<Mutex<Recorder>>,
}

#[derive(Default)]
struct Recorder {
    sends: Vec<RecordedSend>,
    script: VecDeque<WsAnswer>,
    responder: Option<Responder>,
}

impl WsRecorder {
    /// A recorder with nothing recorded, answering every message with
    /// success.
    pub fn new() -> Self {
        WsRecorder::default()
    }

    fn lock(&self) -> MutexGuard<'_, Recorder> {
        // A test that panicked while holding it left nothing half-written.
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Queues the answer to the next `WsSend` not yet answered; answers are
    /// used in the order queued.
    pub fn answer_next(&self, answer: WsAnswer) -> &Self {
        self.lock().script.push_back(answer);
        self
    }

    /// Answers every `WsSend` with what `answer` gives for it, once the
    /// queued answers are used up.
    pub fn answer_with(&self, answer: impl Fn(&pb::WsSend) -> WsAnswer + Send + Sync + 'static) -> &Self {
        self.lock().responder = Some(Arc::new(answer));
        self
    }

    /// Answers every `WsSend` with `answer` once the queued answers are used
    /// up.
    pub fn answer_all(&self, answer: WsAnswer) -> &Self {
        self.answer_with(move |_| answer.clone())
    }

    /// Every `WsSend` recorded, in the order made.
    pub fn sends(&self) -> Vec<RecordedSend> {
        self.lock().sends.clone()
    }

    /// Every message of every `WsSend`, in the order sent.
    pub fn messages(&self) -> Vec<pb::WsOutbound> {
        self.lock().sends.iter().flat_map(|send| send.send.messages.iter().cloned()).collect()
    }

    /// Every message sent to connection `connection_id`, in the order sent.
    pub fn messages_to(&self, connection_id: &str) -> Vec<pb::WsOutbound> {
        self.messages().into_iter().filter(|message| message.connection_id == connection_id).collect()
    }

    /// Forgets what was recorded and the answers queued; the
    /// [`answer_with`](Self::answer_with) answer stays.
    pub fn clear(&self) {
        let mut recorder = self.lock();
        recorder.sends.clear();
        recorder.script.clear();
    }

    /// Takes one `WsSend` as the runtime would: records it and resolves with
    /// the scripted answer.
    ///
    /// This is what the SDK's WebSocket sender calls under test, in place of
    /// writing the frame to the stream and waiting for the matching
    /// `WsSendAck`. The future:
    ///
    /// - resolves to `Some(ack)`: the runtime's `WsSendAck`, whose
    ///   `correlation_id` is the send's;
    /// - resolves to `None`: the stream ended before any acknowledgement
    ///   ([`WsAnswer::disconnect`]);
    /// - never resolves: the runtime never acknowledges
    ///   ([`WsAnswer::no_answer`]), so the sender's own timeout applies.
    pub fn send(&self, send: pb::WsSend) -> WsReply {
        self.record(None, send)
    }

    fn record(&self, event_id: Option<String>, send: pb::WsSend) -> WsReply {
        let mut recorder = self.lock();
        let answer = match recorder.script.pop_front() {
            Some(answer) => answer,
            None => recorder.responder.as_ref().map_or_else(WsAnswer::succeed, |respond| respond(&send)),
        };
        let reply = answer.resolve(&send);
        recorder.sends.push(RecordedSend { event_id, send, reply: reply.clone() });
        drop(recorder);
        WsReply::new(reply, answer.delay)
    }
}

impl fmt::Debug for WsRecorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let recorder = self.lock();
        f.debug_struct("WsRecorder")
            .field("sends", &recorder.sends)
            .field("queued_answers", &recorder.script)
            .finish_non_exhaustive()
    }
}

/// Where the SDK's WebSocket sender sends under [`TestApp`](super::TestApp):
/// each send is recorded with the id of the event that made it, and
/// answered as scripted.
impl SendRecorder for WsRecorder {
    fn record(&self, event_id: Option<&str>, send: pb::WsSend) -> AckFuture {
        Box::pin(WsRecorder::record(self, event_id.map(str::to_string), send))
    }
}

/// A `WsSend` a handler made, and how it was answered.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedSend {
    event_id: Option<String>,
    send: pb::WsSend,
    reply: Reply,
}

/// What became of one `WsSend`.
#[derive(Debug, Clone, PartialEq)]
enum Reply {
    Ack(pb::WsSendAck),
    NoAnswer,
    Disconnect,
}

impl RecordedSend {
    /// The id of the event whose handler sent it; `None` for a send made
    /// outside a handler.
    pub fn event_id(&self) -> Option<&str> {
        self.event_id.as_deref()
    }

    /// The `WsSend` as the runtime received it.
    pub fn send(&self) -> &pb::WsSend {
        &self.send
    }

    /// Its messages.
    pub fn messages(&self) -> &[pb::WsOutbound] {
        &self.send.messages
    }

    /// The `WsSendAck` it was answered with (or is being, after a delay);
    /// `None` when it is never answered.
    pub fn ack(&self) -> Option<&pb::WsSendAck> {
        match &self.reply {
            Reply::Ack(ack) => Some(ack),
            Reply::NoAnswer | Reply::Disconnect => None,
        }
    }

    /// Whether the stream ended before it was answered
    /// ([`WsAnswer::disconnect`]).
    pub fn is_disconnected(&self) -> bool {
        self.reply == Reply::Disconnect
    }
}

/// How the runtime answers one `WsSend`, as a test scripts it.
///
/// ```
/// use std::time::Duration;
/// use celerity::testing::WsAnswer;
///
/// let _ = WsAnswer::succeed();
/// let _ = WsAnswer::fail(0, "client did not acknowledge").and_fail(2, "connection gone");
/// let _ = WsAnswer::fail_connection("c-2", "connection gone");
/// let _ = WsAnswer::fail_all("runtime overloaded").after(Duration::from_millis(50));
/// let _ = WsAnswer::no_answer();
/// let _ = WsAnswer::disconnect();
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct WsAnswer {
    kind: AnswerKind,
    delay: Option<Duration>,
}

#[derive(Debug, Clone, PartialEq)]
enum AnswerKind {
    /// A `WsSendAck` built from the batch: each message fails by the first
    /// rule naming it, or succeeds.
    Failures(Vec<Fail>),
    /// Exactly this `WsSendAck`.
    Exact(pb::WsSendAck),
    NoAnswer,
    Disconnect,
}

#[derive(Debug, Clone, PartialEq)]
enum Fail {
    Index(u32, String),
    Connection(String, String),
    All(String),
}

impl WsAnswer {
    fn of(kind: AnswerKind) -> Self {
        WsAnswer { kind, delay: None }
    }

    /// Every message succeeds.
    pub fn succeed() -> Self {
        WsAnswer::of(AnswerKind::Failures(Vec::new()))
    }

    /// Message `index` of the batch fails with `error`; the others succeed.
    /// An index outside the batch is answered as given, for testing how the
    /// sender takes a runtime that names one.
    pub fn fail(index: usize, error: impl Into<String>) -> Self {
        WsAnswer::succeed().and_fail(index, error)
    }

    /// Message `index` fails too.
    pub fn and_fail(self, index: usize, error: impl Into<String>) -> Self {
        self.with_rule(Fail::Index(u32::try_from(index).unwrap_or(u32::MAX), error.into()))
    }

    /// Every message to connection `connection_id` fails with `error`.
    pub fn fail_connection(connection_id: impl Into<String>, error: impl Into<String>) -> Self {
        WsAnswer::succeed().and_fail_connection(connection_id, error)
    }

    /// Every message to connection `connection_id` fails too.
    pub fn and_fail_connection(self, connection_id: impl Into<String>, error: impl Into<String>) -> Self {
        self.with_rule(Fail::Connection(connection_id.into(), error.into()))
    }

    /// Every message fails with `error`.
    pub fn fail_all(error: impl Into<String>) -> Self {
        WsAnswer::succeed().with_rule(Fail::All(error.into()))
    }

    fn with_rule(mut self, rule: Fail) -> Self {
        match &mut self.kind {
            AnswerKind::Failures(rules) => rules.push(rule),
            other => *other = AnswerKind::Failures(vec![rule]),
        }
        self
    }

    /// Exactly `ack`, however it fits the batch (its `correlation_id` is set
    /// to the send's when empty).
    pub fn ack(ack: pb::WsSendAck) -> Self {
        WsAnswer::of(AnswerKind::Exact(ack))
    }

    /// No acknowledgement ever comes: the sender's own timeout applies.
    pub fn no_answer() -> Self {
        WsAnswer::of(AnswerKind::NoAnswer)
    }

    /// The stream ends before any acknowledgement comes.
    pub fn disconnect() -> Self {
        WsAnswer::of(AnswerKind::Disconnect)
    }

    /// The answer comes after `delay` (on tokio's clock, so
    /// `tokio::time::pause` makes it instant), as a runtime slow to
    /// acknowledge; answers to concurrent sends can so arrive out of order.
    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    /// What becomes of `send`.
    fn resolve(&self, send: &pb::WsSend) -> Reply {
        match &self.kind {
            AnswerKind::NoAnswer => Reply::NoAnswer,
            AnswerKind::Disconnect => Reply::Disconnect,
            AnswerKind::Exact(ack) => {
                let mut ack = ack.clone();
                if ack.correlation_id.is_empty() {
                    ack.correlation_id.clone_from(&send.correlation_id);
                }
                Reply::Ack(ack)
            }
            AnswerKind::Failures(rules) => {
                let mut failures: Vec<pb::WsSendFailure> = Vec::new();
                for (index, message) in send.messages.iter().enumerate() {
                    let index = u32::try_from(index).unwrap_or(u32::MAX);
                    let error = rules.iter().find_map(|rule| match rule {
                        Fail::Index(i, error) if *i == index => Some(error),
                        Fail::Connection(connection, error) if *connection == message.connection_id => Some(error),
                        Fail::All(error) => Some(error),
                        _ => None,
                    });
                    if let Some(error) = error {
                        failures.push(pb::WsSendFailure {
                            index,
                            connection_id: message.connection_id.clone(),
                            error_message: error.clone(),
                        });
                    }
                }
                // Indexes outside the batch, answered as scripted.
                for rule in rules {
                    if let Fail::Index(index, error) = rule
                        && usize::try_from(*index).map_or(true, |i| i >= send.messages.len())
                    {
                        failures.push(pb::WsSendFailure {
                            index: *index,
                            connection_id: String::new(),
                            error_message: error.clone(),
                        });
                    }
                }
                Reply::Ack(pb::WsSendAck {
                    correlation_id: send.correlation_id.clone(),
                    success: failures.is_empty(),
                    failures,
                })
            }
        }
    }
}

/// The runtime's answer to one `WsSend`, from [`WsRecorder::send`]:
/// `Some(ack)`, `None` when the stream ended first, or never.
pub struct WsReply {
    future: Pin<Box<dyn Future<Output = Option<pb::WsSendAck>> + Send>>,
}

impl WsReply {
    fn new(reply: Reply, delay: Option<Duration>) -> Self {
        let reply = match reply {
            Reply::NoAnswer => return WsReply { future: Box::pin(std::future::pending()) },
            Reply::Ack(ack) => Some(ack),
            Reply::Disconnect => None,
        };
        let future: Pin<Box<dyn Future<Output = Option<pb::WsSendAck>> + Send>> = match delay {
            None => Box::pin(std::future::ready(reply)),
            Some(delay) => Box::pin(async move {
                tokio::time::sleep(delay).await;
                reply
            }),
        };
        WsReply { future }
    }
}

impl Future for WsReply {
    type Output = Option<pb::WsSendAck>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        self.future.as_mut().poll(cx)
    }
}

impl fmt::Debug for WsReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WsReply")
    }
}
