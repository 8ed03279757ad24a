//! Custom events: a handler invoked by name, with an input and an output.
//!
//! A custom handler's tag is `custom::{handlerName}`, such as
//! `custom::resizeImage`. It takes arguments from the [`Invocation`]
//! ([`Custom`]: typed JSON with [`Json<T>`], or the raw input as `Bytes` or
//! `String`, and `Context`, `State<T>`, `WsSender`) and returns its output
//! ([`IntoCustomOutput`]): `Json<T>`, `Bytes`, `Vec<u8>`, `String`,
//! `&'static str` or `()` (no output), or a `Result` of one.
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

use bytes::Bytes;
use celerity_proto::v1::{self as pb, CustomInvokeResult, result::Outcome};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::context::Context;
use crate::error::Error;
use crate::json::{Json, JsonError, decode_json_input};
use crate::pipeline::{FromEvent, IntoAnswer, kind_diagnostics, whole_event_kind};

/// How a JSON decoding error names the input.
pub(crate) const INPUT: &str = "the input";

/// A custom invocation, as the runtime delivered it.
///
/// ```
/// use celerity::custom::Invocation;
///
/// #[derive(serde::Deserialize)]
/// struct Resize { width: u32 }
///
/// let invocation = Invocation::new("resizeImage", r#"{"width": 100}"#);
/// let input: Resize = invocation.json().unwrap();
/// assert_eq!(input.width, 100);
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

/// The whole invocation.
impl FromEvent<Custom> for Invocation {
    const READS_BODY: bool = true;

    fn from_event(invocation: &mut Invocation, _cx: &Context) -> Result<Self, Error> {
        let input = invocation.take_input();
        Ok(Invocation { handler_name: invocation.handler_name.clone(), input })
    }

    fn from_event_owned(invocation: Invocation, _cx: &Context) -> Result<Self, Error> {
        Ok(invocation)
    }
}

/// The input deserialized from JSON (an empty input reads as `null`).
impl<T: DeserializeOwned> FromEvent<Custom> for Json<T> {
    const READS_BODY: bool = true;

    fn from_event(invocation: &mut Invocation, _cx: &Context) -> Result<Self, Error> {
        let value = invocation.json::<T>()?;
        invocation.take_input();
        Ok(Json(value))
    }
}

/// The raw input.
impl FromEvent<Custom> for Bytes {
    const READS_BODY: bool = true;

    fn from_event(invocation: &mut Invocation, _cx: &Context) -> Result<Self, Error> {
        Ok(invocation.take_input())
    }
}

/// The input as text; input that is not UTF-8 is refused.
impl FromEvent<Custom> for String {
    const READS_BODY: bool = true;

    fn from_event(invocation: &mut Invocation, _cx: &Context) -> Result<Self, Error> {
        // Reuses the buffer when the input is its only owner; copies otherwise.
        String::from_utf8(Vec::from(invocation.take_input()))
            .map_err(|_| Error::typed("InvalidText", "the input is not valid UTF-8"))
    }
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
/// use celerity::custom::CustomError;
///
/// async fn resize(width: celerity::Json<u32>) -> Result<String, CustomError> {
///     if width.0 == 0 {
///         return Err(CustomError::new("width must be positive"));
///     }
///     Ok(format!("{} pixels", width.0))
/// }
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

/// A `CustomError` in a `celerity::Error`, so that `celerity::Result`
/// serves both kinds of error: a custom handler still answers it as
/// `error_message`.
impl From<CustomError> for Error {
    fn from(error: CustomError) -> Self {
        Error::deliberate("CustomError", error.message)
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

/// An output: the bytes of `CustomInvokeResult.output`; one that cannot be
/// produced (JSON that does not serialize) is a `HandlerError`.
impl<T: IntoCustomOutput> IntoAnswer<Custom> for T {
    fn into_answer(self) -> Outcome {
        match self.into_custom_output() {
            Ok(output) => Outcome::Custom(CustomInvokeResult { output, error_message: String::new() }),
            Err(error) => Outcome::Error(error.to_handler_error()),
        }
    }
}

/// An output, or an error: a [`CustomError`] is answered as
/// `error_message`, any other error as a `HandlerError`.
///
/// ```
/// use celerity::custom::{Custom, CustomError};
/// use celerity::proto::v1::{CustomInvokeResult, result::Outcome};
/// use celerity::IntoAnswer;
///
/// let answer: Result<String, CustomError> = Err(CustomError::new("no such image"));
/// assert_eq!(
///     IntoAnswer::<Custom>::into_answer(answer),
///     Outcome::Custom(CustomInvokeResult { output: Default::default(), error_message: "no such image".into() })
/// );
/// ```
impl<T: IntoCustomOutput, E: IntoCustomError> IntoAnswer<Custom> for Result<T, E> {
    fn into_answer(self) -> Outcome {
        match self {
            Ok(value) => value.into_answer(),
            Err(error) => error.into_custom_error(),
        }
    }
}

whole_event_kind! {
    /// The custom kind of event: a handler invoked by name takes arguments
    /// from an [`Invocation`] and answers with an output, or an
    /// `error_message` for a [`CustomError`] (and for an argument that cannot
    /// be taken).
    pub struct Custom;
    serves: Custom from Source::Custom,
    event: Invocation = |wire| Ok(Invocation::from_wire(wire)),
    rejection: Error = |rejection: Error| deliberate(rejection.message().to_string()),
    answer: ::celerity_proto::v1::result::Outcome,
}

kind_diagnostics! {
    kind: Custom,
    argument: CustomArgument {
        message: "`{Self}` cannot be an argument of a custom handler",
        label: "not something a custom handler can take",
        notes: [
            "a custom handler takes: `Invocation`, `Json<T>`, `Bytes`, `String`, `Context`, `State<T>` and `WsSender`",
            "a type of your own can be one by implementing `celerity::FromEvent<celerity::custom::Custom>`",
        ],
    },
    answer: CustomAnswer {
        message: "`{Self}` cannot be returned from a custom handler",
        label: "not a custom handler's result",
        notes: [
            "a custom handler returns: `Json<T>`, `Bytes`, `Vec<u8>`, `String`, `&'static str`, `()`, or `Result<O, E>` of one, where `E` is `CustomError` (answered as `error_message`), `celerity::Error` or any `std::error::Error` (answered as a `HandlerError`)",
        ],
    },
    handler:
        /// An `async fn` usable as a custom handler: every argument can be
        /// taken from an invocation ([`crate::FromEvent`]`<Custom>`) and it
        /// returns an output or a `Result` of one. The same as
        /// [`crate::Handler`]`<Custom, Args>`, in the words of a custom
        /// handler.
        CustomHandler {
        message: "`{Self}` is not a custom handler",
        label: "not a custom handler",
        notes: [
            "a custom handler is an `async fn` whose arguments are custom extractors (`Invocation`, `Json<T>`, `Bytes`, `String`, `Context`, `State<T>`) and that returns an output (`Json<T>`, `Bytes`, `Vec<u8>`, `String`, `&'static str`, `()`) or a `Result` of one",
        ],
    },
}

#[cfg(test)]
mod tests {
    use celerity_proto::v1::{Dispatch, dispatch::Source};
    use serde::Deserialize;

    use super::*;
    use crate::kind::HandlerKind;
    use crate::pipeline::Handler;
    use crate::pipeline::{dispatch_to, other_sources, serve_once};
    use crate::session::error_type;

    const TAG: &str = "custom::resizeImage";

    fn dispatch(source: Source) -> Dispatch {
        dispatch_to(TAG, source)
    }

    fn invoke(input: &'static [u8]) -> Dispatch {
        dispatch(Source::Custom(pb::CustomInvoke {
            handler_name: "resizeImage".into(),
            input: Bytes::from_static(input),
        }))
    }

    async fn run<Args: 'static>(handler: impl Handler<Custom, Args>, dispatch: Dispatch) -> Outcome {
        let outcome = serve_once(handler, (), dispatch, Context::detached(TAG)).await;
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
        for source in other_sources(HandlerKind::Custom) {
            let error = handler_error(run(handler, dispatch(source)).await);
            assert_eq!(error.r#type, error_type::WRONG_SOURCE);
            assert!(error.message.contains("custom"), "{}", error.message);
        }
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
        let taken = <Invocation as FromEvent<Custom>>::from_event(&mut invocation, &cx).unwrap();
        assert_eq!((taken.handler_name(), taken.input().as_ref()), ("resizeImage", b"abc".as_ref()));
        assert_eq!((invocation.handler_name(), invocation.input().is_empty()), ("resizeImage", true));
    }

    #[test]
    fn a_custom_error_carried_by_error_is_still_answered_as_error_message() {
        let error: Error = CustomError::new("n must be positive").into();
        assert!(error.is_custom_error());
        let deliberate: Result<crate::json::Json<u32>, Error> = Err(error);
        match IntoAnswer::<Custom>::into_answer(deliberate) {
            Outcome::Custom(result) => assert_eq!(result.error_message, "n must be positive"),
            other => panic!("expected error_message, got {other:?}"),
        }
        let unhandled: Result<crate::json::Json<u32>, Error> = Err(std::io::Error::other("disk").into());
        assert!(matches!(IntoAnswer::<Custom>::into_answer(unhandled), Outcome::Error(e) if e.message == "disk"));
    }
}
