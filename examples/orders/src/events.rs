//! Consumers: order events from the payment and shipping systems and from
//! this service itself, and audit records from elsewhere in the business.
//!
//! The order events arrive on the blueprint's `order-events` queue, which
//! links to the `orderEventsConsumer` consumer: `create_order` announces
//! every order it places there (`{"orderId", "type": "placed"}`, through
//! [`Announcements`]), and `process_order_event` confirms the order when
//! the announcement comes back, and writes its receipt to the blueprint's
//! bucket ([`crate::receipts`]). Locally that queue is a Redis stream, which
//! `celerity-dev run` reads into the consumer as the runtime does.
//!
//! The two consumer forms:
//!
//! - `process_order_event` runs once per record (`Record<OrderEvent>`). The
//!   SDK builds the batch's answer: a record whose handler returns `Err` (an
//!   unknown order, a change the order's status forbids) is named as failed
//!   by the id it arrived with, and stays on the queue to be delivered again;
//!   a record whose body does not decode as [`OrderEvent`] is named too, with
//!   the decoding error and the path of the field, without the handler
//!   running; a record whose handler panics fails alone. The other records
//!   are acknowledged.
//! - `audit_orders` takes the whole `Batch` and builds the answer itself
//!   with `batch.outcome()`, failing records by naming them. When the audit
//!   log cannot be written it returns `Err`, which fails the whole batch:
//!   nothing is acknowledged, and all of it is delivered again.

use celerity::config::{ConfigErrorKind, Configuration};
use celerity::consumer::{Batch, BatchOutcome, Record};
use celerity::resources::queue::{Message, Queue};
use celerity::resources::{ResourceError, ResourceKind};
use celerity::{Context, FromEvent, Kind, State, consumer};
use serde::Deserialize;
use serde_json::json;

use crate::chaos;
use crate::live::{Subscriptions, notify_subscribers};
use crate::model::{Order, Status};
use crate::receipts::Receipts;
use crate::store::{AuditLog, Store, audit_entry};

/// An event about an order, such as `{"orderId": "ord-1", "type": "paid"}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OrderEvent {
    /// The order it is about.
    pub order_id: String,
    /// What happened.
    #[serde(rename = "type")]
    pub kind: EventKind,
}

/// What happened to an order.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EventKind {
    /// The service placed it, and announced it on the queue.
    Placed,
    /// The payment went through.
    Paid,
    /// The order left the warehouse.
    Shipped,
    /// The payment system or the customer cancelled it.
    Cancelled,
}

impl EventKind {
    /// The status the event moves an order to; `None` for `placed`, which
    /// confirms the order instead.
    fn status(self) -> Option<Status> {
        match self {
            EventKind::Placed => None,
            EventKind::Paid => Some(Status::Paid),
            EventKind::Shipped => Some(Status::Shipped),
            EventKind::Cancelled => Some(Status::Cancelled),
        }
    }
}

/// Where placed orders are announced: the application's one queue (the
/// blueprint's `order-events`), when its resource links have a queue.
/// Without any (links that give the datastore and the bucket and no
/// queue, as a test may) orders are placed without being announced, and so
/// stay unconfirmed; links that cannot be read, or that name several
/// queues, are an error.
#[derive(Debug, Clone)]
pub struct Announcements(Option<Queue>);

impl Announcements {
    /// Announces on `queue`.
    pub fn to(queue: Queue) -> Self {
        Announcements(Some(queue))
    }

    /// Announces that `order` was placed: `{"orderId": ..., "type":
    /// "placed"}`, with the attribute `type`. The queue's id for the
    /// message, or `None` when there is no queue to announce on.
    pub async fn placed(&self, order: &Order) -> Result<Option<String>, ResourceError> {
        let Some(queue) = &self.0 else { return Ok(None) };
        let event = json!({"orderId": order.id, "type": "placed"});
        let message = Message::from(event.to_string()).with_attribute("type", "placed");
        queue.send(message).await.map(Some)
    }
}

impl<K: Kind> FromEvent<K> for Announcements {
    fn from_event(_event: &mut K::Event, cx: &Context) -> Result<Self, K::Rejection> {
        let Some(config) = cx.state::<Configuration>() else { return Ok(Announcements(None)) };
        let resources = config.resources();
        let has_queue = match resources.links() {
            Ok(links) => links.iter().any(|link| link.kind == ResourceKind::Queue),
            // No links at all: nothing to announce on.
            Err(error) if error.kind() == ConfigErrorKind::Link => false,
            Err(error) => return Err(celerity::Error::typed("ResourceError", error).into()),
        };
        if !has_queue {
            return Ok(Announcements(None));
        }
        resources
            .handle::<Queue>(None)
            .map(|queue| Announcements(Some(queue)))
            .map_err(|error| celerity::Error::typed("ResourceError", error).into())
    }
}

/// Applies one order event. An `Err` fails this record alone, with the
/// error's message; an event delivered again changes nothing and succeeds.
///
/// A `placed` event confirms the order and then writes its receipt. The
/// receipt is written every time the event comes, the same text each time:
/// a receipt that could not be written fails the record, and the event
/// delivered again writes it then.
#[consumer("source::order-events::processOrderEvents")]
async fn process_order_event(
    cx: Context,
    store: Store,
    receipts: Receipts,
    audit: State<AuditLog>,
    subscriptions: State<Subscriptions>,
    event: Record<OrderEvent>,
) -> celerity::Result<()> {
    chaos::strike("process_order_event", &event.order_id);
    let why = format!("message {} from {}", event.message_id(), event.source_id());
    let outcome = match event.kind.status() {
        Some(status) => store.set_status(&event.order_id, status, &audit, &why).await?,
        None => {
            let outcome = store.confirm(&event.order_id, &audit, &why).await?;
            let key = receipts.write(&outcome.order).await?;
            tracing::info!(order = %outcome.order.id, %key, "receipt written");
            outcome
        }
    };
    if outcome.changed {
        notify_subscribers(&cx, &subscriptions, &outcome.order).await;
    }
    Ok(())
}

/// An audit record another service sends, such as
/// `{"actor": "support:kim", "action": "refund.approved", "orderId": "ord-7"}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AuditRecord {
    actor: String,
    action: String,
    #[serde(default)]
    order_id: String,
}

/// Appends a batch of audit records to the audit log in one write.
///
/// A record that is not an [`AuditRecord`] is failed by name (built from the
/// record itself, so it can only name a record of this batch); the others are
/// written. If the log cannot be written, the whole batch fails.
#[consumer("source::order-audit::auditOrders")]
async fn audit_orders(audit: State<AuditLog>, batch: Batch) -> celerity::Result<BatchOutcome> {
    let mut outcome = batch.outcome();
    let mut lines = Vec::with_capacity(batch.len());
    for record in &batch {
        match record.json::<AuditRecord>() {
            Ok(entry) => {
                chaos::strike("audit_orders", &entry.order_id);
                let detail = format!("{} via {} ({})", entry.actor, batch.source_id(), record.message_id());
                lines.push(audit_entry(&entry.action, &entry.order_id, &detail));
            }
            Err(error) => {
                outcome.fail(record, error);
            }
        }
    }
    audit.append(&lines)?;
    Ok(outcome)
}
