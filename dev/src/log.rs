//! The dev runtime's log: one clear line per event (id, tag, outcome,
//! latency) and a line for everything else worth knowing, on stderr.

use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use celerity_testkit::dispatcher::EventOutcome;
use celerity_testkit::proto::v1::result::Outcome;

static NEXT: AtomicU64 = AtomicU64::new(1);

/// A process-unique id `{prefix}-{n}`.
pub fn next_id(prefix: &str) -> String {
    format!("{prefix}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Now, in Unix milliseconds.
pub fn unix_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as i64
}

/// Writes `[dev] {text}`.
pub fn line(text: &str) {
    // One write: the handler shares this stderr, and its lines must not land
    // inside ours.
    let line = format!("[dev] {text}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// The line for one event.
pub fn event_line(id: &str, tag: &str, outcome: &str, latency: Duration) -> String {
    format!("{id} {tag} -> {outcome} ({:.1} ms)", latency.as_secs_f64() * 1000.0)
}

/// Logs one event.
pub fn event(id: &str, tag: &str, outcome: &str, latency: Duration) {
    line(&event_line(id, tag, outcome, latency));
}

/// A few words on an outcome, whatever its source.
pub fn summary(outcome: &EventOutcome) -> String {
    match outcome {
        EventOutcome::Result(r) => match &r.outcome {
            Some(Outcome::Http(h)) => format!("HTTP {}", h.status),
            Some(Outcome::Websocket(a)) | Some(Outcome::Schedule(a)) if a.success => "ack".to_owned(),
            Some(Outcome::Websocket(a)) | Some(Outcome::Schedule(a)) => format!("ack failure: {}", a.error_message),
            Some(Outcome::Consumer(b)) if b.failures.is_empty() && b.success => "batch ok".to_owned(),
            Some(Outcome::Consumer(b)) if b.failures.is_empty() => "batch failed".to_owned(),
            Some(Outcome::Consumer(b)) => format!("{} record failure(s)", b.failures.len()),
            Some(Outcome::Custom(c)) if c.error_message.is_empty() => format!("output {} byte(s)", c.output.len()),
            Some(Outcome::Custom(c)) => format!("error: {}", c.error_message),
            Some(Outcome::Error(e)) => format!("HandlerError {}: {}", e.r#type, e.message),
            None => "a Result with no outcome".to_owned(),
        },
        EventOutcome::Shed(reason) => format!("shed ({reason})"),
        EventOutcome::Abandoned(reason) => format!("no answer ({reason})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celerity_testkit::dispatcher::ShedReason;

    #[test]
    fn event_lines_name_id_tag_outcome_and_latency() {
        assert_eq!(
            event_line("evt-1", "GET::/hello", "HTTP 200", Duration::from_micros(1500)),
            "evt-1 GET::/hello -> HTTP 200 (1.5 ms)"
        );
        assert_eq!(summary(&EventOutcome::Shed(ShedReason::QueueFull)), format!("shed ({})", ShedReason::QueueFull));
    }
}
