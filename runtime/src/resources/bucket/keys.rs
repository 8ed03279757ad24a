//! What makes an object key one S3 takes: checked before anything is sent,
//! so that every backend refuses the same keys the same way.

use crate::resources::error::Fault;

/// The longest key S3 takes, in bytes of UTF-8.
pub const MAX_KEY_BYTES: usize = 1024;

/// `key`, or why no bucket would take it.
pub(crate) fn check(key: &str) -> Result<(), Fault> {
    if key.is_empty() {
        return Err(Fault::invalid("InvalidKey", "an object key cannot be empty"));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(Fault::invalid(
            "KeyTooLongError",
            format!("the key is {} bytes of UTF-8, and S3 takes at most {MAX_KEY_BYTES}", key.len()),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::ResourceErrorKind;

    #[test]
    fn a_key_is_measured_in_bytes_of_utf8() {
        assert!(check("a").is_ok());
        assert!(check(&"é".repeat(512)).is_ok(), "1024 bytes");
        let fault = check(&"é".repeat(513)).unwrap_err();
        assert_eq!((fault.kind, fault.code.as_deref()), (ResourceErrorKind::Invalid, Some("KeyTooLongError")));
        assert_eq!(check("").unwrap_err().code.as_deref(), Some("InvalidKey"));
    }
}
