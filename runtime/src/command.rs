//! What reaches the stream's driver from outside it: the application's
//! requests, WebSocket sends and handler completions, on one channel.

use std::sync::Arc;

use celerity_proto::v1::WsOutbound;
use prost::DecodeError;
use tokio::sync::oneshot;

use crate::reply::Reply;
use crate::session::{Input, WsOutcome};

/// What reaches the driver from outside the stream's task: the application's
/// requests and handler completions, on one channel so that a handler's
/// requests arrive before its completion.
#[derive(Debug)]
pub(crate) enum Command {
    Input(Input),
    /// A WebSocket send, and where to report how it ended.
    WsSend {
        correlation_id: String,
        messages: Vec<WsOutbound>,
        timeout_ms: u64,
        reply: oneshot::Sender<WsOutcome>,
    },
    /// A handler task finished.
    Completed {
        id: Arc<str>,
        /// Which task for that id: a late completion of an earlier event with
        /// the same id is told apart by it.
        generation: u64,
        /// The handler's outcome; an error when the event's source did not
        /// decode, and no handler ran.
        outcome: Result<Reply, DecodeError>,
    },
}
