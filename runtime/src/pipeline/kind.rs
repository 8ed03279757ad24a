//! What a kind of event is.

use std::sync::Arc;

use celerity_proto::v1::dispatch::Source;

use super::{Handler, HandlerFuture};
use crate::context::Context;
use crate::error::Error;
use crate::kind::HandlerKind;

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
    /// `Result` outcome, or, for a handler of one consumer record, whether
    /// that record failed.
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
}
