//! Unique ids and wall-clock time for generated events.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

static NEXT: AtomicU64 = AtomicU64::new(1);

/// A process-unique id, `{prefix}-{n}`.
pub(crate) fn next_id(prefix: &str) -> String {
    format!("{prefix}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Now, in Unix milliseconds.
pub(crate) fn now_unix_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as i64
}

/// `now + d`, in Unix milliseconds.
pub(crate) fn unix_ms_in(d: Duration) -> i64 {
    now_unix_ms().saturating_add(d.as_millis() as i64)
}
