//! Live order updates over WebSocket.
//!
//! A client connects (`$connect`), subscribes to orders by sending
//! `{"event": "subscribe", "data": {"orderIds": ["ord-1"]}}` (route
//! `subscribe`), and is sent each change to those orders until it
//! disconnects (`$disconnect`). The handlers show the three kinds of route,
//! the message's `connection_id`, and typed JSON read from the message; each
//! answers with an `Ack`, a failed one carrying the error's message.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};

use celerity::websocket::{Message, Outbound};
use celerity::{Context, State, websocket_handler};
use serde::Deserialize;
use serde_json::json;

use crate::chaos;
use crate::model::Order;
use crate::store::Store;

/// Which orders each open connection follows, by connection id.
#[derive(Debug, Default)]
pub struct Subscriptions {
    by_connection: Mutex<HashMap<String, BTreeSet<String>>>,
}

impl Subscriptions {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, BTreeSet<String>>> {
        self.by_connection.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The connections following `order_id`, in a stable order.
    fn following(&self, order_id: &str) -> Vec<String> {
        let mut connections: Vec<String> = self
            .lock()
            .iter()
            .filter(|(_, orders)| orders.contains(order_id))
            .map(|(connection, _)| connection.clone())
            .collect();
        connections.sort();
        connections
    }
}

/// `$connect`: a new connection, following nothing yet.
#[websocket_handler("event::$connect")]
async fn on_connect(subscriptions: State<Subscriptions>, message: Message) {
    subscriptions.lock().entry(message.connection_id().to_string()).or_default();
}

/// `$disconnect`: the connection is gone, and so are its subscriptions.
#[websocket_handler("event::$disconnect")]
async fn on_disconnect(subscriptions: State<Subscriptions>, message: Message) {
    subscriptions.lock().remove(message.connection_id());
}

/// The message a client sends on the `subscribe` route.
#[derive(Debug, Deserialize)]
struct Subscribe {
    data: SubscribeData,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SubscribeData {
    order_ids: Vec<String>,
}

/// `subscribe`: follows the orders named. A message that does not fit
/// [`Subscribe`] fails the `Ack` naming the field, and so does an order that
/// does not exist (subscribing to nothing would be a silent mistake).
#[websocket_handler("event::subscribe")]
async fn subscribe(store: Store, subscriptions: State<Subscriptions>, message: Message) -> celerity::Result<()> {
    let request: Subscribe = message.json()?;
    for id in &request.data.order_ids {
        chaos::strike("subscribe", id);
        if store.get(id).await?.is_none() {
            return Err(celerity::Error::typed(
                "UnknownOrder",
                format!("cannot subscribe to order {id:?}: no such order"),
            ));
        }
    }
    let mut subscriptions = subscriptions.lock();
    let following = subscriptions.entry(message.connection_id().to_string()).or_default();
    following.extend(request.data.order_ids);
    tracing::info!(connection = %message.connection_id(), orders = ?following, "subscribed");
    Ok(())
}

/// Sends `order`, as it now is, to every connection following it:
/// `{"event": "orderUpdated", "data": <order>}`, each message asking its
/// client to acknowledge it (`wait_for_ack`), so that the runtime sends it
/// again until the client confirms it or the attempts run out.
///
/// The batch goes out through the SDK's WebSocket sender in a task of its
/// own: waiting for clients to acknowledge can take the runtime's whole
/// retry budget, and the HTTP caller or queue message that caused the change
/// should not wait for that. The message ids (`{order}:v{version}:{connection}`)
/// name an update a client can recognise; a message the runtime reports
/// failed is sent once more, with the same id, so a client that did get the
/// first one can tell it is a repeat.
pub async fn notify_subscribers(cx: &Context, subscriptions: &Subscriptions, order: &Order) {
    let update = json!({"event": "orderUpdated", "data": order});
    let mut batch = Vec::new();
    for connection in subscriptions.following(&order.id) {
        let message_id = format!("{}:v{}:{connection}", order.id, order.version);
        match Outbound::json(connection.clone(), &update) {
            Ok(message) => batch.push(message.message_id(message_id).wait_for_ack(true)),
            Err(error) => tracing::warn!(%connection, "the order update cannot be sent: {error}"),
        }
    }
    if batch.is_empty() {
        return;
    }
    let ws = cx.ws();
    let (order_id, version) = (order.id.clone(), order.version);
    tokio::spawn(async move {
        let failed = match ws.send_all(batch).await {
            Ok(report) => {
                tracing::info!(order = %order_id, version, subscribers = report.len(), "order update delivered");
                return;
            }
            Err(error) => {
                tracing::warn!(order = %order_id, version, "order update not delivered to all subscribers: {error}");
                error.retry_batch()
            }
        };
        if let Err(error) = ws.send_all(failed).await {
            tracing::warn!(order = %order_id, version, "order update retry failed: {error}");
        }
    });
}
