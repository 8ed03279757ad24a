//! What the guard reads of a token's header before it verifies anything.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;

/// The two header fields that choose a key. They are read here rather than
/// through `jsonwebtoken`, which refuses an algorithm it does not know
/// (`none` among them) as a malformed header: the caller is told which
/// check failed. Nothing read here is trusted until the signature, checked
/// with the key it chose, verifies.
#[derive(Debug, Deserialize)]
pub(super) struct TokenHeader {
    pub(super) alg: String,
    #[serde(default)]
    pub(super) kid: Option<String>,
}

impl TokenHeader {
    /// The header of `token`; `None` when it is not three dot-separated
    /// parts whose first is base64url JSON with a string `alg`.
    pub(super) fn read(token: &str) -> Option<Self> {
        let mut parts = token.split('.');
        let (header, _payload, _signature) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        let json = URL_SAFE_NO_PAD.decode(header).ok()?;
        serde_json::from_slice(&json).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(header: &str) -> String {
        format!("{}.e30.sig", URL_SAFE_NO_PAD.encode(header))
    }

    #[test]
    fn reads_the_algorithm_and_key_id_even_of_an_algorithm_it_will_refuse() {
        let header = TokenHeader::read(&token(r#"{"alg":"none","kid":"k1"}"#)).unwrap();
        assert_eq!((header.alg.as_str(), header.kid.as_deref()), ("none", Some("k1")));
        assert!(TokenHeader::read(&token(r#"{"alg":"RS256"}"#)).unwrap().kid.is_none());
    }

    #[test]
    fn anything_else_is_not_a_header() {
        assert!(TokenHeader::read("not-a-token").is_none());
        assert!(TokenHeader::read(&format!("{}.extra", token(r#"{"alg":"HS256"}"#))).is_none());
        assert!(TokenHeader::read(&token(r#"{"kid":"k1"}"#)).is_none());
        assert!(TokenHeader::read(&token("[1]")).is_none());
        assert!(TokenHeader::read("!!!.e30.sig").is_none());
    }
}
