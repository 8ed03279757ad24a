//! Signed URLs: a browser reads or writes one object without credentials
//! of its own, until the URL expires.

use std::time::{Duration, SystemTime};

use crate::resources::error::Fault;

/// The longest a signed URL can last, as S3's signatures allow: 7 days.
pub const MAX_EXPIRY: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// A URL granting access to one object, and when it stops working.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SignedUrl {
    /// The URL.
    pub url: String,
    /// When it stops working, from the expiry asked for. A URL signed with
    /// credentials that expire sooner (a Lambda function's) stops working
    /// when they do.
    pub expires_at: SystemTime,
}

/// What a signed URL lets its holder do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    /// An upload in one request, with the content type it must declare.
    Write(Option<String>),
}

/// The expiry, or why no URL is signed for it.
pub(crate) fn check_expiry(expiry: Duration) -> Result<(), Fault> {
    if expiry.is_zero() {
        return Err(Fault::invalid("InvalidExpiry", "a signed URL must last longer than no time at all"));
    }
    if expiry > MAX_EXPIRY {
        return Err(Fault::invalid(
            "InvalidExpiry",
            format!("a signed URL lasts at most 7 days, and {} seconds were asked for", expiry.as_secs()),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expiry_is_longer_than_nothing_and_at_most_seven_days() {
        assert!(check_expiry(Duration::from_secs(1)).is_ok());
        assert!(check_expiry(MAX_EXPIRY).is_ok());
        assert_eq!(check_expiry(Duration::ZERO).unwrap_err().code.as_deref(), Some("InvalidExpiry"));
        let over = MAX_EXPIRY + Duration::from_secs(1);
        assert_eq!(check_expiry(over).unwrap_err().code.as_deref(), Some("InvalidExpiry"));
    }
}
