//! Building a WebSocket message event.

use std::fmt;
use std::time::SystemTime;

use bytes::Bytes;
use celerity_proto::v1::{self as pb, dispatch::Source};
use serde::Serialize;

use super::envelope::{Envelope, envelope_setters};
use crate::websocket::Message;

/// The connection a [`TestMessage`] comes from unless another is set.
pub const TEST_CONNECTION_ID: &str = "conn-1";

/// A WebSocket message to call a handler with, built the way the runtime
/// would send it.
///
/// The route defaults to the one in the tag the message is sent to
/// (`event::$default` gives `$default`, `action::sendMessage` gives
/// `sendMessage`); the connection to [`TEST_CONNECTION_ID`].
///
/// ```
/// use celerity::testing::TestMessage;
///
/// #[derive(serde::Serialize)]
/// struct Chat { text: &'static str }
///
/// let wire = TestMessage::json(&Chat { text: "hi" })
///     .connection_id("c-7")
///     .into_wire(Some("action::sendMessage"));
/// assert_eq!(wire.route, "sendMessage");
/// assert_eq!(wire.connection_id, "c-7");
/// assert_eq!(&wire.message[..], br#"{"text":"hi"}"#);
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct TestMessage {
    pub(super) envelope: Envelope,
    route_key: Option<String>,
    route: Option<String>,
    connection_id: String,
    source_ip: String,
    request_id: String,
    message_id: String,
    body: Bytes,
    is_binary: bool,
}

impl TestMessage {
    fn with_body(body: Bytes, is_binary: bool) -> Self {
        TestMessage {
            envelope: Envelope::default(),
            route_key: None,
            route: None,
            connection_id: TEST_CONNECTION_ID.to_string(),
            source_ip: String::new(),
            request_id: String::new(),
            message_id: String::new(),
            body,
            is_binary,
        }
    }

    /// A text message.
    pub fn text(text: impl Into<String>) -> Self {
        TestMessage::with_body(Bytes::from(text.into()), false)
    }

    /// A text message holding `value` as JSON.
    ///
    /// # Panics
    ///
    /// When `value` cannot be serialized as JSON.
    pub fn json(value: &impl Serialize) -> Self {
        let text =
            serde_json::to_string(value).unwrap_or_else(|error| panic!("the message is not serializable: {error}"));
        TestMessage::text(text)
    }

    /// A binary message: its payload, without the binary framing (which the
    /// runtime removes).
    pub fn binary(payload: impl Into<Bytes>) -> Self {
        TestMessage::with_body(payload.into(), true)
    }

    /// The `$connect` event of a new connection (body `null`).
    pub fn connect() -> Self {
        TestMessage::text("null").route("$connect")
    }

    /// The `$disconnect` event of a closed connection (body `null`).
    pub fn disconnect() -> Self {
        TestMessage::text("null").route("$disconnect")
    }

    envelope_setters!();

    /// This message with the text `text` (for JSON, the whole object).
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        (self.body, self.is_binary) = (Bytes::from(text.into()), false);
        self
    }

    /// This message with the binary payload `payload` (framing removed).
    pub fn with_binary(mut self, payload: impl Into<Bytes>) -> Self {
        (self.body, self.is_binary) = (payload.into(), true);
        self
    }

    /// Sets the route.
    pub fn route(mut self, route: impl Into<String>) -> Self {
        self.route = Some(route.into());
        self
    }

    /// Sets the route key of a built dispatch's tag, `{routeKey}::{route}`
    /// (by default `event`; `action` for a route matched on an action).
    pub fn route_key(mut self, key: impl Into<String>) -> Self {
        self.route_key = Some(key.into());
        self
    }

    /// Sets the connection the message comes from.
    pub fn connection_id(mut self, id: impl Into<String>) -> Self {
        self.connection_id = id.into();
        self
    }

    /// Sets the message's id.
    pub fn message_id(mut self, id: impl Into<String>) -> Self {
        self.message_id = id.into();
        self
    }

    /// Sets the runtime's request id.
    pub fn request_id(mut self, id: impl Into<String>) -> Self {
        self.request_id = id.into();
        self
    }

    /// Sets the client's address, as the runtime sends it (text).
    pub fn source_ip(mut self, ip: impl fmt::Display) -> Self {
        self.source_ip = ip.to_string();
        self
    }

    /// The tag of a dispatch that is built: `{routeKey}::{route}` (by
    /// default `event::$default`).
    pub(crate) fn default_tag(&self) -> String {
        let route = self.route.as_deref().filter(|route| !route.is_empty()).unwrap_or("$default");
        format!("{}::{route}", self.route_key.as_deref().unwrap_or("event"))
    }

    /// The wire message, for the handler bound to `tag` (whose route is the
    /// default route).
    pub fn into_wire(self, tag: Option<&str>) -> pb::WebSocketMessage {
        let route = self
            .route
            .or_else(|| tag.and_then(|tag| tag.split_once("::")).map(|(_, route)| route.to_string()))
            .unwrap_or_else(|| "$default".to_string());
        pb::WebSocketMessage {
            route,
            connection_id: self.connection_id,
            source_ip: self.source_ip,
            request_id: self.request_id,
            message: self.body,
            is_binary: self.is_binary,
            message_id: self.message_id,
        }
    }

    /// The whole `Dispatch`, for the tag set with `tag` (by default
    /// `{routeKey}::{route}`).
    pub fn build(mut self) -> pb::Dispatch {
        let tag = self.envelope.tag().map_or_else(|| self.default_tag(), str::to_string);
        let envelope = std::mem::take(&mut self.envelope);
        let message = self.into_wire(Some(&tag));
        envelope.into_dispatch(tag, String::new(), SystemTime::now(), Some(Source::Websocket(message)))
    }

    /// The message a wire message is, every field kept.
    pub(crate) fn from_wire(message: pb::WebSocketMessage) -> Self {
        TestMessage {
            route: Some(message.route),
            connection_id: message.connection_id,
            source_ip: message.source_ip,
            request_id: message.request_id,
            message_id: message.message_id,
            ..TestMessage::with_body(message.message, message.is_binary)
        }
    }
}

/// A message built with [`Message`]'s own builders: every field is kept.
impl From<Message> for TestMessage {
    fn from(message: Message) -> Self {
        TestMessage {
            route: Some(message.route().to_string()),
            connection_id: message.connection_id().to_string(),
            source_ip: message.source_ip().map(|ip| ip.to_string()).unwrap_or_default(),
            request_id: message.request_id().to_string(),
            message_id: message.message_id().to_string(),
            ..TestMessage::with_body(message.body().clone(), message.is_binary())
        }
    }
}

impl From<TestMessage> for pb::Dispatch {
    fn from(message: TestMessage) -> Self {
        message.build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_route_comes_from_the_tag_unless_set() {
        assert_eq!(TestMessage::text("x").into_wire(Some("event::$default")).route, "$default");
        assert_eq!(TestMessage::connect().into_wire(Some("event::$default")).route, "$connect");
        assert_eq!(TestMessage::text("x").into_wire(None).route, "$default");
    }

    #[test]
    fn a_message_from_the_sdk_builder_keeps_every_field() {
        let message = Message::new_binary("r", vec![1u8, 2])
            .with_connection_id("c-2")
            .with_message_id("m-1")
            .with_request_id("req")
            .with_source_ip("10.0.0.9".parse().unwrap());
        let wire = TestMessage::from(message.clone()).into_wire(Some("event::$default"));
        assert_eq!(Message::from(wire), message);
    }
}
