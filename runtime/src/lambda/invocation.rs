//! One Lambda invocation: its payload read as an event of a kind its
//! function serves, the handler it is for chosen, run through that
//! handler's registration under a session of its own, and the outcome
//! written as the invocation's answer.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use celerity_proto::v1::dispatch::Source;
use celerity_proto::v1::result::Outcome;
use celerity_proto::v1::{Dispatch, HandlerError};
use tracing::Instrument;

use super::answers::{self, Answer};
use super::events::{self, Invocation, Refused};
use super::form::{self, Form};
use super::function::Served;
use super::route::{self, Choice};
use super::sender::Endpoint;
use super::trace::trace_context;
use crate::context::{Context, StateMap};
use crate::handle::AppHandle;
use crate::oneshot::{Clock, Control, run};
use crate::session::error_type;

/// A function's handlers and what each invocation of it shares.
pub(crate) struct Function {
    pub(crate) served: Served,
    pub(crate) state: Arc<StateMap>,
    pub(crate) handle: AppHandle,
    pub(crate) endpoint: Endpoint,
    pub(crate) cancel_grace: Duration,
    pub(crate) expose_panics: bool,
}

/// What Lambda says about an invocation beside its payload.
pub(crate) struct Meta<'a> {
    pub(crate) request_id: &'a str,
    /// Unix milliseconds; 0: none.
    pub(crate) deadline_ms: u64,
    /// The X-Ray trace header.
    pub(crate) trace_header: Option<&'a str>,
}

impl Function {
    /// Answers one invocation whose payload is `raw`.
    pub(crate) async fn invoke(&self, raw: Bytes, meta: Meta<'_>) -> Answer {
        let json: Option<serde_json::Value> = serde_json::from_slice(&raw).ok();
        let form = match self.served.kind {
            Some(kind) => match Form::for_kind(kind, json.as_ref()) {
                Some(form) => form,
                None => {
                    let arrived = form::detect(json.as_ref()).describe();
                    let why = Refused(format!(
                        "this function serves {kind} events, and the payload is {arrived}, not an event of theirs"
                    ));
                    tracing::warn!(request_id = meta.request_id, "the payload was refused: {why}");
                    return answers::refused(&why);
                }
            },
            None => form::detect(json.as_ref()),
        };
        let (registration, tag, input) = match route::choose(&self.served, form, json.as_ref(), &raw) {
            Choice::Handler { registration, tag, input } => (*registration, tag, input),
            Choice::MethodNotAllowed { method, allowed } => {
                return answers::method_not_allowed(form == Form::HttpV2, &method, &allowed);
            }
            Choice::Unserved(why) => {
                tracing::warn!(request_id = meta.request_id, "no handler of this function fits the event: {why}");
                return answers::unserved(why);
            }
        };
        // A custom envelope's payload is the input, in the payload's place.
        let (raw, json) = match input {
            Some(input) => (input.clone(), serde_json::from_slice(&input).ok()),
            None => (raw, json),
        };
        let invocation = Invocation { raw: &raw, json: json.as_ref(), tag: &tag, request_id: meta.request_id };
        let event = match events::read(form, &invocation) {
            Ok(event) => event,
            Err(refused) => {
                tracing::warn!(request_id = meta.request_id, %tag, "the payload was refused: {refused}");
                return answers::refused(&refused);
            }
        };
        let mut head = false;
        let mut records = Vec::new();
        match &event.source {
            Source::Http(request) => head = request.method == "HEAD",
            Source::Consumer(batch) => records = batch.records.iter().map(|r| r.message_id.clone()).collect(),
            _ => {}
        }
        if let Some(endpoint) = event.websocket_endpoint {
            self.endpoint.set(endpoint);
        }

        let now = SystemTime::now();
        let timestamp_ms = now.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        // Lambda has timed the invocation out already: what the handler
        // did would be done for nothing, and its answer not taken.
        if meta.deadline_ms != 0 && meta.deadline_ms <= timestamp_ms {
            tracing::warn!(request_id = meta.request_id, %tag, "the invocation arrived past its deadline: not run");
            let late = HandlerError {
                r#type: error_type::DEADLINE_EXCEEDED.to_string(),
                message: "the invocation arrived past its deadline, so the handler was not run".to_string(),
                stack: String::new(),
            };
            return answers::answer(form, Some(Outcome::Error(late)), head, &records);
        }
        let dispatch = Dispatch {
            id: meta.request_id.to_string(),
            handler_tag: tag,
            timestamp_ms,
            deadline_unix_ms: i64::try_from(meta.deadline_ms).unwrap_or(i64::MAX),
            trace_context: trace_context(meta.trace_header),
            source: Some(event.source),
        };
        let cx = Context::new(
            Arc::from(dispatch.id.as_str()),
            Arc::from(dispatch.handler_tag.as_str()),
            registration.origin.function,
            dispatch.deadline_unix_ms,
            dispatch.trace_context.clone(),
            Arc::clone(&self.state),
            self.handle.clone(),
        );
        let span = tracing::info_span!(
            "celerity.event",
            tag = %dispatch.handler_tag,
            event_id = %dispatch.id,
            kind = registration.kind.as_str(),
            handler = registration.origin.function,
        );
        let control =
            Control { grace: self.cancel_grace, cancel_after: None, cancels: None, expose_panics: self.expose_panics };
        let outcome = run(Some(registration), dispatch, cx, Clock::starting_at(now), control).instrument(span).await;
        answers::answer(form, Some(outcome), head, &records)
    }
}
