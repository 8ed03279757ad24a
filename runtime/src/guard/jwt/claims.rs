//! The registered claims a verified token must carry in their RFC 7519
//! shapes, checked by the guard itself.
//!
//! The JWT backend reads a claim it cannot parse as if it were absent (an
//! `exp` of `-1.5` is "no `exp` claim") and takes an `iss` given as an
//! array as several issuers, any of which may match. RFC 7519 makes `iss`
//! one string (§4.1.1), `aud` a string or an array of strings (§4.1.3),
//! and `exp` and `nbf` NumericDates (§4.1.4, §4.1.5), which the guard takes
//! as non-negative integers that fit in 64 bits. A claim of another shape
//! is refused as malformed, naming the claim and never its value.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;

/// The first registered claim of `claims` whose shape is not RFC 7519's.
pub(super) fn malformed(claims: &Value) -> Option<&'static str> {
    let shaped = |name: &str, fits: fn(&Value) -> bool| claims.get(name).is_none_or(fits);
    if !shaped("iss", Value::is_string) {
        return Some("iss");
    }
    if !shaped("aud", |aud| aud.is_string() || aud.as_array().is_some_and(|all| all.iter().all(Value::is_string))) {
        return Some("aud");
    }
    ["exp", "nbf"].into_iter().find(|name| !shaped(name, |date| date.as_u64().is_some()))
}

/// The claims of a token whose signature has verified, read again to name
/// a refusal the backend gave; `None` when its payload is not a JSON
/// object, which the backend would have refused first.
pub(super) fn of_verified(token: &str) -> Option<Value> {
    let payload = token.split('.').nth(1)?;
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
    claims.is_object().then_some(claims)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn registered_claims_of_their_rfc_shapes_pass() {
        let claims = json!({"iss": "https://issuer.example", "aud": ["a", "b"], "exp": 1_900_000_000u64, "nbf": 0});
        assert_eq!(malformed(&claims), None);
        assert_eq!(malformed(&json!({"aud": "a", "exp": u64::MAX})), None);
        assert_eq!(malformed(&json!({})), None, "an absent claim is the backend's to require");
    }

    #[test]
    fn any_other_shape_names_its_claim() {
        assert_eq!(malformed(&json!({"iss": ["https://evil.example", "https://issuer.example"]})), Some("iss"));
        assert_eq!(malformed(&json!({"iss": null})), Some("iss"));
        assert_eq!(malformed(&json!({"aud": {"a": 1}})), Some("aud"));
        assert_eq!(malformed(&json!({"aud": ["a", 1]})), Some("aud"));
        for exp in [json!(-1.5), json!(1e20), json!(-1), json!("1900000000"), json!(1.5)] {
            assert_eq!(malformed(&json!({ "exp": exp })), Some("exp"), "{exp}");
        }
        let past_u64: Value = serde_json::from_str(r#"{"nbf": 18446744073709551616}"#).unwrap();
        assert_eq!(malformed(&past_u64), Some("nbf"));
    }

    #[test]
    fn the_payload_is_read_as_a_json_object_or_not_at_all() {
        let token = |payload: &str| format!("e30.{}.sig", URL_SAFE_NO_PAD.encode(payload));
        assert_eq!(of_verified(&token(r#"{"exp":"soon"}"#)), Some(json!({"exp": "soon"})));
        assert_eq!(of_verified(&token("[1]")), None);
        assert_eq!(of_verified("e30.!!!.sig"), None);
        assert_eq!(of_verified("e30"), None);
    }
}
