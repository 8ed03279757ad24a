//! What a kind of event is.

use std::sync::Arc;

use celerity_proto::v1::dispatch::Source;

use super::{Handler, HandlerFuture};
use crate::context::Context;
use crate::error::Error;
use crate::kind::HandlerKind;
use crate::layer::Payload;

pub(crate) mod sealed {
    /// Kinds are the SDK's: the runtime sends five kinds of source, and each
    /// needs the session and the driver to know it.
    pub trait Sealed {}
}

/// A kind of event a handler serves: what arrives, what goes back.
///
/// Implemented by the SDK's kinds only: [`crate::http::Http`],
/// [`crate::websocket::WebSocket`], [`crate::consumer::PerRecord`],
/// [`crate::consumer::WholeBatch`], [`crate::schedule::Schedule`],
/// [`crate::custom::Custom`]. Name one to implement [`super::FromEvent`] or
/// [`super::IntoAnswer`] for a type of your own.
pub trait Kind: sealed::Sealed + Send + Sync + Sized + 'static {
    /// The kind as the runtime and the manifest name it.
    const KIND: HandlerKind;

    /// What a handler's arguments are taken from.
    type Event: Send + 'static;

    /// What a handler gives back once its return value is converted: the
    /// `Result` outcome; for HTTP, the response as the SDK sends it (the
    /// SDK's own answer types kept as a status, a content type and a body);
    /// for a handler of one consumer record, whether that record failed.
    type Answer: Send + 'static;

    /// What an argument that cannot be taken is answered with.
    type Rejection: From<Error> + Send + 'static;

    /// A registration's settings of this kind's own: how many records of a
    /// batch a per-record consumer runs at once.
    #[doc(hidden)]
    type Options: Default + Send + Sync + 'static;

    /// The answer to an argument that could not be taken.
    #[doc(hidden)]
    fn reject(rejection: Self::Rejection) -> Self::Answer;

    /// Serves one dispatched `source` with `handler`: the future of its
    /// outcome, or, when it is not this kind's source (which the session
    /// rules out before starting a handler), the kind it is.
    #[doc(hidden)]
    fn serve<H, Args>(
        handler: &Arc<H>,
        options: &Self::Options,
        source: Source,
        cx: &Context,
    ) -> Result<HandlerFuture, HandlerKind>
    where
        H: Handler<Self, Args>,
        Args: 'static;

    /// Serves a `payload` a layer handed on: the future of its outcome, or,
    /// when it is not this kind's payload, the kind it is.
    #[doc(hidden)]
    fn serve_payload<H, Args>(
        handler: &Arc<H>,
        options: &Self::Options,
        payload: Payload,
        cx: &Context,
    ) -> Result<HandlerFuture, HandlerKind>
    where
        H: Handler<Self, Args>,
        Args: 'static;
}

/// Declares a kind whose event is the dispatch's whole source: the marker
/// type and its [`Kind`], serving each event by decoding the source into
/// the kind's event (`$decode`, which may refuse it with a rejection) and
/// calling the handler once. Every kind but the per-record consumer is one.
macro_rules! whole_event_kind {
    (
        $(#[$doc:meta])*
        pub struct $kind:ident;
        serves: $handler_kind:ident from Source::$variant:ident,
        event: $event:ty = $decode:expr,
        rejection: $rejection:ty = $reject:expr,
        answer: $answer:ty $(,)?
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $kind;

        impl $crate::pipeline::sealed::Sealed for $kind {}

        impl $crate::pipeline::Kind for $kind {
            const KIND: $crate::kind::HandlerKind = $crate::kind::HandlerKind::$handler_kind;
            type Event = $event;
            type Answer = $answer;
            type Rejection = $rejection;
            type Options = ();

            fn reject(rejection: $rejection) -> $answer {
                ($reject)(rejection)
            }

            fn serve<H, Args>(
                handler: &::std::sync::Arc<H>,
                _options: &(),
                source: ::celerity_proto::v1::dispatch::Source,
                cx: &$crate::context::Context,
            ) -> Result<$crate::pipeline::HandlerFuture, $crate::kind::HandlerKind>
            where
                H: $crate::pipeline::Handler<$kind, Args>,
                Args: 'static,
            {
                match source {
                    ::celerity_proto::v1::dispatch::Source::$variant(wire) => Ok(match ($decode)(wire) {
                        Ok(event) => $crate::pipeline::erased(handler.call(event, cx)),
                        Err(rejection) => Box::pin(::std::future::ready(
                            <Self as $crate::pipeline::Kind>::reject(rejection).into(),
                        )),
                    }),
                    other => Err($crate::kind::HandlerKind::of_source(&other)),
                }
            }

            fn serve_payload<H, Args>(
                handler: &::std::sync::Arc<H>,
                _options: &(),
                payload: $crate::layer::Payload,
                cx: &$crate::context::Context,
            ) -> Result<$crate::pipeline::HandlerFuture, $crate::kind::HandlerKind>
            where
                H: $crate::pipeline::Handler<$kind, Args>,
                Args: 'static,
            {
                match payload {
                    $crate::layer::Payload::$handler_kind(event) => Ok($crate::pipeline::erased(handler.call(event, cx))),
                    other => Err(other.kind()),
                }
            }
        }
    };
}

pub(crate) use whole_event_kind;
