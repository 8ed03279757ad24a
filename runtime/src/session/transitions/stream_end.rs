//! The runtime's half of the stream ending.

use std::sync::Arc;

use crate::session::{Action, CancelReason, Phase, Session, SessionError};

impl Session {
    pub(in crate::session) fn on_stream_ended(&mut self, error: Option<String>) {
        let expected = match self.phase {
            Phase::AwaitingConfig => Some("RuntimeConfig"),
            Phase::AwaitingAck => Some("ReadyAck"),
            _ => None,
        };
        let lost = self.abandon_unanswered();
        let result = match (expected, self.phase) {
            (Some(expected), _) => Err(SessionError::EndedDuringHandshake { expected, error }),
            (None, Phase::Drained { .. } | Phase::Draining { .. }) if lost == 0 => Ok(()),
            (None, Phase::Drained { .. } | Phase::Draining { .. }) => {
                // The runtime gave up on what was held; that is its call
                // during a drain, and not a failure of this process.
                self.actions.push_back(Action::Warn(format!(
                    "the runtime closed the stream while {lost} event(s) were still running; they were abandoned"
                )));
                Ok(())
            }
            _ => Err(SessionError::StreamEnded { in_flight: lost, error }),
        };
        self.phase = Phase::Closed;
        self.actions.push_back(Action::Exit(result));
    }

    /// Cancels and drops every event held, with no answer: nothing can be
    /// sent for them any more. Returns how many there were.
    pub(in crate::session) fn abandon_unanswered(&mut self) -> usize {
        let ids: Vec<Arc<str>> = self.in_flight.keys().cloned().collect();
        for id in &ids {
            self.actions.push_back(Action::Cancel { id: id.to_string(), reason: CancelReason::Shutdown });
            self.actions.push_back(Action::Abandon { id: id.to_string() });
            self.forget(id);
        }
        ids.len()
    }
}
