//! What the generated code of each handler kind names in the `celerity`
//! crate: the kind, and the traits that say in its words what its handlers
//! take and return.

use proc_macro2::TokenStream;
use quote::quote;

use celerity_tags::TagKind;

/// The library items one handler kind's generated code names.
pub struct KindSpec {
    /// The kind: `::celerity::http::Http` and the like.
    pub kind: TokenStream,
    /// What an argument of the kind is checked against.
    pub argument: TokenStream,
    /// What a return value of the kind is checked against.
    pub answer: TokenStream,
    /// When the kind has a body only one argument may read: the trait in
    /// `celerity::__private` whose unmet bound says, in the kind's words,
    /// that two arguments read it.
    pub body_reader: Option<&'static str>,
}

/// The forms of a `#[consumer]`.
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
                kind: quote!(::celerity::http::Http),
                argument: quote!(::celerity::http::HttpArgument),
                answer: quote!(::celerity::http::HttpAnswer),
                body_reader: Some("OneRequestBodyReader"),
            },
            TagKind::WebSocket => KindSpec {
                kind: quote!(::celerity::websocket::WebSocket),
                argument: quote!(::celerity::websocket::WebSocketArgument),
                answer: quote!(::celerity::websocket::WebSocketAnswer),
                body_reader: Some("OneMessageBodyReader"),
            },
            TagKind::Consumer => match mode {
                ConsumerMode::Record => KindSpec {
                    kind: quote!(::celerity::consumer::PerRecord),
                    argument: quote!(::celerity::consumer::ConsumerArgument),
                    answer: quote!(::celerity::consumer::ConsumerAnswer),
                    body_reader: None,
                },
                ConsumerMode::Batch => KindSpec {
                    kind: quote!(::celerity::consumer::WholeBatch),
                    argument: quote!(::celerity::consumer::ConsumerBatchArgument),
                    answer: quote!(::celerity::consumer::ConsumerBatchAnswer),
                    body_reader: None,
                },
            },
            TagKind::Schedule => KindSpec {
                kind: quote!(::celerity::schedule::Schedule),
                argument: quote!(::celerity::schedule::ScheduleArgument),
                answer: quote!(::celerity::schedule::ScheduleAnswer),
                body_reader: None,
            },
            TagKind::Custom => KindSpec {
                kind: quote!(::celerity::custom::Custom),
                argument: quote!(::celerity::custom::CustomArgument),
                answer: quote!(::celerity::custom::CustomAnswer),
                body_reader: Some("OnePayloadReader"),
            },
        }
    }
}
