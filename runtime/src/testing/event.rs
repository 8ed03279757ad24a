//! An event to call a handler with: the source, and what the dispatch
//! carries beside it (id, deadline, trace context).

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use celerity_proto::v1::{self as pb, dispatch::Source};
use prost::Message as _;

use super::consumer::TestBatch;
use super::custom::TestInvocation;
use super::http::TestRequest;
use super::schedule::TestTrigger;
use super::websocket::TestMessage;
use crate::consumer::Batch;
use crate::custom::Invocation;
use crate::http::Request;
use crate::schedule::Trigger;
use crate::session;
use crate::websocket::Message;

/// One event to call a handler with, as a `Dispatch` without its tag: any of
/// the builders ([`TestRequest`], [`TestBatch`], [`TestMessage`],
/// [`TestTrigger`], [`TestInvocation`]), the SDK's own event types
/// ([`Request`], [`Batch`], [`Message`], [`Trigger`], [`Invocation`]) or the
/// wire types convert into one.
///
/// What the builders leave out is taken from the tag the event is sent to:
/// an HTTP route, a consumer's source id, a WebSocket route, a schedule id,
/// a custom handler's name.
///
/// ```
/// use std::time::Duration;
/// use celerity::testing::{Event, TestRequest};
///
/// let event = Event::from(TestRequest::get("/orders/7"))
///     .id("ev-1")
///     .deadline_in(Duration::from_secs(5))
///     .traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
/// let dispatch = event.into_wire("GET::/orders/{id}");
/// assert_eq!(dispatch.id, "ev-1");
/// assert_eq!(dispatch.handler_tag, "GET::/orders/{id}");
/// assert!(dispatch.deadline_unix_ms > 0);
/// ```
#[derive(Debug, Clone)]
pub struct Event {
    source: Pending,
    id: Option<String>,
    deadline: Deadline,
    trace_context: HashMap<String, String>,
}

/// The source, built once the tag is known.
#[derive(Debug, Clone)]
enum Pending {
    Wire(Option<Source>),
    Http(TestRequest),
    Batch(TestBatch),
    Message(TestMessage),
    Trigger(TestTrigger),
    Invocation(TestInvocation),
}

#[derive(Debug, Clone, Copy)]
enum Deadline {
    None,
    In(Duration),
    At(SystemTime),
}

impl Event {
    fn of(source: Pending) -> Self {
        Event { source, id: None, deadline: Deadline::None, trace_context: HashMap::new() }
    }

    /// An event with a wire source.
    pub fn new(source: Source) -> Self {
        Event::of(Pending::Wire(Some(source)))
    }

    /// An event from a whole wire `Dispatch`: its id, deadline and trace
    /// context are kept; its tag is replaced by the one it is sent to. A
    /// `Dispatch` with no source tests how a handler answers one.
    pub fn from_dispatch(dispatch: pb::Dispatch) -> Self {
        let deadline = match dispatch.deadline_unix_ms {
            ms if ms > 0 => Deadline::At(UNIX_EPOCH + Duration::from_millis(ms as u64)),
            _ => Deadline::None,
        };
        Event {
            source: Pending::Wire(dispatch.source),
            id: Some(dispatch.id).filter(|id| !id.is_empty()),
            deadline,
            trace_context: dispatch.trace_context,
        }
    }

    /// Sets the dispatch id (by default `test-1`, `test-2`, ... per
    /// [`TestApp`](super::TestApp)).
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Sets the deadline to `budget` after the call starts. When it passes,
    /// the handler's cancellation fires (reason `DeadlineExceeded`); if it
    /// has not finished one cancel grace later, the call answers for it with
    /// a `HandlerError` of type `DeadlineExceeded`, as the SDK does.
    pub fn deadline_in(mut self, budget: Duration) -> Self {
        self.deadline = Deadline::In(budget);
        self
    }

    /// Sets the deadline to an instant.
    pub fn deadline_at(mut self, deadline: SystemTime) -> Self {
        self.deadline = Deadline::At(deadline);
        self
    }

    /// Adds a trace context entry, such as `tracestate`.
    pub fn trace_context(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.trace_context.insert(name.into(), value.into());
        self
    }

    /// Sets the caller's W3C `traceparent`.
    pub fn traceparent(self, value: impl Into<String>) -> Self {
        self.trace_context("traceparent", value)
    }

    /// The wire `Dispatch` for the handler bound to `tag`, with the deadline
    /// counted from now and the id `test-event` unless one was set.
    pub fn into_wire(self, tag: &str) -> pb::Dispatch {
        self.into_dispatch(tag, "test-event".to_string(), SystemTime::now())
    }

    /// The `Dispatch`, its deadline counted from `now`. A deadline already
    /// past is still one (the protocol's `0` means none).
    pub(crate) fn into_dispatch(self, tag: &str, default_id: String, now: SystemTime) -> pb::Dispatch {
        let deadline = match self.deadline {
            Deadline::None => None,
            Deadline::In(budget) => Some(now + budget),
            Deadline::At(at) => Some(at),
        };
        let deadline_unix_ms = deadline.map_or(0, |at| unix_ms(at).max(1));
        let source = match self.source {
            Pending::Wire(source) => source,
            Pending::Http(request) => Some(Source::Http(request.into_wire(Some(tag)))),
            Pending::Batch(batch) => Some(Source::Consumer(batch.into_wire(Some(tag)))),
            Pending::Message(message) => Some(Source::Websocket(message.into_wire(Some(tag)))),
            Pending::Trigger(trigger) => Some(Source::Schedule(trigger.into_wire(Some(tag)))),
            Pending::Invocation(invocation) => Some(Source::Custom(invocation.into_wire(Some(tag)))),
        };
        pb::Dispatch {
            id: self.id.unwrap_or(default_id),
            handler_tag: tag.to_string(),
            timestamp_ms: unix_ms(now).max(0) as u64,
            deadline_unix_ms,
            trace_context: self.trace_context,
            source,
        }
    }

    /// A tag fitting the event, for calling a handler by function: an HTTP
    /// request's `METHOD::route`, a WebSocket message's `event::route`, a
    /// batch's `source::{sourceId}::handler`, a trigger's
    /// `source::{scheduleId}::handler`, an invocation's `custom::{name}`.
    pub(crate) fn default_tag(&self) -> String {
        let source = match &self.source {
            Pending::Http(request) => Some(Source::Http(request.clone().into_wire(None))),
            Pending::Message(message) => Some(Source::Websocket(message.clone().into_wire(None))),
            Pending::Batch(batch) => Some(Source::Consumer(batch.clone().into_wire(None))),
            Pending::Trigger(trigger) => Some(Source::Schedule(trigger.clone().into_wire(None))),
            Pending::Invocation(invocation) => Some(Source::Custom(invocation.clone().into_wire(None))),
            Pending::Wire(source) => source.clone(),
        };
        let or = |value: &str, default: &str| if value.is_empty() { default.to_string() } else { value.to_string() };
        match source {
            Some(Source::Http(request)) => format!("{}::{}", request.method, request.route),
            Some(Source::Websocket(message)) => format!("event::{}", or(&message.route, "$default")),
            Some(Source::Consumer(batch)) => format!("source::{}::handler", or(&batch.source_id, "test-source")),
            Some(Source::Schedule(trigger)) => {
                format!("source::{}::handler", or(&trigger.schedule_id, "test-schedule"))
            }
            Some(Source::Custom(invoke)) => format!("custom::{}", or(&invoke.handler_name, "handler")),
            None => "test".to_string(),
        }
    }
}

/// `dispatch` as the driver receives it: the bytes the runtime would send,
/// decoded as the driver decodes a frame, so that its source reaches the
/// handler through the decoders production uses.
pub(crate) fn arrived(dispatch: pb::Dispatch) -> session::Event {
    match session::Event::decode(Bytes::from(dispatch.encode_to_vec())) {
        Ok(event) => event,
        // Never, for bytes prost wrote: served as it was built all the same.
        Err(_) => session::Event::from(dispatch),
    }
}

fn unix_ms(at: SystemTime) -> i64 {
    match at.duration_since(UNIX_EPOCH) {
        Ok(since) => i64::try_from(since.as_millis()).unwrap_or(i64::MAX),
        Err(_) => 0,
    }
}

macro_rules! event_from {
    ($($from:ty => |$value:ident| $source:expr;)*) => {
        $(
            impl From<$from> for Event {
                fn from($value: $from) -> Self {
                    Event::of($source)
                }
            }
        )*
    };
}

event_from! {
    TestRequest => |request| Pending::Http(request);
    TestBatch => |batch| Pending::Batch(batch);
    TestMessage => |message| Pending::Message(message);
    TestTrigger => |trigger| Pending::Trigger(trigger);
    TestInvocation => |invocation| Pending::Invocation(invocation);
    Request => |request| Pending::Http(request.into());
    Batch => |batch| Pending::Batch(batch.into());
    Message => |message| Pending::Message(message.into());
    Trigger => |trigger| Pending::Trigger(trigger.into());
    Invocation => |invocation| Pending::Invocation(invocation.into());
    Source => |source| Pending::Wire(Some(source));
    pb::HttpRequest => |request| Pending::Wire(Some(Source::Http(request)));
    pb::WebSocketMessage => |message| Pending::Wire(Some(Source::Websocket(message)));
    pb::ConsumerBatch => |batch| Pending::Wire(Some(Source::Consumer(batch)));
    pb::ScheduleTrigger => |trigger| Pending::Wire(Some(Source::Schedule(trigger)));
    pb::CustomInvoke => |invoke| Pending::Wire(Some(Source::Custom(invoke)));
}

impl From<pb::Dispatch> for Event {
    fn from(dispatch: pb::Dispatch) -> Self {
        Event::from_dispatch(dispatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deadline_is_counted_from_the_call() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000);
        let dispatch =
            Event::from(TestTrigger::new()).deadline_in(Duration::from_millis(250)).into_dispatch("t", "d".into(), now);
        assert_eq!(dispatch.deadline_unix_ms, 1_000_250);
        assert_eq!(dispatch.timestamp_ms, 1_000_000);
        assert_eq!(dispatch.id, "d");

        let dispatch = Event::from(TestTrigger::new()).deadline_at(now - Duration::from_secs(1)).into_dispatch(
            "t",
            "d".into(),
            now,
        );
        assert_eq!(dispatch.deadline_unix_ms, 999_000);

        let dispatch = Event::from(TestTrigger::new()).deadline_at(UNIX_EPOCH).into_dispatch("t", "d".into(), now);
        assert_eq!(dispatch.deadline_unix_ms, 1, "long past, but still a deadline");

        let dispatch = Event::from(TestTrigger::new()).into_dispatch("t", "d".into(), now);
        assert_eq!(dispatch.deadline_unix_ms, 0);
    }

    #[test]
    fn a_wire_dispatch_keeps_its_id_deadline_and_trace_context() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000);
        let wire = pb::Dispatch {
            id: "ev-9".into(),
            handler_tag: "old".into(),
            deadline_unix_ms: 1_000_500,
            trace_context: HashMap::from([("traceparent".into(), "tp".into())]),
            source: None,
            ..Default::default()
        };
        let dispatch = Event::from(wire).into_dispatch("new", "d".into(), now);
        assert_eq!((dispatch.id.as_str(), dispatch.handler_tag.as_str()), ("ev-9", "new"));
        assert_eq!(dispatch.deadline_unix_ms, 1_000_500);
        assert_eq!(dispatch.trace_context["traceparent"], "tp");
        assert!(dispatch.source.is_none());
    }

    #[test]
    fn builders_take_what_they_leave_out_from_the_tag() {
        let dispatch = Event::from(TestRequest::get("/orders/7")).into_wire("GET::/orders/{id}");
        let Some(Source::Http(request)) = dispatch.source else { panic!("not HTTP") };
        assert_eq!(request.path_params["id"].values, ["7"]);
        let dispatch = Event::from(TestBatch::new()).into_wire("source::orders::process");
        let Some(Source::Consumer(batch)) = dispatch.source else { panic!("not a batch") };
        assert_eq!(batch.source_id, "orders");
    }

    #[test]
    fn a_dispatch_arrives_as_the_driver_decodes_it() {
        let dispatch = Event::from(TestRequest::get("/orders/7").header("accept", "text/plain"))
            .id("ev-1")
            .traceparent("tp")
            .into_wire("GET::/orders/{id}");
        let event = arrived(dispatch.clone());
        assert_eq!((event.id.as_str(), event.handler_tag.as_str()), ("ev-1", "GET::/orders/{id}"));
        assert_eq!(event.trace_context, dispatch.trace_context);
        let source = event.source.expect("a source");
        assert!(matches!(source, session::LazySource::Encoded(_)), "left for the handler's task to decode");
        assert_eq!(source.decode().unwrap(), dispatch.source.unwrap());
    }

    #[test]
    fn default_tags_for_direct_calls() {
        let tag = |event: Event| event.default_tag();
        assert_eq!(tag(TestRequest::post("/orders").into()), "POST::/orders");
        assert_eq!(tag(TestRequest::get("/orders/1").route("/orders/{id}").into()), "GET::/orders/{id}");
        assert_eq!(tag(TestMessage::connect().into()), "event::$connect");
        assert_eq!(tag(TestMessage::text("x").into()), "event::$default");
        assert_eq!(tag(TestBatch::new().into()), "source::test-source::handler");
        assert_eq!(tag(TestBatch::new().source_id("orders").into()), "source::orders::handler");
        assert_eq!(tag(TestTrigger::new().into()), "source::test-schedule::handler");
        assert_eq!(tag(TestInvocation::empty().handler_name("resize").into()), "custom::resize");
        assert_eq!(tag(Event::from_dispatch(pb::Dispatch::default())), "test");
    }
}
