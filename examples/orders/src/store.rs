//! Where orders live, and the audit log every change is written to first.
//!
//! Both are shared with every handler through `App::state`: a handler takes
//! `State<Store>` or `State<AuditLog>` as an argument.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde_json::json;

use crate::model::{Catalog, NewOrder, Order, Status, now_ms};

/// The orders, in memory.
///
/// A std `Mutex` is enough: no handler holds it across an `.await`, and each
/// change is checked in full before it is applied, so the data stays
/// consistent even if a handler panics elsewhere.
#[derive(Debug, Default)]
pub struct Store {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    orders: BTreeMap<String, Order>,
    last_id: u64,
}

/// Why an order could not be changed.
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
    /// The change could not be audited, so it was not made.
    Audit(AuditUnavailable),
}

impl fmt::Display for ChangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChangeError::NotFound(id) => write!(f, "no order {id:?}"),
            ChangeError::Conflict { id, from, to } => write!(f, "order {id:?} is {from} and cannot become {to}"),
            ChangeError::Closed { id, status } => write!(f, "order {id:?} is {status} and can no longer change"),
            ChangeError::Audit(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for ChangeError {}

impl From<AuditUnavailable> for ChangeError {
    fn from(error: AuditUnavailable) -> Self {
        ChangeError::Audit(error)
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

impl Store {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Places a new order that `validate_order` accepted, auditing it first.
    pub fn create(&self, new: NewOrder, catalog: &Catalog, audit: &AuditLog) -> Result<Order, AuditUnavailable> {
        let items = catalog.price_lines(&new.items);
        let total_cents = items.iter().map(|line| line.line_total_cents).fold(0u64, u64::saturating_add);
        let mut inner = self.lock();
        let id = format!("ord-{}", inner.last_id + 1);
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
        inner.last_id += 1;
        inner.orders.insert(id, order.clone());
        Ok(order)
    }

    /// The order with this id.
    pub fn get(&self, id: &str) -> Option<Order> {
        self.lock().orders.get(id).cloned()
    }

    /// Every order `keep` accepts, by id.
    pub fn list(&self, keep: impl Fn(&Order) -> bool) -> Vec<Order> {
        self.lock().orders.values().filter(|order| keep(order)).cloned().collect()
    }

    /// Moves an order to `next`, auditing the change (with `why`) first.
    /// Moving it to the status it has already changes nothing.
    pub fn set_status(&self, id: &str, next: Status, audit: &AuditLog, why: &str) -> Result<Changed, ChangeError> {
        let mut inner = self.lock();
        let order = inner.orders.get_mut(id).ok_or_else(|| ChangeError::NotFound(id.to_string()))?;
        if !order.status.can_become(next) {
            return Err(ChangeError::Conflict { id: id.to_string(), from: order.status, to: next });
        }
        if order.status == next {
            return Ok(Changed { order: order.clone(), changed: false });
        }
        audit.append(&[audit_entry(&format!("order.{next}"), id, why)])?;
        order.status = next;
        order.version += 1;
        if next == Status::Cancelled {
            order.cancelled_at_ms = Some(now_ms());
        }
        Ok(Changed { order: order.clone(), changed: true })
    }

    /// Confirms an order, auditing it (with `why`) first. Confirming it
    /// again changes nothing, so a `placed` event delivered twice is one
    /// confirmation.
    pub fn confirm(&self, id: &str, audit: &AuditLog, why: &str) -> Result<Changed, ChangeError> {
        let mut inner = self.lock();
        let order = inner.orders.get_mut(id).ok_or_else(|| ChangeError::NotFound(id.to_string()))?;
        if order.confirmed_at_ms.is_some() {
            return Ok(Changed { order: order.clone(), changed: false });
        }
        audit.append(&[audit_entry("order.confirmed", id, why)])?;
        order.confirmed_at_ms = Some(now_ms());
        order.version += 1;
        Ok(Changed { order: order.clone(), changed: true })
    }

    /// Replaces an order's tags, auditing the change first. A shipped or
    /// cancelled order keeps its tags.
    pub fn set_tags(&self, id: &str, tags: Vec<String>, audit: &AuditLog) -> Result<Changed, ChangeError> {
        let mut inner = self.lock();
        let order = inner.orders.get_mut(id).ok_or_else(|| ChangeError::NotFound(id.to_string()))?;
        if order.tags == tags {
            return Ok(Changed { order: order.clone(), changed: false });
        }
        if matches!(order.status, Status::Shipped | Status::Cancelled) {
            return Err(ChangeError::Closed { id: id.to_string(), status: order.status });
        }
        audit.append(&[audit_entry("order.retagged", id, &tags.join(","))])?;
        order.tags = tags;
        order.version += 1;
        Ok(Changed { order: order.clone(), changed: true })
    }

    /// Removes the orders cancelled at or before `cutoff_ms`, auditing the
    /// run (even when it removes nothing) before anything is removed.
    /// Returns the ids removed.
    pub fn remove_cancelled_before(&self, cutoff_ms: u64, audit: &AuditLog) -> Result<Vec<String>, AuditUnavailable> {
        let mut inner = self.lock();
        let doomed: Vec<String> = inner
            .orders
            .values()
            .filter(|order| {
                order.status == Status::Cancelled && order.cancelled_at_ms.is_some_and(|at| at <= cutoff_ms)
            })
            .map(|order| order.id.clone())
            .collect();
        let mut entries: Vec<String> = doomed.iter().map(|id| audit_entry("order.removed", id, "cleanup")).collect();
        entries.push(audit_entry("cleanup.ran", "", &format!("removed {}", doomed.len())));
        audit.append(&entries)?;
        for id in &doomed {
            inner.orders.remove(id);
        }
        Ok(doomed)
    }
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
