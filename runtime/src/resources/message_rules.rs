//! The rules SQS and SNS hold a message to. Every backend of a queue and
//! a topic holds messages to them, the local and in-memory ones too, so
//! that a message that is sent in a local session is sent once deployed.

use std::collections::BTreeMap;

use super::batch::Chunking;
use super::error::Fault;

/// The most bytes a message may have: its body and its attributes' names,
/// types and values, as SQS and SNS count them (256 KiB).
pub const MAX_MESSAGE_BYTES: usize = 262_144;

/// The most attributes a message may carry.
pub const MAX_ATTRIBUTES: usize = 10;

/// One request of SQS's `SendMessageBatch` and SNS's `PublishBatch`.
pub(crate) const AWS_CHUNKING: Chunking = Chunking { max_entries: 10, max_bytes: MAX_MESSAGE_BYTES };

/// The data type every attribute is sent as.
pub(crate) const ATTRIBUTE_TYPE: &str = "String";

/// The size of a message of `body_len` bytes with `attributes`, or why it
/// cannot be sent.
pub(crate) fn checked_size(body_len: usize, attributes: &BTreeMap<String, String>) -> Result<usize, Fault> {
    check_attributes(attributes)?;
    let size = body_len
        + attributes.iter().map(|(name, value)| name.len() + ATTRIBUTE_TYPE.len() + value.len()).sum::<usize>();
    if size > MAX_MESSAGE_BYTES {
        return Err(Fault::invalid(
            "MessageTooLarge",
            format!("the message is {size} bytes with its attributes, over the {MAX_MESSAGE_BYTES} a message may have"),
        ));
    }
    Ok(size)
}

fn check_attributes(attributes: &BTreeMap<String, String>) -> Result<(), Fault> {
    if attributes.len() > MAX_ATTRIBUTES {
        return Err(Fault::invalid(
            "InvalidAttribute",
            format!("the message has {} attributes, over the {MAX_ATTRIBUTES} a message may carry", attributes.len()),
        ));
    }
    for (name, value) in attributes {
        if let Some(why) = name_fault(name) {
            return Err(Fault::invalid("InvalidAttribute", format!("the attribute name {name:?} {why}")));
        }
        if value.is_empty() {
            return Err(Fault::invalid("InvalidAttribute", format!("the attribute {name:?} has an empty value")));
        }
    }
    Ok(())
}

/// Why `name` is not an attribute name SQS and SNS take, if it is not.
fn name_fault(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    if name.is_empty() || name.len() > 256 {
        Some("must have 1 to 256 characters")
    } else if !name.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.')) {
        Some("may have only letters, digits, `_`, `-` and `.`")
    } else if name.starts_with('.') || name.ends_with('.') || name.contains("..") {
        Some("may not start or end with `.`, nor have two in a row")
    } else if lower.starts_with("aws.") || lower.starts_with("amazon.") {
        Some("may not start with `AWS.` or `Amazon.`, which AWS keeps for itself")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attributes(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect()
    }

    #[test]
    fn the_size_counts_the_body_and_each_attribute_with_its_type() {
        assert_eq!(checked_size(5, &attributes(&[("kind", "order")])), Ok(5 + 4 + 6 + 5));
        assert_eq!(checked_size(MAX_MESSAGE_BYTES, &BTreeMap::new()), Ok(MAX_MESSAGE_BYTES));
        let fault = checked_size(MAX_MESSAGE_BYTES - 3, &attributes(&[("a", "b")])).unwrap_err();
        assert_eq!(fault.code.as_deref(), Some("MessageTooLarge"));
    }

    #[test]
    fn attribute_names_and_values_follow_the_services_rules() {
        for good in ["kind", "order.kind", "x-1_2", &"a".repeat(256)] {
            assert!(checked_size(0, &attributes(&[(good, "v")])).is_ok(), "{good}");
        }
        for bad in ["", "has space", ".lead", "trail.", "two..dots", "AWS.trace", "amazon.x", "ü", &"a".repeat(257)] {
            let fault = checked_size(0, &attributes(&[(bad, "v")])).unwrap_err();
            assert_eq!(fault.code.as_deref(), Some("InvalidAttribute"), "{bad}");
        }
        assert!(checked_size(0, &attributes(&[("empty", "")])).is_err());
        let eleven: Vec<(String, String)> = (0..11).map(|i| (format!("a{i}"), "v".to_string())).collect();
        let fault = checked_size(0, &eleven.into_iter().collect()).unwrap_err();
        assert!(fault.message.contains("11 attributes"), "{}", fault.message);
    }
}
