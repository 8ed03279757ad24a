//! A message for a queue: its body and how it is to be sent.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use serde::Serialize;

use crate::resources::error::Fault;
use crate::resources::message_rules;
use crate::resources::sending::Outgoing;

/// The longest delay a message may be sent with, as SQS allows it.
pub const MAX_DELAY: Duration = Duration::from_secs(900);

/// A message to send to a [`Queue`](super::Queue): a body, and where the
/// queue takes them, a group, a deduplication id, a delay and attributes.
///
/// Text, bytes and JSON make one:
///
/// ```
/// use std::time::Duration;
/// use celerity::resources::queue::Message;
///
/// #[derive(serde::Serialize)]
/// #[serde(rename_all = "camelCase")]
/// struct Placed {
///     order_id: String,
/// }
///
/// let plain = Message::from("order ord-1 placed");
/// let json = Message::json(&Placed { order_id: "ord-1".into() })
///     .unwrap()
///     .with_group_id("customer-7")
///     .with_deduplication_id("ord-1-placed")
///     .with_delay(Duration::from_secs(30))
///     .with_attribute("kind", "placed");
/// assert_eq!(json.body().as_ref(), br#"{"orderId":"ord-1"}"#);
/// assert_eq!(json.attributes()["kind"], "placed");
/// # let _ = plain;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    body: Bytes,
    group_id: Option<String>,
    deduplication_id: Option<String>,
    delay: Option<Duration>,
    attributes: BTreeMap<String, String>,
}

impl Message {
    /// A message of `body`.
    pub fn new(body: impl Into<Bytes>) -> Self {
        Message { body: body.into(), group_id: None, deduplication_id: None, delay: None, attributes: BTreeMap::new() }
    }

    /// A message whose body is `value` as JSON.
    pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        Ok(Message::new(serde_json::to_vec(value)?))
    }

    /// How long the queue holds the message back, in whole seconds, at
    /// most [`MAX_DELAY`]. A local session's queue delivers at once.
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    crate::resources::sending::shared_message_options!("an SQS FIFO queue");

    /// The body.
    pub fn body(&self) -> &Bytes {
        &self.body
    }

    /// The body as text, where it is UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.body).ok()
    }

    /// The delay, if any.
    pub fn delay(&self) -> Option<Duration> {
        self.delay
    }
}

impl Outgoing for Message {
    type Local = super::stream::Stream;

    fn checked_size(&self) -> Result<usize, Fault> {
        if let Some(delay) = self.delay
            && delay > MAX_DELAY
        {
            return Err(Fault::invalid(
                "InvalidDelay",
                format!(
                    "a delay of {} s is over the {} s a queue holds a message back",
                    delay.as_secs(),
                    MAX_DELAY.as_secs()
                ),
            ));
        }
        message_rules::checked_size(self.body.len(), &self.attributes)
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Self {
        Message::new(Bytes::copy_from_slice(text.as_bytes()))
    }
}

impl From<String> for Message {
    fn from(text: String) -> Self {
        Message::new(text)
    }
}

impl From<Vec<u8>> for Message {
    fn from(bytes: Vec<u8>) -> Self {
        Message::new(bytes)
    }
}

impl From<Bytes> for Message {
    fn from(bytes: Bytes) -> Self {
        Message::new(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delay_over_fifteen_minutes_is_refused() {
        assert!(Message::from("x").with_delay(MAX_DELAY).checked_size().is_ok());
        let fault = Message::from("x").with_delay(MAX_DELAY + Duration::from_secs(1)).checked_size().unwrap_err();
        assert_eq!(fault.code.as_deref(), Some("InvalidDelay"));
    }
}
