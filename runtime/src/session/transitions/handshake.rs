//! `RuntimeConfig` and `ReadyAck`: binding the handlers, sending `Ready`, and
//! starting to serve (or failing) on the runtime's answer.

use celerity_proto::v1::{self as pb, handler_message};

use crate::session::{Action, Phase, Session, SessionError, handshake};

impl Session {
    pub(in crate::session) fn on_config(&mut self, config: pb::RuntimeConfig) {
        if let Err(error) = handshake::check_version(&config) {
            return self.fail(error);
        }
        let binding = match handshake::bind(&self.config.handlers, &config) {
            Ok(binding) => binding,
            Err(error) => return self.fail(error),
        };
        self.acks_negotiated = config.protocol_version.is_some();
        if !self.acks_negotiated {
            self.actions.push_back(Action::UnversionedRuntime);
        }
        let ready = handshake::ready(&self.config.handlers, &binding, self.credit.window(), &self.config.sdk_version);
        self.actions.push_back(Action::Report(binding.report));
        self.by_tag = binding.by_tag;
        self.tags = binding.tags;
        self.send(handler_message::Frame::Ready(ready));
        self.phase = Phase::AwaitingAck;
    }

    pub(in crate::session) fn on_ready_ack(&mut self, ack: pb::ReadyAck) {
        if ack.accepted {
            self.phase = Phase::Serving;
            self.actions.push_back(Action::Serving);
            if let Some(additional) = self.pending_grant.take() {
                self.send_grant(additional);
            }
            for (correlation_id, messages, timeout_ms) in std::mem::take(&mut self.ws_queued) {
                self.send_ws(self.now, correlation_id, messages, timeout_ms);
            }
            if self.stop_after_ack {
                self.begin_draining(self.now);
            }
            return;
        }
        let reason = pb::ready_ack::RefusedReason::try_from(ack.refused_reason)
            .unwrap_or(pb::ready_ack::RefusedReason::Unspecified);
        self.fail(SessionError::Refused { reason, unknown_tags: ack.unknown_tags, unhandled_tags: ack.unhandled_tags });
    }
}
