//! A model of the runtime's side of the protocol core, shared by the
//! property test (`tests/session_properties.rs`), the fuzz target `session`
//! (`fuzz/`, which includes this file by path) and the corpus replay
//! (`tests/fuzz_corpus.rs`). It depends on nothing but `celerity`, so every
//! one of them checks the same invariants.
//!
//! A [`Harness`] drives a [`Session`] past the handshake, feeds it [`Op`]s
//! (the runtime's frames, well-formed or not, handler completions, the
//! clock, the application's requests and signals) and reads every action it
//! gives back, exactly as the runtime and the driver would. After every step
//! it checks:
//! - every dispatch is answered exactly once, and no `Result` is sent for an
//!   id that is not awaiting one;
//! - credit is conserved: the runtime's window (free places plus places
//!   held) always equals the session's window less the places it owes, and
//!   the runtime withholds exactly when the session believes it does; so
//!   the sum of grants equals the results sent less the deliberate withholds;
//! - a zero grant is sent only for a withhold asked for or a shrink;
//! - a handler's cancellation fires before it is dropped, and nothing is
//!   held past its deadline or cancellation plus the grace, or past a drain
//!   deadline;
//! - a `Cancel` for an id not held produces no action at all;
//! - frames that make no sense after the handshake (a second
//!   `RuntimeConfig` or `ReadyAck`, an empty frame, a `WsSendAck` for a send
//!   not awaited) change nothing but a warning;
//! - every WebSocket send asked for ends exactly once: acknowledged after
//!   its `WsSendAck`, timed out after its timeout, or cut off when the
//!   stream closes;
//! - no frame larger than the frame limit is handed to the transport;
//! - nothing is sent after `Close` or `Exit`, and a closed session does
//!   nothing more;
//! - when all work is done and the timers have passed, the tables that track
//!   events are empty.
//!
//! [`Scenario::from_bytes`] reads a scenario from arbitrary bytes, which is
//! how the fuzzer and the corpus replay drive it.

#![allow(dead_code)]

use std::collections::{HashMap, HashSet};

use celerity::__private::session::{
    Action, Event, HandlerKey, HandlerSpec, Input, MAX_ID_BYTES, MIN_MESSAGE_BYTES, Session, SessionConfig,
    SessionError, WsOutcome, error_type,
};
use celerity::HandlerKind;
use celerity::proto::prost::Message as _;
use celerity::proto::v1::{
    self as pb, Dispatch, HandlerConfig, HandlerMessage, ProtocolVersion, ReadyAck, RuntimeConfig, RuntimeMessage,
    handler_message, result::Outcome, runtime_message,
};

pub const T0: i64 = 1_700_000_000_000;
pub const TAGS: [&str; 3] = ["GET::/a", "GET::/b", "GET::/unknown"];
/// The per-tag cap of `GET::/b`.
pub const CAP_B: u32 = 2;
pub const SHUTDOWN_GRACE_MS: u64 = 1_000;
/// The frame limit the harness runs the session with: the smallest allowed,
/// so that an oversized answer is cheap to make.
pub const FRAME_LIMIT: usize = MIN_MESSAGE_BYTES;
/// The longest WebSocket send timeout an op asks for; [`Harness::finish`]
/// lets more than this pass.
pub const MAX_WS_TIMEOUT_MS: u64 = 30_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ok,
    Error,
    Panic,
    /// An answer too large for a frame.
    Huge,
    /// The event's source did not decode in its task: no handler ran.
    Undecodable,
}

impl Kind {
    pub fn outcome(self, id: &str) -> Outcome {
        match self {
            Kind::Ok => Outcome::Http(pb::HttpResponse { status: 200, ..Default::default() }),
            Kind::Error => Outcome::Error(pb::HandlerError {
                message: format!("failed {id}"),
                r#type: "Error".into(),
                stack: String::new(),
            }),
            Kind::Panic => Outcome::Error(pb::HandlerError {
                message: format!("panicked {id}"),
                r#type: "panic".into(),
                stack: String::new(),
            }),
            Kind::Huge | Kind::Undecodable => Outcome::Http(pb::HttpResponse {
                status: 200,
                body: vec![b'x'; FRAME_LIMIT + 1].into(),
                ..Default::default()
            }),
        }
    }

    /// How the driver tells the session that the handler of `id` ended so.
    pub fn input(self, id: &str) -> Input {
        match self {
            // An HTTP request whose method is not UTF-8.
            Kind::Undecodable => Input::Undecoded {
                id: id.into(),
                error: pb::HttpRequest::decode(&[0x0a, 0x01, 0xff][..]).expect_err("not UTF-8"),
            },
            _ => Input::Completed { id: id.into(), outcome: self.outcome(id).into() },
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub enum IdChoice {
    Fresh,
    /// An id dispatched before (in flight or finished), by index.
    Reuse(usize),
    Empty,
    /// An id longer than the session answers.
    TooLong,
}

#[derive(Debug, Clone)]
pub enum Op {
    /// The runtime dispatches. Unless `forced`, only as the real runtime
    /// would (credit, no withhold, caps, declared tag, no drain, fresh id);
    /// otherwise the op is skipped. `forced` breaks every rule.
    Dispatch {
        tag: usize,
        id: IdChoice,
        deadline: Option<i64>,
        forced: bool,
    },
    /// A handler finishes; picks among every event ever started, so late
    /// completions of abandoned handlers happen too.
    Complete {
        pick: usize,
        kind: Kind,
    },
    /// A `Cancel`: for a dispatched id (held or finished) or one never seen.
    Cancel {
        pick: Option<usize>,
        reason: i32,
    },
    /// Time passes and the timers are ticked.
    Advance(i64),
    Withhold,
    Resume,
    Resize(u32),
    /// The runtime's `Drain`, with a deadline this far ahead.
    Drain(i64),
    /// SIGTERM or SIGINT.
    Signal,
    /// The application's `AppHandle::shutdown`.
    Stop,
    StreamEnd {
        error: bool,
    },
    /// A handler sends to WebSocket connections: `messages` messages of
    /// `bytes` bytes each, waiting at most `timeout_ms`.
    WsSend {
        messages: usize,
        bytes: usize,
        timeout_ms: u64,
    },
    /// The runtime acknowledges a send it received (by index), or one never
    /// made.
    WsAck {
        pick: Option<usize>,
    },
    /// Any frame at all from the runtime, as decoded from the wire.
    Raw(Box<RuntimeMessage>),
}

/// Application requests made before the handshake completes.
#[derive(Debug, Clone)]
pub enum Early {
    Withhold,
    Resume,
    Resize(u32),
}

impl Early {
    pub fn input(&self) -> Input {
        match self {
            Early::Withhold => Input::Withhold,
            Early::Resume => Input::Resume,
            Early::Resize(n) => Input::Resize(*n),
        }
    }
}

/// One whole run: how the session starts, and what happens to it.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub initial: u32,
    pub grace: u64,
    pub early: Vec<Early>,
    pub between: Vec<Early>,
    pub signal_before_ack: bool,
    pub ops: Vec<Op>,
}

/// Reads bytes as a scenario; past the end every read is zero.
struct Reader<'a> {
    data: &'a [u8],
}

impl Reader<'_> {
    fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    fn bytes(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.data.len());
        let (taken, rest) = self.data.split_at(n);
        self.data = rest;
        taken
    }
}

/// The most ops a scenario read from bytes holds.
pub const MAX_OPS: usize = 256;

impl Scenario {
    /// Reads a scenario from arbitrary bytes: never fails, and every input
    /// is some scenario. The first bytes set up the session; each op after
    /// them takes a selector byte and its arguments. `Raw` ops carry up to
    /// 1 KiB decoded as a `RuntimeMessage`; bytes that do not decode become
    /// an empty frame.
    pub fn from_bytes(data: &[u8]) -> Scenario {
        let mut r = Reader { data };
        let initial = 1 + u32::from(r.u8() % 4);
        let grace = match r.u8() {
            0..=63 => 0,
            b => u64::from(b) + u64::from(r.u8()),
        };
        let early_op = |r: &mut Reader| match r.u8() % 3 {
            0 => Early::Withhold,
            1 => Early::Resume,
            _ => Early::Resize(u32::from(r.u8() % 7)),
        };
        let early = (0..r.u8() % 3).map(|_| early_op(&mut r)).collect();
        let between = (0..r.u8() % 2).map(|_| early_op(&mut r)).collect();
        let signal_before_ack = r.u8().is_multiple_of(10);
        let mut ops = Vec::new();
        while !r.is_empty() && ops.len() < MAX_OPS {
            ops.push(Self::op(&mut r));
        }
        Scenario { initial, grace, early, between, signal_before_ack, ops }
    }

    fn op(r: &mut Reader) -> Op {
        // Weighted as the property test weighs them.
        match r.u8() % 52 {
            0..=11 => {
                let tag = usize::from(r.u8() % 3);
                let id = match r.u8() % 20 {
                    0..=11 => IdChoice::Fresh,
                    12..=16 => IdChoice::Reuse(usize::from(r.u8())),
                    17..=18 => IdChoice::Empty,
                    _ => IdChoice::TooLong,
                };
                let deadline = match r.u8() % 5 {
                    0 | 1 => None,
                    _ => Some(i64::from(r.u16() % 900) - 100),
                };
                let forced = r.u8().is_multiple_of(4);
                Op::Dispatch { tag, id, deadline, forced }
            }
            12..=21 => {
                let pick = usize::from(r.u8());
                let kind = match r.u8() % 16 {
                    0..=5 => Kind::Ok,
                    6..=10 => Kind::Error,
                    11..=13 => Kind::Panic,
                    14 => Kind::Undecodable,
                    _ => Kind::Huge,
                };
                Op::Complete { pick, kind }
            }
            22..=24 => {
                let pick = (!r.u8().is_multiple_of(5)).then(|| usize::from(r.u8()));
                Op::Cancel { pick, reason: i32::from(r.u8() % 5) }
            }
            25..=30 => Op::Advance(i64::from(r.u16() % 1_500)),
            31..=32 => Op::Withhold,
            33..=34 => Op::Resume,
            35..=36 => Op::Resize(u32::from(r.u8() % 9)),
            37 => Op::Drain(i64::from(r.u16() % 2_000)),
            38..=39 => Op::Signal,
            40 => Op::Stop,
            41 => Op::StreamEnd { error: r.u8().is_multiple_of(2) },
            42..=44 => {
                let messages = usize::from(r.u8() % 4);
                let bytes = match r.u8() % 8 {
                    0 => FRAME_LIMIT,
                    b => usize::from(b) * 10,
                };
                let timeout_ms = u64::from(r.u16()) % (MAX_WS_TIMEOUT_MS + 1);
                Op::WsSend { messages, bytes, timeout_ms }
            }
            45..=47 => Op::WsAck { pick: (!r.u8().is_multiple_of(5)).then(|| usize::from(r.u8())) },
            _ => {
                let len = usize::from(r.u16() % 1024);
                let bytes = r.bytes(len);
                Op::Raw(Box::new(RuntimeMessage::decode(bytes).unwrap_or_default()))
            }
        }
    }

    /// Runs the scenario, checking the invariants after every step, and
    /// finishes the session.
    pub fn run(&self) {
        let mut harness = Harness::new(self.initial, self.grace, &self.early, &self.between, self.signal_before_ack);
        for op in &self.ops {
            harness.step(op);
        }
        harness.finish();
    }
}

/// One event the runtime is waiting on.
#[derive(Debug, Clone)]
pub struct Held {
    pub tag: String,
    pub deadline: i64,
    /// When its cancellation was first asked for by a `Cancel`.
    pub cancel_sent: Option<i64>,
}

/// The runtime's side, and the handlers' side, of the session.
pub struct Harness {
    pub session: Session,
    pub now: i64,
    pub grace: i64,
    // --- the runtime, as it sees the stream ---
    pub available: i64,
    pub withheld: bool,
    pub held: HashMap<String, Held>,
    pub dispatched: Vec<String>,
    pub results: u64,
    /// The earliest of the runtime's Drain deadline and the handler's
    /// Draining deadline, once either was sent.
    pub drain_deadline: Option<i64>,
    pub drain_sent: bool,
    pub draining_received: bool,
    pub closed: bool,
    pub exit: Option<Result<(), SessionError>>,
    /// WebSocket sends received and not yet acknowledged, in order.
    pub ws_unacked: Vec<String>,
    // --- the application ---
    /// The window it asked for last.
    pub target: u32,
    /// It withheld and has not resumed.
    pub withholding: bool,
    /// Its withhold has reached the runtime (a zero grant since it asked).
    pub withhold_on_wire: bool,
    /// Shutdown signals sent.
    pub signals: u32,
    /// WebSocket sends asked for and not yet ended, with their deadlines
    /// (`None` until sent).
    pub ws_waiting: HashMap<String, Option<i64>>,
    pub ws_sends: u64,
    // --- the handlers ---
    pub running: HashSet<String>,
    pub cancelled: HashSet<String>,
    pub started: Vec<String>,
    pub fresh: u64,
}

pub fn frame(frame: runtime_message::Frame) -> Input {
    Input::from(RuntimeMessage { frame: Some(frame) })
}

impl Harness {
    /// A session past the handshake. `early` happens before `RuntimeConfig`,
    /// `between` (and a signal, when `signal_before_ack`) between `Ready` and
    /// `ReadyAck`.
    pub fn new(initial: u32, grace: u64, early: &[Early], between: &[Early], signal_before_ack: bool) -> Self {
        let handlers = vec![
            HandlerSpec::new(HandlerKey::Tag(TAGS[0].into()), HandlerKind::Http, "a"),
            HandlerSpec {
                max_concurrent: Some(CAP_B),
                ..HandlerSpec::new(HandlerKey::Tag(TAGS[1].into()), HandlerKind::Http, "b")
            },
        ];
        let mut config = SessionConfig::new(handlers, initial);
        config.cancel_grace_ms = grace;
        config.shutdown_grace_ms = SHUTDOWN_GRACE_MS;
        config.max_message_bytes = FRAME_LIMIT;
        let mut session = Session::new(config, T0);

        let mut target = initial;
        let mut withholding = false;
        let track = |e: &Early, target: &mut u32, withholding: &mut bool| match e {
            Early::Withhold => *withholding = true,
            Early::Resume => *withholding = false,
            Early::Resize(n) => *target = (*n).max(1),
        };
        for e in early {
            session.handle(T0, e.input());
            track(e, &mut target, &mut withholding);
        }
        let config = RuntimeConfig {
            handlers: TAGS[..2]
                .iter()
                .map(|tag| HandlerConfig {
                    handler_name: tag.to_string(),
                    handler_tag: tag.to_string(),
                    timeout_ms: 1_000,
                    tracing_enabled: false,
                    published_name: String::new(),
                })
                .collect(),
            protocol_version: Some(ProtocolVersion { major: 1, minor: 0 }),
            ..Default::default()
        };
        session.handle(T0, frame(runtime_message::Frame::Config(config)));
        for e in between {
            session.handle(T0, e.input());
            track(e, &mut target, &mut withholding);
        }
        if signal_before_ack {
            session.handle(T0, Input::Shutdown);
        }
        let mut ready = None;
        while let Some(action) = session.poll_action() {
            match action {
                Action::Send(HandlerMessage { frame: Some(handler_message::Frame::Ready(r)) }) => {
                    assert!(ready.is_none(), "a second Ready");
                    ready = Some(r);
                }
                Action::Send(other) => panic!("only Ready may be sent before ReadyAck, not {other:?}"),
                Action::Report(_) => {}
                other => panic!("unexpected action during the handshake: {other:?}"),
            }
        }
        let ready = ready.expect("Ready after RuntimeConfig");
        let declared = early.iter().rev().find_map(|e| match e {
            Early::Resize(n) => Some((*n).max(1)),
            _ => None,
        });
        assert_eq!(ready.initial_credit, declared.unwrap_or(initial), "a resize before Ready sets its credit");
        assert_eq!(ready.limits, [pb::HandlerLimit { handler_tag: TAGS[1].into(), max_concurrent: CAP_B }]);

        let mut harness = Harness {
            session,
            now: T0,
            grace: grace as i64,
            available: i64::from(ready.initial_credit),
            withheld: false,
            held: HashMap::new(),
            dispatched: Vec::new(),
            results: 0,
            drain_deadline: None,
            drain_sent: false,
            draining_received: false,
            closed: false,
            exit: None,
            ws_unacked: Vec::new(),
            target,
            withholding,
            withhold_on_wire: false,
            signals: u32::from(signal_before_ack),
            ws_waiting: HashMap::new(),
            ws_sends: 0,
            running: HashSet::new(),
            cancelled: HashSet::new(),
            started: Vec::new(),
            fresh: 0,
        };
        harness
            .session
            .handle(T0, frame(runtime_message::Frame::ReadyAck(ReadyAck { accepted: true, ..Default::default() })));
        let actions = harness.actions();
        assert!(actions.contains(&Action::Serving));
        harness.process(&actions);
        // A signal while waiting for the ack drains as soon as it comes.
        assert_eq!(harness.draining_received, signal_before_ack);
        harness.check();
        harness
    }

    pub fn actions(&mut self) -> Vec<Action> {
        std::iter::from_fn(|| self.session.poll_action()).collect()
    }

    fn window(&self) -> i64 {
        self.available + self.held.len() as i64
    }

    /// Feeds one op and checks the invariants.
    pub fn step(&mut self, op: &Op) {
        match op {
            Op::Dispatch { tag, id, deadline, forced } => {
                let id = match (id, forced) {
                    (IdChoice::Reuse(i), true) if !self.dispatched.is_empty() => {
                        self.dispatched[i % self.dispatched.len()].clone()
                    }
                    (IdChoice::Empty, true) => String::new(),
                    (IdChoice::TooLong, true) => "x".repeat(MAX_ID_BYTES + 1),
                    _ => {
                        self.fresh += 1;
                        format!("e{}", self.fresh)
                    }
                };
                let dispatch = Dispatch {
                    id,
                    handler_tag: TAGS[*tag].to_string(),
                    deadline_unix_ms: deadline.map_or(0, |d| self.now + d),
                    source: Some(pb::dispatch::Source::Http(pb::HttpRequest::default())),
                    ..Default::default()
                };
                self.dispatch(dispatch, *forced);
            }
            Op::Complete { pick, kind } => {
                if self.started.is_empty() {
                    return;
                }
                let id = self.started[pick % self.started.len()].clone();
                let outcome = kind.outcome(&id);
                let was_running = self.running.contains(&id) && !self.closed;
                self.session.handle(self.now, kind.input(&id));
                let actions = self.actions();
                if was_running {
                    let answer = results(&actions).into_iter().find(|r| r.id == id);
                    let answer = answer.unwrap_or_else(|| panic!("no Result for completed {id:?}: {actions:?}"));
                    if let Kind::Huge | Kind::Undecodable = kind {
                        let error = match &answer.outcome {
                            Some(Outcome::Error(error)) => error,
                            other => panic!("an answer too large for a frame was sent as {other:?}"),
                        };
                        let expected =
                            if *kind == Kind::Huge { error_type::RESULT_TOO_LARGE } else { error_type::UNDECODABLE };
                        assert_eq!(error.r#type, expected);
                    } else {
                        assert_eq!(answer.outcome.as_ref(), Some(&outcome), "the handler's own outcome is sent");
                    }
                    self.running.remove(&id);
                } else {
                    assert!(actions.is_empty(), "a late completion of {id:?} did something: {actions:?}");
                }
                self.process(&actions);
            }
            Op::Cancel { pick, reason } => {
                let id = match pick {
                    Some(i) if !self.dispatched.is_empty() => self.dispatched[i % self.dispatched.len()].clone(),
                    _ => "never-dispatched".to_string(),
                };
                self.cancel(pb::Cancel { id, reason: *reason });
            }
            Op::Advance(ms) => {
                self.now = self.now.saturating_add(*ms);
                self.session.handle(self.now, Input::Tick);
                let actions = self.actions();
                self.process(&actions);
                self.check_nothing_overdue();
            }
            Op::Withhold => {
                self.withholding = true;
                self.app(Input::Withhold);
            }
            Op::Resume => {
                self.withholding = false;
                self.withhold_on_wire = false;
                self.app(Input::Resume);
            }
            Op::Resize(n) => {
                self.target = (*n).max(1);
                self.app(Input::Resize(*n));
            }
            Op::Drain(ahead) => self.drain(pb::Drain { deadline_unix_ms: self.now + ahead }),
            Op::Signal => {
                self.signals += 1;
                self.session.handle(self.now, Input::Shutdown);
                let actions = self.actions();
                self.process(&actions);
            }
            Op::Stop => {
                let draining_before = self.draining_received;
                self.session.handle(self.now, Input::Stop);
                let actions = self.actions();
                if draining_before {
                    assert!(actions.is_empty(), "a second stop did something: {actions:?}");
                }
                self.process(&actions);
            }
            Op::StreamEnd { error } => {
                let was_closed = self.closed;
                let error = error.then(|| "connection reset".to_string());
                self.session.handle(self.now, Input::StreamEnded { error });
                let actions = self.actions();
                assert!(sent(&actions).is_empty(), "something was sent after the stream ended: {actions:?}");
                if was_closed {
                    assert!(actions.is_empty(), "a closed session acted on the stream's end: {actions:?}");
                } else {
                    let exit = actions.iter().find_map(|a| match a {
                        Action::Exit(result) => Some(result.clone()),
                        _ => None,
                    });
                    match exit {
                        // Without a drain, the end of the stream is fatal.
                        Some(Err(SessionError::StreamEnded { .. })) => {
                            assert!(self.drain_deadline.is_none())
                        }
                        Some(Ok(())) => assert!(self.drain_deadline.is_some()),
                        other => panic!("the end of the stream ended the session with {other:?}"),
                    }
                }
                self.process(&actions);
                // The stream is gone: what is held will never be answered.
                self.held.clear();
            }
            Op::WsSend { messages, bytes, timeout_ms } => {
                self.ws_sends += 1;
                let correlation_id = format!("w{}", self.ws_sends);
                let messages: Vec<pb::WsOutbound> = (0..*messages)
                    .map(|i| pb::WsOutbound {
                        connection_id: format!("c{i}"),
                        message: vec![b'm'; *bytes].into(),
                        ..Default::default()
                    })
                    .collect();
                let size = HandlerMessage {
                    frame: Some(handler_message::Frame::WsSend(pb::WsSend {
                        correlation_id: correlation_id.clone(),
                        messages: messages.clone(),
                    })),
                }
                .encoded_len();
                self.ws_waiting.insert(correlation_id.clone(), None);
                self.session.handle(
                    self.now,
                    Input::WsSend { correlation_id: correlation_id.clone(), messages, timeout_ms: *timeout_ms },
                );
                let actions = self.actions();
                let done = ws_done(&actions);
                if self.closed {
                    assert_eq!(done, [(correlation_id.clone(), WsOutcome::Disconnected)], "{actions:?}");
                } else if size > FRAME_LIMIT {
                    assert!(
                        matches!(&done[..], [(id, WsOutcome::TooLarge { bytes, .. })] if *id == correlation_id && *bytes == size),
                        "a send too large for a frame is refused: {actions:?}"
                    );
                } else {
                    assert!(done.is_empty(), "a send ended before it could be acknowledged: {actions:?}");
                    self.ws_waiting.insert(correlation_id, Some(self.now.saturating_add(*timeout_ms as i64)));
                }
                self.process(&actions);
            }
            Op::WsAck { pick } => {
                let correlation_id = match pick {
                    Some(i) if !self.ws_unacked.is_empty() => self.ws_unacked[i % self.ws_unacked.len()].clone(),
                    _ => "never-sent".to_string(),
                };
                self.ws_ack(pb::WsSendAck { correlation_id, success: true, failures: Vec::new() });
            }
            Op::Raw(message) => match message.frame.clone() {
                Some(runtime_message::Frame::Dispatch(dispatch)) => self.dispatch(dispatch, true),
                Some(runtime_message::Frame::Cancel(cancel)) => self.cancel(cancel),
                Some(runtime_message::Frame::Drain(drain)) => self.drain(drain),
                Some(runtime_message::Frame::WsAck(ack)) => self.ws_ack(ack),
                // A second RuntimeConfig or ReadyAck, or a frame with nothing
                // in it: a warning, and nothing else.
                _ => {
                    self.session.handle(self.now, Input::Frame(message.clone()));
                    let actions = self.actions();
                    if self.closed {
                        assert!(actions.is_empty(), "a closed session acted: {actions:?}");
                    } else {
                        assert!(
                            actions.iter().all(|a| matches!(a, Action::Warn(_))),
                            "nonsense after the handshake did more than warn: {actions:?}"
                        );
                    }
                }
            },
        }
        self.check();
    }

    fn app(&mut self, input: Input) {
        self.session.handle(self.now, input);
        let actions = self.actions();
        self.process(&actions);
    }

    fn cancel(&mut self, cancel: pb::Cancel) {
        let id = cancel.id.clone();
        let held = self.held.contains_key(&id) && !self.closed;
        if let Some(event) = self.held.get_mut(&id) {
            event.cancel_sent.get_or_insert(self.now);
        }
        self.session.handle(self.now, frame(runtime_message::Frame::Cancel(cancel)));
        let actions = self.actions();
        if !held {
            assert!(actions.is_empty(), "a Cancel for {id:?}, which is not held, did something: {actions:?}");
        }
        self.process(&actions);
    }

    fn drain(&mut self, drain: pb::Drain) {
        let deadline = if drain.deadline_unix_ms <= 0 { self.now } else { drain.deadline_unix_ms };
        if !self.closed {
            self.drain_sent = true;
            self.drain_deadline = Some(self.drain_deadline.map_or(deadline, |d| d.min(deadline)));
        }
        self.session.handle(self.now, frame(runtime_message::Frame::Drain(drain)));
        let actions = self.actions();
        self.process(&actions);
        if deadline <= self.now {
            self.check_nothing_overdue();
        }
    }

    fn ws_ack(&mut self, ack: pb::WsSendAck) {
        let correlation_id = ack.correlation_id.clone();
        let awaited = !self.closed && self.ws_waiting.get(&correlation_id).is_some_and(Option::is_some);
        self.ws_unacked.retain(|id| *id != correlation_id);
        self.session.handle(self.now, frame(runtime_message::Frame::WsAck(ack)));
        let actions = self.actions();
        let done = ws_done(&actions);
        if awaited {
            assert!(
                matches!(&done[..], [(id, WsOutcome::Acked(_))] if *id == correlation_id),
                "an acknowledged send did not end acknowledged: {actions:?}"
            );
        } else if self.closed {
            assert!(actions.is_empty(), "a closed session acted: {actions:?}");
        } else {
            assert!(
                actions.iter().all(|a| matches!(a, Action::Warn(_))),
                "an acknowledgement of a send not awaited did more than warn: {actions:?}"
            );
        }
        self.process(&actions);
    }

    fn dispatch(&mut self, dispatch: Dispatch, forced: bool) {
        let id = dispatch.id.clone();
        let tag = dispatch.handler_tag.clone();
        if !forced {
            let tag_in_flight = self.held.values().filter(|h| h.tag == tag).count() as u32;
            let allowed = !self.closed
                && !self.withheld
                && self.available > 0
                && !self.drain_sent
                && !self.draining_received
                && tag != TAGS[2]
                && (tag != TAGS[1] || tag_in_flight < CAP_B);
            if !allowed {
                return;
            }
        }
        // The runtime spends a place on every dispatch.
        let unanswerable = id.is_empty() || id.len() > MAX_ID_BYTES || self.held.contains_key(&id);
        if !self.closed {
            self.available -= 1;
            if !unanswerable {
                // Only zero is no deadline; a negative one is in the past.
                let deadline = dispatch.deadline_unix_ms;
                self.held.insert(id.clone(), Held { tag: tag.clone(), deadline, cancel_sent: None });
                self.dispatched.push(id.clone());
            }
        }
        let in_flight_before = self.session.in_flight();
        // As the driver's decoder gives it (its source still encoded) for
        // ids of even length, as decoded whole for the others: the two
        // must be one and the same to the session.
        let input = if id.len().is_multiple_of(2) {
            Input::Dispatch(Event::decode(dispatch.encode_to_vec().as_slice()).expect("a Dispatch decodes as an Event"))
        } else {
            frame(runtime_message::Frame::Dispatch(dispatch))
        };
        self.session.handle(self.now, input);
        let actions = self.actions();
        if self.closed {
            assert!(actions.is_empty(), "a closed session did something: {actions:?}");
            return;
        }
        let started = actions.iter().any(|a| matches!(a, Action::Start { .. }));
        if started {
            let window = self.session.credit().window() as usize;
            assert!(self.session.in_flight() <= window, "started beyond the credit window of {window}");
            if tag == TAGS[1] {
                let running = self.held.values().filter(|h| h.tag == tag).count();
                assert!(running as u32 <= CAP_B, "started beyond the cap of {tag}");
            }
            assert!(tag == TAGS[0] || tag == TAGS[1], "started an event for tag {tag:?}, which nothing serves");
        }
        if unanswerable {
            assert!(
                results(&actions).is_empty(),
                "a duplicate, empty or over-long id must not be answered: {actions:?}"
            );
            assert!(!started, "a duplicate, empty or over-long id must not be run");
        } else if !started {
            // Refused: answered at once, never queued.
            let answer = results(&actions).into_iter().find(|r| r.id == id);
            assert!(answer.is_some(), "dispatch {id:?} neither started nor answered: {actions:?}");
            assert_eq!(self.session.in_flight(), in_flight_before);
        }
        self.process(&actions);
    }

    /// Applies the session's actions to the runtime and handler models,
    /// checking each against the rules.
    pub fn process(&mut self, actions: &[Action]) {
        for action in actions {
            match action {
                Action::Send(message @ HandlerMessage { frame: Some(frame) }) => {
                    assert!(!self.closed, "sent after Close or Exit: {frame:?}");
                    assert!(message.encoded_len() <= FRAME_LIMIT, "a frame over the frame limit was sent");
                    self.receive(frame);
                }
                Action::Send(HandlerMessage { frame: None }) => panic!("an empty frame was sent"),
                Action::Start { id, .. } => {
                    let id = id.to_string();
                    assert!(!self.closed);
                    assert!(self.held.contains_key(&id), "started {id:?}, which is not held");
                    assert!(self.running.insert(id.clone()), "started {id:?} twice");
                    self.cancelled.remove(&id);
                    self.started.push(id);
                }
                Action::Cancel { id, .. } => {
                    assert!(self.running.contains(id), "cancelled {id:?}, which is not running");
                    self.cancelled.insert(id.clone());
                }
                Action::Abandon { id } => {
                    assert!(self.running.remove(id), "abandoned {id:?}, which is not running");
                    assert!(self.cancelled.contains(id), "{id:?} was dropped before its cancellation fired");
                }
                Action::Close => {
                    assert!(!self.closed, "Close after Close or Exit");
                    self.closed = true;
                }
                Action::Exit(result) => {
                    assert!(self.exit.is_none(), "a second Exit");
                    if let Err(SessionError::Interrupted) = result {
                        assert!(self.signals >= 2, "interrupted by the first signal");
                    }
                    self.exit = Some(result.clone());
                    self.closed = true;
                }
                Action::WsDone { correlation_id, outcome } => {
                    let deadline = self.ws_waiting.remove(correlation_id);
                    let deadline =
                        deadline.unwrap_or_else(|| panic!("send {correlation_id:?} ended twice or was never made"));
                    match outcome {
                        WsOutcome::TimedOut => {
                            let deadline = deadline.expect("a send not sent cannot time out");
                            assert!(self.now >= deadline, "send {correlation_id:?} timed out early");
                        }
                        WsOutcome::Disconnected => assert!(self.closed, "send {correlation_id:?} cut off while open"),
                        WsOutcome::TooLarge { bytes, limit } => {
                            assert!(deadline.is_none() && bytes > limit && *limit == FRAME_LIMIT);
                        }
                        WsOutcome::Acked(_) => {}
                        // The modelled runtime sends its protocol version, so
                        // its answers speak for the clients.
                        WsOutcome::Written(_) => {
                            panic!("send {correlation_id:?} answered as unconfirmed by a versioned runtime")
                        }
                    }
                }
                Action::Serving | Action::Warn(_) => {}
                other => panic!("unexpected action while serving: {other:?}"),
            }
        }
    }

    /// The runtime reads one frame from the handler.
    fn receive(&mut self, frame: &handler_message::Frame) {
        match frame {
            handler_message::Frame::Result(result) => {
                assert!(self.held.remove(&result.id).is_some(), "a Result for {:?}, which is not awaited", result.id);
                assert!(result.outcome.is_some(), "a Result without an outcome");
                assert!(result.credit_grant <= 1, "a Result grants at most the place it held");
                self.results += 1;
                if result.credit_grant == 0 {
                    // Window before this result: it still counts the place.
                    let window = self.window() + 1;
                    assert!(
                        self.withholding || window > i64::from(self.target),
                        "a zero grant with no withhold asked for and no shrink (window {window}, target {})",
                        self.target
                    );
                    self.withheld = true;
                    if self.withholding {
                        self.withhold_on_wire = true;
                    }
                } else {
                    self.available += i64::from(result.credit_grant);
                }
            }
            handler_message::Frame::Credit(grant) => {
                self.available += i64::from(grant.additional);
                self.withheld = false;
            }
            handler_message::Frame::Draining(draining) => {
                assert!(!self.draining_received, "Draining sent twice");
                self.draining_received = true;
                let deadline = draining.deadline_unix_ms;
                assert!(deadline <= self.now + SHUTDOWN_GRACE_MS as i64);
                self.drain_deadline = Some(self.drain_deadline.map_or(deadline, |d| d.min(deadline)));
            }
            handler_message::Frame::WsSend(send) => {
                assert!(
                    self.ws_waiting.contains_key(&send.correlation_id),
                    "a WsSend {:?} nobody asked for",
                    send.correlation_id
                );
                assert!(!self.ws_unacked.contains(&send.correlation_id), "a WsSend sent twice");
                self.ws_unacked.push(send.correlation_id.clone());
            }
            other => panic!("unexpected frame while serving: {other:?}"),
        }
    }

    /// The invariants that hold after every step.
    pub fn check(&mut self) {
        assert_eq!(self.session.is_closed(), self.exit.is_some(), "closed exactly when Exit was given");
        if self.closed {
            assert_eq!(self.session.in_flight(), 0);
            assert!(self.session.tables_empty(), "a closed session still tracks events");
            assert_eq!(self.session.next_timer(), None);
            assert!(self.ws_waiting.is_empty(), "sends never ended: {:?}", self.ws_waiting);
            return;
        }
        // Every dispatch awaiting an answer is running, and nothing else is.
        let held: HashSet<&String> = self.held.keys().collect();
        let running: HashSet<&String> = self.running.iter().collect();
        assert_eq!(held, running, "the events the runtime awaits are exactly the ones running");
        assert_eq!(self.session.in_flight(), self.running.len());
        // Credit conservation.
        let credit = self.session.credit();
        assert_eq!(
            self.window(),
            i64::from(credit.window()) - i64::from(credit.owed()),
            "the runtime's window is the session's less what it owes"
        );
        assert_eq!(self.withheld, credit.is_paused(), "the runtime withholds exactly when the session paused it");
        if !credit.is_paused() {
            assert_eq!(credit.owed(), 0);
        }
        if self.withhold_on_wire {
            assert!(self.withheld, "a deliberate withhold ended without a resume");
        }
        if self.withheld && !self.withhold_on_wire {
            // Paused by a shrink: only while there are results left to
            // withhold on, or the stream would stall for good.
            assert!(
                self.session.in_flight() > 0 && credit.window() > credit.target(),
                "the runtime is left withholding with no withhold asked for and no shrink to finish ({credit:?})"
            );
        }
        let in_flight = self.session.in_flight();
        assert!(self.session.timer_entries() <= 4 * in_flight + 70, "the timer heap is bounded");
        let sent = self.ws_waiting.values().filter(|d| d.is_some()).count();
        assert_eq!(self.session.ws_pending(), sent, "the session awaits exactly the sends it sent");
    }

    /// After time passed: nothing is held past its deadline or cancellation
    /// plus the grace, or past a drain deadline, and no send is awaited past
    /// its timeout.
    pub fn check_nothing_overdue(&self) {
        if self.closed {
            return;
        }
        if let Some(deadline) = self.drain_deadline {
            assert!(deadline > self.now, "still open past the drain deadline");
            if deadline.saturating_sub(self.grace) <= self.now {
                for id in &self.running {
                    assert!(
                        self.cancelled.contains(id),
                        "{id:?} was not told to stop a grace before the drain deadline"
                    );
                }
            }
        }
        for (id, event) in &self.held {
            let cancelled_at = match (event.deadline, event.cancel_sent) {
                (0, None) => continue,
                (0, Some(c)) => c,
                (d, None) => d,
                (d, Some(c)) => d.min(c),
            };
            assert!(
                cancelled_at.saturating_add(self.grace) > self.now,
                "{id:?} is still held past its deadline or cancellation grace"
            );
        }
        for (id, deadline) in &self.ws_waiting {
            if let Some(deadline) = deadline {
                assert!(*deadline > self.now, "send {id:?} is still awaited past its timeout");
            }
        }
    }

    /// Completes every handler still running, lets every timer pass, and
    /// checks that all was answered and nothing is tracked.
    pub fn finish(&mut self) {
        if !self.closed {
            let mut ids: Vec<String> = self.running.iter().cloned().collect();
            ids.sort();
            for id in &ids {
                let index = self.started.iter().rposition(|s| s == id).unwrap();
                self.step(&Op::Complete { pick: index, kind: Kind::Ok });
            }
            self.step(&Op::Advance(60_000));
            if !self.closed {
                // No drain: a Drain now ends it at once, nothing being held.
                assert!(self.drain_deadline.is_none());
                self.step(&Op::Drain(5_000));
                assert_eq!(self.exit, Some(Ok(())), "a drain with nothing held closes at once");
            }
        }
        match &self.exit {
            Some(Err(SessionError::StreamEnded { .. })) => {}
            Some(Ok(())) | Some(Err(SessionError::Interrupted)) => {
                assert!(self.held.is_empty(), "unanswered at the end: {:?}", self.held.keys())
            }
            other => panic!("unexpected end: {other:?}"),
        }
        assert!(self.running.is_empty() || matches!(self.exit, Some(Err(SessionError::StreamEnded { .. }))));
        assert!(self.session.tables_empty(), "the tracked-event tables are not empty when the work is done");
        assert!(self.ws_waiting.is_empty(), "sends never ended: {:?}", self.ws_waiting);
        // A closed session does nothing, whatever it is fed.
        for input in [Input::Tick, Input::Shutdown, Input::Resume, Input::Resize(9), Input::StreamEnded { error: None }]
        {
            self.session.handle(self.now + 1, input);
            assert!(self.actions().is_empty(), "a closed session acted");
        }
    }
}

pub fn sent(actions: &[Action]) -> Vec<&handler_message::Frame> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send(HandlerMessage { frame: Some(frame) }) => Some(frame),
            _ => None,
        })
        .collect()
}

pub fn results(actions: &[Action]) -> Vec<&pb::Result> {
    sent(actions)
        .into_iter()
        .filter_map(|f| match f {
            handler_message::Frame::Result(r) => Some(r),
            _ => None,
        })
        .collect()
}

pub fn ws_done(actions: &[Action]) -> Vec<(String, WsOutcome)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::WsDone { correlation_id, outcome } => Some((correlation_id.clone(), outcome.clone())),
            _ => None,
        })
        .collect()
}
