//! Items the attribute macros' generated code uses, and the SDK's
//! internals that its own tests, fuzz targets and tools reach. Not a public
//! API: the names here may change in any release.
//!
//! A handler attribute expands to the user's function, unchanged, then
//! spanned checks, then a registry entry that calls library code:
//!
//! ```text
//! const _: () = {
//!     // One per argument, spanned at its type: the kind's own words when it
//!     // is not an argument of this kind.
//!     const _: () = <Path<u64> as ::celerity::http::HttpArgument>::OK;
//!     // The return value and the future, spanned at the return type and
//!     // the name; never called.
//!     fn __celerity_checks() { let _ = |a0: Path<u64>| { ... }; }
//!     #[::celerity::__private::linkme::distributed_slice(::celerity::__private::HANDLERS)]
//!     #[linkme(crate = ::celerity::__private::linkme)]
//!     static __CELERITY_HANDLER: fn() -> ::celerity::Registration = __celerity_registration;
//!     fn __celerity_registration() -> ::celerity::Registration {
//!         use ::celerity::__private::{ViaFallback as _, ViaHandler as _};
//!         (&::celerity::__private::Probe::<::celerity::http::Http, (Path<u64>,), _>::new(get_order, options))
//!             .registration(key, origin)
//!     }
//! };
//! ```
//!
//! The registration goes through [`crate::Handler`], as the explicit API's
//! does; [`Probe`] only keeps its bound from failing a second time where a
//! spanned check has already said what is wrong.
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
use std::marker::PhantomData;
use std::pin::Pin;
use std::process::ExitCode;

use crate::app::App;
use crate::error::Error;
use crate::pipeline::{Handler, Kind};
use crate::registry::{HandlerKey, Origin, Registration};

pub use crate::consumer::RecordOptions;
pub use crate::pipeline::Needs;
pub use crate::registry::HANDLERS;
pub use linkme;
pub use tokio;

/// The SDK's protocol core, for its own tests and fuzz targets.
pub mod session {
    pub use crate::session::*;
}

/// The SDK's transport, for its own tests and tools.
pub mod transport {
    pub use crate::transport::*;
}

/// A consumer batch made two ways, for the SDK's fuzz targets: decoded
/// straight from its bytes, as handlers get one, and converted from prost's
/// decoding.
pub mod consumer {
    use bytes::Bytes;
    use celerity_proto::v1::ConsumerBatch;
    use prost::DecodeError;

    use crate::consumer::Batch;

    /// The batch whose `ConsumerBatch` message is `bytes`, decoded as the
    /// driver decodes one.
    pub fn decode(bytes: Bytes) -> Result<Batch, DecodeError> {
        Batch::decode(bytes)
    }

    /// The batch prost's decoding converts to.
    pub fn from_wire(batch: ConsumerBatch) -> Batch {
        Batch::from_wire(batch)
    }
}

/// An HTTP request made two ways, for the SDK's fuzz targets: decoded
/// straight from its bytes, as handlers get one, and converted from prost's
/// decoding.
pub mod http {
    use std::collections::BTreeMap;

    use bytes::Bytes;
    use celerity_proto::v1::HttpRequest;
    use prost::DecodeError;

    use crate::http::{HttpError, Request};

    /// The request whose `HttpRequest` message is `bytes`, decoded as the
    /// driver decodes one.
    pub fn decode(bytes: Bytes) -> Result<Result<Request, HttpError>, DecodeError> {
        Request::decode(bytes)
    }

    /// The request prost's decoding converts to.
    pub fn from_wire(request: HttpRequest) -> Result<Request, HttpError> {
        Request::from_wire(request)
    }

    /// What a handler can see of `request`, to compare two. Header values
    /// of one name come in the order of the wire map, which is a hash
    /// map's and so any order, when the runtime sent the name in more than
    /// one spelling: they are sorted.
    pub fn parts(request: &Request) -> impl PartialEq + std::fmt::Debug + use<> {
        let mut headers: BTreeMap<String, Vec<Vec<u8>>> = BTreeMap::new();
        for (name, value) in request.headers() {
            headers.entry(name.to_string()).or_default().push(value.as_bytes().to_vec());
        }
        headers.values_mut().for_each(|values| values.sort());
        (
            request.method().clone(),
            request.path().to_string(),
            request.route().to_string(),
            request.path_params().clone(),
            request.query().clone(),
            headers,
            request.source_ip(),
            request.request_id().to_string(),
            request.body().clone(),
        )
    }
}

/// An attribute's handler, of kind `K` with the argument types `Args` as
/// written, and its kind's options.
pub struct Probe<K: Kind, Args, F> {
    handler: F,
    options: K::Options,
    args: PhantomData<fn() -> Args>,
}

impl<K: Kind, Args, F> Probe<K, Args, F> {
    /// The handler `handler`, with `options`.
    pub fn new(handler: F, options: K::Options) -> Self {
        Probe { handler, options, args: PhantomData }
    }
}

/// The registration of a handler that is one: chosen by method resolution
/// whenever `F` is a [`Handler`] of `K`.
pub trait ViaHandler {
    /// The registration.
    fn registration(self, key: HandlerKey, origin: Origin) -> Registration;
}

impl<K: Kind, Args: 'static, F: Handler<K, Args>> ViaHandler for &Probe<K, Args, F>
where
    K::Options: Clone,
    F: Clone,
{
    fn registration(self, key: HandlerKey, origin: Origin) -> Registration {
        Registration::built::<K, F, Args>(key, origin, self.handler.clone(), self.options.clone())
    }
}

/// What is chosen when `F` is not a handler of `K`: the attribute's spanned
/// checks have then failed the build already, each saying what is wrong in
/// the kind's own words, and this keeps the registration from adding a
/// second, vaguer error for the same cause. It is never reached at run
/// time, since such a crate does not compile.
pub trait ViaFallback {
    /// Never returns.
    fn registration(self, key: HandlerKey, origin: Origin) -> Registration;
}

impl<K: Kind, Args, F> ViaFallback for &&Probe<K, Args, F> {
    fn registration(self, key: HandlerKey, origin: Origin) -> Registration {
        unreachable!("the handler {origin} ({key}) is not a handler of its kind; its crate cannot have compiled")
    }
}

/// The check of a handler's future: it runs on any worker thread, so it is
/// `Send`.
pub trait SendFuture {
    /// Named by the attribute macros' spanned checks.
    fn check(&self) {}
}

impl<T: Future + Send> SendFuture for T {}

/// A handler's future, probed for `Send` by method resolution: a `Send`
/// future finds [`ViaSend`], any other finds [`ViaNotSend`] through one more
/// reference. [`SendFuture`] keeps rustc's own error, which points at the
/// value held across an `.await`; this adds one naming the fix.
pub struct SendProbe<'a, F>(pub &'a F);

/// What a `Send` future's probe answers.
pub struct IsSend;

/// What the probe of a future that is not `Send` answers.
pub struct IsNotSend;

/// Chosen for a `Send` future.
pub trait ViaSend {
    /// Whether the future is `Send`: [`IsSend`].
    fn sendness(&self) -> IsSend {
        IsSend
    }
}

impl<F: Send> ViaSend for SendProbe<'_, F> {}

/// Chosen for a future that is not `Send`.
pub trait ViaNotSend {
    /// Whether the future is `Send`: [`IsNotSend`].
    fn sendness(&self) -> IsNotSend {
        IsNotSend
    }
}

impl<F> ViaNotSend for &SendProbe<'_, F> {}

/// Met by a handler whose future is `Send`.
#[diagnostic::on_unimplemented(
    message = "this handler's future is not `Send`, and the runtime runs handlers on any of its threads",
    label = "holds a value that is not `Send` across an `.await`",
    note = "use `Arc` instead of `Rc`, a `Mutex` (`std::sync` or `tokio::sync`) instead of `RefCell`, or drop the value before the `.await`",
    note = "the error above names the value, and the `.await` it is held across"
)]
pub trait HandlerFutureIsSend {
    /// Named by the attribute macros' spanned checks.
    fn check(self)
    where
        Self: Sized,
    {
    }
}

impl HandlerFutureIsSend for IsSend {}

/// Met by `T` of a `Json<T>` argument, checked ahead of the kind's own
/// check so that a missing derive is named as such.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `serde::Deserialize`, so a `Json<{Self}>` argument cannot be read into it",
    label = "needs `#[derive(serde::Deserialize)]`",
    note = "add `#[derive(serde::Deserialize)]` to `{Self}` (serde with its `derive` feature)"
)]
pub trait JsonInput {
    /// Named by the attribute macros' spanned checks.
    const OK: () = ();
}

#[diagnostic::do_not_recommend]
impl<T: serde::de::DeserializeOwned> JsonInput for T {}

/// Met by `T` of a `Json<T>` a handler returns.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `serde::Serialize`, so a `Json<{Self}>` answer cannot be written from it",
    label = "needs `#[derive(serde::Serialize)]`",
    note = "add `#[derive(serde::Serialize)]` to `{Self}` (serde with its `derive` feature)"
)]
pub trait JsonOutput {
    /// Named by the attribute macros' spanned checks.
    const OK: () = ();
}

#[diagnostic::do_not_recommend]
impl<T: serde::Serialize> JsonOutput for T {}

/// Met by `T` of a `State<T>` argument: one value, shared by every handler
/// that takes it, on any of the runtime's threads.
#[diagnostic::on_unimplemented(
    message = "`{Self}` must be `Send + Sync` to be `State<{Self}>`: one value is shared by every handler that takes it, on any thread",
    label = "not `Send + Sync`",
    note = "put what changes behind a lock (`std::sync::Mutex<..>`, `RwLock<..>`, `tokio::sync::Mutex<..>`) or use atomics, and `Arc` rather than `Rc`"
)]
pub trait SharedState {
    /// Named by the attribute macros' spanned checks.
    const OK: () = ();
}

#[diagnostic::do_not_recommend]
impl<T: Send + Sync + 'static> SharedState for T {}

/// Whether two arguments of one handler both read the event's body:
/// [`BodyReaders<false>`] meets the one-reader checks below.
pub struct BodyReaders<const BOTH: bool>;

/// A check, per kind with a body, that at most one of a handler's
/// arguments reads it, in that kind's words. A trait bound rather than a
/// `const` assertion, so that the error is the SDK's message alone, not a
/// failed constant evaluation around it.
macro_rules! one_body_reader {
    ($($(#[$doc:meta])* $name:ident: $message:literal, $readers:literal;)*) => {$(
        $(#[$doc])*
        #[diagnostic::on_unimplemented(message = $message, label = "a second argument that reads the body", note = $readers)]
        pub trait $name<A: ?Sized, B: ?Sized> {
            /// Named by the attribute macros' spanned checks.
            fn check() {}
        }

    )*};
}

one_body_reader! {
    /// Met by an HTTP handler whose arguments read the request body once at most.
    OneRequestBodyReader:
        "`{A}` and `{B}` both read the request body, but an HTTP handler can read it with one argument only: keep one of them",
        "`Json<T>`, `Option<Json<T>>`, `String`, `Bytes` and `Request` each read the whole body";
    /// Met by a WebSocket handler whose arguments read the message once at most.
    OneMessageBodyReader:
        "`{A}` and `{B}` both read the message body, but a WebSocket handler can read it with one argument only: keep one of them",
        "`Message`, `Json<T>`, `String` and `Bytes` each read the whole message";
    /// Met by a custom handler whose arguments read the payload once at most.
    OnePayloadReader:
        "`{A}` and `{B}` both read the payload, but a custom handler can read it with one argument only: keep one of them",
        "`Invocation`, `Json<T>`, `String` and `Bytes` each read the whole payload";
}

// Outside the macro, so that the compiler's note on where the check holds
// quotes one line rather than the macro's expansion.
impl<A: ?Sized, B: ?Sized> OneRequestBodyReader<A, B> for BodyReaders<false> {}
impl<A: ?Sized, B: ?Sized> OneMessageBodyReader<A, B> for BodyReaders<false> {}
impl<A: ?Sized, B: ?Sized> OnePayloadReader<A, B> for BodyReaders<false> {}

/// Whether `module_path` (the `module_path!()` of `#[celerity::main]`'s
/// function) is a crate's root: a path of one segment.
pub const fn is_crate_root(module_path: &str) -> bool {
    let bytes = module_path.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b':' {
            return false;
        }
        at += 1;
    }
    true
}

/// Where `#[celerity::main]`'s function stands: [`AtCrateRoot<true>`] at
/// the crate's root, where Rust looks for `main`.
pub struct AtCrateRoot<const ROOT: bool>;

/// Met by a `#[celerity::main] fn main` at the root of its crate: a `main`
/// in a module is an ordinary function that nothing calls, so its
/// application would never run.
#[diagnostic::on_unimplemented(
    message = "`#[celerity::main]` goes on the crate root's `fn main`, the one Rust runs: this `main` is inside a module, so nothing would ever call it",
    label = "inside a module",
    note = "move it to `src/main.rs` (or the binary's root file), or build the `App` in the module and return it from the root `main`"
)]
pub trait MainAtCrateRoot {
    /// Named by `#[celerity::main]`'s spanned check.
    fn check() {}
}

#[diagnostic::do_not_recommend]
impl MainAtCrateRoot for AtCrateRoot<true> {}

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
}
