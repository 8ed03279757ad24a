//! OpenTelemetry: the caller's trace context as an OpenTelemetry parent, and
//! installing an exporter (feature `opentelemetry`).
//!
//! With this feature each event's span is given the caller's `traceparent` /
//! `tracestate` as its OpenTelemetry parent, through the
//! `tracing-opentelemetry` layer, so the spans a handler makes join the
//! caller's trace. Nothing is exported until the application installs that
//! layer with a tracer of its choosing: the SDK ships no exporter (an OTLP
//! exporter over gRPC would need `protoc` to build, and the choice of
//! exporter, endpoint and sampler is the application's).
//!
//! ```no_run
//! use celerity::observe::otel::{self, opentelemetry::trace::TracerProvider as _, opentelemetry_sdk};
//!
//! #[celerity::main]
//! async fn main() -> celerity::Result<()> {
//!     // Any exporter: OTLP over HTTP, stdout, a vendor's. Built with the
//!     // same `opentelemetry_sdk` version (re-exported here).
//!     let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
//!         // .with_batch_exporter(exporter)
//!         .build();
//!     otel::install(provider.tracer("orders"))?;
//!     celerity::run().await
//! }
//! ```
//!
//! [`install`] adds the layer to the SDK's default subscriber (the one that
//! writes the log to stderr). An application that installs its own `tracing`
//! subscriber adds `tracing_opentelemetry::layer().with_tracer(tracer)` to
//! it instead; the parent is set all the same.
//!
//! Spans are exported as the `tracing` filter lets them through: with the
//! default `RUST_LOG=info`, the spans of traced handlers (at INFO) are, and
//! the others (at TRACE) are not. See [`crate::observe`] for what decides
//! which handlers are traced.
//!
//! Inside a handler, [`parent_context`] gives the caller's context, and
//! [`current_trace_context`] the headers to send onward so that a call this
//! handler makes continues the trace.

use std::collections::HashMap;

use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};

use super::trace_context::{self, TraceParent};
use crate::context::Context;

pub use opentelemetry;
pub use opentelemetry_sdk;
pub use tracing_opentelemetry;

/// The OpenTelemetry context of the caller of the event `cx` runs for: a
/// remote parent built from its `traceparent` and `tracestate`, or an empty
/// context when it sent none (or a malformed one).
pub fn parent_context(cx: &Context) -> opentelemetry::Context {
    extract(cx.trace_context())
}

/// [`parent_context`] from a dispatch's `trace_context` map.
pub fn extract(trace_context: &HashMap<String, String>) -> opentelemetry::Context {
    match trace_context::from_map(trace_context) {
        Some(Ok(parent)) => context_of(&parent, trace_context::lookup(trace_context, "tracestate")),
        _ => opentelemetry::Context::new(),
    }
}

/// The context with `parent` as its remote span.
pub(crate) fn context_of(parent: &TraceParent, tracestate: Option<&str>) -> opentelemetry::Context {
    // A malformed tracestate is dropped; the traceparent still holds.
    let state = tracestate.and_then(|value| value.parse::<TraceState>().ok()).unwrap_or_default();
    let span = SpanContext::new(
        TraceId::from_bytes(parent.trace_id()),
        SpanId::from_bytes(parent.parent_id()),
        TraceFlags::new(parent.flags()) & TraceFlags::SAMPLED,
        true,
        state,
    );
    opentelemetry::Context::new().with_remote_span_context(span)
}

/// The `traceparent` and `tracestate` that carry `context` onward: empty
/// when it holds no valid span.
pub fn inject(context: &opentelemetry::Context) -> HashMap<String, String> {
    let span = context.span();
    let span = span.span_context();
    let mut headers = HashMap::new();
    if !span.is_valid() {
        return headers;
    }
    let flags = span.trace_flags() & TraceFlags::SAMPLED;
    headers.insert("traceparent".to_string(), format!("00-{}-{}-{:02x}", span.trace_id(), span.span_id(), flags));
    let state = span.trace_state().header();
    if !state.is_empty() {
        headers.insert("tracestate".to_string(), state);
    }
    headers
}

/// The headers that continue the trace of the current `tracing` span (a
/// handler's event span, or one inside it): empty without the
/// OpenTelemetry layer.
pub fn current_trace_context() -> HashMap<String, String> {
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    inject(&tracing::Span::current().context())
}

/// Adds the `tracing-opentelemetry` layer with `tracer` to the SDK's default
/// subscriber, so that spans are exported through it. See the module docs.
pub fn install<T>(tracer: T) -> Result<(), super::InstallLayerError>
where
    T: opentelemetry::trace::Tracer + Send + Sync + 'static,
    T::Span: Send + Sync,
{
    super::install_layer(tracing_opentelemetry::layer().with_tracer(tracer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_valid_traceparent_becomes_a_remote_parent_and_back() {
        let mut map = HashMap::new();
        map.insert("traceparent".to_string(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".to_string());
        map.insert("tracestate".to_string(), "vendor=abc,other=1".to_string());
        let context = extract(&map);
        let span = context.span();
        let span = span.span_context();
        assert!(span.is_remote());
        assert!(span.is_sampled());
        assert_eq!(span.trace_id().to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(span.span_id().to_string(), "00f067aa0ba902b7");
        assert_eq!(span.trace_state().get("vendor"), Some("abc"));
        assert_eq!(inject(&context), map);
    }

    #[test]
    fn a_malformed_traceparent_gives_no_parent() {
        let mut map = HashMap::new();
        map.insert("traceparent".to_string(), "00-00000000000000000000000000000000-00f067aa0ba902b7-01".to_string());
        assert!(!extract(&map).span().span_context().is_valid());
        assert!(inject(&extract(&map)).is_empty());
        assert!(!extract(&HashMap::new()).has_active_span());
    }

    #[test]
    fn a_malformed_tracestate_is_dropped_alone() {
        let mut map = HashMap::new();
        map.insert("traceparent".to_string(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00".to_string());
        map.insert("tracestate".to_string(), "not a list member".to_string());
        let context = extract(&map);
        assert!(context.span().span_context().is_valid());
        assert!(!context.span().span_context().is_sampled());
        assert_eq!(inject(&context).len(), 1);
    }
}
