//! The WebSocket message a handler receives.

use std::net::IpAddr;

use bytes::Bytes;
use celerity_proto::v1 as pb;
use serde::de::DeserializeOwned;

use crate::json::{JsonError, decode_json};

/// How a JSON decoding error names the message.
pub(crate) const MESSAGE_BODY: &str = "the message";

/// A WebSocket message as the runtime delivered it, on one of the routes
/// `$connect`, `$disconnect`, `$default` or a named route.
///
/// A text message carries the whole JSON object the client sent; a binary
/// message carries its payload with the Celerity binary framing removed.
/// `$connect` and `$disconnect` carry the body `null`. The body is the bytes
/// the runtime sent, not copied.
///
/// ```
/// use celerity::websocket::Message;
/// let message = Message::new_text("sendMessage", r#"{"text": "hi"}"#).with_connection_id("c-1");
/// assert!(message.is_text());
/// assert_eq!(message.connection_id(), "c-1");
/// #[derive(serde::Deserialize)]
/// struct Chat { text: String }
/// let chat: Chat = message.json().unwrap();
/// assert_eq!(chat.text, "hi");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Message {
    route: String,
    connection_id: String,
    source_ip: Option<IpAddr>,
    request_id: String,
    message_id: String,
    body: Bytes,
    is_binary: bool,
}

impl Message {
    /// A text message on `route`, for calling a handler directly in a test.
    pub fn new_text(route: impl Into<String>, text: impl Into<String>) -> Self {
        Message { route: route.into(), body: Bytes::from(text.into()), ..Message::default() }
    }

    /// A binary message on `route` (its payload, without framing), for
    /// calling a handler directly in a test.
    pub fn new_binary(route: impl Into<String>, payload: impl Into<Bytes>) -> Self {
        Message { route: route.into(), body: payload.into(), is_binary: true, ..Message::default() }
    }

    /// Sets the connection id.
    pub fn with_connection_id(mut self, id: impl Into<String>) -> Self {
        self.connection_id = id.into();
        self
    }

    /// Sets the message id.
    pub fn with_message_id(mut self, id: impl Into<String>) -> Self {
        self.message_id = id.into();
        self
    }

    /// Sets the request id.
    pub fn with_request_id(mut self, id: impl Into<String>) -> Self {
        self.request_id = id.into();
        self
    }

    /// Sets the source IP.
    pub fn with_source_ip(mut self, ip: IpAddr) -> Self {
        self.source_ip = Some(ip);
        self
    }

    /// The route the message arrived on: `$connect`, `$disconnect`,
    /// `$default`, or a named route such as `sendMessage`.
    pub fn route(&self) -> &str {
        &self.route
    }

    /// Whether this is the `$connect` event of a new connection.
    pub fn is_connect(&self) -> bool {
        self.route == "$connect"
    }

    /// Whether this is the `$disconnect` event of a closed connection.
    pub fn is_disconnect(&self) -> bool {
        self.route == "$disconnect"
    }

    /// The connection the message came from; the one to answer on.
    pub fn connection_id(&self) -> &str {
        &self.connection_id
    }

    /// The message's id: the client's own, or one the runtime generated.
    pub fn message_id(&self) -> &str {
        &self.message_id
    }

    /// The runtime's id for the request that carried the message.
    pub fn request_id(&self) -> &str {
        &self.request_id
    }

    /// The client's IP address, when the runtime knows it (often it does not).
    pub fn source_ip(&self) -> Option<IpAddr> {
        self.source_ip
    }

    /// Whether the client sent a binary message.
    pub fn is_binary(&self) -> bool {
        self.is_binary
    }

    /// Whether the client sent a text message.
    pub fn is_text(&self) -> bool {
        !self.is_binary
    }

    /// The text of a text message; `None` for a binary message, or for text
    /// that is not valid UTF-8.
    pub fn text(&self) -> Option<&str> {
        if self.is_binary { None } else { std::str::from_utf8(&self.body).ok() }
    }

    /// The body: the text's bytes, or the binary payload.
    pub fn body(&self) -> &Bytes {
        &self.body
    }

    /// Takes the body.
    pub fn into_body(self) -> Bytes {
        self.body
    }

    /// A text message's JSON, deserialized into `T`. A binary message is an
    /// error, as is JSON that does not fit (naming the field).
    ///
    /// ```
    /// use celerity::websocket::Message;
    /// let connect = Message::new_text("$connect", "null");
    /// assert_eq!(connect.json::<Option<u32>>().unwrap(), None);
    /// assert!(Message::new_binary("x", vec![1, 2]).json::<u32>().is_err());
    /// ```
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, JsonError> {
        if self.is_binary {
            return Err(JsonError::other(
                "invalid_type",
                format!("{MESSAGE_BODY} is binary, not JSON text; take `Bytes` or `Message` to read a binary message"),
            ));
        }
        decode_json(&self.body, MESSAGE_BODY)
    }

    /// Converts the wire form.
    pub(crate) fn from_wire(message: pb::WebSocketMessage) -> Self {
        Message {
            route: message.route,
            connection_id: message.connection_id,
            source_ip: message.source_ip.parse().ok(),
            request_id: message.request_id,
            message_id: message.message_id,
            body: message.message,
            is_binary: message.is_binary,
        }
    }

    pub(crate) fn take_body(&mut self) -> Bytes {
        std::mem::take(&mut self.body)
    }

    /// Takes the message, leaving its metadata and an empty body behind.
    pub(crate) fn take(&mut self) -> Message {
        let body = self.take_body();
        Message { body, ..self.clone() }
    }
}

impl From<pb::WebSocketMessage> for Message {
    fn from(message: pb::WebSocketMessage) -> Self {
        Message::from_wire(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_the_wire_message() {
        let message = Message::from_wire(pb::WebSocketMessage {
            route: "sendMessage".into(),
            connection_id: "c-1".into(),
            source_ip: "2001:db8::1".into(),
            request_id: "r-1".into(),
            message: Bytes::from_static(br#"{"a":1}"#),
            is_binary: false,
            message_id: "m-1".into(),
        });
        assert_eq!(message.route(), "sendMessage");
        assert_eq!(message.connection_id(), "c-1");
        assert_eq!(message.source_ip(), Some("2001:db8::1".parse().unwrap()));
        assert_eq!(message.request_id(), "r-1");
        assert_eq!(message.message_id(), "m-1");
        assert!(message.is_text() && !message.is_binary());
        assert_eq!(message.text(), Some(r#"{"a":1}"#));
    }

    #[test]
    fn an_empty_or_bad_source_ip_is_none() {
        let message = Message::from_wire(pb::WebSocketMessage { source_ip: "nope".into(), ..Default::default() });
        assert_eq!(message.source_ip(), None);
        assert_eq!(Message::from_wire(pb::WebSocketMessage::default()).source_ip(), None);
    }

    #[test]
    fn the_body_is_not_copied() {
        let body = Bytes::from(vec![1u8, 2, 3]);
        let message =
            Message::from_wire(pb::WebSocketMessage { message: body.clone(), is_binary: true, ..Default::default() });
        assert_eq!(message.body().as_ptr(), body.as_ptr());
        assert_eq!(message.text(), None);
    }

    #[test]
    fn text_that_is_not_utf8_has_no_text() {
        let message =
            Message::from_wire(pb::WebSocketMessage { message: Bytes::from_static(&[0xff]), ..Default::default() });
        assert_eq!(message.text(), None);
        assert_eq!(message.json::<u8>().unwrap_err().code(), "malformed");
    }

    #[test]
    fn connect_and_disconnect_carry_null() {
        let connect = Message::new_text("$connect", "null");
        assert!(connect.is_connect() && !connect.is_disconnect());
        assert_eq!(connect.json::<Option<serde_json::Value>>().unwrap(), None);
        assert!(Message::new_text("$disconnect", "null").is_disconnect());
    }
}
