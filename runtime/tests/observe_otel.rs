//! With the `opentelemetry` feature: an exporter installed with
//! `observe::otel::install` under the SDK's default subscriber gets each
//! event's span, parented on the caller's `traceparent`.

mod observe_support;

use std::sync::{Arc, Mutex, OnceLock};

use celerity::App;
use celerity::observe::otel::{
    self,
    opentelemetry::trace::{SpanId, SpanKind, Status, TraceId, TracerProvider as _},
    opentelemetry_sdk::error::OTelSdkResult,
    opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter},
};
use celerity::observe::{InstallLayerError, install_layer};
use celerity::proto::v1::result::Outcome;
use celerity_testkit::{TestRuntime, event};
use observe_support::{eventually, serve};

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";

#[derive(Debug, Clone, Default)]
struct Collect(Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Collect {
    fn export(&self, batch: Vec<SpanData>) -> impl std::future::Future<Output = OTelSdkResult> + Send {
        self.0.lock().unwrap().extend(batch);
        std::future::ready(Ok(()))
    }
}

fn exported() -> &'static Collect {
    static COLLECT: OnceLock<Collect> = OnceLock::new();
    COLLECT.get_or_init(|| {
        let collect = Collect::default();
        let provider = SdkTracerProvider::builder().with_simple_exporter(collect.clone()).build();
        otel::install(provider.tracer("observe-otel-test")).expect("the layer goes into the default subscriber");
        collect
    })
}

impl Collect {
    fn span_of(&self, event_id: &str) -> Option<SpanData> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .find(|span| {
                span.attributes.iter().any(|kv| kv.key.as_str() == "event_id" && kv.value.as_str() == event_id)
            })
            .cloned()
    }
}

/// Answers with the trace context a call made from here would carry on.
async fn onward() -> String {
    otel::current_trace_context().get("traceparent").cloned().unwrap_or_default()
}

async fn failing() -> Result<&'static str, celerity::Error> {
    Err(celerity::Error::msg("no"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_span_is_exported_as_a_child_of_the_caller_s_span() {
    let collect = exported();
    assert_eq!(install_layer(tracing_subscriber::layer::Identity::new()), Err(InstallLayerError::AlreadyInstalled));

    let builder =
        TestRuntime::builder().tracing(true).handler("onward", "GET::/onward").handler("failing", "GET::/failing");
    let app = App::new().http("GET::/onward", onward).http("GET::/failing", failing);
    let served = serve(builder, app).await;
    let conn = &served.conn;

    let result = conn
        .call(
            event::http("GET", "/onward")
                .id("evt-child")
                .trace_context("traceparent", format!("00-{TRACE_ID}-{PARENT_ID}-01"))
                .trace_context("tracestate", "vendor=1"),
        )
        .await
        .unwrap();
    let Some(Outcome::Http(response)) = result.outcome else { panic!("{result:?}") };
    let onward = String::from_utf8(response.body.to_vec()).unwrap();
    // The handler's own span continues the caller's trace.
    assert!(onward.starts_with(&format!("00-{TRACE_ID}-")), "{onward:?}");
    assert!(!onward.contains(PARENT_ID), "the onward parent is this handler's span: {onward:?}");

    eventually("the span exported", || collect.span_of("evt-child").is_some()).await;
    let span = collect.span_of("evt-child").unwrap();
    assert_eq!(span.name, "GET::/onward", "named after the tag");
    assert_eq!(span.span_kind, SpanKind::Server);
    assert_eq!(span.span_context.trace_id(), TraceId::from_hex(TRACE_ID).unwrap());
    assert_eq!(span.parent_span_id, SpanId::from_hex(PARENT_ID).unwrap());
    assert!(span.parent_span_is_remote);
    assert_eq!(span.span_context.trace_state().get("vendor"), Some("1"));
    assert_eq!(onward, format!("00-{TRACE_ID}-{}-01", span.span_context.span_id()));

    // No traceparent: a trace of its own. A failure: an error status.
    conn.call(event::http("GET", "/failing").id("evt-root")).await.unwrap();
    eventually("the root span exported", || collect.span_of("evt-root").is_some()).await;
    let span = collect.span_of("evt-root").unwrap();
    assert_eq!(span.parent_span_id, SpanId::INVALID);
    assert_ne!(span.span_context.trace_id(), TraceId::from_hex(TRACE_ID).unwrap());
    assert!(matches!(span.status, Status::Error { .. }), "{:?}", span.status);
    assert!(span.attributes.iter().any(|kv| kv.key.as_str() == "outcome" && kv.value.as_str() == "handler_error"));

    served.stop().await;
}
