//! One Lambda invocation: its payload read as the event its function
//! serves, run through the handler's registration under a session of its
//! own, and the outcome written as the invocation's answer.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use celerity_proto::v1::Dispatch;
use celerity_proto::v1::dispatch::Source;
use tracing::Instrument;

use super::answers::{self, Answer};
use super::events::{self, Invocation};
use super::form::{self, Form};
use super::function::{Resolution, by_kind};
use super::sender::Endpoint;
use super::trace::trace_context;
use crate::context::{Context, StateMap};
use crate::handle::AppHandle;
use crate::oneshot::{Clock, Control, run};
use crate::registry::Registration;

/// A function's handlers and what each invocation of it shares.
pub(crate) struct Function {
    pub(crate) registrations: Vec<Registration>,
    pub(crate) resolution: Resolution,
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
        let (form, resolved) = match &self.resolution {
            Resolution::Fixed(resolved) => {
                (Form::for_kind(resolved.registration.kind, json.as_ref()), Ok(resolved.as_ref().clone()))
            }
            Resolution::ByPayload => {
                let form = form::detect(json.as_ref());
                (form, by_kind(&self.registrations, form.kind()))
            }
        };
        let resolved = match resolved {
            Ok(resolved) => resolved,
            Err(error) => {
                tracing::warn!(request_id = meta.request_id, "no handler serves this invocation: {error}");
                return answers::unserved(form, &error.to_string());
            }
        };
        let invocation = Invocation { raw: &raw, json: json.as_ref(), tag: &resolved.tag, request_id: meta.request_id };
        let event = match events::read(form, &invocation) {
            Ok(event) => event,
            Err(refused) => {
                tracing::warn!(request_id = meta.request_id, tag = %resolved.tag, "the payload was refused: {refused}");
                return answers::refused(form, &refused);
            }
        };
        let mut head = false;
        let mut records = Vec::new();
        match &event.source {
            Source::Http(request) => {
                let served = events::tag_method(&resolved.tag);
                if let Some(answer) = answers::method_not_allowed(&request.method, served, form == Form::HttpV2) {
                    return answer;
                }
                head = request.method == "HEAD";
            }
            Source::Consumer(batch) => records = batch.records.iter().map(|r| r.message_id.clone()).collect(),
            _ => {}
        }
        if let Some(endpoint) = event.websocket_endpoint {
            self.endpoint.set(endpoint);
        }

        let now = SystemTime::now();
        let timestamp_ms = now.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        let dispatch = Dispatch {
            id: meta.request_id.to_string(),
            handler_tag: resolved.tag.clone(),
            timestamp_ms,
            deadline_unix_ms: i64::try_from(meta.deadline_ms).unwrap_or(i64::MAX),
            trace_context: trace_context(meta.trace_header),
            source: Some(event.source),
        };
        let registration = resolved.registration;
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
