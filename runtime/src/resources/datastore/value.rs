//! Attribute values: what an item's attributes hold, as DynamoDB types
//! them.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use super::number;

/// An item as the store holds it: attribute names to values.
pub(crate) type Item = BTreeMap<String, Value>;

/// One attribute value, typed as DynamoDB types it. Numbers are held as
/// the decimal text DynamoDB sends (`N`), so that none loses precision on
/// the way through.
///
/// Made with `From` for text, numbers, booleans and bytes:
///
/// ```
/// use celerity::resources::datastore::Value;
///
/// assert_eq!(Value::from("open"), Value::String("open".to_string()));
/// assert_eq!(Value::from(42_u64), Value::Number("42".to_string()));
/// assert_eq!(Value::from(vec![1_u8, 2]), Value::Binary(vec![1, 2]));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Value {
    /// Text (`S`).
    String(String),
    /// A number, as its decimal text (`N`).
    Number(String),
    /// Bytes (`B`).
    Binary(Vec<u8>),
    /// A boolean (`BOOL`).
    Bool(bool),
    /// Null (`NULL`).
    Null,
    /// A list of values (`L`).
    List(Vec<Value>),
    /// A map of names to values (`M`).
    Map(BTreeMap<String, Value>),
    /// A set of texts (`SS`).
    StringSet(Vec<String>),
    /// A set of numbers (`NS`).
    NumberSet(Vec<String>),
    /// A set of byte strings (`BS`).
    BinarySet(Vec<Vec<u8>>),
}

impl Value {
    /// The number `number`, as its decimal text.
    pub fn number(number: impl fmt::Display) -> Self {
        Value::Number(number.to_string())
    }

    /// The order of two values of one scalar type, as DynamoDB orders them:
    /// numbers by value, text and bytes byte by byte. `None` for values of
    /// different types or that are not scalars.
    pub(crate) fn compare(&self, other: &Value) -> Option<Ordering> {
        match (self, other) {
            (Value::String(a), Value::String(b)) => Some(a.as_bytes().cmp(b.as_bytes())),
            (Value::Binary(a), Value::Binary(b)) => Some(a.cmp(b)),
            (Value::Number(a), Value::Number(b)) => compare_numbers(a, b),
            _ => None,
        }
    }

    /// The value as a key's text: text as it is, numbers as their digits,
    /// bytes as base64.
    pub(crate) fn as_key_text(&self) -> String {
        match self {
            Value::String(text) | Value::Number(text) => text.clone(),
            Value::Binary(bytes) => aws_smithy_types::base64::encode(bytes),
            other => format!("{other:?}"),
        }
    }

    /// The bytes DynamoDB counts for the value toward an item's size.
    pub(crate) fn size(&self) -> usize {
        match self {
            Value::String(text) => text.len(),
            Value::Number(text) => number_size(text),
            Value::Binary(bytes) => bytes.len(),
            Value::Bool(_) | Value::Null => 1,
            Value::List(values) => 3 + values.iter().map(|value| value.size() + 1).sum::<usize>(),
            Value::Map(map) => 3 + map.iter().map(|(name, value)| name.len() + value.size() + 1).sum::<usize>(),
            Value::StringSet(texts) => texts.iter().map(String::len).sum(),
            Value::NumberSet(numbers) => numbers.iter().map(|text| number_size(text)).sum(),
            Value::BinarySet(bytes) => bytes.iter().map(Vec::len).sum(),
        }
    }
}

/// The bytes DynamoDB counts for a number: one per two significant digits,
/// and one more. Text that is no number (which DynamoDB would refuse) is
/// counted by its length, so that it is never counted short.
fn number_size(text: &str) -> usize {
    number::size(text).unwrap_or_else(|| text.len().div_ceil(2) + 1)
}

/// The size DynamoDB counts for an item: every attribute's name and value.
pub(crate) fn item_size(item: &Item) -> usize {
    item.iter().map(|(name, value)| name.len() + value.size()).sum()
}

/// Two numbers' order by value, exactly, as decimals.
fn compare_numbers(a: &str, b: &str) -> Option<Ordering> {
    number::compare(a, b)
}

/// The sum of two numbers, exact.
pub(crate) fn add_numbers(a: &str, b: &str) -> Option<String> {
    number::add(a, b)
}

impl From<&str> for Value {
    fn from(text: &str) -> Self {
        Value::String(text.to_string())
    }
}

impl From<String> for Value {
    fn from(text: String) -> Self {
        Value::String(text)
    }
}

impl From<&String> for Value {
    fn from(text: &String) -> Self {
        Value::String(text.clone())
    }
}

impl From<bool> for Value {
    fn from(flag: bool) -> Self {
        Value::Bool(flag)
    }
}

impl From<Vec<u8>> for Value {
    fn from(bytes: Vec<u8>) -> Self {
        Value::Binary(bytes)
    }
}

impl From<&[u8]> for Value {
    fn from(bytes: &[u8]) -> Self {
        Value::Binary(bytes.to_vec())
    }
}

macro_rules! number_from {
    ($($number:ty),*) => {
        $(
            impl From<$number> for Value {
                fn from(number: $number) -> Self {
                    Value::Number(number.to_string())
                }
            }
        )*
    };
}

number_from!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64);

/// Values as DynamoDB's JSON writes them (`{"S": "text"}`, `{"N": "42"}`,
/// bytes as base64), for what is kept on disk and in cursors.
pub(crate) mod tagged {
    use serde_json::{Map, Value as Json, json};

    use super::{Item, Value};

    pub(crate) fn item_to_json(item: &Item) -> Json {
        Json::Object(item.iter().map(|(name, value)| (name.clone(), to_json(value))).collect())
    }

    pub(crate) fn item_from_json(json: &Json) -> Option<Item> {
        let object = json.as_object()?;
        object.iter().map(|(name, value)| Some((name.clone(), from_json(value)?))).collect()
    }

    fn to_json(value: &Value) -> Json {
        let b64 = aws_smithy_types::base64::encode;
        match value {
            Value::String(text) => json!({ "S": text }),
            Value::Number(text) => json!({ "N": text }),
            Value::Binary(bytes) => json!({ "B": b64(bytes) }),
            Value::Bool(flag) => json!({ "BOOL": flag }),
            Value::Null => json!({ "NULL": true }),
            Value::List(values) => json!({ "L": values.iter().map(to_json).collect::<Vec<_>>() }),
            Value::Map(map) => {
                let map: Map<String, Json> = map.iter().map(|(name, value)| (name.clone(), to_json(value))).collect();
                json!({ "M": map })
            }
            Value::StringSet(texts) => json!({ "SS": texts }),
            Value::NumberSet(numbers) => json!({ "NS": numbers }),
            Value::BinarySet(bytes) => json!({ "BS": bytes.iter().map(b64).collect::<Vec<_>>() }),
        }
    }

    fn texts(json: &Json) -> Option<Vec<String>> {
        json.as_array()?.iter().map(|text| text.as_str().map(str::to_string)).collect()
    }

    fn bytes(json: &Json) -> Option<Vec<u8>> {
        aws_smithy_types::base64::decode(json.as_str()?).ok()
    }

    fn from_json(json: &Json) -> Option<Value> {
        let object = json.as_object()?;
        let (tag, inner) = object.iter().next()?;
        if object.len() != 1 {
            return None;
        }
        Some(match tag.as_str() {
            "S" => Value::String(inner.as_str()?.to_string()),
            "N" => Value::Number(inner.as_str()?.to_string()),
            "B" => Value::Binary(bytes(inner)?),
            "BOOL" => Value::Bool(inner.as_bool()?),
            "NULL" => Value::Null,
            "L" => Value::List(inner.as_array()?.iter().map(from_json).collect::<Option<_>>()?),
            "M" => Value::Map(item_from_json(inner)?),
            "SS" => Value::StringSet(texts(inner)?),
            "NS" => Value::NumberSet(texts(inner)?),
            "BS" => Value::BinarySet(inner.as_array()?.iter().map(bytes).collect::<Option<_>>()?),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_ordered_by_value_and_text_byte_by_byte() {
        assert_eq!(Value::from(9).compare(&Value::from(10)), Some(Ordering::Less));
        assert_eq!(Value::number("1.5").compare(&Value::from(1)), Some(Ordering::Greater));
        assert_eq!(Value::from("9").compare(&Value::from("10")), Some(Ordering::Greater));
        assert_eq!(Value::from("a").compare(&Value::from(1)), None);
        assert_eq!(Value::number("1.00000000000000001").compare(&Value::from(1)), Some(Ordering::Greater));
        assert_eq!(add_numbers("0.1", "0.2").as_deref(), Some("0.3"));
        assert_eq!(
            add_numbers("17014118346046923173168730371588410500", "1").as_deref(),
            Some("17014118346046923173168730371588410501")
        );
    }

    #[test]
    fn tagged_json_round_trips_every_type() {
        let mut item = Item::new();
        item.insert("s".into(), Value::from("x"));
        item.insert("n".into(), Value::number("12345678901234567890123"));
        item.insert("b".into(), Value::Binary(vec![0, 255]));
        item.insert("l".into(), Value::List(vec![Value::Null, Value::Bool(true)]));
        item.insert("ss".into(), Value::StringSet(vec!["a".into()]));
        item.insert("bs".into(), Value::BinarySet(vec![vec![1]]));
        item.insert("m".into(), Value::Map(item.clone()));
        let json = tagged::item_to_json(&item);
        assert_eq!(tagged::item_from_json(&json), Some(item));
        assert_eq!(tagged::item_from_json(&serde_json::json!({"a": {"X": 1}})), None);
    }
}
