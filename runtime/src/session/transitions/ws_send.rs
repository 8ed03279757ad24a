//! WebSocket sends going out, and their acknowledgements coming back.

use celerity_proto::v1::{self as pb, HandlerMessage, handler_message};

use prost::Message as _;

use crate::session::warnings::Warning;
use crate::session::{Action, Session, WsOutcome, quoted};

impl Session {
    pub(in crate::session) fn send_ws(
        &mut self,
        now: i64,
        correlation_id: String,
        messages: Vec<pb::WsOutbound>,
        timeout_ms: u64,
    ) {
        if !self.acks_negotiated && !self.unconfirmed_said && messages.iter().any(|m| m.wait_for_ack) {
            self.unconfirmed_said = true;
            self.actions.push_back(Action::Warn(
                "the runtime predates protocol version negotiation and does not wait for a client's \
                 acknowledgement: a WebSocket send with wait_for_ack ends SendError::Unconfirmed once the \
                 runtime has written it"
                    .to_owned(),
            ));
        }
        let message = HandlerMessage {
            frame: Some(handler_message::Frame::WsSend(pb::WsSend {
                correlation_id: correlation_id.clone(),
                messages,
            })),
        };
        let bytes = message.encoded_len();
        let limit = self.config.max_message_bytes;
        if bytes > limit {
            // The transport's encoder would fail the whole stream on it.
            self.warn(format!(
                "a WebSocket send of {bytes} bytes is over the largest frame of {limit} bytes \
                 (CELERITY_MAX_MESSAGE_BYTES); it was not sent"
            ));
            self.actions.push_back(Action::WsDone { correlation_id, outcome: WsOutcome::TooLarge { bytes, limit } });
            return;
        }
        let deadline = now.saturating_add(i64::try_from(timeout_ms).unwrap_or(i64::MAX));
        if !self.ws_pending.insert(correlation_id.clone(), deadline) {
            self.warn(format!("a WebSocket send reused correlation id {}; it was not sent", quoted(&correlation_id)));
            self.actions.push_back(Action::WsDone { correlation_id, outcome: WsOutcome::Disconnected });
            return;
        }
        self.actions.push_back(Action::Send(message));
    }

    pub(in crate::session) fn on_ws_ack(&mut self, ack: pb::WsSendAck) {
        if self.ws_pending.remove(&ack.correlation_id) {
            let correlation_id = ack.correlation_id.clone();
            let outcome = if self.acks_negotiated { WsOutcome::Acked(ack) } else { WsOutcome::Written(ack) };
            self.actions.push_back(Action::WsDone { correlation_id, outcome });
            // The last thing a drain waited for may have been this.
            self.after_answers();
        } else {
            // Given up on already (timed out), or never sent by us.
            self.warn_about(Warning::UnawaitedAck, || {
                format!(
                    "the runtime acknowledged WebSocket send {}, which is not awaited (it timed out, or this process did not make it); ignored",
                    quoted(&ack.correlation_id)
                )
            });
        }
    }
}
