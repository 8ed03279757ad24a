//! Where orders live, the blueprint's `ordersStore` datastore, and the
//! audit log every change is written to first.
//!
//! A handler takes the orders as a [`Store`] argument: the datastore
//! `ordersStore` of the application's resource links (locally, under
//! `celerity-dev run`, a JSON file in the session's data folder; on AWS,
//! DynamoDB). [`Store`] is declared with `celerity::resource!`, so the
//! application checks when it starts that its links have `ordersStore`,
//! and refuses to start, naming it, where they do not. There is no
//! fallback that would keep orders in memory and lose them. The audit log
//! is shared through `App::state`: a handler takes `State<AuditLog>`.
//!
//! Every order is one item, keyed by its `id` (the blueprint's
//! `spec.keys.partitionKey`), with the fields [`Order`] serializes. The ids
//! come from one more item, [`ID_COUNTER`], whose `lastId` an update
//! increments, so two orders placed at once never share an id. Changes are
//! optimistic: an order is read with its revision, checked, audited, and
//! written back only where nobody changed it in between; where somebody
//! did, the change fails as [`ChangeError::Raced`] (an HTTP `409`, a failed
//! record that the queue delivers again).

use std::fmt;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use celerity::resources::datastore::{Condition, Datastore, Key, Scan, Stored, Update, Write, attribute};
use celerity::resources::{Named, ResourceError, ResourceErrorKind};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::model::{Catalog, NewOrder, Order, Status, now_ms};

/// The blueprint's datastore of orders, by resource name: the one
/// [`Store`] is declared for.
pub const DATASTORE: &str = <Store as Named>::NAME;

/// The key of the item that counts the ids handed out. Orders are keyed
/// `ord-<n>`, so it is never one of theirs.
pub const ID_COUNTER: &str = "#order-ids";

celerity::resource! {
    /// The orders: a handle on the datastore `ordersStore` that keeps
    /// them. Cheap to clone.
    pub Store: Datastore = "ordersStore"
}

/// The item [`ID_COUNTER`] names.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Counter {
    id: String,
    last_id: u64,
}

/// Why an order could not be placed or changed.
#[derive(Debug)]
pub enum ChangeError {
    /// There is no order with this id.
    NotFound(String),
    /// The order's status does not allow the change.
    Conflict {
        /// The order.
        id: String,
        /// Its status.
        from: Status,
        /// The status asked for.
        to: Status,
    },
    /// The order is shipped or cancelled and can no longer change.
    Closed {
        /// The order.
        id: String,
        /// Its status.
        status: Status,
    },
    /// Another change was written between this one's read of the order and
    /// its write: the datastore refused the write, and nothing changed.
    Raced(String),
    /// The change could not be audited, so it was not made.
    Audit(AuditUnavailable),
    /// The datastore failed. (Boxed: it is the largest variant by far, and
    /// every `Result` of a change would carry its size.)
    Store(Box<ResourceError>),
}

impl fmt::Display for ChangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChangeError::NotFound(id) => write!(f, "no order {id:?}"),
            ChangeError::Conflict { id, from, to } => write!(f, "order {id:?} is {from} and cannot become {to}"),
            ChangeError::Closed { id, status } => write!(f, "order {id:?} is {status} and can no longer change"),
            ChangeError::Raced(id) => {
                write!(f, "order {id:?} was changed by another request meanwhile; read it again and retry")
            }
            ChangeError::Audit(error) => error.fmt(f),
            ChangeError::Store(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for ChangeError {}

impl From<AuditUnavailable> for ChangeError {
    fn from(error: AuditUnavailable) -> Self {
        ChangeError::Audit(error)
    }
}

impl From<ResourceError> for ChangeError {
    fn from(error: ResourceError) -> Self {
        ChangeError::Store(Box::new(error))
    }
}

/// What a change did: the order as it now is, and whether anything changed
/// (an event delivered again changes nothing).
#[derive(Debug)]
pub struct Changed {
    /// The order after the change.
    pub order: Order,
    /// Whether the change did anything.
    pub changed: bool,
}

/// What a change to a read order decided: to write it (after auditing
/// `entry`), or to leave it as it is.
enum Decision {
    Write { entry: String },
    Keep,
}

impl Store {
    /// The orders `datastore` keeps.
    pub fn on(datastore: Datastore) -> Self {
        Store(datastore)
    }

    /// Places a new order that `validate_order` accepted, auditing it first.
    /// An order whose audit fails leaves its id unused.
    pub async fn create(&self, new: NewOrder, catalog: &Catalog, audit: &AuditLog) -> Result<Order, ChangeError> {
        let items = catalog.price_lines(&new.items);
        let total_cents = items.iter().map(|line| line.line_total_cents).fold(0u64, u64::saturating_add);
        let id = format!("ord-{}", self.next_id().await?);
        let order = Order {
            id: id.clone(),
            customer: new.customer.trim().to_string(),
            items,
            tags: new.tags,
            status: Status::Pending,
            total_cents,
            version: 1,
            created_at_ms: now_ms(),
            cancelled_at_ms: None,
            confirmed_at_ms: None,
        };
        audit.append(&[audit_entry("order.created", &id, &format!("by {}", order.customer))])?;
        match self.0.put_with(&order, &Write::new().if_absent()).await {
            Ok(_) => Ok(order),
            Err(error) if error.kind() == ResourceErrorKind::ConditionFailed => Err(ChangeError::Raced(id)),
            Err(error) => Err(error.into()),
        }
    }

    /// The next number of the id counter: one more than the last handed
    /// out, made at 1 by the first order.
    async fn next_id(&self) -> Result<u64, ResourceError> {
        let key = Key::new(ID_COUNTER);
        let bump = Update::new().increment("lastId", 1);
        match self.0.update::<Counter>(&key, &bump).await {
            Ok(stored) => return Ok(stored.item.last_id),
            Err(error) if error.kind() == ResourceErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
        // The first order: the counter is made at 0, by whichever of two
        // first orders gets there first, and then incremented by both.
        let zero = Counter { id: ID_COUNTER.to_string(), last_id: 0 };
        match self.0.put_with(&zero, &Write::new().if_absent()).await {
            Ok(_) => {}
            Err(error) if error.kind() == ResourceErrorKind::ConditionFailed => {}
            Err(error) => return Err(error),
        }
        Ok(self.0.update::<Counter>(&key, &bump).await?.item.last_id)
    }

    /// The order with this id, read strongly consistent: what every change
    /// before the read wrote.
    pub async fn get(&self, id: &str) -> Result<Option<Order>, ResourceError> {
        Ok(self.stored(id).await?.map(|stored| stored.item))
    }

    async fn stored(&self, id: &str) -> Result<Option<Stored<Order>>, ResourceError> {
        if id == ID_COUNTER {
            return Ok(None);
        }
        self.0.get_stored::<Order>(&Key::new(id), true).await
    }

    /// Every order `filter` accepts, in the order of their ids (`ord-2`
    /// before `ord-10`). The datastore applies the filter as it scans, so
    /// only matching orders come back; the id counter, which has no
    /// `status`, never does.
    pub async fn list(&self, filter: Option<Condition>) -> Result<Vec<Order>, ResourceError> {
        let is_order = attribute("status").exists();
        let filter = match filter {
            Some(filter) => is_order.and(filter),
            None => is_order,
        };
        let mut scan = Scan::new().filter(filter).consistent();
        let mut orders: Vec<Order> = Vec::new();
        loop {
            let page = self.0.scan::<Order>(&scan).await?;
            orders.extend(page.items);
            match page.cursor {
                Some(cursor) => scan = scan.cursor(cursor),
                None => break,
            }
        }
        orders.sort_by(|a, b| (id_number(&a.id), &a.id).cmp(&(id_number(&b.id), &b.id)));
        Ok(orders)
    }

    /// Reads the order `id`, lets `decide` check it and change it, and
    /// writes it back, audited, where nobody changed it since the read.
    async fn change(
        &self,
        id: &str,
        audit: &AuditLog,
        decide: impl FnOnce(&mut Order) -> Result<Decision, ChangeError>,
    ) -> Result<Changed, ChangeError> {
        let Some(Stored { item: mut order, revision }) = self.stored(id).await? else {
            return Err(ChangeError::NotFound(id.to_string()));
        };
        let Decision::Write { entry } = decide(&mut order)? else {
            return Ok(Changed { order, changed: false });
        };
        audit.append(&[entry])?;
        order.version += 1;
        match self.0.put_with(&order, &Write::new().if_revision(&revision)).await {
            Ok(_) => Ok(Changed { order, changed: true }),
            Err(error) if error.kind() == ResourceErrorKind::ConditionFailed => Err(ChangeError::Raced(id.to_string())),
            Err(error) => Err(error.into()),
        }
    }

    /// Moves an order to `next`, auditing the change (with `why`) first.
    /// Moving it to the status it has already changes nothing.
    pub async fn set_status(
        &self,
        id: &str,
        next: Status,
        audit: &AuditLog,
        why: &str,
    ) -> Result<Changed, ChangeError> {
        self.change(id, audit, |order| {
            if !order.status.can_become(next) {
                return Err(ChangeError::Conflict { id: order.id.clone(), from: order.status, to: next });
            }
            if order.status == next {
                return Ok(Decision::Keep);
            }
            order.status = next;
            if next == Status::Cancelled {
                order.cancelled_at_ms = Some(now_ms());
            }
            Ok(Decision::Write { entry: audit_entry(&format!("order.{next}"), &order.id, why) })
        })
        .await
    }

    /// Confirms an order, auditing it (with `why`) first. Confirming it
    /// again changes nothing, so a `placed` event delivered twice is one
    /// confirmation.
    pub async fn confirm(&self, id: &str, audit: &AuditLog, why: &str) -> Result<Changed, ChangeError> {
        self.change(id, audit, |order| {
            if order.confirmed_at_ms.is_some() {
                return Ok(Decision::Keep);
            }
            order.confirmed_at_ms = Some(now_ms());
            Ok(Decision::Write { entry: audit_entry("order.confirmed", &order.id, why) })
        })
        .await
    }

    /// Replaces an order's tags, auditing the change first. A shipped or
    /// cancelled order keeps its tags.
    pub async fn set_tags(&self, id: &str, tags: Vec<String>, audit: &AuditLog) -> Result<Changed, ChangeError> {
        self.change(id, audit, |order| {
            if order.tags == tags {
                return Ok(Decision::Keep);
            }
            if matches!(order.status, Status::Shipped | Status::Cancelled) {
                return Err(ChangeError::Closed { id: order.id.clone(), status: order.status });
            }
            let entry = audit_entry("order.retagged", &order.id, &tags.join(","));
            order.tags = tags;
            Ok(Decision::Write { entry })
        })
        .await
    }

    /// Removes the orders cancelled at or before `cutoff_ms`, auditing the
    /// run (even when it removes nothing) before anything is removed.
    /// Returns the ids removed. Each delete holds only while the order is
    /// still cancelled, which it stays: a cancelled order never changes.
    pub async fn remove_cancelled_before(&self, cutoff_ms: u64, audit: &AuditLog) -> Result<Vec<String>, ChangeError> {
        let cancelled = attribute("status").eq(Status::Cancelled.to_string());
        let old_enough = attribute("cancelledAtMs").le(cutoff_ms);
        let doomed: Vec<String> =
            self.list(Some(cancelled.and(old_enough))).await?.into_iter().map(|order| order.id).collect();
        let mut entries: Vec<String> = doomed.iter().map(|id| audit_entry("order.removed", id, "cleanup")).collect();
        entries.push(audit_entry("cleanup.ran", "", &format!("removed {}", doomed.len())));
        audit.append(&entries)?;
        let still_cancelled = Write::new().condition(attribute("status").eq(Status::Cancelled.to_string()));
        for id in &doomed {
            match self.0.delete_with(&Key::new(id.as_str()), &still_cancelled).await {
                // Another run removed it first.
                Err(error) if error.kind() == ResourceErrorKind::ConditionFailed => {}
                answer => answer?,
            }
        }
        Ok(doomed)
    }
}

/// The number of an `ord-<n>` id, for ordering ids by it.
fn id_number(id: &str) -> Option<u64> {
    id.strip_prefix("ord-").and_then(|number| number.parse().ok())
}

/// One audit line: what happened, to which order, and why.
pub fn audit_entry(what: &str, order_id: &str, detail: &str) -> String {
    json!({"atMs": now_ms(), "what": what, "orderId": order_id, "detail": detail}).to_string()
}

/// The audit log: one JSON line per change, appended to the file named by
/// `ORDERS_AUDIT_LOG`, or written to the process log (at debug level) when
/// it is not set.
///
/// Every change is audited before it is made, so a log that cannot be written
/// stops changes: the handlers then fail in their kind's own way (a
/// `HandlerError` for HTTP, a failed record or batch for consumers, a failed
/// `Ack` for the schedule).
#[derive(Debug)]
pub struct AuditLog {
    file: Option<PathBuf>,
    writing: Mutex<()>,
}

impl AuditLog {
    /// The log `ORDERS_AUDIT_LOG` names, if any.
    pub fn from_env() -> Self {
        AuditLog { file: std::env::var_os("ORDERS_AUDIT_LOG").map(PathBuf::from), writing: Mutex::new(()) }
    }

    /// Appends `lines`, all or nothing.
    pub fn append(&self, lines: &[String]) -> Result<(), AuditUnavailable> {
        let Some(path) = &self.file else {
            for line in lines {
                tracing::debug!(target: "audit", "{line}");
            }
            return Ok(());
        };
        let mut text = String::new();
        for line in lines {
            text.push_str(line);
            text.push('\n');
        }
        let _writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut file| file.write_all(text.as_bytes()))
            .map_err(|error| {
                // The path and the system's error are for whoever runs the
                // service, not for its callers: the error's text reaches them
                // (an HTTP handler's unhandled error is the body of the
                // runtime's 500), so they go to the log alone.
                tracing::error!(path = %path.display(), %error, "the audit log cannot be written");
                AuditUnavailable
            })
    }
}

/// The audit log could not be written.
///
/// Its text names neither the file nor the system's error, and it has no
/// `source`: the SDK answers an error with its whole chain of sources, and
/// this text is answered to callers. [`AuditLog::append`] logs both instead.
#[derive(Debug)]
pub struct AuditUnavailable;

impl fmt::Display for AuditUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the audit log is unavailable, so the change was not made")
    }
}

impl std::error::Error for AuditUnavailable {}

#[cfg(test)]
mod tests {
    use celerity::resources::datastore::KeySchema;
    use celerity::testing::TestDatastore;

    use super::*;
    use crate::model::NewItem;

    fn store() -> (Store, TestDatastore) {
        let memory = TestDatastore::new(DATASTORE, KeySchema::new("id"));
        (Store::on(memory.datastore()), memory)
    }

    fn new_order(customer: &str) -> NewOrder {
        NewOrder { customer: customer.into(), items: vec![NewItem { sku: "latte".into(), quantity: 1 }], tags: vec![] }
    }

    fn audit() -> AuditLog {
        AuditLog { file: None, writing: Mutex::new(()) }
    }

    #[tokio::test]
    async fn ids_count_up_from_one_and_the_counter_is_no_order() {
        let (store, _) = store();
        let (catalog, audit) = (Catalog::standard(), audit());
        for expected in ["ord-1", "ord-2", "ord-3"] {
            assert_eq!(store.create(new_order("Ada"), &catalog, &audit).await.unwrap().id, expected);
        }
        let listed: Vec<String> = store.list(None).await.unwrap().into_iter().map(|order| order.id).collect();
        assert_eq!(listed, ["ord-1", "ord-2", "ord-3"]);
        assert!(store.get(ID_COUNTER).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn a_change_written_in_between_makes_a_change_fail_and_change_nothing() {
        let (store, memory) = store();
        let (catalog, audit) = (Catalog::standard(), audit());
        let order = store.create(new_order("Ada"), &catalog, &audit).await.unwrap();
        let id = order.id.clone();
        // Another request pays the order after this change has read it and
        // before it writes it back.
        let result = store
            .change(&id, &audit, |read| {
                let mut paid = read.clone();
                paid.status = Status::Paid;
                let other = Store::on(memory.datastore());
                std::thread::scope(|scope| {
                    scope.spawn(|| {
                        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
                        runtime.block_on(other.0.put(&paid)).unwrap();
                    });
                });
                read.status = Status::Cancelled;
                Ok(Decision::Write { entry: audit_entry("order.cancelled", &read.id, "test") })
            })
            .await;
        assert!(matches!(&result, Err(ChangeError::Raced(raced)) if *raced == id), "{result:?}");
        let stored = store.get(&id).await.unwrap().unwrap();
        assert_eq!((stored.status, stored.version), (Status::Paid, 1), "the other request's write stands");
    }
}
