//! Names of frames, for messages.

use celerity_proto::v1::{HandlerMessage, handler_message};

/// The protocol name of a handler frame ("Ready", "Result", ...).
pub(crate) fn handler_frame_name(msg: &HandlerMessage) -> &'static str {
    match &msg.frame {
        Some(handler_message::Frame::Ready(_)) => "Ready",
        Some(handler_message::Frame::Result(_)) => "Result",
        Some(handler_message::Frame::Credit(_)) => "CreditGrant",
        Some(handler_message::Frame::WsSend(_)) => "WsSend",
        Some(handler_message::Frame::Draining(_)) => "Draining",
        None => "an empty HandlerMessage",
    }
}
