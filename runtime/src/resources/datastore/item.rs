//! Items as serde types: a `T: Serialize` made into attribute values, and
//! attribute values read back as a `T: DeserializeOwned`.
//!
//! The way through is `serde_json::Value`. Numbers keep their precision:
//! integers of up to 64 bits go both ways exactly as DynamoDB's `N` text,
//! and an `N` wider than that is read as the nearest float. Bytes are read
//! as a sequence of numbers (`B` and `BS`), which is what `Vec<u8>`
//! deserializes from; serde has no bytes in JSON, so a `Vec<u8>` field is
//! written as a list of numbers. Write [`Value::Binary`] through a
//! condition or an [`Update`](super::Update) to store `B`.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Number, Value as Json};

use super::value::{Item, Value};
use crate::resources::error::{Fault, ResourceErrorKind};

/// `item` as attributes; it must serialize as a map (a struct, a map).
pub(crate) fn to_item<T: Serialize + ?Sized>(item: &T) -> Result<Item, Fault> {
    let json = serde_json::to_value(item)
        .map_err(|error| Fault::invalid("UnserializableItem", format!("the item does not serialize: {error}")))?;
    match json {
        Json::Object(object) => Ok(object.into_iter().map(|(name, value)| (name, from_json(value))).collect()),
        other => Err(Fault::invalid(
            "UnserializableItem",
            format!("an item serializes as a map of attributes (a struct), and this one is {}", json_kind(&other)),
        )),
    }
}

/// The attributes `item` holds, as a `T`.
pub(crate) fn from_item<T: DeserializeOwned>(item: Item) -> Result<T, Fault> {
    let object: Map<String, Json> = item.into_iter().map(|(name, value)| (name, to_json(value))).collect();
    serde_path_to_error::deserialize(Json::Object(object)).map_err(|error| {
        Fault::new(
            ResourceErrorKind::Malformed,
            Some("UnreadableItem"),
            format!("the stored item does not read as a {}: {error}", std::any::type_name::<T>()),
        )
    })
}

fn json_kind(json: &Json) -> &'static str {
    match json {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "text",
        Json::Array(_) => "a sequence",
        Json::Object(_) => "a map",
    }
}

fn from_json(json: Json) -> Value {
    match json {
        Json::Null => Value::Null,
        Json::Bool(flag) => Value::Bool(flag),
        Json::Number(number) => Value::Number(number.to_string()),
        Json::String(text) => Value::String(text),
        Json::Array(values) => Value::List(values.into_iter().map(from_json).collect()),
        Json::Object(object) => Value::Map(object.into_iter().map(|(name, value)| (name, from_json(value))).collect()),
    }
}

fn number(text: &str) -> Json {
    let text = text.trim();
    if let Ok(integer) = text.parse::<i64>() {
        return Json::Number(integer.into());
    }
    if let Ok(integer) = text.parse::<u64>() {
        return Json::Number(integer.into());
    }
    match text.parse::<f64>().ok().and_then(Number::from_f64) {
        Some(number) => Json::Number(number),
        // DynamoDB never holds such a number; text keeps what there is.
        None => Json::String(text.to_string()),
    }
}

fn bytes(bytes: Vec<u8>) -> Json {
    Json::Array(bytes.into_iter().map(|byte| Json::Number(byte.into())).collect())
}

fn to_json(value: Value) -> Json {
    match value {
        Value::String(text) => Json::String(text),
        Value::Number(text) => number(&text),
        Value::Binary(data) => bytes(data),
        Value::Bool(flag) => Json::Bool(flag),
        Value::Null => Json::Null,
        Value::List(values) => Json::Array(values.into_iter().map(to_json).collect()),
        Value::Map(map) => Json::Object(map.into_iter().map(|(name, value)| (name, to_json(value))).collect()),
        Value::StringSet(texts) => Json::Array(texts.into_iter().map(Json::String).collect()),
        Value::NumberSet(numbers) => Json::Array(numbers.iter().map(|text| number(text)).collect()),
        Value::BinarySet(values) => Json::Array(values.into_iter().map(bytes).collect()),
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Order {
        id: String,
        total: u64,
        big: i64,
        price: f64,
        tags: Vec<String>,
        note: Option<String>,
        data: Vec<u8>,
    }

    #[test]
    fn a_struct_round_trips_with_its_numbers_exact() {
        let order = Order {
            id: "o-1".into(),
            total: u64::MAX,
            big: i64::MIN,
            price: 12.25,
            tags: vec!["a".into()],
            note: None,
            data: vec![1, 2],
        };
        let item = to_item(&order).unwrap();
        assert_eq!(item["total"], Value::Number("18446744073709551615".into()));
        assert_eq!(item["big"], Value::Number("-9223372036854775808".into()));
        assert_eq!(item["note"], Value::Null);
        assert_eq!(from_item::<Order>(item).unwrap(), order);
    }

    #[test]
    fn binary_reads_as_bytes_and_a_non_map_is_refused() {
        let mut item = Item::new();
        item.insert("data".into(), Value::Binary(vec![7, 8]));
        #[derive(Deserialize)]
        struct Blob {
            data: Vec<u8>,
        }
        assert_eq!(from_item::<Blob>(item).unwrap().data, vec![7, 8]);
        assert_eq!(to_item(&5).unwrap_err().code.as_deref(), Some("UnserializableItem"));
        let error = from_item::<Order>(Item::new()).unwrap_err();
        assert_eq!(error.kind, ResourceErrorKind::Malformed);
    }
}
