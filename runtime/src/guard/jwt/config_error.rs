//! A JWT guard that could not be built.

use std::fmt;

/// Why [`JwtGuardBuilder::build`](super::JwtGuardBuilder::build) refused
/// its configuration: an environment variable not set, a key that is not
/// what its method says, a JWKS file that cannot be read or is not a key
/// set, no key or no issuer or audience at all. The message names the
/// variable or file and what is wrong with it, never the key material.
///
/// It converts into [`celerity::Error`](crate::Error), so `?` carries it
/// out of a `main` returning `celerity::Result<App>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JwtConfigError {
    message: String,
}

impl JwtConfigError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        JwtConfigError { message: message.into() }
    }

    /// What is wrong, as [`Display`](fmt::Display) says it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for JwtConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for JwtConfigError {}
