//! What the driver tells the observability side: frames in and out, handler
//! starts, WebSocket sends ending, the state of the stream after each turn.
//! It keeps, per event in flight, the event's span and when it started, and
//! nothing process-wide.
//!
//! When nothing would see it (the event's span is filtered out, metrics are
//! off and so is the `DEBUG` line each answer gets), an event is not watched
//! at all: starting it and answering it cost a few comparisons. An event
//! answered late is still warned about then, by its id alone.

use std::collections::HashMap;
use std::time::Instant;

use celerity_proto::v1::{HandlerMessage, RuntimeMessage, handler_message, result::Outcome, runtime_message};
use tracing::Span;

use super::outcome::{EventOutcome, records_failed};
use super::report::{self, Startup};
use super::span::{event_span, record_outcome};
use super::switches::{METRICS_ENV, Override, Switches, TRACING_ENV};
use crate::registry::Registration;
use crate::reply::HttpResult;
use crate::session::{Event, HandshakeReport, LazySource, Session, WsOutcome, quoted};

/// An event whose handler was started.
struct Watched {
    tag: String,
    started: Instant,
    span: Span,
    /// The records of a consumer batch.
    records: Option<usize>,
}

/// The observability of one stream.
pub(crate) struct Observer {
    tracing: Override,
    metrics: Override,
    /// Known once the `RuntimeConfig` has arrived.
    switches: Option<Switches>,
    events: HashMap<String, Watched>,
    /// The dispatches taken this turn (a turn takes every frame already
    /// read): (id, tag, records), for a result the session sends without
    /// starting a handler.
    #[cfg(feature = "metrics")]
    arriving: Vec<(String, String, Option<usize>)>,
    /// The handshake's report, held until the runtime accepts `Ready`.
    report: Option<HandshakeReport>,
    #[cfg(feature = "metrics")]
    meter: Option<super::meter::Meter>,
}

impl Observer {
    /// Reads the overrides from the process environment.
    pub(crate) fn from_env() -> Observer {
        Observer::from_lookup(|name| std::env::var(name).ok())
    }

    pub(crate) fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Observer {
        let read = |variable| {
            Override::read(variable, &lookup).unwrap_or_else(|(variable, value)| {
                tracing::warn!("{variable}={value:?} is not one of on, off or runtime; the runtime's flag decides");
                Override::Runtime
            })
        };
        Observer {
            tracing: read(TRACING_ENV),
            metrics: read(METRICS_ENV),
            switches: None,
            events: HashMap::new(),
            #[cfg(feature = "metrics")]
            arriving: Vec::new(),
            report: None,
            #[cfg(feature = "metrics")]
            meter: None,
        }
    }

    /// A frame from the runtime, before the session sees it.
    pub(crate) fn inbound(&mut self, message: &RuntimeMessage, registrations: &[Registration]) {
        match &message.frame {
            Some(runtime_message::Frame::Config(config)) if self.switches.is_none() => {
                let switches = Switches::from_config(config, registrations, self.tracing, self.metrics);
                #[cfg(feature = "metrics")]
                if switches.metrics {
                    self.meter = Some(super::meter::Meter::new());
                }
                self.switches = Some(switches);
            }
            _ => {}
        }
    }

    /// A `Dispatch` from the runtime, before the session sees it: one it
    /// answers without a handler is counted as refused.
    pub(crate) fn dispatched(&mut self, _event: &Event) {
        #[cfg(feature = "metrics")]
        if self.meter.is_some() {
            let records = _event.source.as_ref().and_then(LazySource::records);
            self.arriving.push((_event.id.clone(), _event.handler_tag.clone(), records));
        }
    }

    /// A handler is starting for event `id`, `dispatch`: its span, to run
    /// it in.
    pub(crate) fn start(&mut self, index: usize, registration: &Registration, id: &str, dispatch: &Event) -> Span {
        let traced = self.switches.as_ref().is_some_and(|s| s.is_traced(index));
        let span = event_span(
            traced,
            &dispatch.handler_tag,
            id,
            registration.kind,
            registration.origin.function,
            &dispatch.trace_context,
        );
        if !self.watching(&span) {
            return span;
        }
        let watched = Watched {
            tag: dispatch.handler_tag.clone(),
            started: Instant::now(),
            span: span.clone(),
            records: dispatch.source.as_ref().and_then(LazySource::records),
        };
        self.events.insert(id.to_string(), watched);
        span
    }

    /// Whether an event running in `span` is to be watched: something would
    /// see its outcome, its duration or the line logged when it is answered.
    fn watching(&self, span: &Span) -> bool {
        if !span.is_disabled() {
            return true;
        }
        #[cfg(feature = "metrics")]
        if self.meter.is_some() {
            return true;
        }
        tracing::enabled!(tracing::Level::DEBUG)
    }

    /// A frame is going out.
    pub(crate) fn outbound(&mut self, message: &HandlerMessage) {
        match &message.frame {
            Some(handler_message::Frame::Result(result)) => {
                let outcome = EventOutcome::of(result.outcome.as_ref());
                self.answered(&result.id, outcome, result.outcome.as_ref());
            }
            #[cfg(feature = "metrics")]
            Some(handler_message::Frame::WsSend(send)) => {
                if let Some(meter) = &self.meter {
                    meter.ws_sent(send.messages.len());
                }
            }
            _ => {}
        }
    }

    /// A `Result` sent with an HTTP response of the SDK's own answer types.
    pub(crate) fn outbound_http(&mut self, result: &HttpResult) {
        self.answered(&result.id, EventOutcome::of_http(u32::from(result.reply.status)), None);
    }

    /// The event `id` was answered, as `outcome`; `wire` is the answer in
    /// the protocol's form when it was sent in it (a consumer's names its
    /// failed records).
    fn answered(&mut self, id: &str, outcome: EventOutcome, wire: Option<&Outcome>) {
        // Nothing watched (the usual case with tracing and metrics off):
        // no lookup.
        let watched = if self.events.is_empty() { None } else { self.events.remove(id) };
        match watched {
            Some(event) => self.finished(event, id, outcome, wire),
            None => self.unwatched(id, outcome, wire),
        }
    }

    /// An event that was not watched was answered: refused on arrival, or
    /// started while nothing would see it.
    fn unwatched(&self, id: &str, outcome: EventOutcome, _wire: Option<&Outcome>) {
        if matches!(outcome, EventOutcome::Deadline | EventOutcome::Cancelled) {
            // Only a started event is answered for this way.
            tracing::warn!(event_id = %quoted(id), "the handler did not finish in time and was abandoned ({outcome})");
        }
        #[cfg(feature = "metrics")]
        self.refused(id, outcome, _wire);
    }

    /// The event of a handler that was started was answered.
    fn finished(&self, event: Watched, id: &str, outcome: EventOutcome, wire: Option<&Outcome>) {
        let elapsed = event.started.elapsed();
        record_outcome(&event.span, outcome);
        let elapsed_ms = elapsed.as_secs_f64() * 1000.0;
        let records = event.records.map(|n| (n, records_failed(wire, n)));
        if matches!(outcome, EventOutcome::Deadline | EventOutcome::Cancelled) {
            tracing::warn!(
                parent: &event.span,
                tag = %quoted(&event.tag),
                event_id = %quoted(id),
                elapsed_ms,
                "the handler did not finish in time and was abandoned ({outcome})"
            );
        } else {
            let records_failed = records.map(|(_, failed)| failed);
            tracing::debug!(parent: &event.span, %outcome, elapsed_ms, records_failed, "answered");
        }
        #[cfg(feature = "metrics")]
        if let Some(meter) = &self.meter {
            meter.event(&event.tag, outcome, Some(elapsed), records);
        }
    }

    /// An event was answered without a handler: refused on arrival.
    #[cfg(feature = "metrics")]
    fn refused(&self, id: &str, outcome: EventOutcome, wire: Option<&Outcome>) {
        if let Some(meter) = &self.meter
            && let Some((_, tag, records)) = self.arriving.iter().find(|(arriving, ..)| **arriving == *id)
        {
            let records = records.map(|n| (n, records_failed(wire, n)));
            meter.event(tag, outcome, None, records);
        }
    }

    /// A WebSocket send ended.
    pub(crate) fn ws_done(&self, _outcome: &WsOutcome) {
        #[cfg(feature = "metrics")]
        if let Some(meter) = &self.meter {
            meter.ws_done(_outcome);
        }
    }

    /// The driver carried out every action of a turn.
    pub(crate) fn end_of_turn(&mut self, _session: &Session) {
        #[cfg(feature = "metrics")]
        {
            self.arriving.clear();
        }
        #[cfg(feature = "metrics")]
        if let Some(meter) = &mut self.meter
            && _session.is_serving()
        {
            let credit = _session.credit();
            meter.gauges(_session.in_flight(), credit.window(), credit.is_paused());
        }
    }

    /// The handshake compared code and blueprint. A complete report waits
    /// for the runtime's acceptance, to be logged in one block with the rest;
    /// one that predicts a refusal is logged at once.
    pub(crate) fn report(&mut self, report: HandshakeReport) {
        if !report.is_complete() {
            tracing::warn!("{report}");
        }
        self.report = Some(report);
    }

    /// The runtime accepted `Ready`: logs the startup block.
    pub(crate) fn serving(&mut self, registrations: &[Registration], socket: String, credit: u32) {
        let report = self.report.take().unwrap_or_default();
        let switches = self.switches.clone().unwrap_or_default();
        let complete = report.is_complete();
        let text = report::render(&Startup { report: &report, registrations, switches: &switches, socket, credit });
        if complete {
            tracing::info!("{text}");
        } else {
            tracing::warn!("{text}");
        }
    }

    /// Serving stopped: what was in flight is gone.
    pub(crate) fn exit(&mut self) {
        self.events.clear();
        #[cfg(feature = "metrics")]
        if let Some(meter) = &mut self.meter {
            meter.gauges(0, 0, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use celerity_proto::v1::{HandlerConfig, HandlerError, HttpResponse, RuntimeConfig, result::Outcome};
    use tracing::level_filters::LevelFilter;
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;

    use super::*;
    use crate::registry::HandlerKey;

    const TAG: &str = "GET::/orders";

    async fn noop() {}

    /// The messages of the events logged, with their `event_id` and `tag`.
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<(tracing::Level, String)>>>);

    impl<S: tracing::Subscriber> Layer<S> for Lines {
        fn on_event(&self, event: &tracing::Event<'_>, _cx: tracing_subscriber::layer::Context<'_, S>) {
            struct Text(String);
            impl tracing::field::Visit for Text {
                fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                    self.0.push_str(&format!(" {}={value:?}", field.name()));
                }
            }
            let mut text = Text(String::new());
            event.record(&mut text);
            self.0.lock().unwrap().push((*event.metadata().level(), text.0));
        }
    }

    /// Runs `f` with a subscriber letting `level` and up through.
    ///
    /// One at a time: tracing caches whether a callsite is enabled for every
    /// subscriber alive at once, so a `TRACE` subscriber of a test running
    /// beside this one would enable this one's `TRACE` spans too.
    fn logging<T>(level: LevelFilter, f: impl FnOnce() -> T) -> (T, Vec<(tracing::Level, String)>) {
        static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
        let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let lines = Lines::default();
        let subscriber = tracing_subscriber::registry().with(lines.clone().with_filter(level));
        let out = tracing::subscriber::with_default(subscriber, || {
            // The cache still holds what the last test's subscriber wanted.
            tracing::callsite::rebuild_interest_cache();
            f()
        });
        let lines = lines.0.lock().unwrap().clone();
        (out, lines)
    }

    fn serving(traced: bool, metrics: bool) -> (Observer, Vec<Registration>) {
        let registrations = vec![Registration::http(HandlerKey::Tag(TAG.into()), noop)];
        let mut observer = Observer::from_lookup(|_| None);
        let config = RuntimeConfig {
            tracing_enabled: traced,
            metrics_enabled: metrics,
            handlers: vec![HandlerConfig {
                handler_name: "noop".into(),
                handler_tag: TAG.into(),
                timeout_ms: 1000,
                tracing_enabled: false,
                published_name: String::new(),
            }],
            protocol_version: None,
        };
        observer.inbound(&RuntimeMessage { frame: Some(runtime_message::Frame::Config(config)) }, &registrations);
        (observer, registrations)
    }

    fn dispatch(id: &str) -> Event {
        Event { id: id.into(), handler_tag: TAG.into(), ..Event::default() }
    }

    fn result(id: &str, outcome: Outcome) -> HandlerMessage {
        HandlerMessage {
            frame: Some(handler_message::Frame::Result(celerity_proto::v1::Result {
                id: id.into(),
                credit_grant: 1,
                outcome: Some(outcome),
            })),
        }
    }

    fn ok() -> Outcome {
        Outcome::Http(HttpResponse { status: 200, ..HttpResponse::default() })
    }

    fn deadline() -> Outcome {
        Outcome::Error(HandlerError {
            message: "the handler ran past its deadline and did not finish".into(),
            r#type: crate::session::error_type::DEADLINE_EXCEEDED.into(),
            stack: String::new(),
        })
    }

    /// Starts and answers one event, as the driver does.
    fn event(observer: &mut Observer, registrations: &[Registration], id: &str, outcome: Outcome) -> (bool, usize) {
        let dispatch = dispatch(id);
        observer.dispatched(&dispatch);
        let span = observer.start(0, &registrations[0], &dispatch.id, &dispatch);
        let watched = observer.events.len();
        observer.outbound(&result(id, outcome));
        assert!(observer.events.is_empty(), "an answered event is forgotten");
        (span.is_disabled(), watched)
    }

    #[test]
    fn an_event_nothing_would_see_is_not_watched() {
        let (mut observer, registrations) = serving(false, false);
        let ((disabled, watched), lines) =
            logging(LevelFilter::INFO, || event(&mut observer, &registrations, "e1", ok()));
        assert!(disabled, "an untraced handler's span is at TRACE");
        assert_eq!(watched, 0);
        assert!(lines.is_empty(), "{lines:?}");
    }

    #[test]
    fn an_event_whose_span_or_answer_is_seen_is_watched() {
        let (mut observer, registrations) = serving(true, false);
        let ((disabled, watched), _) = logging(LevelFilter::INFO, || event(&mut observer, &registrations, "e1", ok()));
        assert!(!disabled, "a traced handler's span is at INFO");
        assert_eq!(watched, 1);

        let (mut observer, registrations) = serving(false, false);
        let ((disabled, watched), _) = logging(LevelFilter::TRACE, || event(&mut observer, &registrations, "e2", ok()));
        assert!(!disabled, "asked for, the TRACE span is there");
        assert_eq!(watched, 1);

        let (mut observer, registrations) = serving(false, false);
        let ((disabled, watched), lines) =
            logging(LevelFilter::DEBUG, || event(&mut observer, &registrations, "e3", ok()));
        assert!(disabled);
        assert_eq!(watched, 1, "the answer's DEBUG line is seen");
        assert!(lines.iter().any(|(level, text)| *level == tracing::Level::DEBUG && text.contains("answered")));
    }

    #[test]
    fn metrics_watch_every_event() {
        let (mut observer, registrations) = serving(false, true);
        let ((_, watched), _) = logging(LevelFilter::INFO, || event(&mut observer, &registrations, "e1", ok()));
        assert_eq!(watched, usize::from(cfg!(feature = "metrics")));
    }

    #[test]
    fn an_event_answered_late_is_warned_about_watched_or_not() {
        let (mut observer, registrations) = serving(false, false);
        let ((_, watched), lines) =
            logging(LevelFilter::INFO, || event(&mut observer, &registrations, "late-1", deadline()));
        assert_eq!(watched, 0);
        let [(level, text)] = lines.as_slice() else { panic!("one line: {lines:?}") };
        assert_eq!(*level, tracing::Level::WARN);
        assert!(text.contains("did not finish in time and was abandoned (deadline)"), "{text}");
        assert!(text.contains(r#"event_id="late-1""#), "{text}");

        let (mut observer, registrations) = serving(true, false);
        let ((_, watched), lines) =
            logging(LevelFilter::INFO, || event(&mut observer, &registrations, "late-2", deadline()));
        assert_eq!(watched, 1);
        let [(level, text)] = lines.as_slice() else { panic!("one line: {lines:?}") };
        assert_eq!(*level, tracing::Level::WARN);
        assert!(text.contains(r#"event_id="late-2""#) && text.contains(&format!("tag={TAG:?}")), "{text}");
        assert!(text.contains("elapsed_ms="), "{text}");
    }

    #[test]
    fn a_result_for_no_watched_event_costs_no_lookup_and_changes_nothing() {
        let (mut observer, registrations) = serving(true, false);
        logging(LevelFilter::INFO, || {
            let dispatch = dispatch("kept");
            let _span = observer.start(0, &registrations[0], &dispatch.id, &dispatch);
            observer.outbound(&result("other", ok()));
            assert_eq!(observer.events.len(), 1, "another event's answer leaves this one watched");
            observer.exit();
            assert!(observer.events.is_empty());
        });
    }
}
