//! A message for a topic: its text and how it is to be published.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::resources::error::Fault;
use crate::resources::message_rules;
use crate::resources::sending::Outgoing;

/// The longest subject a message may have, as SNS allows it.
pub const MAX_SUBJECT_CHARS: usize = 100;

/// A message to publish to a [`Topic`](super::Topic): text (SNS, and a
/// local session's topic, carry text only), and where the topic takes
/// them, a subject, a group, a deduplication id and attributes.
///
/// ```
/// use celerity::resources::topic::Message;
///
/// #[derive(serde::Serialize)]
/// #[serde(rename_all = "camelCase")]
/// struct Placed {
///     order_id: String,
/// }
///
/// let message = Message::json(&Placed { order_id: "ord-1".into() })
///     .unwrap()
///     .with_subject("order placed")
///     .with_attribute("kind", "placed");
/// assert_eq!(message.body(), r#"{"orderId":"ord-1"}"#);
/// assert_eq!(message.subject(), Some("order placed"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    body: String,
    subject: Option<String>,
    group_id: Option<String>,
    deduplication_id: Option<String>,
    attributes: BTreeMap<String, String>,
}

impl Message {
    /// A message of `body`.
    pub fn new(body: impl Into<String>) -> Self {
        Message {
            body: body.into(),
            subject: None,
            group_id: None,
            deduplication_id: None,
            attributes: BTreeMap::new(),
        }
    }

    /// A message whose body is `value` as JSON.
    pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        Ok(Message::new(serde_json::to_string(value)?))
    }

    /// The subject, which email subscribers see as theirs: at most
    /// [`MAX_SUBJECT_CHARS`] characters, on one line.
    pub fn with_subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = Some(subject.into());
        self
    }

    crate::resources::sending::shared_message_options!("an SNS FIFO topic");

    /// The body.
    pub fn body(&self) -> &str {
        &self.body
    }

    /// The subject, if any.
    pub fn subject(&self) -> Option<&str> {
        self.subject.as_deref()
    }
}

impl Outgoing for Message {
    type Local = super::channel::Channel;

    fn checked_size(&self) -> Result<usize, Fault> {
        if let Some(subject) = &self.subject {
            if subject.is_empty() || subject.chars().count() > MAX_SUBJECT_CHARS {
                return Err(Fault::invalid(
                    "InvalidSubject",
                    format!(
                        "a subject has 1 to {MAX_SUBJECT_CHARS} characters, and this one {}",
                        subject.chars().count()
                    ),
                ));
            }
            if subject.chars().any(char::is_control) {
                return Err(Fault::invalid("InvalidSubject", "a subject is one line, with no control characters"));
            }
        }
        if self.body.is_empty() {
            return Err(Fault::invalid("InvalidMessage", "a message to a topic has a body"));
        }
        message_rules::checked_size(self.body.len(), &self.attributes)
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Self {
        Message::new(text)
    }
}

impl From<String> for Message {
    fn from(text: String) -> Self {
        Message::new(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subject_is_one_short_line_and_a_body_is_not_empty() {
        assert!(Message::new("x").with_subject("a".repeat(100)).checked_size().is_ok());
        for subject in ["".to_string(), "a".repeat(101), "two\nlines".to_string()] {
            let fault = Message::new("x").with_subject(subject.clone()).checked_size().unwrap_err();
            assert_eq!(fault.code.as_deref(), Some("InvalidSubject"), "{subject:?}");
        }
        assert_eq!(Message::new("").checked_size().unwrap_err().code.as_deref(), Some("InvalidMessage"));
    }
}
