//! An event as layers see it: its kind, its context, and what arrived.

use celerity_proto::v1::dispatch::Source;
use celerity_proto::v1::result::Outcome;

use crate::consumer::Batch;
use crate::context::Context;
use crate::custom::Invocation;
use crate::http::{Http, HttpError, Request};
use crate::kind::HandlerKind;
use crate::pipeline::Kind;
use crate::schedule::Trigger;
use crate::websocket::Message;

/// What arrived with an event, in the SDK's types: the request, message,
/// batch, trigger or invocation the handler's arguments will be taken from.
#[derive(Debug, Clone)]
#[non_exhaustive]
// Boxing the request would cost an allocation per HTTP event to save a few
// hundred bytes of moves: a payload is moved a handful of times.
#[allow(clippy::large_enum_variant)]
pub enum Payload {
    /// An HTTP request.
    Http(Request),
    /// A WebSocket message.
    WebSocket(Message),
    /// A consumer batch, for a handler of the whole batch or of one record
    /// at a time.
    Consumer(Batch),
    /// A schedule trigger.
    Schedule(Trigger),
    /// A custom invocation.
    Custom(Invocation),
}

impl Payload {
    /// The kind of event it arrives with.
    pub fn kind(&self) -> HandlerKind {
        match self {
            Payload::Http(_) => HandlerKind::Http,
            Payload::WebSocket(_) => HandlerKind::WebSocket,
            Payload::Consumer(_) => HandlerKind::Consumer,
            Payload::Schedule(_) => HandlerKind::Schedule,
            Payload::Custom(_) => HandlerKind::Custom,
        }
    }

    /// The payload of a dispatched source; a request that cannot be one
    /// is answered at once (see [`Payload::http`]).
    pub(crate) fn from_source(source: Source) -> Result<Payload, Outcome> {
        Ok(match source {
            Source::Http(wire) => return Payload::http(Request::from_wire(wire)),
            Source::Websocket(wire) => Payload::WebSocket(Message::from_wire(wire)),
            Source::Consumer(wire) => Payload::Consumer(Batch::from_wire(wire)),
            Source::Schedule(wire) => Payload::Schedule(Trigger::from_wire(wire)),
            Source::Custom(wire) => Payload::Custom(Invocation::from_wire(wire)),
        })
    }

    /// The payload of a request as it was converted from the wire; one the
    /// SDK cannot read (its method is not valid HTTP) is answered at once,
    /// as the HTTP kind answers an argument that cannot be taken.
    pub(crate) fn http(request: Result<Request, HttpError>) -> Result<Payload, Outcome> {
        request.map(Payload::Http).map_err(|rejection| <Http as Kind>::reject(rejection).into_outcome())
    }
}

/// An event on its way to its handler, as a layer sees it: the kind of
/// handler it goes to, its [`Context`] (tag, deadline, cancellation, trace
/// context) and its [`Payload`]. A layer may change the payload before it
/// goes on.
///
/// ```
/// use celerity::layer::{Event, Payload};
///
/// /// The request's `x-tenant` header, for an HTTP event.
/// fn tenant(event: &Event) -> Option<&str> {
///     match event.payload() {
///         Payload::Http(request) => request.headers().get("x-tenant")?.to_str().ok(),
///         _ => None,
///     }
/// }
/// ```
#[derive(Debug, Clone)]
pub struct Event {
    kind: HandlerKind,
    cx: Context,
    payload: Payload,
}

/// What an event says of where it goes, on a type holding its `kind` and
/// its context as `cx`: an [`Event`] and what a guard sees of one.
macro_rules! event_head {
    () => {
        /// The kind of handler the event goes to.
        pub fn kind(&self) -> $crate::kind::HandlerKind {
            self.kind
        }

        /// The tag it was dispatched to.
        pub fn tag(&self) -> &str {
            self.cx.tag()
        }

        /// The event's context, as the handler will see it.
        pub fn context(&self) -> &$crate::context::Context {
            &self.cx
        }
    };
}

pub(crate) use event_head;

impl Event {
    /// An event for a handler of `kind`.
    pub(crate) fn new(kind: HandlerKind, cx: Context, payload: Payload) -> Self {
        Event { kind, cx, payload }
    }

    event_head!();

    /// What arrived.
    pub fn payload(&self) -> &Payload {
        &self.payload
    }

    /// What arrived, to change before it goes on.
    pub fn payload_mut(&mut self) -> &mut Payload {
        &mut self.payload
    }

    /// The HTTP request, for an HTTP event.
    pub fn request(&self) -> Option<&Request> {
        match &self.payload {
            Payload::Http(request) => Some(request),
            _ => None,
        }
    }

    pub(crate) fn into_parts(self) -> (HandlerKind, Context, Payload) {
        (self.kind, self.cx, self.payload)
    }
}
