//! Custom events: a handler invoked by name, with an input and an output.
//!
//! A custom handler's tag is `custom::{handlerName}`, such as
//! `custom::resizeImage`. It takes any of the [`FromInvocation`] arguments
//! (typed JSON with [`Json<T>`], or the raw input as `Bytes` or `String`) and
//! returns its output ([`IntoCustomOutcome`]): `Json<T>`, `Bytes`, `Vec<u8>`,
//! `String`, `&'static str` or `()` (no output), or a `Result` of one.
//!
//! Errors come in two kinds:
//!
//! - a [`CustomError`] is an answer the handler gives on purpose (bad input,
//!   nothing found): it becomes the result's `error_message`;
//! - any other error (`celerity::Error`, any `std::error::Error`) is
//!   unhandled, like a panic: it becomes a `HandlerError`.
//!
//! ```
//! use celerity::custom::CustomError;
//! use celerity::Json;
//!
//! #[derive(serde::Deserialize)]
//! struct Resize { width: u32 }
//! #[derive(serde::Serialize)]
//! struct Resized { width: u32 }
//!
//! async fn resize(Json(input): Json<Resize>) -> Result<Json<Resized>, CustomError> {
//!     if input.width == 0 {
//!         return Err(CustomError::new("width must be positive"));
//!     }
//!     Ok(Json(Resized { width: input.width }))
//! }
//!
//! let app = celerity::App::new().custom("custom::resizeImage", resize);
//! # drop(app);
//! ```
//!
//! The runtime's local invoke endpoint can send a custom invocation to a
//! handler of any kind; a handler of another kind answers it with a
//! `HandlerError` of type `WrongEventSource` naming both.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use celerity_proto::v1::{self as pb, CustomInvokeResult, Dispatch, dispatch::Source, result::Outcome};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::context::{Context, State};
use crate::error::Error;
use crate::handler::{Handler, HandlerFuture, expect_shape, ready, wrong_source};
use crate::json::{Json, JsonError, decode_json_input};
use crate::registry::HandlerKind;

/// How a JSON decoding error names the input.
const INPUT: &str = "the input";

/// A custom invocation, as the runtime delivered it.
///
/// ```
/// use celerity::custom::Invocation;
/// let invocation = Invocation::new("resizeImage", r#"{"width": 100}"#);
/// let input: serde_json::Value = invocation.json().unwrap();
/// assert_eq!(input["width"], 100);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Invocation {
    handler_name: String,
    input: Bytes,
}

impl Invocation {
    /// An invocation of `handler_name` with `input`, for calling a handler
    /// directly in a test.
    pub fn new(handler_name: impl Into<String>, input: impl Into<Bytes>) -> Self {
        Invocation { handler_name: handler_name.into(), input: input.into() }
    }

    /// The name the handler was invoked by.
    pub fn handler_name(&self) -> &str {
        &self.handler_name
    }

    /// The input as the runtime sent it.
    pub fn input(&self) -> &Bytes {
        &self.input
    }

    /// Takes the input.
    pub fn into_input(self) -> Bytes {
        self.input
    }

    /// The input deserialized from JSON into `T`. An empty input reads as
    /// `null`, so `Option<T>` and `()` take it.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, JsonError> {
        decode_json_input(&self.input, INPUT)
    }

    pub(crate) fn from_wire(invoke: pb::CustomInvoke) -> Self {
        Invocation { handler_name: invoke.handler_name, input: invoke.input }
    }

    fn take_input(&mut self) -> Bytes {
        std::mem::take(&mut self.input)
    }
}

impl From<pb::CustomInvoke> for Invocation {
    fn from(invoke: pb::CustomInvoke) -> Self {
        Invocation::from_wire(invoke)
    }
}

/// A value a custom handler can take as an argument.
///
/// Extraction happens before the handler runs; a failure answers the runtime
/// with the error's message as the result's `error_message`, and the handler
/// is not called.
///
/// At most one argument may read the input ([`FromInvocation::READS_BODY`]):
/// `Invocation`, `Json<T>`, `Bytes` or `String`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an argument of a custom handler",
    label = "not something a custom handler can take",
    note = "a custom handler takes: `Invocation`, `Json<T>`, `Bytes`, `String`, `Context`, `State<T>` and `WsSender`",
    note = "a type of your own can be one by implementing `celerity::custom::FromInvocation`"
)]
pub trait FromInvocation: Sized {
    /// Whether this argument consumes the input.
    const READS_BODY: bool = false;

    /// Takes the value from the invocation. Arguments that read the input
    /// take it out of `invocation`; the others only look.
    fn from_invocation(invocation: &mut Invocation, cx: &Context) -> Result<Self, Error>;

    /// Takes the value when it is the handler's last argument and may have
    /// the whole invocation. Defaults to [`FromInvocation::from_invocation`].
    fn from_invocation_owned(mut invocation: Invocation, cx: &Context) -> Result<Self, Error> {
        Self::from_invocation(&mut invocation, cx)
    }
}

impl FromInvocation for Invocation {
    const READS_BODY: bool = true;

    fn from_invocation(invocation: &mut Invocation, _cx: &Context) -> Result<Self, Error> {
        let input = invocation.take_input();
        Ok(Invocation { handler_name: invocation.handler_name.clone(), input })
    }

    fn from_invocation_owned(invocation: Invocation, _cx: &Context) -> Result<Self, Error> {
        Ok(invocation)
    }
}

/// The input deserialized from JSON (an empty input reads as `null`).
impl<T: DeserializeOwned> FromInvocation for Json<T> {
    const READS_BODY: bool = true;

    fn from_invocation(invocation: &mut Invocation, _cx: &Context) -> Result<Self, Error> {
        let value = invocation.json::<T>()?;
        invocation.take_input();
        Ok(Json(value))
    }
}

/// The raw input.
impl FromInvocation for Bytes {
    const READS_BODY: bool = true;

    fn from_invocation(invocation: &mut Invocation, _cx: &Context) -> Result<Self, Error> {
        Ok(invocation.take_input())
    }
}

/// The input as text; input that is not UTF-8 is refused.
impl FromInvocation for String {
    const READS_BODY: bool = true;

    fn from_invocation(invocation: &mut Invocation, _cx: &Context) -> Result<Self, Error> {
        // Reuses the buffer when the input is its only owner; copies otherwise.
        String::from_utf8(Vec::from(invocation.take_input()))
            .map_err(|_| Error::typed("InvalidText", "the input is not valid UTF-8"))
    }
}

impl FromInvocation for Context {
    fn from_invocation(_invocation: &mut Invocation, cx: &Context) -> Result<Self, Error> {
        Ok(cx.clone())
    }
}

impl<T: Send + Sync + 'static> FromInvocation for State<T> {
    fn from_invocation(_invocation: &mut Invocation, cx: &Context) -> Result<Self, Error> {
        State::from_context(cx)
    }
}

/// The answer to an argument that could not be extracted: the error's
/// message as the result's `error_message`. The attribute macro calls it.
pub fn reject(error: Error) -> Outcome {
    deliberate(error.message().to_string())
}

fn deliberate(message: String) -> Outcome {
    Outcome::Custom(CustomInvokeResult { output: Bytes::new(), error_message: message })
}

/// An error a custom handler answers with on purpose: its message becomes
/// the result's `error_message`, which the invoker reads.
///
/// Other errors a handler returns are unhandled and answered as a
/// `HandlerError`. `CustomError` deliberately does not implement
/// `std::error::Error`, so that it is never mistaken for one of those.
///
/// ```
/// use celerity::custom::{CustomError, IntoCustomOutcome};
/// use celerity::proto::v1::{CustomInvokeResult, result::Outcome};
///
/// let answer: Result<String, CustomError> = Err(CustomError::new("no such image"));
/// assert_eq!(
///     answer.into_custom_outcome(),
///     Outcome::Custom(CustomInvokeResult { output: Default::default(), error_message: "no such image".into() })
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomError {
    message: String,
}

impl CustomError {
    /// An error with a message for the invoker.
    pub fn new(message: impl fmt::Display) -> Self {
        CustomError { message: message.to_string() }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for CustomError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<&str> for CustomError {
    fn from(message: &str) -> Self {
        CustomError::new(message)
    }
}

impl From<String> for CustomError {
    fn from(message: String) -> Self {
        CustomError { message }
    }
}

/// An output a custom handler can answer with: the bytes of
/// `CustomInvokeResult.output`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the output of a custom handler",
    label = "not a custom handler's output",
    note = "a custom handler returns: `Json<T>`, `Bytes`, `Vec<u8>`, `String`, `&'static str`, `()`, or `Result<O, E>` of one, where `E` is `CustomError` (answered as `error_message`), `celerity::Error` or any `std::error::Error` (answered as a `HandlerError`)",
    note = "a type of your own can be one by implementing `celerity::custom::IntoCustomOutput`"
)]
pub trait IntoCustomOutput {
    /// The output's bytes; an error is answered as a `HandlerError`.
    fn into_custom_output(self) -> Result<Bytes, Error>;
}

/// No output.
impl IntoCustomOutput for () {
    fn into_custom_output(self) -> Result<Bytes, Error> {
        Ok(Bytes::new())
    }
}

impl IntoCustomOutput for Bytes {
    fn into_custom_output(self) -> Result<Bytes, Error> {
        Ok(self)
    }
}

impl IntoCustomOutput for Vec<u8> {
    fn into_custom_output(self) -> Result<Bytes, Error> {
        Ok(Bytes::from(self))
    }
}

impl IntoCustomOutput for String {
    fn into_custom_output(self) -> Result<Bytes, Error> {
        Ok(Bytes::from(self))
    }
}

impl IntoCustomOutput for &'static str {
    fn into_custom_output(self) -> Result<Bytes, Error> {
        Ok(Bytes::from_static(self.as_bytes()))
    }
}

/// `T` serialized as JSON.
impl<T: Serialize> IntoCustomOutput for Json<T> {
    fn into_custom_output(self) -> Result<Bytes, Error> {
        serde_json::to_vec(&self.0).map(Bytes::from).map_err(|error| {
            Error::typed("SerializeError", format!("the output could not be serialized as JSON: {error}"))
        })
    }
}

/// The error half of a custom handler's `Result`: a [`CustomError`] is
/// answered as `error_message`; any other error (`celerity::Error`, any
/// `std::error::Error`) as a `HandlerError`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the error of a custom handler",
    label = "not a custom handler's error",
    note = "a custom handler's error is `CustomError` (answered as `error_message`), `celerity::Error` or any `std::error::Error` (answered as a `HandlerError`)"
)]
pub trait IntoCustomError {
    /// The outcome answering the error.
    fn into_custom_error(self) -> Outcome;
}

/// A [`CustomError`], directly or carried by a [`celerity::Error`](Error)
/// (so `celerity::Result` serves both kinds), is answered as
/// `error_message`; any other error as a `HandlerError`.
impl<E: Into<Error>> IntoCustomError for E {
    fn into_custom_error(self) -> Outcome {
        let error = self.into();
        if error.is_custom_error() {
            deliberate(error.message().to_string())
        } else {
            Outcome::Error(error.to_handler_error())
        }
    }
}

/// What a custom handler can return: an output ([`IntoCustomOutput`]), or a
/// `Result` of one whose error is a [`CustomError`] (answered as
/// `error_message`) or any other error (answered as a `HandlerError`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a custom handler",
    label = "not a custom handler's result",
    note = "a custom handler returns: `Json<T>`, `Bytes`, `Vec<u8>`, `String`, `&'static str`, `()`, or `Result<O, E>` of one, where `E` is `CustomError` (answered as `error_message`), `celerity::Error` or any `std::error::Error` (answered as a `HandlerError`)"
)]
pub trait IntoCustomOutcome {
    /// Converts the return value.
    fn into_custom_outcome(self) -> Outcome;
}

impl<T: IntoCustomOutput> IntoCustomOutcome for T {
    fn into_custom_outcome(self) -> Outcome {
        match self.into_custom_output() {
            Ok(output) => Outcome::Custom(CustomInvokeResult { output, error_message: String::new() }),
            Err(error) => Outcome::Error(error.to_handler_error()),
        }
    }
}

impl<T: IntoCustomOutput, E: IntoCustomError> IntoCustomOutcome for Result<T, E> {
    fn into_custom_outcome(self) -> Outcome {
        match self {
            Ok(value) => value.into_custom_outcome(),
            Err(error) => error.into_custom_error(),
        }
    }
}

/// A custom handler from a function of the invocation and context. The
/// attribute macro builds its argument extraction inside such a function.
pub struct InvocationFn<F> {
    f: F,
}

impl<F> InvocationFn<F> {
    /// Wraps `f`.
    pub fn new(f: F) -> Self {
        InvocationFn { f }
    }
}

impl<F, Fut> Handler for InvocationFn<F>
where
    F: Fn(Invocation, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Outcome> + Send + 'static,
{
    fn call(&self, dispatch: Dispatch, cx: Context) -> HandlerFuture {
        match dispatch.source {
            Some(Source::Custom(invoke)) => {
                let outcome = (self.f)(Invocation::from_wire(invoke), cx.clone());
                Box::pin(async move { expect_shape(HandlerKind::Custom, outcome.await, &cx) })
            }
            other => ready(wrong_source(HandlerKind::Custom, &other, &cx)),
        }
    }
}

/// An `async fn` usable as a custom handler: every argument implements
/// [`FromInvocation`] and the return value [`IntoCustomOutcome`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a custom handler",
    label = "not a custom handler",
    note = "a custom handler is an `async fn` whose arguments are custom extractors (`Invocation`, `Json<T>`, `Bytes`, `String`, `Context`, `State<T>`) and that returns an output (`Json<T>`, `Bytes`, `Vec<u8>`, `String`, `&'static str`, `()`) or a `Result` of one"
)]
pub trait CustomHandler<Args>: Clone + Send + Sync + 'static {
    /// Builds the type-erased handler.
    fn into_handler(self) -> Arc<dyn Handler>;
}

macro_rules! custom_handler_impl {
    ($($arg:ident),*; $last:ident) => {
        impl<F, Fut, R, $($arg,)* $last> CustomHandler<($($arg,)* $last,)> for F
        where
            F: Fn($($arg,)* $last) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = R> + Send + 'static,
            R: IntoCustomOutcome,
            $($arg: FromInvocation + Send + 'static,)*
            $last: FromInvocation + Send + 'static,
        {
            #[allow(non_snake_case, unused_mut)]
            fn into_handler(self) -> Arc<dyn Handler> {
                const {
                    assert!(
                        0 $(+ $arg::READS_BODY as usize)* + $last::READS_BODY as usize <= 1,
                        "a custom handler can read the input with one argument only"
                    )
                };
                let f = self;
                Arc::new(InvocationFn::new(move |mut invocation: Invocation, cx: Context| {
                    let f = f.clone();
                    async move {
                        $(
                            let $arg = match $arg::from_invocation(&mut invocation, &cx) {
                                Ok(value) => value,
                                Err(error) => return reject(error),
                            };
                        )*
                        let $last = match $last::from_invocation_owned(invocation, &cx) {
                            Ok(value) => value,
                            Err(error) => return reject(error),
                        };
                        f($($arg,)* $last).await.into_custom_outcome()
                    }
                }))
            }
        }
    };
}

impl<F, Fut, R> CustomHandler<()> for F
where
    F: Fn() -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoCustomOutcome,
{
    fn into_handler(self) -> Arc<dyn Handler> {
        let f = self;
        Arc::new(InvocationFn::new(move |_invocation: Invocation, _cx: Context| {
            let f = f.clone();
            async move { f().await.into_custom_outcome() }
        }))
    }
}

custom_handler_impl!(; A1);
custom_handler_impl!(A1; A2);
custom_handler_impl!(A1, A2; A3);
custom_handler_impl!(A1, A2, A3; A4);
custom_handler_impl!(A1, A2, A3, A4; A5);
custom_handler_impl!(A1, A2, A3, A4, A5; A6);
custom_handler_impl!(A1, A2, A3, A4, A5, A6; A7);
custom_handler_impl!(A1, A2, A3, A4, A5, A6, A7; A8);

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;
    use crate::session::error_type;

    const TAG: &str = "custom::resizeImage";

    fn dispatch(source: Source) -> Dispatch {
        Dispatch { id: "ev-1".into(), handler_tag: TAG.into(), source: Some(source), ..Default::default() }
    }

    fn invoke(input: &'static [u8]) -> Dispatch {
        dispatch(Source::Custom(pb::CustomInvoke {
            handler_name: "resizeImage".into(),
            input: Bytes::from_static(input),
        }))
    }

    async fn run<Args>(handler: impl CustomHandler<Args>, dispatch: Dispatch) -> Outcome {
        let outcome = handler.into_handler().call(dispatch, Context::detached(TAG)).await;
        assert!(
            matches!(outcome, Outcome::Custom(_) | Outcome::Error(_)),
            "a custom handler answered with another shape: {outcome:?}"
        );
        outcome
    }

    fn output(outcome: Outcome) -> Bytes {
        match outcome {
            Outcome::Custom(CustomInvokeResult { output, error_message }) if error_message.is_empty() => output,
            other => panic!("expected an output, got {other:?}"),
        }
    }

    fn error_message(outcome: Outcome) -> String {
        match outcome {
            Outcome::Custom(CustomInvokeResult { output, error_message }) if !error_message.is_empty() => {
                assert!(output.is_empty());
                error_message
            }
            other => panic!("expected an error_message, got {other:?}"),
        }
    }

    fn handler_error(outcome: Outcome) -> pb::HandlerError {
        match outcome {
            Outcome::Error(error) => error,
            other => panic!("expected a HandlerError, got {other:?}"),
        }
    }

    #[derive(Debug, Deserialize)]
    struct Resize {
        width: u32,
    }

    #[derive(Debug, Serialize)]
    struct Resized {
        width: u32,
        name: String,
    }

    async fn resize(cx: Context, Json(input): Json<Resize>) -> Result<Json<Resized>, CustomError> {
        if input.width == 0 {
            return Err(CustomError::new("width must be positive"));
        }
        Ok(Json(Resized { width: input.width * 2, name: cx.tag().to_string() }))
    }

    #[tokio::test]
    async fn typed_json_in_and_out() {
        let out = output(run(resize, invoke(br#"{"width":50}"#)).await);
        assert_eq!(out, Bytes::from_static(br#"{"width":100,"name":"custom::resizeImage"}"#));
    }

    #[tokio::test]
    async fn a_custom_error_is_the_error_message() {
        assert_eq!(error_message(run(resize, invoke(br#"{"width":0}"#)).await), "width must be positive");
    }

    #[tokio::test]
    async fn an_unhandled_error_is_a_handler_error() {
        async fn handler() -> Result<String, std::io::Error> {
            Err(std::io::Error::other("disk on fire"))
        }
        let error = handler_error(run(handler, invoke(b"")).await);
        assert_eq!((error.r#type.as_str(), error.message.as_str()), ("Error", "disk on fire"));

        async fn via_celerity() -> Result<(), Error> {
            Err(Error::typed("StoreDown", "the store is down"))
        }
        let error = handler_error(run(via_celerity, invoke(b"")).await);
        assert_eq!((error.r#type.as_str(), error.message.as_str()), ("StoreDown", "the store is down"));
    }

    #[tokio::test]
    async fn input_that_does_not_fit_is_the_error_message_naming_the_field() {
        let message = error_message(run(resize, invoke(br#"{"width":-1}"#)).await);
        assert!(message.starts_with("the input does not fit at `width`"), "{message}");
    }

    #[tokio::test]
    async fn raw_bytes_in_and_out_are_not_copied() {
        static INPUT: &[u8] = &[0, 1, 2, 0xff];
        async fn handler(input: Bytes) -> Bytes {
            input
        }
        let out = output(run(handler, invoke(INPUT)).await);
        assert_eq!(out.as_ptr(), INPUT.as_ptr());
    }

    #[tokio::test]
    async fn strings_and_nothing() {
        async fn shout(text: String) -> String {
            text.to_uppercase()
        }
        assert_eq!(output(run(shout, invoke(b"hi")).await), Bytes::from_static(b"HI"));
        assert!(error_message(run(shout, invoke(&[0xff])).await).contains("UTF-8"));
        async fn nothing(_cx: Context) {}
        assert_eq!(output(run(nothing, invoke(b"ignored")).await), Bytes::new());
        async fn fixed() -> Result<&'static str, CustomError> {
            Ok("done")
        }
        assert_eq!(output(run(fixed, invoke(b"")).await), Bytes::from_static(b"done"));
        async fn vec() -> Vec<u8> {
            vec![7]
        }
        assert_eq!(output(run(vec, invoke(b"")).await), Bytes::from_static(&[7]));
    }

    #[tokio::test]
    async fn an_empty_input_reads_as_null() {
        async fn handler(Json(input): Json<Option<Resize>>) -> Result<(), CustomError> {
            match input {
                None => Ok(()),
                Some(_) => Err("an input".into()),
            }
        }
        assert_eq!(output(run(handler, invoke(b"")).await), Bytes::new());
    }

    #[tokio::test]
    async fn an_output_that_cannot_be_serialized_is_a_handler_error() {
        async fn handler() -> Json<std::collections::HashMap<(u8, u8), u8>> {
            Json(std::collections::HashMap::from([((1, 2), 3)]))
        }
        let error = handler_error(run(handler, invoke(b"")).await);
        assert_eq!(error.r#type, "SerializeError");
    }

    #[tokio::test]
    async fn another_source_is_a_wrong_source_error() {
        async fn handler() {}
        for source in [
            Source::Http(pb::HttpRequest::default()),
            Source::Websocket(pb::WebSocketMessage::default()),
            Source::Consumer(pb::ConsumerBatch::default()),
            Source::Schedule(pb::ScheduleTrigger::default()),
        ] {
            let error = handler_error(run(handler, dispatch(source)).await);
            assert_eq!(error.r#type, error_type::WRONG_SOURCE);
            assert!(error.message.contains("custom"), "{}", error.message);
        }
    }

    #[tokio::test]
    async fn the_adapter_runs_what_the_macro_generates() {
        let handler = InvocationFn::new(move |mut ev: Invocation, cx: Context| async move {
            let a0 = match <Context as FromInvocation>::from_invocation(&mut ev, &cx) {
                Ok(v) => v,
                Err(e) => return reject(e),
            };
            let a1 = match <Json<Resize> as FromInvocation>::from_invocation_owned(ev, &cx) {
                Ok(v) => v,
                Err(e) => return reject(e),
            };
            <Result<Json<Resized>, CustomError> as IntoCustomOutcome>::into_custom_outcome(resize(a0, a1).await)
        });
        let out = output(handler.call(invoke(br#"{"width":5}"#), Context::detached(TAG)).await);
        assert_eq!(out, Bytes::from_static(br#"{"width":10,"name":"custom::resizeImage"}"#));
    }

    #[tokio::test]
    async fn the_invocation_carries_its_name_and_input() {
        async fn handler(invocation: Invocation) -> Result<String, CustomError> {
            let input: Resize = invocation.json().map_err(CustomError::new)?;
            Ok(format!("{} {}", invocation.handler_name(), input.width))
        }
        assert_eq!(output(run(handler, invoke(br#"{"width":3}"#)).await), Bytes::from_static(b"resizeImage 3"));
    }

    #[test]
    fn an_input_reader_that_is_not_last_leaves_an_empty_input() {
        let cx = Context::detached(TAG);
        let mut invocation = Invocation::new("resizeImage", "abc");
        let taken = Invocation::from_invocation(&mut invocation, &cx).unwrap();
        assert_eq!((taken.handler_name(), taken.input().as_ref()), ("resizeImage", b"abc".as_ref()));
        assert_eq!((invocation.handler_name(), invocation.input().is_empty()), ("resizeImage", true));
    }
}
