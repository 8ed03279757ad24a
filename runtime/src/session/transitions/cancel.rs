//! A runtime `Cancel`, and answering for a handler that will not.

use std::cmp::Reverse;
use std::sync::Arc;

use celerity_proto::v1::{self as pb, result::Outcome};

use crate::session::{Action, CancelReason, Session};

impl Session {
    pub(in crate::session) fn on_cancel(&mut self, now: i64, id: &str, reason: CancelReason) {
        let grace = self.config.cancel_grace_ms as i64;
        let Some((key, event)) = self.in_flight.get_key_value(id) else {
            // Crossed with our result on the wire: nothing to do.
            return;
        };
        if event.cancelled.is_some() {
            return;
        }
        let key = Arc::clone(key);
        let Some(event) = self.in_flight.get_mut(id) else {
            return;
        };
        if event.cancelled.is_some() {
            return;
        }
        event.cancelled = Some(reason);
        let abandon_at = now.saturating_add(grace);
        event.timer = Some(abandon_at);
        self.timers.push(Reverse((abandon_at, key)));
        self.actions.push_back(Action::Cancel { id: id.to_string(), reason });
    }

    /// Answers for a handler that will not: fires its cancellation if that
    /// has not happened, drops its future, and sends the error.
    pub(in crate::session) fn abandon(&mut self, id: &str, reason: CancelReason, what: &str) {
        let Some(event) = self.in_flight.get(id) else {
            return;
        };
        if event.cancelled.is_none() {
            self.actions.push_back(Action::Cancel { id: id.to_string(), reason });
        }
        self.actions.push_back(Action::Abandon { id: id.to_string() });
        let message = match reason {
            CancelReason::DeadlineExceeded => format!("the handler ran past its deadline and {what}"),
            other => format!("the handler was cancelled ({other}) and {what}"),
        };
        let outcome =
            Outcome::Error(pb::HandlerError { message, r#type: reason.error_type().to_string(), stack: String::new() });
        self.answer(id, outcome);
    }
}
