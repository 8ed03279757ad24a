//! What a panicking handler is answered with, and what of the panic goes
//! on the wire.

use std::backtrace::Backtrace;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;

use celerity_proto::v1::{HandlerError, result::Outcome};

use crate::handler::HandlerFuture;
use crate::session::error_type;
use crate::settings::Settings;

/// Applies the settings' choice of what a panic shows (process-wide).
pub(crate) fn install(settings: &Settings) {
    install_panic_hook(settings.expose_stack);
}

/// Whether a panic's stack goes on the wire (`CELERITY_EXPOSE_STACK`).
static EXPOSE_STACK: AtomicBool = AtomicBool::new(false);
static PANIC_HOOK: Once = Once::new();

thread_local! {
    /// Set while user code of a handler runs on this thread.
    static IN_HANDLER: Cell<bool> = const { Cell::new(false) };
    /// The stack of the last handler panic on this thread, when opted in.
    static PANIC_STACK: RefCell<Option<Backtrace>> = const { RefCell::new(None) };
}

/// With the opt-in, installs (once) a panic hook that records the stack of a
/// panic in handler code for the answer, then runs the hook that was there
/// before (by default, the one that prints the panic). Without it, no hook
/// is installed and nothing is captured.
fn install_panic_hook(expose: bool) {
    EXPOSE_STACK.store(expose, Ordering::Relaxed);
    if !expose {
        return;
    }
    PANIC_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if EXPOSE_STACK.load(Ordering::Relaxed) && IN_HANDLER.with(Cell::get) {
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
        let stack = PANIC_STACK.with(|slot| slot.borrow_mut().take());
        panic_outcome(panic.as_ref(), stack.filter(|_| EXPOSE_STACK.load(Ordering::Relaxed)))
    })
}

/// A handler's future, each poll guarded: a panic ends it with its answer.
pub(crate) struct CatchPanic {
    pub(crate) future: HandlerFuture,
}

impl Future for CatchPanic {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Outcome> {
        let future = &mut self.future;
        match guarded(|| future.as_mut().poll(cx)) {
            Ok(poll) => poll,
            Err(outcome) => Poll::Ready(outcome),
        }
    }
}

/// The answer for a handler that panicked: type `panic` and the panic
/// message. The runtime shows `HandlerError` text to HTTP callers, so the
/// stack goes with it only when the application opted in.
fn panic_outcome(panic: &(dyn std::any::Any + Send), stack: Option<Backtrace>) -> Outcome {
    let message = if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "the handler panicked".to_string()
    };
    Outcome::Error(HandlerError {
        message,
        r#type: error_type::PANIC.to_string(),
        stack: stack.map(|stack| stack.to_string()).unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(outcome: Outcome) -> HandlerError {
        match outcome {
            Outcome::Error(error) => error,
            other => panic!("expected a HandlerError, got {other:?}"),
        }
    }

    #[test]
    fn a_panic_is_answered_with_its_message_and_no_stack_by_default() {
        let error = error(guarded(|| -> () { panic!("boom {}", 7) }).unwrap_err());
        assert_eq!(error.r#type, "panic");
        assert_eq!(error.message, "boom 7");
        assert!(error.stack.is_empty());
        let error = error_of_str();
        assert_eq!(error.message, "static boom");
    }

    fn error_of_str() -> HandlerError {
        error(guarded(|| -> () { std::panic::panic_any("static boom") }).unwrap_err())
    }

    #[test]
    fn a_panicking_future_is_answered() {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let future: HandlerFuture = Box::pin(async {
            tokio::task::yield_now().await;
            panic!("later");
        });
        let error = error(runtime.block_on(CatchPanic { future }));
        assert_eq!(error.message, "later");
    }
}
