//! The passing of time: handshake timeouts, deadlines, cancel graces, drain
//! deadlines and WebSocket send timeouts.

use std::cmp::Reverse;
use std::sync::Arc;

use crate::session::{Action, CancelReason, Phase, Session, SessionError, WsOutcome};

impl Session {
    pub(in crate::session) fn on_tick(&mut self, now: i64) {
        if self.phase != Phase::Closed {
            self.report_counted(now);
        }
        match self.phase {
            Phase::AwaitingConfig | Phase::AwaitingAck => {
                let waited = now.saturating_sub(self.started_at);
                if waited >= self.config.handshake_timeout_ms as i64 {
                    let expected = if self.phase == Phase::AwaitingConfig { "RuntimeConfig" } else { "ReadyAck" };
                    self.fail(SessionError::HandshakeTimeout { expected, waited_ms: waited.max(0) as u64 });
                }
                return;
            }
            Phase::Closed => return,
            _ => {}
        }
        for correlation_id in self.ws_pending.expire(now) {
            self.actions.push_back(Action::WsDone { correlation_id, outcome: WsOutcome::TimedOut });
        }
        let grace = self.config.cancel_grace_ms as i64;
        while let Some(Reverse((at, _))) = self.timers.peek() {
            if *at > now {
                break;
            }
            let Some(Reverse((at, id))) = self.timers.pop() else {
                break;
            };
            let Some(event) = self.in_flight.get_mut(&id) else {
                continue;
            };
            if event.timer != Some(at) {
                continue;
            }
            match event.cancelled {
                None => {
                    // The deadline passed: cancel, and abandon after the grace.
                    event.cancelled = Some(CancelReason::DeadlineExceeded);
                    let abandon_at = event.deadline.saturating_add(grace).max(now);
                    event.timer = Some(abandon_at);
                    self.timers.push(Reverse((abandon_at, Arc::clone(&id))));
                    self.actions
                        .push_back(Action::Cancel { id: id.to_string(), reason: CancelReason::DeadlineExceeded });
                }
                Some(reason) => self.abandon(&id, reason, "did not finish"),
            }
        }
        if let Phase::Drained { deadline } | Phase::Draining { deadline, .. } = self.phase {
            if now >= self.drain_cancel_at(deadline) {
                // One grace before the deadline: what is still held is told
                // to stop, so a handler that honours it answers for itself
                // in time. Dropped at the deadline, not before.
                let mut ids: Vec<Arc<str>> =
                    self.in_flight.iter().filter(|(_, e)| e.cancelled.is_none()).map(|(id, _)| id.clone()).collect();
                ids.sort();
                for id in ids {
                    if let Some(event) = self.in_flight.get_mut(&id) {
                        event.cancelled = Some(CancelReason::Shutdown);
                        event.timer = None;
                    }
                    self.actions.push_back(Action::Cancel { id: id.to_string(), reason: CancelReason::Shutdown });
                }
            }
            if now >= deadline {
                let ids: Vec<Arc<str>> = self.in_flight.keys().cloned().collect();
                for id in ids {
                    self.abandon(&id, CancelReason::Shutdown, "was still running at the drain deadline");
                }
            }
        }
        self.after_answers();
    }

    /// When held work is cancelled ahead of a drain deadline.
    pub(in crate::session) fn drain_cancel_at(&self, deadline: i64) -> i64 {
        deadline.saturating_sub(self.config.cancel_grace_ms as i64)
    }

    pub(in crate::session) fn drop_stale_timers(&mut self) {
        while let Some(Reverse((at, id))) = self.timers.peek() {
            let live = self.in_flight.get(id).is_some_and(|e| e.timer == Some(*at));
            if live {
                break;
            }
            self.timers.pop();
        }
    }
}
