//! Items the attribute macros' generated code uses. Not a public API: the
//! names here may change in any release.
//!
//! A handler attribute expands to the user's function, unchanged, and a
//! registry entry:
//!
//! ```text
//! const _: () = {
//!     #[::celerity::__private::linkme::distributed_slice(::celerity::registry::HANDLERS)]
//!     #[linkme(crate = ::celerity::__private::linkme)]
//!     static __CELERITY_HANDLER: fn() -> ::celerity::Registration = __celerity_registration;
//!     fn __celerity_registration() -> ::celerity::Registration {
//!         ::celerity::Registration::new(key, kind, origin, Arc::new(ADAPTER::new(
//!             move |mut event, cx| async move {
//!                 let a0 = match <A0 as EXTRACT>::from_x(&mut event, &cx) { Ok(v) => v, Err(e) => return REJECT(e) };
//!                 let a1 = match <A1 as EXTRACT>::from_x_owned(event, &cx) { ... };
//!                 <R as RESPOND>::method(f(a0, a1).await)
//!             },
//!         )))
//!     }
//! };
//! ```
//!
//! `#[celerity::main]` expands to `fn main() -> ExitCode` calling
//! [`main_on`] with the runtime's builder (named through [`tokio`], so the
//! application needs no tokio dependency) and the user's body as an
//! `async fn`:
//!
//! ```text
//! fn main() -> ::std::process::ExitCode {
//!     async fn __celerity_main() -> R { BODY }
//!     ::celerity::__private::main_on::<R, _>(
//!         ::celerity::__private::tokio::runtime::Builder::new_current_thread(),
//!         __celerity_main,
//!     )
//! }
//! ```
//!
//! Users who build their own tokio runtime call `celerity::run().await` (or
//! `App::new().run().await`) instead, which serves the same registry.

use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;

use celerity_proto::v1::result::Outcome;

use crate::app::App;
use crate::error::Error;
use crate::http::HttpError;

pub use crate::http::IntoHttpOutcome;
pub use linkme;
pub use tokio;

/// The outcome of an HTTP handler whose argument could not be extracted:
/// the error's response (a 400 naming the problem, for bad input).
pub fn http_reject(error: HttpError) -> Outcome {
    error.into_http_outcome()
}

/// The future [`MainOutput::finish`] returns.
pub type MainFuture = Pin<Box<dyn Future<Output = Result<(), Error>>>>;

/// What `#[celerity::main] async fn main` can return, and what becomes of it.
#[diagnostic::on_unimplemented(
    message = "`#[celerity::main]` cannot return `{Self}`",
    label = "not a return type of `#[celerity::main] async fn main`",
    note = "`#[celerity::main] async fn main` returns `()`, `celerity::Result<()>` (or any `Result<(), E>` whose error converts into `celerity::Error`), or a `celerity::App` or `celerity::Result<App>` that is then served"
)]
pub trait MainOutput {
    /// Serves the application `main` returned, or passes its result on.
    fn finish(self) -> MainFuture;
}

/// An initialisation-only `main` (or an empty one): serve every handler the
/// attributes registered.
impl MainOutput for () {
    fn finish(self) -> MainFuture {
        Box::pin(App::new().run())
    }
}

impl<E: Into<Error>> MainOutput for Result<(), E> {
    fn finish(self) -> MainFuture {
        Box::pin(std::future::ready(self.map_err(Into::into)))
    }
}

impl MainOutput for App {
    fn finish(self) -> MainFuture {
        Box::pin(self.run())
    }
}

impl<E: Into<Error>> MainOutput for Result<App, E> {
    fn finish(self) -> MainFuture {
        match self {
            Ok(app) => app.finish(),
            Err(error) => Box::pin(std::future::ready(Err(error.into()))),
        }
    }
}

/// Runs `#[celerity::main]`'s body on the tokio runtime `runtime` builds
/// ([`crate::run_main_on`]), serves the `App` it returns if it returns one,
/// and gives the process's exit code.
pub fn main_on<R, Fut>(runtime: tokio::runtime::Builder, main: impl FnOnce() -> Fut) -> ExitCode
where
    R: MainOutput,
    Fut: Future<Output = R>,
{
    crate::run_main_on(runtime, || async move { main().await.finish().await })
}

#[cfg(test)]
mod tests {
    use super::*;

    use tokio::runtime::{Builder, Handle, RuntimeFlavor};

    fn multi_thread() -> Builder {
        Builder::new_multi_thread()
    }

    #[test]
    fn main_passes_results_on() {
        assert_eq!(main_on(multi_thread(), || async { Ok::<(), Error>(()) }), ExitCode::SUCCESS);
        assert_eq!(main_on(multi_thread(), || async { Err::<(), _>(std::io::Error::other("no")) }), ExitCode::FAILURE);
        assert_eq!(main_on(multi_thread(), || async { Err::<App, _>(Error::msg("no")) }), ExitCode::FAILURE);
        let current_thread = Builder::new_current_thread();
        assert_eq!(main_on(current_thread, || async { Err::<(), _>(Error::msg("no")) }), ExitCode::FAILURE);
    }

    #[test]
    fn main_runs_on_the_runtime_it_is_given() {
        let code = main_on(Builder::new_current_thread(), || async {
            assert_eq!(Handle::current().runtime_flavor(), RuntimeFlavor::CurrentThread);
            // The drivers are enabled on a builder that had none: a timer
            // would panic without the time driver.
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            Ok::<(), Error>(())
        });
        assert_eq!(code, ExitCode::SUCCESS);

        let mut runtime = Builder::new_multi_thread();
        runtime.worker_threads(3);
        let code = crate::run_main_on(runtime, || async {
            assert_eq!(Handle::current().runtime_flavor(), RuntimeFlavor::MultiThread);
            assert_eq!(Handle::current().metrics().num_workers(), 3);
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            Ok(())
        });
        assert_eq!(code, ExitCode::SUCCESS);

        let code = crate::run_main(|| async {
            assert_eq!(Handle::current().runtime_flavor(), RuntimeFlavor::MultiThread);
            Ok(())
        });
        assert_eq!(code, ExitCode::SUCCESS);
    }

    #[test]
    fn rejections_answer_with_the_error() {
        match http_reject(HttpError::bad_request("bad")) {
            Outcome::Http(response) => assert_eq!(response.status, 400),
            other => panic!("expected an HTTP response, got {other:?}"),
        }
    }
}
