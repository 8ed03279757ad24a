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
//! `#[celerity::main]` expands to `fn main() -> ExitCode` calling [`main`]
//! with the user's body as an `async fn`. Users who build their own tokio
//! runtime call `celerity::run().await` (or `App::new().run().await`)
//! instead, which serves the same registry.

use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;

use celerity_proto::v1::result::Outcome;

use crate::app::App;
use crate::error::Error;
use crate::http::HttpError;

pub use crate::http::IntoHttpOutcome;
pub use linkme;

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

/// Runs `#[celerity::main]`'s body on a new multi-threaded tokio runtime
/// ([`crate::run_main`]), serves the `App` it returns if it returns one, and
/// gives the process's exit code.
pub fn main<R, Fut>(main: impl FnOnce() -> Fut) -> ExitCode
where
    R: MainOutput,
    Fut: Future<Output = R>,
{
    crate::run_main(|| async move { main().await.finish().await })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn main_passes_results_on() {
        assert_eq!(main(|| async { Ok::<(), Error>(()) }), ExitCode::SUCCESS);
        assert_eq!(main(|| async { Err::<(), _>(std::io::Error::other("no")) }), ExitCode::FAILURE);
        assert_eq!(main(|| async { Err::<App, _>(Error::msg("no")) }), ExitCode::FAILURE);
    }

    #[test]
    fn rejections_answer_with_the_error() {
        match http_reject(HttpError::bad_request("bad")) {
            Outcome::Http(response) => assert_eq!(response.status, 400),
            other => panic!("expected an HTTP response, got {other:?}"),
        }
    }
}
