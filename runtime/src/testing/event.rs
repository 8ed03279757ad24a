//! An event to call a handler with: the source, and what the dispatch
//! carries beside it (id, deadline, trace context).

use std::time::SystemTime;

use bytes::Bytes;
use celerity_proto::v1::{self as pb, dispatch::Source};
use prost::Message as _;

use super::consumer::TestBatch;
use super::custom::TestInvocation;
use super::envelope::{Envelope, envelope_setters};
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
/// a custom handler's name. What a builder says of the dispatch beside the
/// source (its id, deadline and trace context) comes along.
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
    envelope: Envelope,
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

impl Event {
    fn of(source: Pending) -> Self {
        Event { source, envelope: Envelope::default() }
    }

    /// An event with a wire source.
    pub fn new(source: Source) -> Self {
        Event::of(Pending::Wire(Some(source)))
    }

    /// An event from a whole wire `Dispatch`: its id, deadline and trace
    /// context are kept; its tag is replaced by the one it is sent to. A
    /// `Dispatch` with no source tests how a handler answers one.
    pub fn from_dispatch(dispatch: pb::Dispatch) -> Self {
        let mut envelope = Envelope::default();
        for (name, value) in dispatch.trace_context {
            envelope.set_trace_context(name, value);
        }
        if dispatch.deadline_unix_ms > 0 {
            envelope.set_deadline_unix_ms(dispatch.deadline_unix_ms);
        }
        if !dispatch.id.is_empty() {
            envelope.set_id(dispatch.id);
        }
        Event { source: Pending::Wire(dispatch.source), envelope }
    }

    envelope_setters!();

    /// The wire `Dispatch` for the handler bound to `tag`, with the deadline
    /// counted from now and the id `test-event` unless one was set.
    pub fn into_wire(self, tag: &str) -> pb::Dispatch {
        self.into_dispatch(tag, "test-event".to_string(), SystemTime::now())
    }

    /// The `Dispatch` for `tag`, its deadline counted from `now`.
    pub(crate) fn into_dispatch(self, tag: &str, default_id: String, now: SystemTime) -> pb::Dispatch {
        let source = match self.source {
            Pending::Wire(source) => source,
            Pending::Http(request) => Some(Source::Http(request.into_wire(Some(tag)))),
            Pending::Batch(batch) => Some(Source::Consumer(batch.into_wire(Some(tag)))),
            Pending::Message(message) => Some(Source::Websocket(message.into_wire(Some(tag)))),
            Pending::Trigger(trigger) => Some(Source::Schedule(trigger.into_wire(Some(tag)))),
            Pending::Invocation(invocation) => Some(Source::Custom(invocation.into_wire(Some(tag)))),
        };
        self.envelope.into_dispatch(tag.to_string(), default_id, now, source)
    }

    /// A tag fitting the event, for calling a handler by function: the one
    /// set on it, or its builder's own (see each builder's `build`); for a
    /// wire source, the same made from its fields.
    pub(crate) fn default_tag(&self) -> String {
        if let Some(tag) = self.envelope.tag() {
            return tag.to_string();
        }
        match &self.source {
            Pending::Http(request) => request.default_tag(),
            Pending::Message(message) => message.default_tag(),
            Pending::Batch(batch) => batch.default_tag(),
            Pending::Trigger(trigger) => trigger.default_tag(),
            Pending::Invocation(invocation) => invocation.default_tag(),
            Pending::Wire(Some(Source::Http(request))) => TestRequest::from_wire(request.clone()).default_tag(),
            Pending::Wire(Some(Source::Websocket(message))) => TestMessage::from_wire(message.clone()).default_tag(),
            Pending::Wire(Some(Source::Consumer(batch))) => TestBatch::from_wire(batch.clone()).default_tag(),
            Pending::Wire(Some(Source::Schedule(trigger))) => TestTrigger::from_wire(trigger.clone()).default_tag(),
            Pending::Wire(Some(Source::Custom(invoke))) => TestInvocation::from_wire(invoke.clone()).default_tag(),
            Pending::Wire(None) => "test".to_string(),
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

/// Each builder's event, with what the builder says of the dispatch.
macro_rules! event_from_builders {
    ($($builder:ident => $pending:ident;)*) => {
        $(
            impl From<$builder> for Event {
                fn from(mut builder: $builder) -> Self {
                    let envelope = std::mem::take(&mut builder.envelope);
                    Event { source: Pending::$pending(builder), envelope }
                }
            }
        )*
    };
}

event_from_builders! {
    TestRequest => Http;
    TestBatch => Batch;
    TestMessage => Message;
    TestTrigger => Trigger;
    TestInvocation => Invocation;
}

event_from! {
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
    use std::collections::HashMap;
    use std::time::{Duration, UNIX_EPOCH};

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
