//! Binding a namespace's values into a typed value with serde.
//!
//! - A struct's fields are keys, matched exactly as serde names them
//!   (`#[serde(rename)]`, `#[serde(rename_all)]`).
//! - A field that is itself a struct is a level: its fields are read under
//!   the field's key followed by `_` or `/`, decided per level, since a
//!   parameter store holds a hierarchy as a path and the deployment tooling
//!   writes compound keys with an underscore (`database_host` and
//!   `database/host` both reach `host` of the field `database`).
//! - A key the store does not hold leaves the field to serde: an `Option`
//!   is `None`, `#[serde(default)]` applies, any other field is an error
//!   naming the key.
//! - Values are text: numbers, booleans (`true`/`false`, `1`/`0`, any case)
//!   and unit enum variants are read from it; a list is a JSON array or
//!   comma-separated text; a map field takes every key below its level.
//! - Errors name the key and the type expected, never the value, which may
//!   be a secret.

use std::fmt;

use serde::de::value::StrDeserializer;
use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};

use super::{ConfigError, ConfigErrorKind, Values};

const SEPARATORS: [char; 2] = ['_', '/'];

/// `values` bound into `T`; errors name `namespace`.
pub(crate) fn bind<T: DeserializeOwned>(values: &Values, namespace: &str) -> Result<T, ConfigError> {
    T::deserialize(Level { values, prefixes: Vec::new() }).map_err(|error| error.into_config_error(namespace, values))
}

/// Why a value could not be bound: where, and what was expected.
#[derive(Debug)]
pub(crate) struct BindError {
    /// The key as found, once one is known for certain.
    key: Option<String>,
    /// Segments of a key not found, innermost first, completed as the error
    /// passes back up through the levels.
    segments: Vec<String>,
    message: String,
    missing: bool,
}

impl BindError {
    fn at(key: &str, message: impl Into<String>) -> Self {
        BindError { key: Some(key.to_string()), segments: Vec::new(), message: message.into(), missing: false }
    }

    /// Completes the key of an error from below this level.
    fn under(mut self, segment: &str) -> Self {
        if self.key.is_none() {
            self.segments.push(segment.to_string());
        }
        self
    }

    fn into_config_error(self, namespace: &str, values: &Values) -> ConfigError {
        let key = self.key.or_else(|| {
            (!self.segments.is_empty()).then(|| self.segments.iter().rev().cloned().collect::<Vec<_>>().join("_"))
        });
        match (key, self.missing) {
            (Some(key), true) => values.missing_key(namespace, &key),
            (Some(key), false) => ConfigError::new(
                ConfigErrorKind::Bind,
                format!("the config key `{key}` in namespace `{namespace}` cannot be read: {}", self.message),
            ),
            (None, _) => ConfigError::new(
                ConfigErrorKind::Bind,
                format!("the config namespace `{namespace}` cannot be bound: {}", self.message),
            ),
        }
    }
}

impl fmt::Display for BindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BindError {}

/// serde's own messages quote the value they could not take; these never do.
impl de::Error for BindError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        BindError { key: None, segments: Vec::new(), message: message.to_string(), missing: false }
    }

    fn invalid_type(unexpected: de::Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        Self::custom(format!("expected {expected}, found {}", shape(&unexpected)))
    }

    fn invalid_value(_unexpected: de::Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        Self::custom(format!("expected {expected}"))
    }

    fn invalid_length(len: usize, expected: &dyn de::Expected) -> Self {
        Self::custom(format!("expected {expected}, found {len} items"))
    }

    fn unknown_variant(_variant: &str, expected: &'static [&'static str]) -> Self {
        Self::custom(format!("expected one of {}", quoted(expected)))
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        Self::custom(format!("`{field}` is not one of {}", quoted(expected)))
    }

    fn missing_field(field: &'static str) -> Self {
        BindError { key: None, segments: vec![field.to_string()], message: String::new(), missing: true }
    }
}

fn quoted(names: &[&str]) -> String {
    names.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ")
}

/// What kind of thing was found, without what it was.
fn shape(unexpected: &de::Unexpected<'_>) -> &'static str {
    match unexpected {
        de::Unexpected::Bool(_) => "a boolean",
        de::Unexpected::Unsigned(_) | de::Unexpected::Signed(_) | de::Unexpected::Float(_) => "a number",
        de::Unexpected::Char(_) | de::Unexpected::Str(_) => "text",
        de::Unexpected::Bytes(_) => "bytes",
        de::Unexpected::Unit => "nothing",
        de::Unexpected::Option => "an optional value",
        de::Unexpected::NewtypeStruct | de::Unexpected::NewtypeVariant => "a wrapped value",
        de::Unexpected::Seq => "a list",
        de::Unexpected::Map => "a map",
        de::Unexpected::Enum
        | de::Unexpected::UnitVariant
        | de::Unexpected::TupleVariant
        | de::Unexpected::StructVariant => "an enum",
        de::Unexpected::Other(_) => "something else",
    }
}

/// Every key a name at this level could be written under.
fn candidates(prefixes: &[String], name: &str) -> Vec<String> {
    if prefixes.is_empty() {
        return vec![name.to_string()];
    }
    prefixes.iter().flat_map(|prefix| SEPARATORS.iter().map(move |sep| format!("{prefix}{sep}{name}"))).collect()
}

/// Whether a key is one of `keys`, or below one of them.
fn holds(values: &Values, keys: &[String]) -> bool {
    values.keys().any(|key| {
        keys.iter().any(|candidate| {
            key == candidate || key.strip_prefix(candidate.as_str()).is_some_and(|rest| rest.starts_with(SEPARATORS))
        })
    })
}

/// A level of keys: the whole namespace, or what is below a struct field.
struct Level<'v> {
    values: &'v Values,
    /// Every spelling of the keys above this level; empty at the top.
    prefixes: Vec<String>,
}

/// A newtype struct reads as what it wraps, at every level alike.
macro_rules! newtype_is_its_content {
    () => {
        fn deserialize_newtype_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            visitor: V,
        ) -> Result<V::Value, BindError> {
            visitor.visit_newtype_struct(self)
        }
    };
}

impl<'de, 'v> de::Deserializer<'de> for Level<'v> {
    type Error = BindError;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, BindError> {
        // Only the fields with a key (or keys below them) are given, so
        // that serde decides what an absent one is.
        let present = fields
            .iter()
            .copied()
            .filter(|field| holds(self.values, &candidates(&self.prefixes, field)))
            .map(|field| (field.to_string(), candidates(&self.prefixes, field)))
            .collect();
        visitor.visit_map(Fields { values: self.values, entries: present, index: 0 })
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, BindError> {
        let entries = below(self.values, &self.prefixes);
        visitor.visit_map(Fields { values: self.values, entries, index: 0 })
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, BindError> {
        self.deserialize_map(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, BindError> {
        visitor.visit_some(self)
    }

    newtype_is_its_content!();

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, BindError> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct enum identifier
    }
}

/// The keys directly or deeply below a level, named as seen from it: the
/// whole rest of the key, however it is punctuated.
fn below(values: &Values, prefixes: &[String]) -> Vec<(String, Vec<String>)> {
    values
        .keys()
        .filter_map(|key| {
            if prefixes.is_empty() {
                return Some((key.to_string(), vec![key.to_string()]));
            }
            prefixes.iter().find_map(|prefix| {
                let rest = key.strip_prefix(prefix.as_str())?;
                let rest = rest.strip_prefix(SEPARATORS)?;
                (!rest.is_empty()).then(|| (rest.to_string(), vec![key.to_string()]))
            })
        })
        .collect()
}

/// The entries of a level, as a serde map: each name and the keys it could
/// be written under.
struct Fields<'v> {
    values: &'v Values,
    entries: Vec<(String, Vec<String>)>,
    index: usize,
}

impl<'de, 'v> MapAccess<'de> for Fields<'v> {
    type Error = BindError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, BindError> {
        let Some((name, _)) = self.entries.get(self.index) else { return Ok(None) };
        let name: StrDeserializer<'_, BindError> = name.as_str().into_deserializer();
        seed.deserialize(name).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, BindError> {
        let (name, keys) = &self.entries[self.index];
        self.index += 1;
        seed.deserialize(Entry { values: self.values, keys }).map_err(|error| error.under(name))
    }
}

/// One entry: a value of its own, or a level of keys below it.
struct Entry<'v, 'k> {
    values: &'v Values,
    keys: &'k [String],
}

impl<'v, 'k> Entry<'v, 'k> {
    /// The entry's own value and the key it was found under.
    fn text(&self) -> Result<(&'v str, &'k str), BindError> {
        for key in self.keys {
            if let Some(value) = self.values.get(key) {
                return Ok((value, key));
            }
        }
        // Reached only when keys exist below this one but none for it.
        let key = &self.keys[0];
        Err(BindError::at(key, "the namespace holds keys below it, but no value of its own"))
    }

    fn level(&self) -> Level<'v> {
        Level { values: self.values, prefixes: self.keys.to_vec() }
    }

    fn parse<T: std::str::FromStr>(&self, what: &str) -> Result<T, BindError> {
        let (text, key) = self.text()?;
        text.trim().parse().map_err(|_| BindError::at(key, format!("expected {what}")))
    }
}

macro_rules! parsed {
    ($($method:ident $visit:ident $ty:ty, $what:literal;)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, BindError> {
            let value: $ty = self.parse($what)?;
            visitor.$visit(value)
        }
    )*};
}

impl<'de, 'v, 'k> de::Deserializer<'de> for Entry<'v, 'k> {
    type Error = BindError;

    parsed! {
        deserialize_i8 visit_i8 i8, "a whole number from -128 to 127";
        deserialize_i16 visit_i16 i16, "a whole number (i16)";
        deserialize_i32 visit_i32 i32, "a whole number (i32)";
        deserialize_i64 visit_i64 i64, "a whole number (i64)";
        deserialize_i128 visit_i128 i128, "a whole number (i128)";
        deserialize_u8 visit_u8 u8, "a whole number from 0 to 255";
        deserialize_u16 visit_u16 u16, "a whole number from 0 to 65535";
        deserialize_u32 visit_u32 u32, "a whole number that is not negative (u32)";
        deserialize_u64 visit_u64 u64, "a whole number that is not negative (u64)";
        deserialize_u128 visit_u128 u128, "a whole number that is not negative (u128)";
        deserialize_f32 visit_f32 f32, "a number (f32)";
        deserialize_f64 visit_f64 f64, "a number (f64)";
        deserialize_char visit_char char, "a single character";
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, BindError> {
        let (text, key) = self.text()?;
        match text.trim().to_ascii_lowercase().as_str() {
            "true" | "1" => visitor.visit_bool(true),
            "false" | "0" => visitor.visit_bool(false),
            _ => Err(BindError::at(key, "expected true or false")),
        }
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, BindError> {
        match self.text() {
            Ok((text, _)) => visitor.visit_str(text),
            Err(_) => self.level().deserialize_map(visitor),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, BindError> {
        visitor.visit_str(self.text()?.0)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, BindError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, BindError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, BindError> {
        visitor.visit_bytes(self.text()?.0.as_bytes())
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, BindError> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, BindError> {
        visitor.visit_some(self)
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, BindError> {
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, BindError> {
        visitor.visit_unit()
    }

    newtype_is_its_content!();

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, BindError> {
        let (text, key) = self.text()?;
        let items = list_items(text).map_err(|message| BindError::at(key, message))?;
        visitor.visit_seq(Items { items: items.into_iter(), key, index: 0 })
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, BindError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, BindError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, BindError> {
        self.level().deserialize_map(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, BindError> {
        self.level().deserialize_struct(name, fields, visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, BindError> {
        let (text, key) = self.text()?;
        let variant: StrDeserializer<'_, BindError> = text.trim().into_deserializer();
        visitor.visit_enum(variant).map_err(|error| BindError::at(key, error.message))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, BindError> {
        visitor.visit_unit()
    }
}

/// A list's items: a JSON array of scalars, or comma-separated text.
fn list_items(text: &str) -> Result<Vec<String>, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(Vec::new());
    }
    if trimmed.starts_with('[') {
        let items: Vec<serde_json::Value> = serde_json::from_str(trimmed)
            .map_err(|error| format!("expected a list (a JSON array): {}", super::values::json_fault(&error)))?;
        return Ok(items
            .into_iter()
            .map(|item| match item {
                serde_json::Value::String(text) => text,
                other => other.to_string(),
            })
            .collect());
    }
    Ok(trimmed.split(',').map(|item| item.trim().to_string()).collect())
}

/// A list's items, each read as a value of its own.
struct Items<'k> {
    items: std::vec::IntoIter<String>,
    key: &'k str,
    index: usize,
}

impl<'de, 'k> SeqAccess<'de> for Items<'k> {
    type Error = BindError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, BindError> {
        let Some(item) = self.items.next() else { return Ok(None) };
        self.index += 1;
        let values = Values::from_pairs([(self.key, item)]);
        let keys = [self.key.to_string()];
        let index = self.index;
        seed.deserialize(Entry { values: &values, keys: &keys })
            .map(Some)
            .map_err(|error| BindError::at(self.key, format!("item {index}: {}", error.message)))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;

    use super::*;

    fn values(pairs: &[(&str, &str)]) -> Values {
        Values::from_pairs(pairs.iter().copied())
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Database {
        host: String,
        port: u16,
        #[serde(default)]
        tls: bool,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Settings {
        #[serde(rename = "REGION")]
        region: String,
        retries: Option<u32>,
        database: Database,
        pricing_url: Option<String>,
        #[serde(default = "default_timeout")]
        timeout_ms: u64,
    }

    fn default_timeout() -> u64 {
        1000
    }

    #[test]
    fn fields_are_keys_and_nested_structs_are_levels_written_either_way() {
        let bound: Settings = bind(
            &values(&[
                ("REGION", "eu-west-2"),
                ("database_host", "db.internal"),
                ("database/port", "5432"),
                ("pricing_url", "https://p"),
            ]),
            "default",
        )
        .unwrap();
        assert_eq!(
            bound,
            Settings {
                region: "eu-west-2".into(),
                retries: None,
                database: Database { host: "db.internal".into(), port: 5432, tls: false },
                pricing_url: Some("https://p".into()),
                timeout_ms: 1000,
            }
        );
    }

    #[test]
    fn a_missing_required_key_is_named_whole_with_its_namespace() {
        let error = bind::<Settings>(&values(&[("REGION", "x"), ("database_host", "h")]), "orders").unwrap_err();
        assert_eq!(error.kind(), ConfigErrorKind::MissingKey);
        assert_eq!(error.to_string(), "the config namespace `orders` holds no value for `database_port`");
        let error = bind::<Settings>(&values(&[("region", "x")]), "orders").unwrap_err();
        assert_eq!(error.to_string(), "the config namespace `orders` holds no value for `REGION` (it has `region`)");
    }

    #[test]
    fn a_value_of_the_wrong_type_names_the_key_and_the_type_but_not_the_value() {
        let error = bind::<Settings>(
            &values(&[("REGION", "x"), ("database_host", "h"), ("database/port", "hunter2")]),
            "default",
        )
        .unwrap_err();
        assert_eq!(error.kind(), ConfigErrorKind::Bind);
        assert_eq!(
            error.to_string(),
            "the config key `database/port` in namespace `default` cannot be read: expected a whole number from 0 to 65535"
        );
        assert!(!error.to_string().contains("hunter2"));
    }

    #[test]
    fn booleans_lists_enums_and_maps_are_read_from_text() {
        #[derive(Debug, Deserialize, PartialEq)]
        #[serde(rename_all = "lowercase")]
        enum Mode {
            Fast,
            Safe,
        }
        #[derive(Debug, Deserialize, PartialEq)]
        struct Flags {
            on: bool,
            off: bool,
            hosts: Vec<String>,
            ports: Vec<u16>,
            mode: Mode,
            limits: BTreeMap<String, u32>,
        }
        let bound: Flags = bind(
            &values(&[
                ("on", "TRUE"),
                ("off", "0"),
                ("hosts", "a, b ,c"),
                ("ports", "[80, 443]"),
                ("mode", "safe"),
                ("limits_orders", "5"),
                ("limits/refunds", "2"),
            ]),
            "default",
        )
        .unwrap();
        assert_eq!(
            bound,
            Flags {
                on: true,
                off: false,
                hosts: vec!["a".into(), "b".into(), "c".into()],
                ports: vec![80, 443],
                mode: Mode::Safe,
                limits: [("orders".to_string(), 5), ("refunds".to_string(), 2)].into(),
            }
        );
        #[derive(Debug, Deserialize)]
        struct OnlyMode {
            #[allow(dead_code)]
            mode: Mode,
        }
        let error = bind::<OnlyMode>(&values(&[("mode", "reckless")]), "default").unwrap_err();
        assert_eq!(
            error.to_string(),
            "the config key `mode` in namespace `default` cannot be read: expected one of `fast`, `safe`"
        );
        #[derive(Debug, Deserialize)]
        struct Ports {
            #[allow(dead_code)]
            ports: Vec<u16>,
        }
        let error = bind::<Ports>(&values(&[("ports", "80,secret")]), "default").unwrap_err();
        assert_eq!(
            error.to_string(),
            "the config key `ports` in namespace `default` cannot be read: item 2: expected a whole number from 0 to 65535"
        );
    }

    #[test]
    fn a_whole_namespace_binds_into_a_map() {
        let bound: BTreeMap<String, String> = bind(&values(&[("a", "1"), ("b/c", "2")]), "default").unwrap();
        assert_eq!(bound.len(), 2);
        assert_eq!(bound["b/c"], "2");
    }

    #[test]
    fn a_key_with_only_keys_below_it_is_not_a_value() {
        #[derive(Debug, Deserialize)]
        struct Flat {
            #[allow(dead_code)]
            database: String,
        }
        let error = bind::<Flat>(&values(&[("database_host", "h")]), "default").unwrap_err();
        assert!(error.to_string().contains("`database`"), "{error}");
    }
}
