//! Consumers: order events from the payment and shipping systems, and audit
//! records from elsewhere in the business. The two consumer forms:
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

use celerity::consumer::{Batch, BatchOutcome, Record};
use celerity::{Context, State, consumer};
use serde::Deserialize;

use crate::chaos;
use crate::live::{Subscriptions, notify_subscribers};
use crate::model::Status;
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
    /// The payment went through.
    Paid,
    /// The order left the warehouse.
    Shipped,
    /// The payment system or the customer cancelled it.
    Cancelled,
}

impl EventKind {
    fn status(self) -> Status {
        match self {
            EventKind::Paid => Status::Paid,
            EventKind::Shipped => Status::Shipped,
            EventKind::Cancelled => Status::Cancelled,
        }
    }
}

/// Applies one order event. An `Err` fails this record alone, with the
/// error's message; an event delivered again changes nothing and succeeds.
#[consumer("source::order-events::processOrderEvents")]
async fn process_order_event(
    cx: Context,
    store: State<Store>,
    audit: State<AuditLog>,
    subscriptions: State<Subscriptions>,
    event: Record<OrderEvent>,
) -> celerity::Result<()> {
    chaos::strike("process_order_event", &event.order_id);
    let why = format!("message {} from {}", event.message_id(), event.source_id());
    let outcome = store.set_status(&event.order_id, event.kind.status(), &audit, &why)?;
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
