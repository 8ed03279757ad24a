//! Stopping: the runtime's `Drain`, this process's signals and stop requests,
//! and the `Draining` frame.

use std::sync::Arc;

use celerity_proto::v1::{Draining, handler_message};

use crate::session::{Action, CancelReason, Phase, Session, SessionError};

impl Session {
    pub(in crate::session) fn on_drain(&mut self, now: i64, deadline: i64) {
        let mut deadline = if deadline <= 0 { now } else { deadline };
        // Draining first (a signal), or a second Drain: the earlier deadline
        // holds; the runtime closes the stream at either.
        if let Phase::Drained { deadline: earlier } | Phase::Draining { deadline: earlier, .. } = self.phase {
            deadline = deadline.min(earlier);
        }
        self.phase = Phase::Drained { deadline };
        // Fires what is due already: the early cancellation when the
        // deadline is within a grace, everything when it has passed.
        self.on_tick(now);
    }

    /// A signal (SIGTERM, SIGINT). The first drains; the second stops now.
    pub(in crate::session) fn on_shutdown(&mut self, now: i64) {
        match self.phase {
            Phase::AwaitingConfig => self.stop_before_serving(),
            // Ready is out: the runtime may be dispatching already. Drain
            // once it acknowledges, unless a second signal says stop now.
            Phase::AwaitingAck if !self.signalled => {
                self.signalled = true;
                self.stop_after_ack = true;
            }
            Phase::AwaitingAck => {
                self.phase = Phase::Closed;
                self.actions.push_back(Action::Close);
                self.actions.push_back(Action::Exit(Err(SessionError::Interrupted)));
            }
            Phase::Closed => {}
            _ if !self.signalled => {
                // The runtime may signal before Drain, after it, or instead
                // of it: only a second signal interrupts.
                self.signalled = true;
                self.begin_draining(now);
            }
            _ => {
                // A second signal: stop now, answering for what is held.
                let ids: Vec<Arc<str>> = self.in_flight.keys().cloned().collect();
                for id in ids {
                    self.abandon(&id, CancelReason::Shutdown, "the process was interrupted");
                }
                self.phase = Phase::Closed;
                self.timers.clear();
                self.actions.push_back(Action::Close);
                self.actions.push_back(Action::Exit(Err(SessionError::Interrupted)));
            }
        }
    }

    /// The application asks to stop: drains as on a first signal, once.
    pub(in crate::session) fn on_stop(&mut self, now: i64) {
        match self.phase {
            Phase::AwaitingConfig => self.stop_before_serving(),
            Phase::AwaitingAck => self.stop_after_ack = true,
            Phase::Closed => {}
            _ => self.begin_draining(now),
        }
    }

    pub(in crate::session) fn stop_before_serving(&mut self) {
        self.phase = Phase::Closed;
        self.actions.push_back(Action::Close);
        self.actions.push_back(Action::Exit(Ok(())));
    }

    /// Tells the runtime this process is going away, with a deadline of now
    /// plus the shutdown grace (or the runtime's own drain deadline, when
    /// that is earlier), and finishes what it holds. Only once.
    pub(in crate::session) fn begin_draining(&mut self, now: i64) {
        if self.draining_sent {
            return;
        }
        self.draining_sent = true;
        let mut deadline = now.saturating_add(self.config.shutdown_grace_ms as i64);
        if let Phase::Drained { deadline: drain } = self.phase {
            deadline = deadline.min(drain);
            self.phase = Phase::Drained { deadline };
        } else {
            let settle_until = now.saturating_add(self.config.draining_settle_ms as i64).min(deadline);
            self.phase = Phase::Draining { deadline, settle_until };
        }
        self.send(handler_message::Frame::Draining(Draining { deadline_unix_ms: deadline }));
        self.on_tick(now);
    }
}
