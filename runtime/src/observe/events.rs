//! What the driver tells the observability side: frames in and out, handler
//! starts, WebSocket sends ending, the state of the stream after each turn.
//! It keeps, per event in flight, the event's span and when it started, and
//! nothing process-wide.

use std::collections::HashMap;
use std::time::Instant;

use celerity_proto::v1::{
    Dispatch, HandlerMessage, RuntimeMessage, dispatch::Source, handler_message, runtime_message,
};
use tracing::Span;

use super::outcome::{EventOutcome, records_failed};
use super::report::{self, Startup};
use super::span::{event_span, record_outcome};
use super::switches::{METRICS_ENV, Override, Switches, TRACING_ENV};
use crate::registry::Registration;
use crate::session::{HandshakeReport, Session, WsOutcome};

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
    /// The dispatch being handled this turn: (id, tag, records), for a result
    /// the session sends without starting a handler.
    #[cfg(feature = "metrics")]
    arriving: Option<(String, String, Option<usize>)>,
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
            arriving: None,
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
            #[cfg(feature = "metrics")]
            Some(runtime_message::Frame::Dispatch(dispatch)) => {
                self.arriving = Some((dispatch.id.clone(), dispatch.handler_tag.clone(), records(dispatch)));
            }
            _ => {}
        }
    }

    /// A handler is starting for `dispatch`: its span, to run it in.
    pub(crate) fn start(&mut self, index: usize, registration: &Registration, dispatch: &Dispatch) -> Span {
        let traced = self.switches.as_ref().is_some_and(|s| s.is_traced(index));
        let span = event_span(
            traced,
            &dispatch.handler_tag,
            &dispatch.id,
            registration.kind,
            registration.origin.function,
            &dispatch.trace_context,
        );
        let watched = Watched {
            tag: dispatch.handler_tag.clone(),
            started: Instant::now(),
            span: span.clone(),
            records: records(dispatch),
        };
        self.events.insert(dispatch.id.clone(), watched);
        span
    }

    /// A frame is going out.
    pub(crate) fn outbound(&mut self, message: &HandlerMessage) {
        match &message.frame {
            Some(handler_message::Frame::Result(result)) => self.answered(result),
            #[cfg(feature = "metrics")]
            Some(handler_message::Frame::WsSend(send)) => {
                if let Some(meter) = &self.meter {
                    meter.ws_sent(send.messages.len());
                }
            }
            _ => {}
        }
    }

    fn answered(&mut self, result: &celerity_proto::v1::Result) {
        let outcome = EventOutcome::of(result.outcome.as_ref());
        match self.events.remove(&result.id) {
            Some(event) => self.finished(event, result, outcome),
            #[cfg(feature = "metrics")]
            None => self.refused(result, outcome),
            #[cfg(not(feature = "metrics"))]
            None => {}
        }
    }

    /// The event of a handler that was started was answered.
    fn finished(&self, event: Watched, result: &celerity_proto::v1::Result, outcome: EventOutcome) {
        let elapsed = event.started.elapsed();
        record_outcome(&event.span, outcome);
        let elapsed_ms = elapsed.as_secs_f64() * 1000.0;
        let records = event.records.map(|n| (n, records_failed(result.outcome.as_ref(), n)));
        if matches!(outcome, EventOutcome::Deadline | EventOutcome::Cancelled) {
            tracing::warn!(
                parent: &event.span,
                tag = %event.tag,
                event_id = %result.id,
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
    fn refused(&self, result: &celerity_proto::v1::Result, outcome: EventOutcome) {
        if let (Some(meter), Some((id, tag, records))) = (&self.meter, &self.arriving)
            && *id == result.id
        {
            let records = records.map(|n| (n, records_failed(result.outcome.as_ref(), n)));
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
            self.arriving = None;
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

/// How many records a consumer batch holds.
fn records(dispatch: &Dispatch) -> Option<usize> {
    match &dispatch.source {
        Some(Source::Consumer(batch)) => Some(batch.records.len()),
        _ => None,
    }
}
