//! The SDK's metrics, recorded by the real driver serving the test kit's
//! runtime, read back from a recorder that keeps every value.
//!
//! (`metrics-util`'s `DebuggingRecorder` resets counters and gauges to zero
//! on each snapshot, which makes a gauge unreadable while nothing changes
//! it; this recorder keeps the values as a real exporter would.)

mod observe_support;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use celerity::consumer::Record;
use celerity::observe::metric;
use celerity::proto::v1::{WsSendAck, WsSendFailure, result::Outcome};
use celerity::websocket::{Outbound, WsSender};
use celerity::{App, Error};
use celerity_testkit::{TestRuntime, event};
use metrics::{Counter, Gauge, Histogram, HistogramFn, Key, KeyName, Metadata, Recorder, SharedString, Unit};
use observe_support::{eventually, serve};

type Id = (String, BTreeMap<String, String>);

fn id(key: &Key) -> Id {
    (key.name().to_string(), key.labels().map(|l| (l.key().to_string(), l.value().to_string())).collect())
}

struct Samples(Mutex<Vec<f64>>);

impl HistogramFn for Samples {
    fn record(&self, value: f64) {
        self.0.lock().unwrap().push(value);
    }
}

#[derive(Default)]
struct Store {
    counters: Mutex<HashMap<Id, Arc<AtomicU64>>>,
    gauges: Mutex<HashMap<Id, Arc<AtomicU64>>>,
    histograms: Mutex<HashMap<Id, Arc<Samples>>>,
    described: Mutex<BTreeSet<String>>,
}

struct Keeping(&'static Store);

impl Recorder for Keeping {
    fn describe_counter(&self, key: KeyName, _: Option<Unit>, _: SharedString) {
        self.0.described.lock().unwrap().insert(key.as_str().to_string());
    }

    fn describe_gauge(&self, key: KeyName, _: Option<Unit>, _: SharedString) {
        self.0.described.lock().unwrap().insert(key.as_str().to_string());
    }

    fn describe_histogram(&self, key: KeyName, _: Option<Unit>, _: SharedString) {
        self.0.described.lock().unwrap().insert(key.as_str().to_string());
    }

    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        Counter::from_arc(Arc::clone(self.0.counters.lock().unwrap().entry(id(key)).or_default()))
    }

    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::from_arc(Arc::clone(self.0.gauges.lock().unwrap().entry(id(key)).or_default()))
    }

    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        let mut histograms = self.0.histograms.lock().unwrap();
        let samples = histograms.entry(id(key)).or_insert_with(|| Arc::new(Samples(Mutex::default())));
        Histogram::from_arc(Arc::clone(samples))
    }
}

fn store() -> &'static Store {
    static STORE: OnceLock<&'static Store> = OnceLock::new();
    STORE.get_or_init(|| {
        let store: &'static Store = Box::leak(Box::default());
        assert!(metrics::set_global_recorder(Keeping(store)).is_ok(), "no other recorder in this test binary");
        store
    })
}

fn labelled(name: &str, pairs: &[(&str, &str)]) -> Id {
    (name.to_string(), pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
}

fn counter(name: &str, pairs: &[(&str, &str)]) -> u64 {
    store().counters.lock().unwrap().get(&labelled(name, pairs)).map_or(0, |c| c.load(Ordering::SeqCst))
}

fn gauge(name: &str) -> Option<f64> {
    store().gauges.lock().unwrap().get(&labelled(name, &[])).map(|g| f64::from_bits(g.load(Ordering::SeqCst)))
}

fn latencies(tag: &str, outcome: &str) -> Vec<f64> {
    let histograms = store().histograms.lock().unwrap();
    histograms
        .get(&labelled(metric::EVENT_DURATION, &[("tag", tag), ("outcome", outcome)]))
        .map(|h| h.0.lock().unwrap().clone())
        .unwrap_or_default()
}

fn events(tag: &str, outcome: &str) -> u64 {
    counter(metric::EVENTS, &[("tag", tag), ("outcome", outcome)])
}

async fn ok() -> &'static str {
    "ok"
}

async fn failing() -> Result<&'static str, Error> {
    Err(Error::typed("OrderRejected", "no such order"))
}

async fn panicking() -> &'static str {
    panic!("boom")
}

async fn slow() -> &'static str {
    tokio::time::sleep(Duration::from_secs(30)).await;
    "late"
}

async fn notify(ws: WsSender) -> &'static str {
    let sent = ws.send_all([Outbound::text("conn-1", "a"), Outbound::text("conn-2", "b")]).await;
    if sent.is_ok() { "all delivered" } else { "some lost" }
}

async fn process(record: Record<serde_json::Value>) -> Result<(), Error> {
    if record.message_id() == "bad" {
        return Err(Error::msg("cannot process"));
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_credit_websocket_sends_and_failed_records_are_counted() {
    store();
    let builder = TestRuntime::builder()
        .metrics(true)
        .handler("ok", "GET::/ok")
        .handler("failing", "GET::/failing")
        .handler("panicking", "GET::/panicking")
        .handler("slow", "GET::/slow")
        .handler("notify", "POST::/notify")
        .handler("process", "source::orders::process");
    let app = App::new()
        .http("GET::/ok", ok)
        .http("GET::/failing", failing)
        .http("GET::/panicking", panicking)
        .http("GET::/slow", slow)
        .http("POST::/notify", notify)
        .consumer("source::orders::process", process);
    let handle = app.handle();
    let served = serve(builder, app).await;
    let conn = &served.conn;

    eventually("the credit window gauge", || gauge(metric::CREDIT_WINDOW) == Some(8.0)).await;
    assert_eq!(gauge(metric::CREDIT_WITHHELD), Some(0.0));

    conn.call(event::http("GET", "/ok")).await.unwrap();
    conn.call(event::http("GET", "/ok")).await.unwrap();
    conn.call(event::http("GET", "/failing")).await.unwrap();
    conn.call(event::http("GET", "/panicking")).await.unwrap();

    // In flight while it runs; answered for at its deadline plus the grace.
    let slow = conn.dispatch(event::http("GET", "/slow").deadline_in(Duration::from_millis(150))).unwrap();
    eventually("one event in flight", || gauge(metric::IN_FLIGHT) == Some(1.0)).await;
    let result = conn.result(&slow).await.unwrap();
    assert!(matches!(result.outcome, Some(Outcome::Error(ref e)) if e.r#type == "DeadlineExceeded"), "{result:?}");

    // A batch of three with one record failing: a partial failure.
    let batch = event::consumer("orders", "process")
        .record("m1", r#"{"id":1}"#)
        .record("bad", r#"{"id":2}"#)
        .record("m3", r#"{"id":3}"#);
    let result = conn.call(batch).await.unwrap();
    assert!(matches!(result.outcome, Some(Outcome::Consumer(ref b)) if b.failures.len() == 1), "{result:?}");

    // A send of two messages, one of which the runtime could not deliver.
    let id = conn.dispatch(event::http("POST", "/notify")).unwrap();
    let send = conn.next_ws_send().await.unwrap();
    assert_eq!(send.messages.len(), 2);
    conn.ws_ack(WsSendAck {
        correlation_id: send.correlation_id.clone(),
        success: false,
        failures: vec![WsSendFailure { index: 1, connection_id: "conn-2".into(), error_message: "gone".into() }],
    })
    .unwrap();
    conn.result(&id).await.unwrap();

    // No handler for the tag: answered at once, without running anything;
    // sent back to back, so that the SDK takes several in one turn, and
    // each is counted.
    let refused: Vec<_> = (0..4).map(|_| conn.dispatch_unchecked(event::http("GET", "/nowhere")).unwrap()).collect();
    for id in &refused {
        conn.result(id).await.unwrap();
    }

    eventually("every event counted", || events("GET::/nowhere", "refused") == 4).await;
    assert_eq!(events("GET::/ok", "ok"), 2);
    assert_eq!(events("GET::/failing", "handler_error"), 1);
    assert_eq!(events("GET::/panicking", "panic"), 1);
    assert_eq!(events("GET::/slow", "deadline"), 1);
    assert_eq!(events("source::orders::process", "partial_failure"), 1);
    assert_eq!(events("POST::/notify", "ok"), 1);
    assert_eq!(counter(metric::CONSUMER_RECORDS, &[("tag", "source::orders::process")]), 3);
    assert_eq!(counter(metric::CONSUMER_RECORDS_FAILED, &[("tag", "source::orders::process")]), 1);
    assert_eq!(counter(metric::WS_SENDS, &[]), 1);
    assert_eq!(counter(metric::WS_MESSAGES, &[]), 2);
    assert_eq!(counter(metric::WS_ACKS, &[]), 1);
    assert_eq!(counter(metric::WS_FAILURES, &[("reason", "message")]), 1);
    assert_eq!(gauge(metric::IN_FLIGHT), Some(0.0));
    assert_eq!(latencies("GET::/ok", "ok").len(), 2);
    let deadline = latencies("GET::/slow", "deadline");
    assert_eq!(deadline.len(), 1);
    assert!(deadline[0] >= 0.15, "answered at the deadline plus the grace: {deadline:?}");
    assert!(latencies("GET::/nowhere", "refused").is_empty(), "no handler ran, no latency");
    let described = store().described.lock().unwrap().clone();
    for name in [
        metric::EVENTS,
        metric::EVENT_DURATION,
        metric::IN_FLIGHT,
        metric::CREDIT_WINDOW,
        metric::CREDIT_WITHHELD,
        metric::WS_SENDS,
        metric::WS_MESSAGES,
        metric::WS_ACKS,
        metric::WS_FAILURES,
        metric::CONSUMER_RECORDS,
        metric::CONSUMER_RECORDS_FAILED,
    ] {
        assert!(described.contains(name), "{name} is described: {described:?}");
    }

    // A withhold shows on the gauge until it is ended.
    conn.expect_withhold(true);
    handle.withhold();
    let result = conn.call(event::http("GET", "/ok")).await.unwrap();
    assert_eq!(result.credit_grant, 0);
    eventually("the withhold on the gauge", || gauge(metric::CREDIT_WITHHELD) == Some(1.0)).await;
    assert_eq!(gauge(metric::CREDIT_WINDOW), Some(7.0));
    handle.resume();
    eventually("the withhold ended", || gauge(metric::CREDIT_WITHHELD) == Some(0.0)).await;
    assert_eq!(gauge(metric::CREDIT_WINDOW), Some(8.0));

    served.stop().await;
}
