//! WebSocket events and the WebSocket side channel.
//!
//! A WebSocket handler runs for each message a client sends on its route:
//! `$connect` when a connection opens, `$disconnect` when it closes (both
//! with the body `null`), `$default` for messages no named route takes, or a
//! named route such as `sendMessage`. Its tag is `{routeKey}::{route}`, such
//! as `event::$default`.
//!
//! It takes any of the [`FromMessage`] arguments and returns `()` or a
//! `Result` ([`IntoAck`]): the runtime is answered with an `Ack`, successful
//! unless the handler returned an error, whose message the `Ack` carries.
//!
//! ```
//! use celerity::websocket::Message;
//! use celerity::{Json, Result};
//!
//! #[derive(serde::Deserialize)]
//! struct Chat { text: String }
//!
//! async fn on_message(message: Message) -> Result<()> {
//!     let chat: Chat = message.json()?;
//!     println!("{} says {}", message.connection_id(), chat.text);
//!     Ok(())
//! }
//!
//! async fn on_connect() {}
//!
//! async fn send_message(Json(chat): Json<Chat>) -> Result<()> {
//!     println!("{}", chat.text);
//!     Ok(())
//! }
//!
//! let app = celerity::App::new()
//!     .websocket("event::$connect", on_connect)
//!     .websocket("event::$default", on_message)
//!     .websocket("action::sendMessage", send_message);
//! # drop(app);
//! ```

mod connection;
pub mod frame;
mod message;
pub mod outbound;
mod sender;

use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use celerity_proto::v1::{Ack, Dispatch, dispatch::Source, result::Outcome};
use serde::de::DeserializeOwned;

use crate::context::{Context, State};
use crate::error::Error;
use crate::handler::{Handler, HandlerFuture, expect_shape, ready, wrong_source};
use crate::json::Json;
use crate::registry::HandlerKind;

pub use connection::ConnectionId;
pub use message::Message;
pub use outbound::Outbound;
pub use sender::{DEFAULT_ACK_TIMEOUT, WsSender};

/// A value a WebSocket handler can take as an argument.
///
/// Extraction happens before the handler runs; a failure answers the runtime
/// with a failed `Ack` carrying the error's message, and the handler is not
/// called.
///
/// At most one argument may read the message's body
/// ([`FromMessage::READS_BODY`]): `Message`, `Json<T>`, `Bytes` or `String`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an argument of a WebSocket handler",
    label = "not something a WebSocket handler can take",
    note = "a WebSocket handler takes: `Message`, `ConnectionId`, `Json<T>`, `Bytes`, `String`, `Context`, `State<T>` and `WsSender`",
    note = "a type of your own can be one by implementing `celerity::websocket::FromMessage`"
)]
pub trait FromMessage: Sized {
    /// Whether this argument consumes the message's body.
    const READS_BODY: bool = false;

    /// Takes the value from the message. Arguments that read the body take
    /// it out of `message`; the others only look.
    fn from_message(message: &mut Message, cx: &Context) -> Result<Self, Error>;

    /// Takes the value when it is the handler's last argument and may have
    /// the whole message. Defaults to [`FromMessage::from_message`].
    fn from_message_owned(mut message: Message, cx: &Context) -> Result<Self, Error> {
        Self::from_message(&mut message, cx)
    }
}

impl FromMessage for Message {
    const READS_BODY: bool = true;

    fn from_message(message: &mut Message, _cx: &Context) -> Result<Self, Error> {
        Ok(message.take())
    }

    fn from_message_owned(message: Message, _cx: &Context) -> Result<Self, Error> {
        Ok(message)
    }
}

/// A text message's JSON; a binary message, or JSON that does not fit `T`,
/// is refused with a message naming the field.
impl<T: DeserializeOwned> FromMessage for Json<T> {
    const READS_BODY: bool = true;

    fn from_message(message: &mut Message, _cx: &Context) -> Result<Self, Error> {
        let value = message.json::<T>()?;
        message.take_body();
        Ok(Json(value))
    }
}

/// The body: a text message's bytes, or a binary message's payload.
impl FromMessage for Bytes {
    const READS_BODY: bool = true;

    fn from_message(message: &mut Message, _cx: &Context) -> Result<Self, Error> {
        Ok(message.take_body())
    }
}

/// A text message's text; a binary message is refused.
impl FromMessage for String {
    const READS_BODY: bool = true;

    fn from_message(message: &mut Message, _cx: &Context) -> Result<Self, Error> {
        if message.is_binary() {
            return Err(Error::typed(
                "BinaryMessage",
                "the handler takes the message as a `String`, but the client sent a binary message; take `Bytes` or `Message` to read one",
            ));
        }
        // Reuses the buffer when the body is its only owner; copies otherwise.
        String::from_utf8(Vec::from(message.take_body()))
            .map_err(|_| Error::typed("InvalidText", "the message text is not valid UTF-8"))
    }
}

impl FromMessage for Context {
    fn from_message(_message: &mut Message, cx: &Context) -> Result<Self, Error> {
        Ok(cx.clone())
    }
}

impl<T: Send + Sync + 'static> FromMessage for State<T> {
    fn from_message(_message: &mut Message, cx: &Context) -> Result<Self, Error> {
        State::from_context(cx)
    }
}

/// The answer to an argument that could not be extracted: a failed `Ack`
/// carrying the error's message. The attribute macro calls it.
pub fn reject(error: Error) -> Outcome {
    failed(&error)
}

fn failed(error: &Error) -> Outcome {
    Outcome::Websocket(Ack { success: false, error_message: error.message().to_string() })
}

/// What a WebSocket handler can return: `()` for success, or a `Result`
/// whose error fails the `Ack` with the error's message.
///
/// ```
/// use celerity::proto::v1::{Ack, result::Outcome};
/// use celerity::websocket::IntoAck;
/// let failed: Result<(), celerity::Error> = Err(celerity::Error::msg("no such room"));
/// assert_eq!(
///     failed.into_ack(),
///     Outcome::Websocket(Ack { success: false, error_message: "no such room".into() })
/// );
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a WebSocket handler",
    label = "not a WebSocket handler's result",
    note = "a WebSocket handler returns: `()` or `Result<(), E>` where `E` is `celerity::Error` or any `std::error::Error`"
)]
pub trait IntoAck {
    /// Converts the return value into the `Ack` outcome.
    fn into_ack(self) -> Outcome;
}

impl IntoAck for () {
    fn into_ack(self) -> Outcome {
        Outcome::Websocket(Ack { success: true, error_message: String::new() })
    }
}

impl<R: IntoAck, E: Into<Error>> IntoAck for Result<R, E> {
    fn into_ack(self) -> Outcome {
        match self {
            Ok(value) => value.into_ack(),
            Err(error) => failed(&error.into()),
        }
    }
}

/// A WebSocket handler from a function of the message and context. The
/// attribute macro builds its argument extraction inside such a function.
///
/// ```
/// use celerity::proto::v1::{Ack, result::Outcome};
/// use celerity::websocket::{Message, MessageFn};
/// use celerity::Context;
///
/// let handler = MessageFn::new(|message: Message, _cx: Context| async move {
///     Outcome::Websocket(Ack { success: message.is_text(), error_message: String::new() })
/// });
/// # let _: &dyn celerity::Handler = &handler;
/// ```
pub struct MessageFn<F> {
    f: F,
}

impl<F> MessageFn<F> {
    /// Wraps `f`.
    pub fn new(f: F) -> Self {
        MessageFn { f }
    }
}

impl<F, Fut> Handler for MessageFn<F>
where
    F: Fn(Message, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Outcome> + Send + 'static,
{
    fn call(&self, dispatch: Dispatch, cx: Context) -> HandlerFuture {
        match dispatch.source {
            Some(Source::Websocket(message)) => {
                let outcome = (self.f)(Message::from_wire(message), cx.clone());
                Box::pin(async move { expect_shape(HandlerKind::WebSocket, outcome.await, &cx) })
            }
            other => ready(wrong_source(HandlerKind::WebSocket, &other, &cx)),
        }
    }
}

/// An `async fn` usable as a WebSocket handler: every argument implements
/// [`FromMessage`] and the return value [`IntoAck`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a WebSocket handler",
    label = "not a WebSocket handler",
    note = "a WebSocket handler is an `async fn` whose arguments are WebSocket extractors (`Message`, `Json<T>`, `Bytes`, `String`, `Context`, `State<T>`) and that returns `()` or `Result<(), E>`"
)]
pub trait WebSocketHandler<Args>: Clone + Send + Sync + 'static {
    /// Builds the type-erased handler.
    fn into_handler(self) -> Arc<dyn Handler>;
}

macro_rules! websocket_handler_impl {
    ($($arg:ident),*; $last:ident) => {
        impl<F, Fut, R, $($arg,)* $last> WebSocketHandler<($($arg,)* $last,)> for F
        where
            F: Fn($($arg,)* $last) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = R> + Send + 'static,
            R: IntoAck,
            $($arg: FromMessage + Send + 'static,)*
            $last: FromMessage + Send + 'static,
        {
            #[allow(non_snake_case, unused_mut)]
            fn into_handler(self) -> Arc<dyn Handler> {
                const {
                    assert!(
                        0 $(+ $arg::READS_BODY as usize)* + $last::READS_BODY as usize <= 1,
                        "a WebSocket handler can read the message body with one argument only"
                    )
                };
                let f = self;
                Arc::new(MessageFn::new(move |mut message: Message, cx: Context| {
                    let f = f.clone();
                    async move {
                        $(
                            let $arg = match $arg::from_message(&mut message, &cx) {
                                Ok(value) => value,
                                Err(error) => return reject(error),
                            };
                        )*
                        let $last = match $last::from_message_owned(message, &cx) {
                            Ok(value) => value,
                            Err(error) => return reject(error),
                        };
                        f($($arg,)* $last).await.into_ack()
                    }
                }))
            }
        }
    };
}

impl<F, Fut, R> WebSocketHandler<()> for F
where
    F: Fn() -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoAck,
{
    fn into_handler(self) -> Arc<dyn Handler> {
        let f = self;
        Arc::new(MessageFn::new(move |_message: Message, _cx: Context| {
            let f = f.clone();
            async move { f().await.into_ack() }
        }))
    }
}

websocket_handler_impl!(; A1);
websocket_handler_impl!(A1; A2);
websocket_handler_impl!(A1, A2; A3);
websocket_handler_impl!(A1, A2, A3; A4);
websocket_handler_impl!(A1, A2, A3, A4; A5);
websocket_handler_impl!(A1, A2, A3, A4, A5; A6);
websocket_handler_impl!(A1, A2, A3, A4, A5, A6; A7);
websocket_handler_impl!(A1, A2, A3, A4, A5, A6, A7; A8);

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use celerity_proto::v1 as pb;
    use serde::Deserialize;

    use super::*;
    use crate::session::error_type;

    const TAG: &str = "event::$default";

    fn dispatch(source: Source) -> Dispatch {
        Dispatch { id: "ev-1".into(), handler_tag: TAG.into(), source: Some(source), ..Default::default() }
    }

    fn text(route: &str, body: &str) -> Dispatch {
        dispatch(Source::Websocket(pb::WebSocketMessage {
            route: route.into(),
            connection_id: "conn-1".into(),
            source_ip: "10.0.0.7".into(),
            request_id: "req-1".into(),
            message: Bytes::copy_from_slice(body.as_bytes()),
            is_binary: false,
            message_id: "msg-1".into(),
        }))
    }

    fn binary(payload: &'static [u8]) -> Dispatch {
        dispatch(Source::Websocket(pb::WebSocketMessage {
            route: "$default".into(),
            connection_id: "conn-1".into(),
            message: Bytes::from_static(payload),
            is_binary: true,
            ..Default::default()
        }))
    }

    async fn run<Args>(handler: impl WebSocketHandler<Args>, dispatch: Dispatch) -> Outcome {
        let outcome = handler.into_handler().call(dispatch, Context::detached(TAG)).await;
        assert!(
            matches!(outcome, Outcome::Websocket(_) | Outcome::Error(_)),
            "a WebSocket handler answered with another shape: {outcome:?}"
        );
        outcome
    }

    fn ok() -> Outcome {
        Outcome::Websocket(Ack { success: true, error_message: String::new() })
    }

    fn failure(outcome: Outcome) -> String {
        match outcome {
            Outcome::Websocket(Ack { success: false, error_message }) => error_message,
            other => panic!("expected a failed Ack, got {other:?}"),
        }
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Chat {
        room: String,
        text: String,
    }

    #[tokio::test]
    async fn a_text_message_reaches_the_handler_with_everything_it_carries() {
        let seen = Arc::new(Mutex::new(None));
        let keep = Arc::clone(&seen);
        let handler = move |message: Message| {
            let keep = Arc::clone(&keep);
            async move {
                *keep.lock().unwrap() = Some(message);
            }
        };
        assert_eq!(run(handler, text("sendMessage", r#"{"a":1}"#)).await, ok());
        let message = seen.lock().unwrap().take().unwrap();
        assert_eq!(message.route(), "sendMessage");
        assert_eq!(message.connection_id(), "conn-1");
        assert_eq!(message.message_id(), "msg-1");
        assert_eq!(message.request_id(), "req-1");
        assert_eq!(message.source_ip(), Some("10.0.0.7".parse().unwrap()));
        assert!(message.is_text());
        assert_eq!(message.text(), Some(r#"{"a":1}"#));
    }

    #[tokio::test]
    async fn json_is_decoded_beside_the_context_and_state() {
        async fn handler(cx: Context, Json(chat): Json<Chat>) -> Result<(), Error> {
            assert_eq!(cx.tag(), TAG);
            if chat.room == "general" && chat.text == "hi" { Ok(()) } else { Err(Error::msg("wrong chat")) }
        }
        assert_eq!(run(handler, text("$default", r#"{"room":"general","text":"hi"}"#)).await, ok());
    }

    #[tokio::test]
    async fn json_that_does_not_fit_fails_the_ack_naming_the_field() {
        async fn handler(_chat: Json<Chat>) {
            panic!("must not run");
        }
        let message = failure(run(handler, text("$default", r#"{"room":"general","text":7}"#)).await);
        assert!(message.contains("`text`"), "{message}");
        let message = failure(run(handler, text("$default", "{")).await);
        assert!(message.contains("not valid JSON"), "{message}");
    }

    #[tokio::test]
    async fn a_binary_message_is_bytes_and_never_json() {
        async fn bytes(_cx: Context, body: Bytes) -> Result<(), Error> {
            if body == Bytes::from_static(&[0xde, 0xad]) { Ok(()) } else { Err(Error::msg("wrong body")) }
        }
        assert_eq!(run(bytes, binary(&[0xde, 0xad])).await, ok());
        async fn message(message: Message) -> Result<(), Error> {
            let fine = message.is_binary() && message.text().is_none() && message.body().as_ref() == [0xde, 0xad];
            if fine { Ok(()) } else { Err(Error::msg("wrong message")) }
        }
        assert_eq!(run(message, binary(&[0xde, 0xad])).await, ok());

        async fn json(_value: Json<serde_json::Value>) {}
        let message = failure(run(json, binary(b"{}")).await);
        assert!(message.contains("binary"), "{message}");

        async fn string(_text: String) {}
        assert!(failure(run(string, binary(b"hi")).await).contains("binary"));
    }

    #[tokio::test]
    async fn a_text_message_as_a_string() {
        async fn handler(text: String) -> Result<(), Error> {
            if text == "hello" { Ok(()) } else { Err(Error::msg(text)) }
        }
        assert_eq!(run(handler, text("$default", "hello")).await, ok());
    }

    #[tokio::test]
    async fn connect_and_disconnect_carry_a_null_body() {
        async fn handler(message: Message) -> Result<(), Error> {
            let body: Option<Chat> = message.json()?;
            if (message.is_connect() || message.is_disconnect()) && body.is_none() {
                Ok(())
            } else {
                Err(Error::msg("not a connection event"))
            }
        }
        assert_eq!(run(handler, text("$connect", "null")).await, ok());
        assert_eq!(run(handler, text("$disconnect", "null")).await, ok());
        async fn typed(Json(body): Json<Option<Chat>>) -> Result<(), Error> {
            if body.is_none() { Ok(()) } else { Err(Error::msg("a body")) }
        }
        assert_eq!(run(typed, text("$connect", "null")).await, ok());
    }

    #[tokio::test]
    async fn an_error_fails_the_ack_with_its_message() {
        async fn handler() -> Result<(), std::io::Error> {
            Err(std::io::Error::other("room is full"))
        }
        assert_eq!(failure(run(handler, text("$default", "{}")).await), "room is full");
    }

    #[tokio::test]
    async fn missing_state_fails_the_ack() {
        async fn handler(_store: State<u32>) {}
        assert!(failure(run(handler, text("$default", "{}")).await).contains("App::state"));
    }

    #[tokio::test]
    async fn another_source_is_a_wrong_source_error() {
        async fn handler() {}
        for source in [
            Source::Http(pb::HttpRequest::default()),
            Source::Consumer(pb::ConsumerBatch::default()),
            Source::Schedule(pb::ScheduleTrigger::default()),
            Source::Custom(pb::CustomInvoke { handler_name: "x".into(), input: Bytes::new() }),
        ] {
            match run(handler, dispatch(source)).await {
                Outcome::Error(error) => {
                    assert_eq!(error.r#type, error_type::WRONG_SOURCE);
                    assert!(error.message.contains("WebSocket"), "{}", error.message);
                }
                other => panic!("expected a wrong-source error, got {other:?}"),
            }
        }
        let no_source = Dispatch { id: "ev-1".into(), ..Default::default() };
        assert!(matches!(run(handler, no_source).await, Outcome::Error(_)));
    }

    #[tokio::test]
    async fn the_adapter_runs_what_the_macro_generates() {
        async fn user(cx: Context, message: Message) -> Result<(), Error> {
            let chat: Chat = message.json()?;
            if cx.tag() == TAG && chat.text == "hi" { Ok(()) } else { Err(Error::msg("no")) }
        }
        let handler = MessageFn::new(move |mut ev: Message, cx: Context| async move {
            let a0 = match <Context as FromMessage>::from_message(&mut ev, &cx) {
                Ok(v) => v,
                Err(e) => return reject(e),
            };
            let a1 = match <Message as FromMessage>::from_message_owned(ev, &cx) {
                Ok(v) => v,
                Err(e) => return reject(e),
            };
            <Result<(), Error> as IntoAck>::into_ack(user(a0, a1).await)
        });
        let outcome = handler.call(text("$default", r#"{"room":"r","text":"hi"}"#), Context::detached(TAG)).await;
        assert_eq!(outcome, ok());
        let outcome = handler.call(text("$default", r#"{"room":"r"}"#), Context::detached(TAG)).await;
        assert!(failure(outcome).contains("missing field `text`"));
    }

    #[test]
    fn a_body_reader_that_is_not_last_leaves_an_empty_body() {
        let cx = Context::detached(TAG);
        let mut message = Message::new_text("$default", r#"{"room":"r","text":"hi"}"#).with_message_id("m-1");
        let Json(chat) = Json::<Chat>::from_message(&mut message, &cx).unwrap();
        assert_eq!(chat.text, "hi");
        assert!(message.body().is_empty());
        assert_eq!(message.message_id(), "m-1");
        let mut message = Message::new_text("$default", "x").with_message_id("m-2");
        let taken = Message::from_message(&mut message, &cx).unwrap();
        assert_eq!((taken.text(), taken.message_id()), (Some("x"), "m-2"));
        assert_eq!((message.body().is_empty(), message.message_id()), (true, "m-2"));
    }
}
