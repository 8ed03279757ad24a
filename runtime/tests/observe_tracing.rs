//! The span of each event, through the real driver: its fields, its level as
//! the runtime's tracing flags decide, the caller's trace context, the
//! outcome; and the startup block.

mod observe_support;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use celerity::{App, Context};
use celerity_testkit::proto::v1::HandlerConfig;
use celerity_testkit::{TestRuntime, event};
use observe_support::{eventually, serve};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context as LayerContext, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";

#[derive(Debug, Clone)]
struct SpanSeen {
    name: String,
    level: Level,
    fields: BTreeMap<String, String>,
}

#[derive(Debug, Clone)]
struct EventSeen {
    fields: BTreeMap<String, String>,
    /// The span the event was logged in, as it was then.
    span: Option<SpanSeen>,
}

#[derive(Default)]
struct Seen {
    open: HashMap<u64, SpanSeen>,
    closed: Vec<SpanSeen>,
    events: Vec<EventSeen>,
}

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Seen>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), value.to_string());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_string(), format!("{value:?}"));
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _cx: LayerContext<'_, S>) {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let span = SpanSeen { name: attrs.metadata().name().to_string(), level: *attrs.metadata().level(), fields };
        self.0.lock().unwrap().open.insert(id.into_u64(), span);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _cx: LayerContext<'_, S>) {
        if let Some(span) = self.0.lock().unwrap().open.get_mut(&id.into_u64()) {
            values.record(&mut Fields(&mut span.fields));
        }
    }

    fn on_event(&self, event: &Event<'_>, cx: LayerContext<'_, S>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        let mut seen = self.0.lock().unwrap();
        let span = cx.event_span(event).and_then(|span| seen.open.get(&span.id().into_u64()).cloned());
        seen.events.push(EventSeen { fields, span });
    }

    fn on_close(&self, id: Id, _cx: LayerContext<'_, S>) {
        let mut seen = self.0.lock().unwrap();
        if let Some(span) = seen.open.remove(&id.into_u64()) {
            seen.closed.push(span);
        }
    }
}

fn capture() -> &'static Capture {
    static CAPTURE: OnceLock<Capture> = OnceLock::new();
    CAPTURE.get_or_init(|| {
        let capture = Capture::default();
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(capture.clone()))
            .expect("no other subscriber in this test binary");
        capture
    })
}

impl Capture {
    fn event_marked(&self, marker: &str) -> Option<EventSeen> {
        self.0
            .lock()
            .unwrap()
            .events
            .iter()
            .find(|e| e.fields.get("marker").map(String::as_str) == Some(marker))
            .cloned()
    }

    fn message_starting(&self, prefix: &str) -> Option<String> {
        self.0
            .lock()
            .unwrap()
            .events
            .iter()
            .filter_map(|e| e.fields.get("message"))
            .find(|m| m.starts_with(prefix))
            .cloned()
    }

    fn closed_span_of(&self, event_id: &str) -> Option<SpanSeen> {
        self.0
            .lock()
            .unwrap()
            .closed
            .iter()
            .find(|s| s.name == "celerity.event" && s.fields.get("event_id").map(String::as_str) == Some(event_id))
            .cloned()
    }
}

async fn traced(cx: Context) -> &'static str {
    tracing::info!(marker = "traced", "inside the traced handler");
    // The event's trace context is the caller's, for the handler too.
    let parent = celerity::observe::trace_parent(&cx).expect("a valid traceparent");
    assert_eq!(parent.trace_id_hex(), TRACE_ID);
    "ok"
}

async fn plain() -> &'static str {
    tracing::info!(marker = "plain", "inside the plain handler");
    "ok"
}

async fn malformed() -> &'static str {
    tracing::info!(marker = "malformed", "inside the handler given a malformed traceparent");
    "ok"
}

async fn boom() -> &'static str {
    panic!("boom")
}

fn handler(name: &str, tag: &str, tracing_enabled: bool) -> HandlerConfig {
    HandlerConfig {
        handler_name: name.to_string(),
        handler_tag: tag.to_string(),
        timeout_ms: 60_000,
        tracing_enabled,
        published_name: String::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_event_runs_in_a_span_parented_on_the_caller_s_trace_context() {
    let capture = capture();
    let builder = TestRuntime::builder()
        .tracing(false)
        .handler_config(handler("traced", "GET::/traced", true))
        .handler_config(handler("plain", "GET::/plain", false))
        .handler_config(handler("malformed", "GET::/malformed", false))
        .handler_config(handler("boom", "GET::/boom", false));
    let app = App::new()
        .http("GET::/traced", traced)
        .http("GET::/plain", plain)
        .http("GET::/malformed", malformed)
        .http("GET::/boom", boom);
    let served = serve(builder, app).await;

    // One block at startup: versions, socket, credit, handlers with caps.
    eventually("the startup block", || capture.message_starting("serving 4 handlers").is_some()).await;
    let block = capture.message_starting("serving 4 handlers").unwrap();
    let socket = served.runtime.socket_path().unwrap().display().to_string();
    assert!(block.contains("protocol 1.0 (the runtime serves 1.0)"), "{block}");
    assert!(block.contains(&format!("socket   unix:{socket}")), "{block}");
    assert!(block.contains("credit   8 events in flight at once"), "{block}");
    let line = block.lines().find(|l| l.contains("GET::/traced")).expect("a line for the traced handler");
    assert!(line.contains("http") && line.contains("no cap") && line.contains("traced"), "{line}");
    assert!(!block.lines().find(|l| l.contains("GET::/plain")).unwrap().contains("traced"), "{block}");
    assert!(capture.message_starting("handshake complete").is_none(), "one block, not two lines");

    let conn = &served.conn;
    let result = conn
        .call(
            event::http("GET", "/traced")
                .id("evt-traced")
                .trace_context("traceparent", format!("00-{TRACE_ID}-{PARENT_ID}-01"))
                .trace_context("tracestate", "vendor=1"),
        )
        .await
        .unwrap();
    assert!(matches!(result.outcome, Some(celerity::proto::v1::result::Outcome::Http(_))), "{result:?}");
    let inside = capture.event_marked("traced").expect("the handler's log line");
    let span = inside.span.expect("the handler logs inside the event's span");
    assert_eq!(span.name, "celerity.event");
    assert_eq!(span.level, Level::INFO, "a handler whose tracing_enabled is set is traced at INFO");
    assert_eq!(span.fields["tag"], "GET::/traced");
    assert_eq!(span.fields["event_id"], "evt-traced");
    assert_eq!(span.fields["kind"], "http");
    assert!(span.fields["handler"].ends_with("traced"), "{:?}", span.fields);
    assert_eq!(span.fields["trace_id"], TRACE_ID);
    assert_eq!(span.fields["parent_span_id"], PARENT_ID);
    eventually("the traced span to close", || capture.closed_span_of("evt-traced").is_some()).await;
    assert_eq!(capture.closed_span_of("evt-traced").unwrap().fields["outcome"], "ok");

    conn.call(event::http("GET", "/plain").id("evt-plain")).await.unwrap();
    let span = capture.event_marked("plain").unwrap().span.expect("a span, at TRACE");
    assert_eq!(span.level, Level::TRACE, "untraced handlers' spans are at TRACE");
    assert_eq!(span.fields["event_id"], "evt-plain");
    assert!(!span.fields.contains_key("trace_id"), "no traceparent, no trace id: {:?}", span.fields);

    conn.call(
        event::http("GET", "/malformed")
            .id("evt-malformed")
            .trace_context("traceparent", format!("00-{}-{PARENT_ID}-01", "0".repeat(32))),
    )
    .await
    .unwrap();
    let span = capture.event_marked("malformed").unwrap().span.unwrap();
    assert!(!span.fields.contains_key("trace_id"), "a malformed traceparent is ignored: {:?}", span.fields);
    assert!(!span.fields.contains_key("parent_span_id"));

    conn.call(event::http("GET", "/boom").id("evt-boom")).await.unwrap();
    eventually("the panicking handler's span to close", || capture.closed_span_of("evt-boom").is_some()).await;
    assert_eq!(capture.closed_span_of("evt-boom").unwrap().fields["outcome"], "panic");

    served.stop().await;
}
