//! The nightly cleanup: a schedule handler.
//!
//! It shows the trigger's metadata, typed JSON input with a default when the
//! schedule sets none, and the two answers a schedule gets: `Ok` acknowledges
//! the trigger, `Err` fails it (a failed `Ack` carrying the message) so that
//! the schedule's own rules deliver it again. Input that does not fit
//! `CleanupInput` is refused by the SDK the same way, naming the field.

use celerity::schedule::Trigger;
use celerity::{Json, State, schedule_handler};
use serde::Deserialize;

use crate::chaos;
use crate::model::now_ms;
use crate::store::{AuditLog, Store};

/// How old a cancelled order must be before it is removed, when the
/// schedule's input does not say: seven days.
const DEFAULT_OLDER_THAN_SECONDS: u64 = 7 * 24 * 60 * 60;

/// The schedule's input, such as `{"olderThanSeconds": 86400}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CleanupInput {
    older_than_seconds: Option<u64>,
}

/// Removes the orders cancelled more than `olderThanSeconds` ago. Every run
/// is audited; when the audit log cannot be written nothing is removed and
/// the trigger fails.
#[schedule_handler("source::nightly-cleanup::cleanupOrders")]
async fn cleanup_orders(
    trigger: Trigger,
    store: Store,
    audit: State<AuditLog>,
    Json(input): Json<Option<CleanupInput>>,
) -> celerity::Result<()> {
    chaos::strike("cleanup_orders", trigger.message_id());
    let older_than_seconds = input.and_then(|input| input.older_than_seconds).unwrap_or(DEFAULT_OLDER_THAN_SECONDS);
    let cutoff_ms = now_ms().saturating_sub(older_than_seconds.saturating_mul(1000));
    let removed = store.remove_cancelled_before(cutoff_ms, &audit).await?;
    tracing::info!(
        schedule = %trigger.schedule_id(),
        expression = %trigger.schedule(),
        message_id = %trigger.message_id(),
        removed = removed.len(),
        "cleanup removed the orders cancelled more than {older_than_seconds} s ago: {removed:?}"
    );
    Ok(())
}
