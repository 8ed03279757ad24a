//! The values one store holds: text by key, never shown.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use super::{ConfigError, ConfigErrorKind};

/// The values of one configuration store, by key. Every value is text, as
/// the stores hold them; [`bind`](super::Configuration::bind) reads other
/// types from that text.
///
/// Its `Debug` output lists the keys and never a value, since any of them
/// may be a secret.
///
/// ```
/// use celerity::config::Values;
///
/// let values = Values::from_pairs([("DB_PASSWORD", "hunter2"), ("REGION", "eu-west-2")]);
/// assert_eq!(values.get("REGION"), Some("eu-west-2"));
/// assert_eq!(format!("{values:?}"), r#"Values { keys: ["DB_PASSWORD", "REGION"] }"#);
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Values {
    map: Arc<BTreeMap<String, String>>,
}

impl Values {
    /// The error for `key`, which these values of the namespace `namespace`
    /// do not hold, pointing at a key that differs only in case, the
    /// likeliest cause.
    pub(crate) fn missing_key(&self, namespace: &str, key: &str) -> ConfigError {
        let mut message = format!("the config namespace `{namespace}` holds no value for `{key}`");
        if let Some(near) = self.keys().find(|candidate| candidate.eq_ignore_ascii_case(key)) {
            message.push_str(&format!(" (it has `{near}`)"));
        }
        ConfigError::new(ConfigErrorKind::MissingKey, message)
    }

    /// Values from key and value pairs.
    pub fn from_pairs<K: Into<String>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        Values { map: Arc::new(pairs.into_iter().map(|(k, v)| (k.into(), v.into())).collect()) }
    }

    /// Values from a map.
    pub fn from_map(map: BTreeMap<String, String>) -> Self {
        Values { map: Arc::new(map) }
    }

    /// A store held as one JSON object, as a Secrets Manager secret or a
    /// local Valkey key holds it. Numbers and booleans (a blueprint's YAML
    /// gives them as themselves) become their text, `null` empty text, and
    /// an object or array its JSON, for the handler to decode. `source`
    /// names the store in the error for anything that is not a JSON object;
    /// the error never quotes the text, which may be a secret.
    pub fn from_json_object(raw: &[u8], source: &str) -> Result<Self, ConfigError> {
        let object: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(raw).map_err(|error| {
            ConfigError::malformed(source, format!("it does not hold a JSON object ({})", json_fault(&error)))
        })?;
        let map = object.into_iter().map(|(key, value)| (key, value_as_text(value))).collect();
        Ok(Values::from_map(map))
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.map.get(key).map(String::as_str)
    }

    /// Whether `key` has a value.
    pub fn contains(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    /// Every key, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.map.keys().map(String::as_str)
    }

    /// Every key and value, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.map.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// How many values there are.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// A copy of the values as a map, for the caller to keep or change.
    pub fn to_map(&self) -> BTreeMap<String, String> {
        (*self.map).clone()
    }

    /// The values under `prefix/`, with the prefix taken off; others are
    /// left out. A store shared by several applications keeps each one's
    /// values under a path of its own.
    pub(crate) fn under_prefix(&self, prefix: &str) -> Values {
        let prefix = format!("{}/", prefix.trim_end_matches('/'));
        let map = self
            .map
            .iter()
            .filter_map(|(key, value)| key.strip_prefix(&prefix).map(|rest| (rest.to_string(), value.clone())))
            .collect();
        Values::from_map(map)
    }
}

impl fmt::Debug for Values {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Values").field("keys", &self.map.keys().collect::<Vec<_>>()).finish()
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for Values {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(pairs: I) -> Self {
        Values::from_pairs(pairs)
    }
}

/// A JSON value as the text a handler reads: the same text whichever store
/// held it.
fn value_as_text(value: serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text,
        serde_json::Value::Null => String::new(),
        // Numbers keep serde_json's own text: `3` stays `3`, `2.5` `2.5`.
        other => other.to_string(),
    }
}

/// Where a JSON text went wrong, without quoting it: serde_json's message
/// for a syntax error names only what was expected and where.
pub(crate) fn json_fault(error: &serde_json::Error) -> String {
    match error.classify() {
        serde_json::error::Category::Data => {
            format!("a value of another shape at line {} column {}", error.line(), error.column())
        }
        serde_json::error::Category::Eof => "the text ends early".to_string(),
        _ => format!("invalid JSON at line {} column {}", error.line(), error.column()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_object_becomes_text_by_key() {
        let values =
            Values::from_json_object(br#"{"a": "x", "n": 3, "f": 2.5, "b": true, "z": null, "o": {"k": [1]}}"#, "s")
                .unwrap();
        assert_eq!(values.get("a"), Some("x"));
        assert_eq!(values.get("n"), Some("3"));
        assert_eq!(values.get("f"), Some("2.5"));
        assert_eq!(values.get("b"), Some("true"));
        assert_eq!(values.get("z"), Some(""));
        assert_eq!(values.get("o"), Some(r#"{"k":[1]}"#));
    }

    #[test]
    fn text_that_is_not_an_object_is_refused_without_quoting_it() {
        for raw in [&b"hunter2"[..], b"[\"hunter2\"]", b"\"hunter2\"", b"{\"a\": "] {
            let error = Values::from_json_object(raw, "orders-secret").unwrap_err().to_string();
            assert!(error.contains("orders-secret"), "{error}");
            assert!(!error.contains("hunter2"), "{error}");
        }
    }

    #[test]
    fn a_prefix_keeps_only_its_own_keys() {
        let values = Values::from_pairs([("orders/timeout", "5"), ("billing/timeout", "9"), ("orders/db/host", "h")]);
        let orders = values.under_prefix("orders");
        assert_eq!(orders.keys().collect::<Vec<_>>(), ["db/host", "timeout"]);
        assert_eq!(values.under_prefix("orders/").get("timeout"), Some("5"));
    }
}
