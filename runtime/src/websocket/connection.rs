//! The connection a WebSocket message came from, as an argument on its own.

use std::fmt;
use std::ops::Deref;

use super::{Message, WebSocket};
use crate::context::Context;
use crate::error::Error;
use crate::pipeline::FromEvent;

/// The id of the connection that sent the message. Unlike [`Message`], it
/// does not read the body, so a handler can take it beside `Json<T>`.
///
/// ```
/// use celerity::Json;
/// use celerity::websocket::ConnectionId;
///
/// #[derive(serde::Deserialize)]
/// struct Subscribe { order_ids: Vec<String> }
///
/// async fn subscribe(connection: ConnectionId, Json(request): Json<Subscribe>) {
///     println!("{} follows {:?}", connection, request.order_ids);
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConnectionId(pub String);

impl Deref for ConnectionId {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ConnectionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromEvent<WebSocket> for ConnectionId {
    fn from_event(message: &mut Message, _cx: &Context) -> Result<Self, Error> {
        Ok(ConnectionId(message.connection_id().to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_the_connection_and_leaves_the_body() {
        let mut message = Message::new_text("subscribe", r#"{"a":1}"#).with_connection_id("conn-1");
        let cx = Context::detached("event::subscribe");
        let id = <ConnectionId as FromEvent<WebSocket>>::from_event(&mut message, &cx).unwrap();
        assert_eq!(&*id, "conn-1");
        assert_eq!(message.text(), Some(r#"{"a":1}"#));
    }
}
