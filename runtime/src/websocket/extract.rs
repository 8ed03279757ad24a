//! Handler arguments taken from a WebSocket message.

use bytes::Bytes;
use serde::de::DeserializeOwned;

use super::{Message, WebSocket};
use crate::context::Context;
use crate::error::Error;
use crate::json::Json;
use crate::pipeline::FromEvent;

/// The whole message.
impl FromEvent<WebSocket> for Message {
    const READS_BODY: bool = true;

    fn from_event(message: &mut Message, _cx: &Context) -> Result<Self, Error> {
        Ok(message.take())
    }

    fn from_event_owned(message: Message, _cx: &Context) -> Result<Self, Error> {
        Ok(message)
    }
}

/// A text message's JSON; a binary message, or JSON that does not fit `T`,
/// is refused with a message naming the field.
impl<T: DeserializeOwned> FromEvent<WebSocket> for Json<T> {
    const READS_BODY: bool = true;

    fn from_event(message: &mut Message, _cx: &Context) -> Result<Self, Error> {
        let value = message.json::<T>()?;
        message.take_body();
        Ok(Json(value))
    }
}

/// The body: a text message's bytes, or a binary message's payload.
impl FromEvent<WebSocket> for Bytes {
    const READS_BODY: bool = true;

    fn from_event(message: &mut Message, _cx: &Context) -> Result<Self, Error> {
        Ok(message.take_body())
    }
}

/// A text message's text; a binary message is refused.
impl FromEvent<WebSocket> for String {
    const READS_BODY: bool = true;

    fn from_event(message: &mut Message, _cx: &Context) -> Result<Self, Error> {
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
