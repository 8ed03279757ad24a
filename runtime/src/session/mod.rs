//! The protocol core: every rule of the handler IPC protocol, with no I/O.
//!
//! A [`Session`] takes what happens ([`Input`]: frames from the runtime,
//! handler completions, the passing of time, a shutdown request, the stream
//! ending) and answers with what to do ([`Action`]: frames to send, handlers
//! to start, cancel or abandon, and when to stop). It never reads a clock or
//! touches a socket: time arrives as milliseconds since the Unix epoch with
//! each input, which is what lets its rules be tested with a fake clock and
//! driven by a fuzzer.
//!
//! The rules it keeps:
//! - the handshake order: `RuntimeConfig` first, then `Ready`, then `ReadyAck`;
//! - the credit window: one grant on every result, zero only to withhold;
//! - per-tag caps, enforced here as well as declared;
//! - every dispatch is answered exactly once: by the handler, or by the
//!   session when the handler overruns its deadline or a cancellation, or
//!   cannot be started;
//! - drain in both directions, and nothing sent after the stream closes.

mod credit;
mod error;
mod event;
mod handshake;
mod transitions;
mod types;
mod warnings;
mod wire;
mod ws;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::Arc;

use celerity_proto::v1::{self as pb, CreditGrant, HandlerMessage, RuntimeMessage, handler_message, runtime_message};

pub use crate::excerpt::{QUOTED_BYTES, quoted};
pub use credit::Credit;
pub use error::SessionError;
pub use event::{Encoded, Event, LazySource};
pub(crate) use event::{in_source, record_room};
pub use handshake::HandshakeReport;
pub use types::{
    Action, CancelReason, DEFAULT_CANCEL_GRACE_MS, DEFAULT_HANDSHAKE_TIMEOUT_MS, DEFAULT_MAX_MESSAGE_BYTES, HandlerKey,
    HandlerSpec, Input, MAX_ID_BYTES, MIN_MESSAGE_BYTES, RouteCheck, SessionConfig, error_type, event_deadline,
    frame_name, route_fits,
};
pub use warnings::WARNING_INTERVAL_MS;
pub use ws::WsOutcome;

use warnings::Warning;

/// The maps keyed by event ids and tags, looked up several times per event.
/// foldhash rather than SipHash: it is several times faster on short
/// strings and still seeded per process, so ids chosen by the runtime
/// cannot be aimed at one bucket without knowing the seed.
pub(crate) type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    AwaitingConfig,
    AwaitingAck,
    Serving,
    /// The runtime sent `Drain`: no new work; stop at the deadline.
    Drained {
        deadline: i64,
    },
    /// We sent `Draining`: work already dispatched is still run; stop at the
    /// deadline, or once nothing is held and dispatches that crossed
    /// `Draining` have had until `settle_until` to arrive.
    Draining {
        deadline: i64,
        settle_until: i64,
    },
    Closed,
}

#[derive(Debug)]
pub(super) struct InFlight {
    handler: usize,
    deadline: i64,
    cancelled: Option<CancelReason>,
    /// When the next timer of this event is due: its deadline, or the end of
    /// its cancellation grace. Stale heap entries are told apart by this.
    timer: Option<i64>,
    /// The id as it arrived, for the answer's `Result`: kept rather than
    /// copied again from the shared one when the answer is made.
    wire_id: String,
}

/// The protocol state machine of one handler stream. See the module docs.
#[derive(Debug)]
pub struct Session {
    config: SessionConfig,
    phase: Phase,
    started_at: i64,
    /// Tag → handler index, set at the handshake.
    by_tag: FastMap<String, usize>,
    /// Handler index → the tag it serves, set at the handshake.
    tags: Vec<String>,
    in_flight: FastMap<Arc<str>, InFlight>,
    in_flight_per_handler: Vec<u32>,
    credit: Credit,
    timers: BinaryHeap<Reverse<(i64, Arc<str>)>>,
    actions: VecDeque<Action>,
    /// A `CreditGrant` asked for before the runtime accepted `Ready`; sent
    /// once it has (nothing but `Ready` may go before `ReadyAck`).
    pending_grant: Option<u32>,
    /// A shutdown signal has arrived: the next one stops at once.
    signalled: bool,
    /// `Draining` has been sent.
    draining_sent: bool,
    /// A signal or stop arrived while waiting for `ReadyAck`: drain once it
    /// comes.
    stop_after_ack: bool,
    /// The time of the input being handled.
    now: i64,
    /// The rate limit on warnings about what the runtime sent.
    warnings: warnings::Warnings,
    /// WebSocket sends awaiting their acknowledgement.
    ws_pending: ws::PendingSends,
    /// WebSocket sends asked for before the handshake completed, sent once
    /// it has: (correlation id, messages, timeout).
    ws_queued: Vec<(String, Vec<pb::WsOutbound>, u64)>,
    /// Whether the runtime's `WsSendAck` covers clients' acknowledgements:
    /// only a runtime that negotiated the protocol version reads
    /// `wait_for_ack`. Set at the handshake.
    acks_negotiated: bool,
    /// Whether the log has said that this runtime cannot confirm clients'
    /// acknowledgements: said once, at the first send that asks for one.
    unconfirmed_said: bool,
}

impl Session {
    /// A session that has just connected at `now` (Unix ms) and waits for
    /// `RuntimeConfig`.
    pub fn new(config: SessionConfig, now: i64) -> Self {
        let handlers = config.handlers.len();
        let mut config = config;
        // The pool has at least one worker: a window of zero would never be
        // dispatched to.
        config.initial_credit = config.initial_credit.max(1);
        config.max_message_bytes = config.max_message_bytes.max(MIN_MESSAGE_BYTES);
        let credit = Credit::new(config.initial_credit);
        Session {
            config,
            phase: Phase::AwaitingConfig,
            started_at: now,
            by_tag: FastMap::default(),
            tags: Vec::new(),
            in_flight: FastMap::default(),
            in_flight_per_handler: vec![0; handlers],
            credit,
            timers: BinaryHeap::new(),
            actions: VecDeque::new(),
            pending_grant: None,
            signalled: false,
            draining_sent: false,
            stop_after_ack: false,
            now,
            warnings: warnings::Warnings::default(),
            ws_pending: ws::PendingSends::default(),
            ws_queued: Vec::new(),
            acks_negotiated: true,
            unconfirmed_said: false,
        }
    }

    /// Feeds one input at time `now` (Unix ms). Actions it produces are read
    /// with [`Session::poll_action`].
    pub fn handle(&mut self, now: i64, input: Input) {
        if self.phase == Phase::Closed {
            if let Input::WsSend { correlation_id, .. } = input {
                self.actions.push_back(Action::WsDone { correlation_id, outcome: WsOutcome::Disconnected });
            }
            return;
        }
        self.now = now;
        self.apply(now, input);
        if self.phase == Phase::Closed {
            // Nothing more will be read: sends still waiting never will be
            // acknowledged.
            let waiting = self.ws_pending.take_all().into_iter().chain(self.ws_queued.drain(..).map(|(id, _, _)| id));
            let done: Vec<Action> = waiting
                .map(|correlation_id| Action::WsDone { correlation_id, outcome: WsOutcome::Disconnected })
                .collect();
            self.actions.extend(done);
            // What was counted and not yet said goes out before the end,
            // which the driver acts on last.
            let counted = self.warnings.take_all(now);
            if !counted.is_empty() {
                let at = self.actions.iter().position(|a| matches!(a, Action::Close | Action::Exit(_)));
                let at = at.unwrap_or(self.actions.len());
                for (offset, line) in counted.into_iter().enumerate() {
                    self.actions.insert(at + offset, Action::Warn(line));
                }
            }
        }
    }

    fn apply(&mut self, now: i64, input: Input) {
        match input {
            Input::Frame(message) => self.on_frame(now, *message),
            Input::Dispatch(event) => self.on_event(now, event),
            Input::Undecoded { id, error } => self.on_undecoded(id, &error),
            Input::Undecodable { frame, error } => self.on_undecodable(&frame, &error),
            Input::FrameTooLarge { bytes, limit } => self.on_frame_too_large(bytes, limit),
            Input::Completed { id, outcome } => self.on_completed(now, id, outcome),
            Input::Tick => self.on_tick(now),
            Input::Shutdown => self.on_shutdown(now),
            Input::Stop => self.on_stop(now),
            Input::StreamEnded { error } => self.on_stream_ended(error),
            Input::Withhold => self.credit.withhold(),
            Input::Resume => {
                if let Some(additional) = self.credit.resume() {
                    self.send_grant(additional);
                }
                // A shrink's pause may be over now.
                self.after_answers();
            }
            Input::Resize(window) => {
                if self.phase == Phase::AwaitingConfig {
                    // Ready is not sent yet: it declares the new size.
                    self.config.initial_credit = window.max(1);
                    self.credit.declare(self.config.initial_credit);
                } else if let Some(additional) = self.credit.resize(window) {
                    self.send_grant(additional);
                }
                self.after_answers();
            }
            Input::WsSend { correlation_id, messages, timeout_ms } => {
                if matches!(self.phase, Phase::AwaitingConfig | Phase::AwaitingAck) {
                    self.ws_queued.push((correlation_id, messages, timeout_ms));
                } else {
                    self.send_ws(now, correlation_id, messages, timeout_ms);
                }
            }
        }
    }

    /// The next action to carry out, in order.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// When [`Input::Tick`] should next be fed, if any timer is set.
    pub fn next_timer(&mut self) -> Option<i64> {
        let counted = self.warnings.next_due();
        match self.phase {
            Phase::AwaitingConfig | Phase::AwaitingAck => {
                let timeout = self.started_at.saturating_add(self.config.handshake_timeout_ms as i64);
                Some(counted.map_or(timeout, |at| at.min(timeout)))
            }
            Phase::Closed => None,
            Phase::Serving | Phase::Drained { .. } | Phase::Draining { .. } => {
                self.drop_stale_timers();
                let events = self.timers.peek().map(|Reverse((at, _))| *at);
                let sends = self.ws_pending.next_deadline();
                let next = [events, sends, counted].into_iter().flatten().min();
                let (deadline, settle_until) = match self.phase {
                    Phase::Drained { deadline } => (deadline, None),
                    Phase::Draining { deadline, settle_until } => (deadline, Some(settle_until)),
                    _ => return next,
                };
                let mut end = deadline;
                // Held work is told to stop one grace before the deadline.
                let warn_at = self.drain_cancel_at(deadline);
                if warn_at > self.now && !self.in_flight.is_empty() {
                    end = end.min(warn_at);
                }
                if let Some(settle) = settle_until.filter(|&at| at > self.now) {
                    end = end.min(settle);
                }
                Some(next.map_or(end, |at| at.min(end)))
            }
        }
    }

    /// Whether the session has ended; it then ignores every input.
    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    /// Events dispatched and not yet answered.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// The credit window.
    pub fn credit(&self) -> &Credit {
        &self.credit
    }

    /// Whether the handshake has completed and the session has not closed.
    pub fn is_serving(&self) -> bool {
        matches!(self.phase, Phase::Serving | Phase::Drained { .. } | Phase::Draining { .. })
    }

    /// Whether every table that tracks events is empty: nothing in flight,
    /// no per-handler count, no timer left once stale ones are dropped. For
    /// tests: it must hold whenever all work has been answered.
    #[doc(hidden)]
    pub fn tables_empty(&mut self) -> bool {
        self.drop_stale_timers();
        self.in_flight.is_empty()
            && self.in_flight_per_handler.iter().all(|&n| n == 0)
            && self.timers.is_empty()
            && self.ws_pending.is_empty()
            && self.ws_queued.is_empty()
    }

    /// WebSocket sends awaiting their acknowledgement.
    pub fn ws_pending(&self) -> usize {
        self.ws_pending.len()
    }

    /// Timer entries held, stale ones included. For tests of the bound on
    /// them.
    #[doc(hidden)]
    pub fn timer_entries(&self) -> usize {
        self.timers.len()
    }

    fn on_frame(&mut self, now: i64, message: RuntimeMessage) {
        let Some(frame) = message.frame else {
            if self.phase == Phase::AwaitingConfig {
                return self.fail(SessionError::UnexpectedFirstFrame("an empty frame"));
            }
            return self.warn_about(Warning::EmptyFrame, || {
                "the runtime sent a frame with nothing in it; ignored".to_string()
            });
        };
        // Every phase has its answer to a `Dispatch`, in one place.
        if let runtime_message::Frame::Dispatch(dispatch) = frame {
            return self.on_event(now, Event::from(dispatch));
        }
        match self.phase {
            Phase::AwaitingConfig => match frame {
                runtime_message::Frame::Config(config) => self.on_config(config),
                other => self.fail(SessionError::UnexpectedFirstFrame(frame_name(&other))),
            },
            Phase::AwaitingAck => match frame {
                runtime_message::Frame::ReadyAck(ack) => self.on_ready_ack(ack),
                // Only the first frame is the handshake's: a second
                // RuntimeConfig changes nothing already bound.
                runtime_message::Frame::Config(_) => self.warn_about(Warning::OutOfPlace, || {
                    "the runtime sent a second RuntimeConfig before ReadyAck; ignored, the first one's stands"
                        .to_string()
                }),
                // Nothing is held yet, and no send has gone out.
                runtime_message::Frame::Cancel(cancel) => {
                    self.on_cancel(now, &cancel.id, CancelReason::from_wire(cancel.reason))
                }
                runtime_message::Frame::WsAck(ack) => self.on_ws_ack(ack),
                // A `Drain` (a `Dispatch` was taken above).
                other => self.fail(SessionError::UnexpectedFrame { frame: frame_name(&other), expected: "ReadyAck" }),
            },
            Phase::Serving | Phase::Drained { .. } | Phase::Draining { .. } => match frame {
                runtime_message::Frame::Cancel(cancel) => {
                    self.on_cancel(now, &cancel.id, CancelReason::from_wire(cancel.reason))
                }
                runtime_message::Frame::Drain(drain) => self.on_drain(now, drain.deadline_unix_ms),
                runtime_message::Frame::WsAck(ack) => self.on_ws_ack(ack),
                other => self.warn_about(Warning::OutOfPlace, || {
                    format!("the runtime sent {} after the handshake; ignored", frame_name(&other))
                }),
            },
            Phase::Closed => {}
        }
    }

    fn send_grant(&mut self, additional: u32) {
        if matches!(self.phase, Phase::AwaitingConfig | Phase::AwaitingAck) {
            *self.pending_grant.get_or_insert(0) += additional;
            return;
        }
        self.send(handler_message::Frame::Credit(CreditGrant { additional }));
    }

    fn send(&mut self, frame: handler_message::Frame) {
        self.actions.push_back(Action::Send(HandlerMessage { frame: Some(frame) }));
    }

    fn warn(&mut self, message: String) {
        self.actions.push_back(Action::Warn(message));
    }

    /// A warning about something the runtime sent, logged at a bounded rate
    /// (see [`warnings`]): `message` is composed only when it is logged.
    pub(in crate::session) fn warn_about(&mut self, kind: Warning, message: impl FnOnce() -> String) {
        self.report_counted(self.now);
        if self.warnings.admit(kind, self.now) {
            let message = message();
            self.warn(message);
        }
    }

    /// Logs how many warnings were held back, for each kind whose interval
    /// is over by `now`.
    pub(in crate::session) fn report_counted(&mut self, now: i64) {
        for line in self.warnings.due(now) {
            self.warn(line);
        }
    }

    fn fail(&mut self, error: SessionError) {
        self.phase = Phase::Closed;
        self.actions.push_back(Action::Close);
        self.actions.push_back(Action::Exit(Err(error)));
    }
}

#[cfg(test)]
mod tests;
