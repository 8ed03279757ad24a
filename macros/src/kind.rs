//! What the generated code of each handler kind calls in the `celerity`
//! crate: its event, extractor and responder traits, rejection function and
//! adapter.

use proc_macro2::TokenStream;
use quote::quote;

use celerity_tags::TagKind;

/// The library items one handler kind's generated code uses.
pub struct KindSpec {
    /// `::celerity::HandlerKind::<variant>`.
    pub variant: TokenStream,
    /// The event the adapter hands to the generated function.
    pub event: TokenStream,
    /// The extractor trait.
    pub extract: TokenStream,
    /// Its method for every argument but the last.
    pub from: TokenStream,
    /// Its method for the last argument, which may take the whole event.
    pub from_owned: TokenStream,
    /// Turns an extraction error into the outcome.
    pub reject: TokenStream,
    /// The responder trait.
    pub respond: TokenStream,
    /// Its method.
    pub respond_method: TokenStream,
    /// The adapter type, with a `new(closure)` constructor.
    pub adapter: TokenStream,
    /// When the extractor trait has `READS_BODY`: what the body is called,
    /// for the message when two arguments read it.
    pub body: Option<&'static str>,
    /// How the kind is named in messages: "an HTTP handler".
    pub handler_noun: &'static str,
}

/// The kinds of event a `#[consumer]` handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsumerMode {
    /// One record at a time.
    Record,
    /// The whole batch.
    Batch,
}

impl KindSpec {
    pub fn of(kind: TagKind, mode: ConsumerMode) -> KindSpec {
        match kind {
            TagKind::Http => KindSpec {
                variant: quote!(::celerity::HandlerKind::Http),
                event: quote!(::celerity::http::Request),
                extract: quote!(::celerity::http::FromRequest),
                from: quote!(from_request),
                from_owned: quote!(from_request_owned),
                reject: quote!(::celerity::__private::http_reject),
                respond: quote!(::celerity::__private::IntoHttpOutcome),
                respond_method: quote!(into_http_outcome),
                adapter: quote!(::celerity::HttpFn),
                body: Some("the request body"),
                handler_noun: "an HTTP handler",
            },
            TagKind::WebSocket => KindSpec {
                variant: quote!(::celerity::HandlerKind::WebSocket),
                event: quote!(::celerity::websocket::Message),
                extract: quote!(::celerity::websocket::FromMessage),
                from: quote!(from_message),
                from_owned: quote!(from_message_owned),
                reject: quote!(::celerity::websocket::reject),
                respond: quote!(::celerity::websocket::IntoAck),
                respond_method: quote!(into_ack),
                adapter: quote!(::celerity::websocket::MessageFn),
                body: Some("the message body"),
                handler_noun: "a WebSocket handler",
            },
            TagKind::Consumer => match mode {
                ConsumerMode::Record => KindSpec {
                    variant: quote!(::celerity::HandlerKind::Consumer),
                    event: quote!(::celerity::consumer::RawRecord),
                    extract: quote!(::celerity::consumer::FromRecord),
                    from: quote!(from_record),
                    from_owned: quote!(from_record_owned),
                    reject: quote!(::celerity::consumer::reject_record),
                    respond: quote!(::celerity::consumer::IntoRecordOutcome),
                    respond_method: quote!(into_record_outcome),
                    adapter: quote!(::celerity::consumer::RecordFn),
                    body: None,
                    handler_noun: "a consumer",
                },
                ConsumerMode::Batch => KindSpec {
                    variant: quote!(::celerity::HandlerKind::Consumer),
                    event: quote!(::celerity::consumer::Batch),
                    extract: quote!(::celerity::consumer::FromBatch),
                    from: quote!(from_batch),
                    from_owned: quote!(from_batch_owned),
                    reject: quote!(::celerity::consumer::reject_batch),
                    respond: quote!(::celerity::consumer::IntoBatchOutcome),
                    respond_method: quote!(into_batch_outcome),
                    adapter: quote!(::celerity::consumer::BatchFn),
                    body: None,
                    handler_noun: "a batch consumer",
                },
            },
            TagKind::Schedule => KindSpec {
                variant: quote!(::celerity::HandlerKind::Schedule),
                event: quote!(::celerity::schedule::Trigger),
                extract: quote!(::celerity::schedule::FromTrigger),
                from: quote!(from_trigger),
                from_owned: quote!(from_trigger_owned),
                reject: quote!(::celerity::schedule::reject),
                respond: quote!(::celerity::schedule::IntoScheduleOutcome),
                respond_method: quote!(into_schedule_outcome),
                adapter: quote!(::celerity::schedule::TriggerFn),
                body: None,
                handler_noun: "a schedule handler",
            },
            TagKind::Custom => KindSpec {
                variant: quote!(::celerity::HandlerKind::Custom),
                event: quote!(::celerity::custom::Invocation),
                extract: quote!(::celerity::custom::FromInvocation),
                from: quote!(from_invocation),
                from_owned: quote!(from_invocation_owned),
                reject: quote!(::celerity::custom::reject),
                respond: quote!(::celerity::custom::IntoCustomOutcome),
                respond_method: quote!(into_custom_outcome),
                adapter: quote!(::celerity::custom::InvocationFn),
                body: Some("the payload"),
                handler_noun: "a custom handler",
            },
        }
    }
}
