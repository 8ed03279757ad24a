//! What a panicking handler is answered with, and what of the panic goes
//! on the wire.
//!
//! The runtime shows `HandlerError` text to HTTP callers, so by default
//! nothing of a panic leaves the process: the answer carries the fixed
//! [`HIDDEN`] text and no stack, and a consumer record that panicked fails
//! with `panicked`. With `CELERITY_EXPOSE_PANICS=true` the answer carries the
//! panic's message and stack, and the record's failure `panicked: <message>`.
//! Either way the message is logged locally.

use std::any::Any;
use std::backtrace::Backtrace;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;

use celerity_proto::v1::{HandlerError, result::Outcome};

use crate::pipeline::HandlerFuture;
use crate::reply::Reply;
use crate::session::error_type;
use crate::settings::Settings;

/// The message of the answer to a panic whose own message does not go on the
/// wire (or that has none).
pub(crate) const HIDDEN: &str = "the handler panicked";

/// Applies the settings' choice of what a panic shows (process-wide).
pub(crate) fn install(settings: &Settings) {
    EXPOSE_PANICS.store(settings.expose_panics, Ordering::Relaxed);
    if settings.expose_panics {
        install_panic_hook();
    }
}

/// Whether a panic's message and stack go on the wire
/// (`CELERITY_EXPOSE_PANICS`), for the whole process.
static EXPOSE_PANICS: AtomicBool = AtomicBool::new(false);
static PANIC_HOOK: Once = Once::new();

thread_local! {
    /// Set while user code of a handler runs on this thread.
    static IN_HANDLER: Cell<bool> = const { Cell::new(false) };
    /// The stack of the last handler panic on this thread, when opted in.
    static PANIC_STACK: RefCell<Option<Backtrace>> = const { RefCell::new(None) };
    /// A choice over the process's, while `celerity::testing` runs a call on
    /// this thread: each `TestApp` has its own, and tests run in parallel.
    static EXPOSE_HERE: Cell<Option<bool>> = const { Cell::new(None) };
}

/// Whether a panic's message and stack go on the wire, here and now.
fn exposed() -> bool {
    EXPOSE_HERE.with(Cell::get).unwrap_or_else(|| EXPOSE_PANICS.load(Ordering::Relaxed))
}

/// Runs `f` with panics on this thread exposed or not, whatever the process's
/// setting: how `celerity::testing` answers a call as the SDK would with its
/// own choice of `CELERITY_EXPOSE_PANICS`.
pub(crate) fn exposing<T>(expose: bool, f: impl FnOnce() -> T) -> T {
    /// Puts the previous choice back, even should `f` unwind.
    struct Restore(Option<bool>);
    impl Drop for Restore {
        fn drop(&mut self) {
            EXPOSE_HERE.with(|here| here.set(self.0));
        }
    }
    if expose {
        install_panic_hook();
    }
    let _restore = Restore(EXPOSE_HERE.with(|here| here.replace(Some(expose))));
    f()
}

/// The text of a panic's payload, if it has one (`panic!` always gives one).
pub(crate) fn payload_text(panic: &(dyn Any + Send)) -> Option<&str> {
    if let Some(text) = panic.downcast_ref::<&str>() {
        Some(text)
    } else {
        panic.downcast_ref::<String>().map(String::as_str)
    }
}

/// The text of a panic's payload when it may go on the wire (opted in with
/// `CELERITY_EXPOSE_PANICS`); `None` by default or when it has none.
pub(crate) fn panic_text(panic: &(dyn Any + Send)) -> Option<&str> {
    if exposed() { payload_text(panic) } else { None }
}

/// Installs (once) a panic hook that records the stack of a panic in handler
/// code for the answer while panics are exposed, then runs the hook that was
/// there before (by default, the one that prints the panic). Until the
/// opt-in, no hook is installed and nothing is captured.
fn install_panic_hook() {
    PANIC_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_HANDLER.with(Cell::get) && exposed() {
                let stack = Backtrace::force_capture();
                PANIC_STACK.with(|slot| *slot.borrow_mut() = Some(stack));
            }
            previous(info);
        }));
    });
}

/// Runs user code of a handler, turning a panic into its answer.
pub(crate) fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, Outcome> {
    PANIC_STACK.with(|slot| slot.borrow_mut().take());
    let was = IN_HANDLER.with(|flag| flag.replace(true));
    let result = std::panic::catch_unwind(AssertUnwindSafe(f));
    IN_HANDLER.with(|flag| flag.set(was));
    result.map_err(|panic| {
        // The panic hook has printed the panic to stderr already (unless the
        // application replaced it), with where it happened but not for which
        // event. This one structured line goes through `tracing` inside the
        // event's span, so the message is in the application's logs next to
        // the event it broke, whether or not it also goes on the wire; more
        // (the stack, a second line) would only repeat the hook.
        let message = payload_text(panic.as_ref()).unwrap_or("(a payload that is not text)");
        tracing::error!(panic = message, "the handler panicked");
        let stack = PANIC_STACK.with(|slot| slot.borrow_mut().take());
        panic_outcome(panic.as_ref(), stack.filter(|_| exposed()))
    })
}

/// A handler's future, each poll guarded: a panic ends it with its answer.
pub(crate) struct CatchPanic {
    pub(crate) future: HandlerFuture,
}

impl Future for CatchPanic {
    type Output = Reply;

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Reply> {
        let future = &mut self.future;
        match guarded(|| future.as_mut().poll(cx)) {
            Ok(poll) => poll,
            Err(outcome) => Poll::Ready(outcome.into()),
        }
    }
}

/// The answer for a handler that panicked: type `panic`, with the fixed
/// [`HIDDEN`] message and no stack unless the application opted in to the
/// panic's own message and stack.
fn panic_outcome(panic: &(dyn Any + Send), stack: Option<Backtrace>) -> Outcome {
    Outcome::Error(HandlerError {
        message: panic_text(panic).unwrap_or(HIDDEN).to_string(),
        r#type: error_type::PANIC.to_string(),
        stack: stack.map(|stack| stack.to_string()).unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(outcome: Outcome) -> HandlerError {
        match outcome {
            Outcome::Error(error) => error,
            other => panic!("expected a HandlerError, got {other:?}"),
        }
    }

    fn error_of_str() -> HandlerError {
        answer(guarded(|| -> () { std::panic::panic_any("static boom") }).unwrap_err())
    }

    // The process-wide setting is never changed by these tests (they run in
    // parallel): each choice is made for its own thread with `exposing`.

    #[test]
    fn a_panic_is_answered_with_a_fixed_text_and_no_stack_by_default() {
        exposing(false, || {
            let error = answer(guarded(|| -> () { panic!("secret {}", 7) }).unwrap_err());
            assert_eq!((error.r#type.as_str(), error.message.as_str(), error.stack.as_str()), ("panic", HIDDEN, ""));
            assert_eq!(error_of_str().message, HIDDEN);
        });
    }

    #[test]
    fn with_the_opt_in_the_message_and_stack_go_on_the_wire() {
        exposing(true, || {
            let error = answer(guarded(|| -> () { panic!("boom {}", 7) }).unwrap_err());
            assert_eq!((error.r#type.as_str(), error.message.as_str()), ("panic", "boom 7"));
            assert!(!error.stack.is_empty(), "the stack goes with the opt-in");
            assert_eq!(error_of_str().message, "static boom");
            let odd = answer(guarded(|| -> () { std::panic::panic_any(42u8) }).unwrap_err());
            assert_eq!(odd.message, HIDDEN);
        });
        // The choice ends with `exposing`.
        assert_eq!(EXPOSE_HERE.with(Cell::get), None);
    }

    #[test]
    fn panic_text_is_given_only_when_opted_in() {
        let payload: Box<dyn Any + Send> = Box::new(String::from("boom"));
        assert_eq!(exposing(false, || panic_text(payload.as_ref())), None);
        assert_eq!(exposing(true, || panic_text(payload.as_ref())), Some("boom"));
        assert_eq!(exposing(true, || panic_text(&42u8)), None);
        assert_eq!(payload_text(payload.as_ref()), Some("boom"));
    }

    #[test]
    fn a_panicking_future_is_answered() {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let future: HandlerFuture = Box::pin(async {
            tokio::task::yield_now().await;
            panic!("later");
        });
        let error = answer(runtime.block_on(CatchPanic { future }).into_outcome());
        assert_eq!(error.message, HIDDEN);
        let future: HandlerFuture = Box::pin(async {
            tokio::task::yield_now().await;
            panic!("later");
        });
        let error = exposing(true, || answer(runtime.block_on(CatchPanic { future }).into_outcome()));
        assert_eq!(error.message, "later");
    }
}
