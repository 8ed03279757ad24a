//! Property test of the protocol core: random interleavings of dispatches
//! (known and unknown tags, duplicate and empty ids, beyond the credit
//! window and per-tag caps), completions (ok, error, panic, late), cancels
//! (for held, finished and unknown ids), time passing deadlines and graces,
//! withholds, resumes and resizes (before and after the handshake), the
//! runtime's `Drain`, shutdown signals (once or twice), the application's
//! stop, and the stream ending.
//!
//! A model of the runtime reads every frame the session sends, exactly as
//! the runtime does, and after every step the test checks:
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
//! - nothing is sent after `Close` or `Exit`, and a closed session does
//!   nothing more;
//! - when all work is done and the timers have passed, the tables that track
//!   events are empty.

use std::collections::{HashMap, HashSet};

use celerity::proto::v1::{
    self as pb, Dispatch, HandlerConfig, HandlerMessage, ProtocolVersion, ReadyAck, RuntimeConfig, RuntimeMessage,
    handler_message, result::Outcome, runtime_message,
};
use celerity::session::{Action, HandlerKey, HandlerSpec, Input, Session, SessionConfig, SessionError};
use proptest::prelude::*;

const T0: i64 = 1_700_000_000_000;
const TAGS: [&str; 3] = ["GET::/a", "GET::/b", "GET::/unknown"];
/// The per-tag cap of `GET::/b`.
const CAP_B: u32 = 2;
const SHUTDOWN_GRACE_MS: u64 = 1_000;

#[derive(Debug, Clone, Copy)]
enum Kind {
    Ok,
    Error,
    Panic,
}

impl Kind {
    fn outcome(self, id: &str) -> Outcome {
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
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum IdChoice {
    Fresh,
    /// An id dispatched before (in flight or finished), by index.
    Reuse(usize),
    Empty,
}

#[derive(Debug, Clone)]
enum Op {
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
}

fn op() -> impl Strategy<Value = Op> {
    let id = prop_oneof![
        6 => Just(IdChoice::Fresh),
        2 => any::<usize>().prop_map(IdChoice::Reuse),
        1 => Just(IdChoice::Empty),
    ];
    let deadline = prop_oneof![2 => Just(None), 3 => (-100i64..800).prop_map(Some)];
    let kind = prop_oneof![Just(Kind::Ok), Just(Kind::Error), Just(Kind::Panic)];
    prop_oneof![
        12 => (0..3usize, id, deadline, prop::bool::weighted(0.25))
            .prop_map(|(tag, id, deadline, forced)| Op::Dispatch { tag, id, deadline, forced }),
        10 => (any::<usize>(), kind).prop_map(|(pick, kind)| Op::Complete { pick, kind }),
        3 => (prop::option::weighted(0.8, any::<usize>()), 0..4i32).prop_map(|(pick, reason)| Op::Cancel { pick, reason }),
        6 => (0i64..1_500).prop_map(Op::Advance),
        2 => Just(Op::Withhold),
        2 => Just(Op::Resume),
        2 => (0u32..7).prop_map(Op::Resize),
        1 => (0i64..2_000).prop_map(Op::Drain),
        2 => Just(Op::Signal),
        1 => Just(Op::Stop),
        1 => any::<bool>().prop_map(|error| Op::StreamEnd { error }),
    ]
}

/// Application requests made before the handshake completes.
#[derive(Debug, Clone)]
enum Early {
    Withhold,
    Resume,
    Resize(u32),
}

fn early() -> impl Strategy<Value = Early> {
    prop_oneof![Just(Early::Withhold), Just(Early::Resume), (0u32..7).prop_map(Early::Resize)]
}

impl Early {
    fn input(&self) -> Input {
        match self {
            Early::Withhold => Input::Withhold,
            Early::Resume => Input::Resume,
            Early::Resize(n) => Input::Resize(*n),
        }
    }
}

/// One event the runtime is waiting on.
#[derive(Debug, Clone)]
struct Held {
    tag: String,
    deadline: i64,
    /// When its cancellation was first asked for by a `Cancel`.
    cancel_sent: Option<i64>,
}

/// The runtime's side, and the handlers' side, of the session.
struct Harness {
    session: Session,
    now: i64,
    grace: i64,
    // --- the runtime, as it sees the stream ---
    available: i64,
    withheld: bool,
    held: HashMap<String, Held>,
    dispatched: Vec<String>,
    results: u64,
    /// The earliest of the runtime's Drain deadline and the handler's
    /// Draining deadline, once either was sent.
    drain_deadline: Option<i64>,
    drain_sent: bool,
    draining_received: bool,
    closed: bool,
    exit: Option<Result<(), SessionError>>,
    // --- the application ---
    /// The window it asked for last.
    target: u32,
    /// It withheld and has not resumed.
    withholding: bool,
    /// Its withhold has reached the runtime (a zero grant since it asked).
    withhold_on_wire: bool,
    /// Shutdown signals sent.
    signals: u32,
    // --- the handlers ---
    running: HashSet<String>,
    cancelled: HashSet<String>,
    started: Vec<String>,
    fresh: u64,
}

fn frame(frame: runtime_message::Frame) -> Input {
    Input::Frame(RuntimeMessage { frame: Some(frame) })
}

impl Harness {
    /// A session past the handshake. `early` happens before `RuntimeConfig`,
    /// `between` (and a signal, when `signal_before_ack`) between `Ready` and
    /// `ReadyAck`.
    fn new(initial: u32, grace: u64, early: &[Early], between: &[Early], signal_before_ack: bool) -> Self {
        let handlers = vec![
            HandlerSpec { key: HandlerKey::Tag(TAGS[0].into()), max_concurrent: None, label: "a".into() },
            HandlerSpec { key: HandlerKey::Tag(TAGS[1].into()), max_concurrent: Some(CAP_B), label: "b".into() },
        ];
        let mut config = SessionConfig::new(handlers, initial);
        config.cancel_grace_ms = grace;
        config.shutdown_grace_ms = SHUTDOWN_GRACE_MS;
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
            target,
            withholding,
            withhold_on_wire: false,
            signals: u32::from(signal_before_ack),
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

    fn actions(&mut self) -> Vec<Action> {
        std::iter::from_fn(|| self.session.poll_action()).collect()
    }

    fn window(&self) -> i64 {
        self.available + self.held.len() as i64
    }

    /// Feeds one op and checks the invariants.
    fn step(&mut self, op: &Op) {
        match op {
            Op::Dispatch { tag, id, deadline, forced } => self.dispatch(*tag, *id, *deadline, *forced),
            Op::Complete { pick, kind } => {
                if self.started.is_empty() {
                    return;
                }
                let id = self.started[pick % self.started.len()].clone();
                let outcome = kind.outcome(&id);
                let was_running = self.running.contains(&id) && !self.closed;
                self.session.handle(self.now, Input::Completed { id: id.clone(), outcome: outcome.clone() });
                let actions = self.actions();
                if was_running {
                    let answer = results(&actions).into_iter().find(|r| r.id == id);
                    let answer = answer.unwrap_or_else(|| panic!("no Result for completed {id:?}: {actions:?}"));
                    assert_eq!(answer.outcome.as_ref(), Some(&outcome), "the handler's own outcome is sent");
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
                let held = self.held.contains_key(&id);
                if let Some(event) = self.held.get_mut(&id) {
                    event.cancel_sent.get_or_insert(self.now);
                }
                self.session.handle(
                    self.now,
                    frame(runtime_message::Frame::Cancel(pb::Cancel { id: id.clone(), reason: *reason })),
                );
                let actions = self.actions();
                if !held {
                    assert!(actions.is_empty(), "a Cancel for {id:?}, which is not held, did something: {actions:?}");
                }
                self.process(&actions);
            }
            Op::Advance(ms) => {
                self.now += ms;
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
            Op::Drain(ahead) => {
                let deadline = self.now + ahead;
                self.drain_sent = true;
                self.drain_deadline = Some(self.drain_deadline.map_or(deadline, |d| d.min(deadline)));
                self.session
                    .handle(self.now, frame(runtime_message::Frame::Drain(pb::Drain { deadline_unix_ms: deadline })));
                let actions = self.actions();
                self.process(&actions);
                if *ahead == 0 {
                    self.check_nothing_overdue();
                }
            }
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
        }
        self.check();
    }

    fn app(&mut self, input: Input) {
        self.session.handle(self.now, input);
        let actions = self.actions();
        self.process(&actions);
    }

    fn dispatch(&mut self, tag: usize, id: IdChoice, deadline: Option<i64>, forced: bool) {
        let tag = TAGS[tag];
        let id = match (id, forced) {
            (IdChoice::Reuse(i), true) if !self.dispatched.is_empty() => {
                self.dispatched[i % self.dispatched.len()].clone()
            }
            (IdChoice::Empty, true) => String::new(),
            _ => {
                self.fresh += 1;
                format!("e{}", self.fresh)
            }
        };
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
        let deadline = deadline.map_or(0, |d| self.now + d);
        let dispatch = Dispatch {
            id: id.clone(),
            handler_tag: tag.to_string(),
            deadline_unix_ms: deadline,
            source: Some(pb::dispatch::Source::Http(pb::HttpRequest::default())),
            ..Default::default()
        };
        // The runtime spends a place on every dispatch.
        let duplicate = id.is_empty() || self.held.contains_key(&id);
        if !self.closed {
            self.available -= 1;
            if !duplicate {
                self.held.insert(id.clone(), Held { tag: tag.to_string(), deadline, cancel_sent: None });
                self.dispatched.push(id.clone());
            }
        }
        let in_flight_before = self.session.in_flight();
        self.session.handle(self.now, frame(runtime_message::Frame::Dispatch(dispatch)));
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
        }
        if duplicate {
            assert!(results(&actions).is_empty(), "a duplicate or empty id must not be answered: {actions:?}");
            assert!(!started, "a duplicate or empty id must not be run");
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
    fn process(&mut self, actions: &[Action]) {
        for action in actions {
            match action {
                Action::Send(HandlerMessage { frame: Some(frame) }) => {
                    assert!(!self.closed, "sent after Close or Exit: {frame:?}");
                    self.receive(frame);
                }
                Action::Send(HandlerMessage { frame: None }) => panic!("an empty frame was sent"),
                Action::Start { dispatch, .. } => {
                    assert!(!self.closed);
                    assert!(self.held.contains_key(&dispatch.id), "started {:?}, which is not held", dispatch.id);
                    assert!(self.running.insert(dispatch.id.clone()), "started {:?} twice", dispatch.id);
                    self.cancelled.remove(&dispatch.id);
                    self.started.push(dispatch.id.clone());
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
            other => panic!("unexpected frame while serving: {other:?}"),
        }
    }

    /// The invariants that hold after every step.
    fn check(&mut self) {
        assert_eq!(self.session.is_closed(), self.exit.is_some(), "closed exactly when Exit was given");
        if self.closed {
            assert_eq!(self.session.in_flight(), 0);
            assert!(self.session.tables_empty(), "a closed session still tracks events");
            assert_eq!(self.session.next_timer(), None);
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
    }

    /// After time passed: nothing is held past its deadline or cancellation
    /// plus the grace, or past a drain deadline.
    fn check_nothing_overdue(&self) {
        if self.closed {
            return;
        }
        if let Some(deadline) = self.drain_deadline {
            assert!(deadline > self.now, "still open past the drain deadline");
            if deadline - self.grace <= self.now {
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
                cancelled_at + self.grace > self.now,
                "{id:?} is still held past its deadline or cancellation grace"
            );
        }
    }

    /// Completes every handler still running, lets every timer pass, and
    /// checks that all was answered and nothing is tracked.
    fn finish(&mut self) {
        if !self.closed {
            let mut ids: Vec<String> = self.running.iter().cloned().collect();
            ids.sort();
            for (i, _) in ids.iter().enumerate() {
                let index = self.started.iter().rposition(|s| *s == ids[i]).unwrap();
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
        // A closed session does nothing, whatever it is fed.
        for input in [Input::Tick, Input::Shutdown, Input::Resume, Input::Resize(9), Input::StreamEnded { error: None }]
        {
            self.session.handle(self.now + 1, input);
            assert!(self.actions().is_empty(), "a closed session acted");
        }
    }
}

fn sent(actions: &[Action]) -> Vec<&handler_message::Frame> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send(HandlerMessage { frame: Some(frame) }) => Some(frame),
            _ => None,
        })
        .collect()
}

fn results(actions: &[Action]) -> Vec<&pb::Result> {
    sent(actions)
        .into_iter()
        .filter_map(|f| match f {
            handler_message::Frame::Result(r) => Some(r),
            _ => None,
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn the_session_keeps_every_rule(
        initial in 1u32..5,
        grace in prop_oneof![Just(0u64), 1u64..300],
        early in prop::collection::vec(early(), 0..3),
        between in prop::collection::vec(early(), 0..2),
        signal_before_ack in prop::bool::weighted(0.1),
        ops in prop::collection::vec(op(), 1..80),
    ) {
        let mut harness = Harness::new(initial, grace, &early, &between, signal_before_ack);
        for op in &ops {
            harness.step(op);
        }
        harness.finish();
    }
}

/// A long busy run without drains or signals, to reach deep windows, many
/// resizes and long-lived timers.
#[test]
fn a_long_busy_run_keeps_the_timer_heap_bounded() {
    let mut harness = Harness::new(8, 100, &[], &[], false);
    for round in 0..2_000u64 {
        // Long deadlines that never come due during the run.
        harness.step(&Op::Dispatch { tag: 0, id: IdChoice::Fresh, deadline: Some(600_000), forced: false });
        let pick = harness.started.len() - 1;
        harness.step(&Op::Complete { pick, kind: Kind::Ok });
        if round % 100 == 0 {
            harness.step(&Op::Resize(1 + (round / 100 % 8) as u32));
        }
        harness.step(&Op::Advance(1));
    }
    assert!(harness.session.timer_entries() <= 70, "{} stale timers kept", harness.session.timer_entries());
    harness.finish();
}
