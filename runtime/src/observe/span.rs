//! The span each event's handler runs in.

use std::collections::HashMap;

use tracing::Span;

use super::outcome::EventOutcome;
use super::trace_context;
use crate::registry::HandlerKind;

/// The span's target: filter on it (`RUST_LOG=celerity::event=trace`).
pub const SPAN_TARGET: &str = "celerity::event";
/// The span's name.
pub const SPAN_NAME: &str = "celerity.event";

/// The OpenTelemetry span kind for a handler kind: the event came to this
/// process from a caller (`server`) or from a queue or a clock (`consumer`).
#[cfg(feature = "opentelemetry")]
fn otel_kind(kind: HandlerKind) -> &'static str {
    match kind {
        HandlerKind::Consumer | HandlerKind::Schedule => "consumer",
        HandlerKind::Http | HandlerKind::WebSocket | HandlerKind::Custom => "server",
    }
}

// One call site per level (a span's level is fixed where it is declared),
// its fields given literally, as `tracing::span!` takes them: the
// `opentelemetry` feature's fields are the `$extra` ones.
macro_rules! event_span_with {
    ($level:expr, $tag:expr, $id:expr, $kind:expr, $handler:expr; $($extra:tt)*) => {
        tracing::span!(
            target: "celerity::event",
            parent: None,
            $level,
            "celerity.event",
            tag = $tag,
            event_id = $id,
            kind = $kind.as_str(),
            handler = $handler,
            trace_id = tracing::field::Empty,
            parent_span_id = tracing::field::Empty,
            outcome = tracing::field::Empty,
            $($extra)*
        )
    };
}

#[cfg(not(feature = "opentelemetry"))]
macro_rules! event_span {
    ($level:expr, $tag:expr, $id:expr, $kind:expr, $handler:expr) => {
        event_span_with!($level, $tag, $id, $kind, $handler;)
    };
}

#[cfg(feature = "opentelemetry")]
macro_rules! event_span {
    ($level:expr, $tag:expr, $id:expr, $kind:expr, $handler:expr) => {
        event_span_with!(
            $level, $tag, $id, $kind, $handler;
            "otel.name" = $tag,
            "otel.kind" = otel_kind($kind),
            "otel.status_code" = tracing::field::Empty,
        )
    };
}

/// A new root span for one event, at INFO when the handler is traced and at
/// TRACE otherwise, with the caller's trace context recorded (and, with the
/// `opentelemetry` feature, set as its parent).
pub(crate) fn event_span(
    traced: bool,
    tag: &str,
    event_id: &str,
    kind: HandlerKind,
    handler: &str,
    trace_context: &HashMap<String, String>,
) -> Span {
    // Both come from the runtime, and appear in every line logged inside
    // the span: quoted at most in part, as every echo of an outside value.
    let (tag, event_id) = (crate::excerpt::excerpt(tag), crate::excerpt::excerpt(event_id));
    let (tag, event_id): (&str, &str) = (&tag, &event_id);
    let span = if traced {
        event_span!(tracing::Level::INFO, tag, event_id, kind, handler)
    } else {
        event_span!(tracing::Level::TRACE, tag, event_id, kind, handler)
    };
    if span.is_disabled() {
        return span;
    }
    match trace_context::from_map(trace_context) {
        None => {}
        Some(Ok(parent)) => {
            span.record("trace_id", parent.trace_id_hex());
            span.record("parent_span_id", parent.parent_id_hex());
            #[cfg(feature = "opentelemetry")]
            {
                use tracing_opentelemetry::OpenTelemetrySpanExt;
                let state = trace_context::lookup(trace_context, "tracestate");
                // Fails only without an OpenTelemetry layer, which is fine.
                let _ = span.set_parent(super::otel::context_of(&parent, state));
            }
        }
        Some(Err(error)) => {
            tracing::debug!(parent: &span, %error, "the event's traceparent is malformed; it starts a trace of its own");
        }
    }
    span
}

/// Records how the event was answered on its span.
pub(crate) fn record_outcome(span: &Span, outcome: EventOutcome) {
    span.record("outcome", outcome.as_str());
    #[cfg(feature = "opentelemetry")]
    if outcome.is_failure() {
        span.record("otel.status_code", "error");
    }
}
