//! Tracing, trace-context propagation and metrics.
//!
//! # A span per event
//!
//! Every handler runs inside a `tracing` span of its own, named
//! `celerity.event` (target `celerity::event`), so anything the handler logs
//! carries the event it was logged for:
//!
//! | field | value |
//! | --- | --- |
//! | `tag` | the handler tag, such as `GET::/orders/{id}` |
//! | `event_id` | the dispatch id the runtime gave the event |
//! | `kind` | `http`, `websocket`, `consumer`, `schedule` or `custom` |
//! | `handler` | the Rust function serving it |
//! | `trace_id` | the caller's W3C trace id (32 hex digits), when it sent a valid `traceparent` |
//! | `parent_span_id` | the caller's span id (16 hex digits), likewise |
//! | `outcome` | how the event was answered (see below), recorded when its result is sent |
//!
//! With the `opentelemetry` feature the span also has `otel.name` (the tag),
//! `otel.kind` (`server`, or `consumer` for consumer and schedule handlers)
//! and `otel.status_code` (`error` for a failed outcome), and its
//! OpenTelemetry parent is the caller's context (see `celerity::observe::otel`).
//!
//! The span is a root: the caller's `traceparent` is its only parent. The
//! per-event context lives in the span, which is entered around the handler's
//! task, never in process-wide state.
//!
//! A malformed `traceparent` (see [`TraceParent::parse`]) is ignored, as the
//! W3C specification asks: the event starts a trace of its own.
//!
//! # What `tracing_enabled` and `metrics_enabled` do
//!
//! The runtime's `RuntimeConfig` says whether tracing and metrics are on, and
//! each blueprint handler's `HandlerConfig.tracing_enabled` says so for that
//! handler. The SDK honours them like this:
//!
//! - **A traced handler's span is at `INFO`**, so the default filter
//!   (`RUST_LOG=info`) lets it through to the log and to an exporter. **An
//!   untraced handler's span is at `TRACE`**: still there for
//!   `RUST_LOG=celerity::event=trace`, filtered out (and so not exported,
//!   and costing next to nothing) otherwise.
//! - A handler is traced when `RuntimeConfig.tracing_enabled` is true (every
//!   handler is) or its own `HandlerConfig.tracing_enabled` is true (that
//!   handler is). Protobuf booleans cannot tell "off" from "not said", so a
//!   handler's own flag adds tracing and never takes the runtime's away.
//! - **Metrics are recorded only when `RuntimeConfig.metrics_enabled` is
//!   true** (and the `metrics` feature is built in). Off, nothing is
//!   recorded and no metric is registered.
//! - When an event's span is filtered out, metrics are off and `DEBUG` is
//!   not logged, the SDK keeps no record of the event at all: nothing would
//!   read it. A handler abandoned at its deadline is still warned about, by
//!   the event's id (with the tag and the time it ran when the event was
//!   watched).
//! - The application can overrule the runtime, for every handler, with
//!   `CELERITY_SDK_TRACING` and `CELERITY_SDK_METRICS`: `on`, `off`, or
//!   `runtime` (the default: the flags decide). A value that is none of
//!   these is warned about and ignored.
//!
//! The startup block in the log says what is in force and why.
//!
//! # Outcomes
//!
//! The span's `outcome` field and the metrics' `outcome` label take the
//! values of [`EventOutcome`]:
//!
//! | outcome | meaning |
//! | --- | --- |
//! | `ok` | the handler answered with success: an HTTP response below 500 (a 404 is an answer), a successful `Ack`, a `BatchResult` naming no failed record, a custom result with no error message |
//! | `partial_failure` | a `BatchResult` naming failed records; the rest were acknowledged |
//! | `handler_error` | the handler reported a failure: it returned an error, an `Ack` with `success: false`, a `BatchResult` failing the whole batch, a custom error message, or an HTTP response of 500 or above |
//! | `panic` | the handler panicked |
//! | `deadline` | the handler overran its deadline and the grace after it; the SDK answered `DeadlineExceeded` |
//! | `cancelled` | the handler did not stop within the grace after a cancellation or shutdown; the SDK answered `Cancelled` |
//! | `refused` | answered without running a handler: unknown tag, over the credit window or a per-tag cap, during a drain, or a source the handler does not serve |
//!
//! # Metrics (feature `metrics`)
//!
//! Recorded on the [`metrics`](https://docs.rs/metrics) facade: install any
//! recorder (a Prometheus exporter, say) before serving, and these appear.
//!
//! | metric | type | labels | what |
//! | --- | --- | --- | --- |
//! | `celerity_events_total` | counter | `tag`, `outcome` | events answered |
//! | `celerity_event_duration_seconds` | histogram | `tag`, `outcome` | from the handler's start to the event's answer (events whose handler started) |
//! | `celerity_events_in_flight` | gauge | | events dispatched to this process and not yet answered |
//! | `celerity_credit_window` | gauge | | how many events may be in flight at once |
//! | `celerity_credit_withheld` | gauge | | 1 while the runtime has been asked to withhold dispatches (an application withhold, or a shrink in progress), else 0 |
//! | `celerity_ws_sends_total` | counter | | `WsSend` frames sent |
//! | `celerity_ws_messages_total` | counter | | WebSocket messages in them |
//! | `celerity_ws_acks_total` | counter | | `WsSendAck`s received |
//! | `celerity_ws_failures_total` | counter | `reason` | `message`: a message the acknowledgement names as not delivered; `timed_out`: no acknowledgement in time; `disconnected`: the stream ended first; `too_large`: the send would not fit in one frame and was not sent |
//! | `celerity_consumer_records_total` | counter | `tag` | consumer records in batches answered |
//! | `celerity_consumer_records_failed_total` | counter | `tag` | consumer records left on their source: those a `BatchResult` names, or the whole batch when it failed whole, errored, or was refused |
//!
//! The names are in [`metric`].
//!
//! # OpenTelemetry (feature `opentelemetry`)
//!
//! See `celerity::observe::otel` (built with the feature): the caller's
//! context becomes the span's parent, and an exporter of the application's
//! choosing is installed with `otel::install`.

mod events;
#[cfg(feature = "metrics")]
mod meter;
pub mod metric;
#[cfg(feature = "opentelemetry")]
pub mod otel;
mod outcome;
mod report;
mod span;
mod switches;
mod trace_context;

pub(crate) use events::Observer;
pub use outcome::EventOutcome;
pub use span::{SPAN_NAME, SPAN_TARGET};
pub use switches::{METRICS_ENV, TRACING_ENV};
pub use trace_context::{TraceParent, TraceParentError};

pub use crate::logging::{DefaultSubscriber, InstallLayerError};

use crate::context::Context;

/// The valid W3C `traceparent` of the caller of the event `cx` runs for, if
/// it sent one.
///
/// ```
/// let cx = celerity::Context::detached("GET::/orders");
/// assert!(celerity::observe::trace_parent(&cx).is_none());
/// ```
pub fn trace_parent(cx: &Context) -> Option<TraceParent> {
    trace_context::from_map(cx.trace_context()).and_then(Result::ok)
}

/// Adds `layer` to the SDK's default `tracing` subscriber (the one that
/// writes the log to stderr), installing that subscriber first if the
/// process has none. For an application whose `main` cannot install a
/// subscriber before the SDK's (as under `#[celerity::main]`), this is the
/// way to add an exporter's layer; an application with a subscriber of its
/// own adds the layer to that one instead, and gets
/// [`InstallLayerError::OtherSubscriber`] here.
///
/// One layer can be added; combine several with `Layer::and_then`. The layer
/// sees what `RUST_LOG` lets through. A layer with a per-layer filter of its
/// own (`Layer::with_filter`) is not supported here.
pub fn install_layer<L>(layer: L) -> Result<(), InstallLayerError>
where
    L: tracing_subscriber::Layer<DefaultSubscriber> + Send + Sync + 'static,
{
    crate::logging::install_layer(Box::new(layer))
}
