//! Running one handler call as the driver and the session would: panics
//! caught and answered, the deadline and cancellations fired on the
//! context, and a handler that overruns them answered for after the grace.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use celerity_proto::v1::{Dispatch, HandlerError, result::Outcome};
use tokio::sync::mpsc;
use tokio::time::{Instant, Sleep};

use crate::context::{CancelReason, Context};
use crate::handler::Handler;
use crate::panics::{self, CatchPanic, guarded};
use crate::session::error_type;

/// When, beside the handler finishing, a call can end or be cancelled.
pub(crate) struct Control {
    /// The event's deadline, if it has one, on tokio's clock.
    pub(crate) deadline: Option<Instant>,
    /// How long the handler may go on once cancelled.
    pub(crate) grace: Duration,
    /// A cancellation scheduled by the test.
    pub(crate) cancel_after: Option<(Duration, CancelReason)>,
    /// Cancellations fired by the test while the call runs.
    pub(crate) cancels: Option<mpsc::UnboundedReceiver<CancelReason>>,
    /// Whether a panic's message and stack go in the answer, as with
    /// `CELERITY_EXPOSE_PANICS=true`.
    pub(crate) expose_panics: bool,
}

type OutcomeFuture = Pin<Box<dyn Future<Output = Outcome> + Send>>;

/// Runs `handler` for `dispatch`; the outcome is the one the runtime would
/// receive.
pub(crate) fn run(handler: Arc<dyn Handler>, dispatch: Dispatch, cx: Context, control: Control) -> Runner {
    let now = Instant::now();
    let mut runner = Runner {
        future: Box::pin(std::future::pending()),
        cx: cx.clone(),
        grace: control.grace,
        deadline: None,
        scheduled: control
            .cancel_after
            .map(|(after, reason)| (Box::pin(tokio::time::sleep_until(now + after)), reason)),
        cancels: control.cancels,
        abandon: None,
        expose_panics: control.expose_panics,
    };
    match control.deadline {
        Some(deadline) if deadline <= now => {
            // A deadline already passed fires before the handler starts, as
            // the session fires it on the dispatch itself; one more than a
            // grace ago is answered for at once, and the handler never runs.
            let abandon_at = (deadline + control.grace).max(now);
            if abandon_at <= now {
                cx.cancel(CancelReason::DeadlineExceeded);
                runner.future = Box::pin(std::future::ready(abandoned(CancelReason::DeadlineExceeded)));
                return runner;
            }
            runner.fire(CancelReason::DeadlineExceeded, abandon_at);
        }
        Some(deadline) => runner.deadline = Some(Box::pin(tokio::time::sleep_until(deadline))),
        None => {}
    }
    // Building the future is user code too: a panic in it is an answer.
    // Both are guarded as the driver guards them, so a panic is answered by
    // the same code, with this call's choice of what goes on the wire.
    runner.future = match panics::exposing(control.expose_panics, || guarded(|| handler.call(dispatch, cx))) {
        Ok(future) => Box::pin(CatchPanic { future }),
        Err(outcome) => Box::pin(std::future::ready(outcome)),
    };
    runner
}

/// A running call.
pub(crate) struct Runner {
    future: OutcomeFuture,
    cx: Context,
    grace: Duration,
    deadline: Option<Pin<Box<Sleep>>>,
    scheduled: Option<(Pin<Box<Sleep>>, CancelReason)>,
    cancels: Option<mpsc::UnboundedReceiver<CancelReason>>,
    /// Once cancelled: when the handler is answered for, and why.
    abandon: Option<(Pin<Box<Sleep>>, CancelReason)>,
    /// Whether a panic's message and stack go in the answer.
    expose_panics: bool,
}

impl Runner {
    /// Fires the cancellation; the first one stays, as in the session.
    fn fire(&mut self, reason: CancelReason, abandon_at: Instant) {
        if self.abandon.is_some() {
            return;
        }
        self.cx.cancel(reason);
        self.abandon = Some((Box::pin(tokio::time::sleep_until(abandon_at)), reason));
        self.deadline = None;
        self.scheduled = None;
        self.cancels = None;
    }

    /// The next cancellation due, if any.
    fn poll_cancellation(&mut self, cx: &mut TaskContext<'_>) -> Option<(CancelReason, Instant)> {
        if let Some(cancels) = &mut self.cancels {
            match cancels.poll_recv(cx) {
                Poll::Ready(Some(reason)) => return Some((reason, Instant::now() + self.grace)),
                Poll::Ready(None) => self.cancels = None,
                Poll::Pending => {}
            }
        }
        if let Some(deadline) = &mut self.deadline
            && deadline.as_mut().poll(cx).is_ready()
        {
            // Abandoned one grace after the deadline itself, however late
            // it was noticed.
            let at = (deadline.deadline() + self.grace).max(Instant::now());
            return Some((CancelReason::DeadlineExceeded, at));
        }
        if let Some((sleep, reason)) = &mut self.scheduled
            && sleep.as_mut().poll(cx).is_ready()
        {
            return Some((*reason, Instant::now() + self.grace));
        }
        None
    }
}

impl Future for Runner {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Outcome> {
        let this = &mut *self;
        loop {
            // The handler's own answer first: one ready at the same time as a
            // timer wins, as a completion that reaches the session first.
            let future = &mut this.future;
            if let Poll::Ready(outcome) = panics::exposing(this.expose_panics, || future.as_mut().poll(cx)) {
                return Poll::Ready(outcome);
            }
            if let Some((sleep, reason)) = &mut this.abandon {
                return match sleep.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(abandoned(*reason)),
                    Poll::Pending => Poll::Pending,
                };
            }
            match this.poll_cancellation(cx) {
                // Cancelled: give the handler its chance to see it at once.
                Some((reason, abandon_at)) => this.fire(reason, abandon_at),
                None => return Poll::Pending,
            }
        }
    }
}

/// The session's answer for a handler that did not finish within the grace
/// after its cancellation.
pub(crate) fn abandoned(reason: CancelReason) -> Outcome {
    let what = "did not finish";
    let message = match reason {
        CancelReason::DeadlineExceeded => format!("the handler ran past its deadline and {what}"),
        other => format!("the handler was cancelled ({other}) and {what}"),
    };
    Outcome::Error(HandlerError { message, r#type: reason.error_type().to_string(), stack: String::new() })
}

/// The session's answer for a tag no handler serves.
pub(crate) fn unknown_tag(tag: &str) -> Outcome {
    Outcome::Error(HandlerError {
        message: format!("no handler in this process serves tag {tag:?}"),
        r#type: error_type::UNKNOWN_TAG.to_string(),
        stack: String::new(),
    })
}
