//! WebSocket message events.

use bytes::Bytes;
use celerity_proto::v1::{Dispatch, WebSocketMessage, dispatch::Source};

use super::envelope::{Envelope, envelope_setters};
use crate::ids;

/// Starts a WebSocket message on `route` (e.g. `$default`, `sendMessage`)
/// from connection `connection_id`; tag `{route_key}::{route}`, the route key
/// defaulting to `event`. The message id defaults to a fresh one, the message
/// to empty text.
pub fn websocket(route: impl Into<String>, connection_id: impl Into<String>) -> WebSocketEvent {
    WebSocketEvent {
        envelope: Envelope::default(),
        route_key: "event".to_owned(),
        route: route.into(),
        connection_id: connection_id.into(),
        source_ip: String::new(),
        request_id: String::new(),
        message: Bytes::new(),
        is_binary: false,
        message_id: ids::next_id("ws-msg"),
    }
}

/// A `$connect` event for `connection_id` (body `null`).
pub fn websocket_connect(connection_id: impl Into<String>) -> WebSocketEvent {
    websocket("$connect", connection_id).text("null")
}

/// A `$disconnect` event for `connection_id` (body `null`).
pub fn websocket_disconnect(connection_id: impl Into<String>) -> WebSocketEvent {
    websocket("$disconnect", connection_id).text("null")
}

/// Builds a Dispatch with a `WebSocketMessage` source.
#[derive(Debug, Clone)]
#[must_use]
pub struct WebSocketEvent {
    envelope: Envelope,
    route_key: String,
    route: String,
    connection_id: String,
    source_ip: String,
    request_id: String,
    message: Bytes,
    is_binary: bool,
    message_id: String,
}

impl WebSocketEvent {
    envelope_setters!();

    /// Sets the route key of the tag (default `event`).
    pub fn route_key(mut self, key: impl Into<String>) -> Self {
        self.route_key = key.into();
        self
    }

    /// Sets a text message (for JSON, the whole JSON object).
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.message = Bytes::from(text.into());
        self.is_binary = false;
        self
    }

    /// Sets a binary message (framing already removed).
    pub fn binary(mut self, bytes: impl Into<Bytes>) -> Self {
        self.message = bytes.into();
        self.is_binary = true;
        self
    }

    /// Sets the message id.
    pub fn message_id(mut self, id: impl Into<String>) -> Self {
        self.message_id = id.into();
        self
    }

    /// Sets the client's IP address.
    pub fn source_ip(mut self, ip: impl Into<String>) -> Self {
        self.source_ip = ip.into();
        self
    }

    /// Sets the request id.
    pub fn request_id(mut self, id: impl Into<String>) -> Self {
        self.request_id = id.into();
        self
    }

    /// The Dispatch.
    pub fn build(self) -> Dispatch {
        let tag = format!("{}::{}", self.route_key, self.route);
        self.envelope.into_dispatch(
            tag,
            Source::Websocket(WebSocketMessage {
                route: self.route,
                connection_id: self.connection_id,
                source_ip: self.source_ip,
                request_id: self.request_id,
                message: self.message,
                is_binary: self.is_binary,
                message_id: self.message_id,
            }),
        )
    }
}

impl From<WebSocketEvent> for Dispatch {
    fn from(e: WebSocketEvent) -> Dispatch {
        e.build()
    }
}
