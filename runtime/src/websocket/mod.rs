//! WebSocket events and the WebSocket side channel.
//!
//! A WebSocket handler runs for each message a client sends on its route:
//! `$connect` when a connection opens, `$disconnect` when it closes (both
//! with the body `null`), `$default` for messages no named route takes, or a
//! named route such as `sendMessage`. Its tag is `{routeKey}::{route}`, such
//! as `event::$default`.
//!
//! It takes arguments from the [`Message`] ([`WebSocket`]: the message, its
//! [`ConnectionId`], its body as `Json<T>`, `Bytes` or `String`, and
//! `Context`, `State<T>`, `WsSender`) and returns `()` or a `Result`: the
//! runtime is answered with an `Ack`, successful unless the handler returned
//! an error, whose message the `Ack` carries.
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

mod answer;
mod connection;
mod extract;
pub mod frame;
mod kind;
mod message;
pub mod outbound;
mod sender;

pub use connection::ConnectionId;
pub use kind::{WebSocket, WebSocketHandler};
#[doc(hidden)]
pub use kind::{WebSocketAnswer, WebSocketArgument};
#[cfg(feature = "validation")]
pub(crate) use message::MESSAGE_BODY;
pub use message::Message;
pub use outbound::Outbound;
pub(crate) use sender::{AckFuture, SendRecorder};
pub use sender::{DEFAULT_ACK_TIMEOUT, WsSender};

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use bytes::Bytes;
    use celerity_proto::v1::{self as pb, Ack, Dispatch, dispatch::Source, result::Outcome};
    use serde::Deserialize;

    use super::*;
    use crate::context::{Context, State};
    use crate::error::Error;
    use crate::json::Json;
    use crate::pipeline::{FromEvent, Handler, serve_once};
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

    async fn run<Args: 'static>(handler: impl Handler<WebSocket, Args>, dispatch: Dispatch) -> Outcome {
        let outcome = serve_once(handler, (), dispatch, Context::detached(TAG)).await;
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

    #[test]
    fn a_body_reader_that_is_not_last_leaves_an_empty_body() {
        let cx = Context::detached(TAG);
        let mut message = Message::new_text("$default", r#"{"room":"r","text":"hi"}"#).with_message_id("m-1");
        let Json(chat) = <Json<Chat> as FromEvent<WebSocket>>::from_event(&mut message, &cx).unwrap();
        assert_eq!(chat.text, "hi");
        assert!(message.body().is_empty());
        assert_eq!(message.message_id(), "m-1");
        let mut message = Message::new_text("$default", "x").with_message_id("m-2");
        let taken = <Message as FromEvent<WebSocket>>::from_event(&mut message, &cx).unwrap();
        assert_eq!((taken.text(), taken.message_id()), (Some("x"), "m-2"));
        assert_eq!((message.body().is_empty(), message.message_id()), (true, "m-2"));
    }
}
