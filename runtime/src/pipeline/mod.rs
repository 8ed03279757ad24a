//! One handler pipeline for every kind of event.
//!
//! A *kind* ([`Kind`]) is a type naming one kind of event: HTTP, WebSocket,
//! a consumer taking one record at a time or the whole batch, schedule,
//! custom. It says what a handler's arguments are taken from (its
//! [`Kind::Event`]: an `http::Request`, a `websocket::Message`, a consumer
//! record, ...), what a handler gives back ([`Kind::Answer`]) and how an
//! argument that cannot be taken is answered ([`Kind::Rejection`]).
//!
//! An event becomes a handler's arguments through [`FromEvent`], one
//! argument at a time, in order; the last may take the whole event. The
//! return value becomes the answer through [`IntoAnswer`]. [`Handler`] is
//! implemented once, over every arity, for every `async fn` whose arguments
//! and return value fit a kind: that one implementation is what both the
//! attributes and the explicit API register.
//!
//! What is not a kind's own stays out of it: `Context`, `State<T>` and
//! `WsSender` are arguments of every kind, implemented once; the protocol
//! rules (deadlines, cancellation, the source and shape checks) are the
//! session's; catching panics is [`start`]'s.

mod answer;
mod endpoint;
mod extract;
mod handler;
mod kind;
mod needs;

pub use answer::IntoAnswer;
pub(crate) use endpoint::{Endpoint, HandlerFuture, endpoint, erased, start};
#[cfg(test)]
pub(crate) use endpoint::{dispatch_to, other_sources, serve_once};
pub use extract::FromEvent;
pub use handler::{Handler, HandlerCall};
pub use kind::Kind;
pub(crate) use kind::{sealed, whole_event_kind};
pub use needs::Needs;

/// Declares the traits that name what a handler of one kind takes, returns
/// and is, for compile errors that say so in that kind's own words.
///
/// They are blanket implementations over [`FromEvent`], [`IntoAnswer`] and
/// [`Handler`] for that kind, so they add no rule of their own; marked
/// `do_not_recommend`, an error for one of them is reported in its words,
/// not in the generic trait's. The attribute macros check each argument and
/// the return value against the first two, spanned at each, and the
/// explicit API bounds its handlers by the third.
macro_rules! kind_diagnostics {
    (
        kind: $kind:ty,
        argument: $argument:ident { message: $am:literal, label: $al:literal, notes: [$($an:literal),* $(,)?] $(,)? },
        answer: $answer:ident { message: $rm:literal, label: $rl:literal, notes: [$($rn:literal),* $(,)?] $(,)? },
        handler: $(#[$handler_doc:meta])* $handler:ident { message: $hm:literal, label: $hl:literal, notes: [$($hn:literal),* $(,)?] $(,)? } $(,)?
    ) => {
        /// A type this kind's handlers can take as an argument. Not a public
        /// API: the attribute macros check arguments against it.
        #[doc(hidden)]
        #[diagnostic::on_unimplemented(message = $am, label = $al $(, note = $an)*)]
        pub trait $argument {
            /// Named by the attribute macros' spanned checks.
            const OK: () = ();
            /// [`FromEvent::READS_BODY`], for the attribute macros' check
            /// that one argument at most reads the body: a type that is not
            /// an argument is then reported once, in these words.
            const READS_BODY: bool;
        }

        #[diagnostic::do_not_recommend]
        impl<T: $crate::pipeline::FromEvent<$kind>> $argument for T {
            const READS_BODY: bool = <T as $crate::pipeline::FromEvent<$kind>>::READS_BODY;
        }

        /// A type this kind's handlers can return. Not a public API: the
        /// attribute macros check return values against it.
        #[doc(hidden)]
        #[diagnostic::on_unimplemented(message = $rm, label = $rl $(, note = $rn)*)]
        pub trait $answer {
            /// Named by the attribute macros' spanned checks.
            fn check(&self) {}
        }

        #[diagnostic::do_not_recommend]
        impl<T: $crate::pipeline::IntoAnswer<$kind>> $answer for T {}

        $(#[$handler_doc])*
        #[diagnostic::on_unimplemented(message = $hm, label = $hl $(, note = $hn)*)]
        pub trait $handler<Args>: $crate::pipeline::Handler<$kind, Args> {}

        #[diagnostic::do_not_recommend]
        impl<H: $crate::pipeline::Handler<$kind, Args>, Args> $handler<Args> for H {}
    };
}

pub(crate) use kind_diagnostics;
