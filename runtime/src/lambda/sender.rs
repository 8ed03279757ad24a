//! WebSocket sends on Lambda: every `WsSender` (a handler's, or a
//! background task's from `App::handle`) hands its batch to the
//! application's command channel, as it does under the runtime; here each
//! message of it is posted to its connection through the Management API,
//! all at once, and the batch is acknowledged as the runtime would: a
//! failure per message, by its index in the batch.
//!
//! What the runtime adds on top, it cannot here: there is no client
//! acknowledgement (`wait_for_ack`) or notice of a lost message
//! (`inform_clients_on_loss`); a message succeeds when API Gateway accepts
//! it.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use celerity_proto::v1::{WsOutbound, WsSendAck, WsSendFailure};
use futures_util::future::join_all;
use tokio::sync::mpsc;

use super::management::{ENDPOINT_VARIABLE, ManagementApi};
use crate::command::Command;
use crate::session::WsOutcome;

/// Where the Management API of the function's WebSocket API is: the last
/// WebSocket event's (a function serves one invocation at a time, so that
/// is the one running), unless the environment names one.
#[derive(Debug, Clone, Default)]
pub(crate) struct Endpoint(Arc<Mutex<Option<String>>>);

impl Endpoint {
    pub(crate) fn set(&self, endpoint: String) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(endpoint);
    }

    fn get(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// Serves the sends that arrive on `commands` until every sender is gone;
/// the application's other requests (credit, shutdown) mean nothing on
/// Lambda, where the platform decides both, and are dropped.
pub(crate) async fn serve(mut commands: mpsc::UnboundedReceiver<Command>, api: Arc<ManagementApi>, endpoint: Endpoint) {
    while let Some(command) = commands.recv().await {
        let Command::WsSend { correlation_id, messages, timeout_ms, reply } = command else {
            continue;
        };
        let (api, endpoint) = (Arc::clone(&api), endpoint.clone());
        tokio::spawn(async move {
            let timeout = Duration::from_millis(timeout_ms);
            let outcome = match tokio::time::timeout(timeout, send(&api, &endpoint, correlation_id, messages)).await {
                // API Gateway accepting a post says nothing of the client:
                // a message sent with wait_for_ack stays unconfirmed.
                Ok(ack) => WsOutcome::Written(ack),
                Err(_) => WsOutcome::TimedOut,
            };
            let _ = reply.send(outcome);
        });
    }
}

/// Posts every message of a batch, and acknowledges it.
async fn send(
    api: &ManagementApi,
    endpoint: &Endpoint,
    correlation_id: String,
    messages: Vec<WsOutbound>,
) -> WsSendAck {
    let endpoint = api.endpoint_override.clone().or_else(|| endpoint.get());
    let posts = messages.into_iter().enumerate().map(|(index, message)| {
        let endpoint = endpoint.clone();
        async move {
            let result = match endpoint {
                Some(endpoint) => api.post_to_connection(&endpoint, &message.connection_id, message.message).await,
                None => Err(format!(
                    "no Management API endpoint is known: this function has served no WebSocket event, and \
                     {ENDPOINT_VARIABLE} is not set"
                )),
            };
            result.err().map(|error_message| WsSendFailure {
                index: u32::try_from(index).unwrap_or(u32::MAX),
                connection_id: message.connection_id,
                error_message,
            })
        }
    });
    let failures: Vec<WsSendFailure> = join_all(posts).await.into_iter().flatten().collect();
    WsSendAck { correlation_id, success: failures.is_empty(), failures }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use tokio::sync::oneshot;

    use super::*;

    #[tokio::test]
    async fn with_nowhere_to_post_each_message_fails_by_its_index() {
        let (commands, receiver) = mpsc::unbounded_channel();
        let api = Arc::new(ManagementApi::from_lookup(|_| None));
        tokio::spawn(serve(receiver, api, Endpoint::default()));
        let (reply, outcome) = oneshot::channel();
        let message = |id: &str| WsOutbound {
            connection_id: id.into(),
            message: Bytes::from_static(b"{}"),
            ..WsOutbound::default()
        };
        let _ = commands.send(Command::Input(crate::session::Input::Withhold));
        let _ = commands.send(Command::WsSend {
            correlation_id: "c-1".into(),
            messages: vec![message("a"), message("b")],
            timeout_ms: 60_000,
            reply,
        });
        let Ok(WsOutcome::Written(ack)) = outcome.await else { panic!("expected the posts' outcome") };
        assert_eq!((ack.correlation_id.as_str(), ack.success), ("c-1", false));
        let failed: Vec<(u32, &str)> = ack.failures.iter().map(|f| (f.index, f.connection_id.as_str())).collect();
        assert_eq!(failed, [(0, "a"), (1, "b")]);
        assert!(ack.failures[0].error_message.contains(ENDPOINT_VARIABLE), "{:?}", ack.failures[0]);
    }
}
