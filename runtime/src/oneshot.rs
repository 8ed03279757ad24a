//! One event run under the SDK's own protocol rules, outside any stream:
//! the event gets a [`Session`] of its own, serving the one handler it is
//! for, and is driven as the driver drives a stream, with tokio's clock for
//! time.
//!
//! The deadline, cancellation, grace and abandon rules are the session's,
//! and so are the answers for an unknown tag, a source the handler does not
//! take and an answer of the wrong shape. `celerity::testing` runs each call
//! this way, so a test sees exactly what the runtime would receive (and
//! `tokio::time::pause()` makes every timer instant); on a serverless
//! platform each invocation is run this way, so it is answered as the
//! runtime would have been.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use celerity_proto::v1::{
    self as pb, HandlerConfig, ProtocolVersion, ReadyAck, RuntimeConfig, RuntimeMessage, handler_message,
    result::Outcome, runtime_message,
};
use tokio::sync::mpsc;
use tokio::time::{Instant, Sleep};

use crate::context::{CancelReason, Context};
use crate::panics;
use crate::registry::Registration;
use crate::session::{Action, Event, HandlerKey, HandlerSpec, Input, Session, SessionConfig};
use crate::version::{PROTOCOL_MAJOR, PROTOCOL_MINOR};

/// What, beside the handler finishing, can happen to an event.
pub(crate) struct Control {
    /// How long the handler may go on once cancelled.
    pub(crate) grace: Duration,
    /// A cancellation scheduled in advance (by a test).
    pub(crate) cancel_after: Option<(Duration, CancelReason)>,
    /// Cancellations fired while the event runs.
    pub(crate) cancels: Option<mpsc::UnboundedReceiver<CancelReason>>,
    /// Whether a panic's message and stack go in the answer, as with
    /// `CELERITY_EXPOSE_PANICS=true`.
    pub(crate) expose_panics: bool,
}

/// Unix milliseconds, as the session counts time, on tokio's clock: from
/// the wall clock at the start of the event, moved on by tokio's.
#[derive(Clone, Copy)]
pub(crate) struct Clock {
    started: Instant,
    started_ms: i64,
}

impl Clock {
    /// A clock starting at `now`.
    pub(crate) fn starting_at(now: SystemTime) -> Self {
        let started_ms = now.duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        Clock { started: Instant::now(), started_ms }
    }

    fn now_ms(&self) -> i64 {
        let elapsed = i64::try_from(self.started.elapsed().as_millis()).unwrap_or(i64::MAX);
        self.started_ms.saturating_add(elapsed)
    }

    /// When, on tokio's clock, the session's time `at` comes.
    fn instant(&self, at: i64) -> Instant {
        let after = u64::try_from(at.saturating_sub(self.started_ms)).unwrap_or(0);
        // At most a day ahead: a later timer is re-armed then.
        self.started + Duration::from_millis(after.min(86_400_000))
    }
}

type OutcomeFuture = Pin<Box<dyn Future<Output = Result<crate::reply::Reply, prost::DecodeError>> + Send>>;

/// One event of a handler, running: a future of the outcome the runtime
/// would receive.
pub(crate) struct Runner {
    session: Session,
    clock: Clock,
    id: String,
    /// What the handler is started with once the session says so.
    start: Option<(Registration, Context)>,
    /// The handler's context, to fire its cancellation on.
    cx: Context,
    handler: Option<OutcomeFuture>,
    /// The session's next timer, and when it is armed for.
    timer: Pin<Box<Sleep>>,
    armed: Option<i64>,
    scheduled: Option<(Pin<Box<Sleep>>, CancelReason)>,
    cancels: Option<mpsc::UnboundedReceiver<CancelReason>>,
    /// The answer, once the session has sent it.
    answer: Option<Outcome>,
    expose_panics: bool,
}

/// Runs `registration` (none: no handler serves the tag) for `dispatch`,
/// its context `cx`, on a session of its own that the clock `clock` drives.
/// The dispatch is a decoded `Dispatch`, or an [`Event`] decoded from the
/// bytes of one as the driver decodes a frame.
pub(crate) fn run(
    registration: Option<Registration>,
    dispatch: impl Into<Event>,
    cx: Context,
    clock: Clock,
    control: Control,
) -> Runner {
    let dispatch: Event = dispatch.into();
    let tag = dispatch.handler_tag.clone();
    let (handlers, declared) = match &registration {
        Some(registration) => {
            // One event at a time: no cap to enforce.
            let spec = HandlerSpec { max_concurrent: None, ..registration.spec() };
            let name = match &registration.key {
                HandlerKey::Name(name) => name.clone(),
                HandlerKey::Tag(_) => registration.origin.function.to_string(),
            };
            (vec![spec], vec![declared(&name, &tag)])
        }
        None => (Vec::new(), Vec::new()),
    };
    let mut config = SessionConfig::new(handlers, 1);
    config.cancel_grace_ms = u64::try_from(control.grace.as_millis()).unwrap_or(u64::MAX);
    let now = clock.now_ms();
    let mut runner = Runner {
        session: Session::new(config, now),
        clock,
        id: dispatch.id.clone(),
        start: registration.map(|registration| (registration, cx.clone())),
        cx,
        handler: None,
        timer: Box::pin(tokio::time::sleep_until(clock.started)),
        armed: None,
        scheduled: control
            .cancel_after
            .map(|(after, reason)| (Box::pin(tokio::time::sleep_until(Instant::now() + after)), reason)),
        cancels: control.cancels,
        answer: None,
        expose_panics: control.expose_panics,
    };
    // The handshake, as a runtime that declares exactly this handler makes
    // it; then the event.
    let config = RuntimeConfig {
        tracing_enabled: false,
        metrics_enabled: false,
        handlers: declared,
        protocol_version: Some(ProtocolVersion { major: PROTOCOL_MAJOR, minor: PROTOCOL_MINOR }),
    };
    runner.feed(Input::from(frame(runtime_message::Frame::Config(config))));
    runner
        .feed(Input::from(frame(runtime_message::Frame::ReadyAck(ReadyAck { accepted: true, ..ReadyAck::default() }))));
    runner.feed(Input::Dispatch(dispatch));
    runner
}

fn declared(name: &str, tag: &str) -> HandlerConfig {
    HandlerConfig {
        handler_name: name.to_string(),
        handler_tag: tag.to_string(),
        timeout_ms: 0,
        tracing_enabled: false,
        published_name: String::new(),
    }
}

fn frame(frame: runtime_message::Frame) -> RuntimeMessage {
    RuntimeMessage { frame: Some(frame) }
}

impl Runner {
    /// Feeds the session one input, now, and carries out what it asks.
    fn feed(&mut self, input: Input) {
        self.session.handle(self.clock.now_ms(), input);
        while let Some(action) = self.session.poll_action() {
            match action {
                Action::Send(message) => {
                    if let Some(handler_message::Frame::Result(result)) = message.frame
                        && result.id == self.id
                    {
                        self.answer = result.outcome;
                    }
                }
                Action::SendHttp(result) if result.id == self.id => {
                    self.answer = Some(crate::reply::Reply::Http(result.reply).into_outcome());
                }
                Action::Start { dispatch, .. } => {
                    if let Some((registration, cx)) = self.start.take() {
                        self.handler = Some(Box::pin(registration.start(dispatch.source, cx)));
                    }
                }
                Action::Cancel { reason, .. } => self.cx.cancel(reason),
                Action::Abandon { .. } => self.handler = None,
                Action::Warn(message) => tracing::debug!("{message}"),
                _ => {}
            }
        }
    }

    /// A runtime `Cancel` of the event, for `reason`.
    fn cancel(&mut self, reason: CancelReason) {
        let reason = match reason {
            CancelReason::DeadlineExceeded => pb::cancel::Reason::DeadlineExceeded,
            CancelReason::CallerGone => pb::cancel::Reason::CallerGone,
            CancelReason::Shutdown => pb::cancel::Reason::Shutdown,
            CancelReason::Unspecified => pb::cancel::Reason::Unspecified,
        };
        let cancel = pb::Cancel { id: self.id.clone(), reason: reason.into() };
        self.feed(Input::from(frame(runtime_message::Frame::Cancel(cancel))));
    }
}

impl Future for Runner {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Outcome> {
        let this = &mut *self;
        loop {
            if let Some(answer) = this.answer.take() {
                return Poll::Ready(answer);
            }
            // The handler's own answer first: one ready at the same time as a
            // timer wins, as a completion that reaches the session first.
            if let Some(handler) = &mut this.handler {
                let poll = panics::exposing(this.expose_panics, || handler.as_mut().poll(cx));
                if let Poll::Ready(outcome) = poll {
                    this.handler = None;
                    this.feed(Input::finished(Arc::from(this.id.as_str()), outcome));
                    continue;
                }
            }
            if let Some(cancels) = &mut this.cancels {
                match cancels.poll_recv(cx) {
                    Poll::Ready(Some(reason)) => {
                        this.cancel(reason);
                        continue;
                    }
                    Poll::Ready(None) => this.cancels = None,
                    Poll::Pending => {}
                }
            }
            if let Some((sleep, reason)) = &mut this.scheduled
                && sleep.as_mut().poll(cx).is_ready()
            {
                let reason = *reason;
                this.scheduled = None;
                this.cancel(reason);
                continue;
            }
            let Some(at) = this.session.next_timer() else {
                return Poll::Pending;
            };
            if this.armed != Some(at) {
                this.timer.as_mut().reset(this.clock.instant(at));
                this.armed = Some(at);
            }
            if this.timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            this.armed = None;
            this.feed(Input::Tick);
        }
    }
}
