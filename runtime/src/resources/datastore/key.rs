//! Keys: the partition and sort values that address an item, and the
//! table's key schema that names them.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::number;
use super::value::{Item, Value, tagged};
use crate::resources::error::Fault;

/// The most bytes a partition key value may have.
pub const MAX_PARTITION_KEY_BYTES: usize = 2048;
/// The most bytes a sort key value may have.
pub const MAX_SORT_KEY_BYTES: usize = 1024;

/// The key of one item: its partition value, and its sort value where
/// the table has a sort key. Values are text, numbers or bytes, as the
/// table declares its key attributes.
///
/// ```
/// use celerity::resources::datastore::Key;
///
/// let key = Key::new("customer-7").with_sort("order-12");
/// assert_eq!(key.to_string(), "customer-7/order-12");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    partition: Value,
    sort: Option<Value>,
}

impl Key {
    /// The key of an item of a table keyed by its partition alone.
    pub fn new(partition: impl Into<Value>) -> Self {
        Key { partition: partition.into(), sort: None }
    }

    /// This key with the sort value `sort`.
    pub fn with_sort(mut self, sort: impl Into<Value>) -> Self {
        self.sort = Some(sort.into());
        self
    }

    /// The partition value.
    pub fn partition(&self) -> &Value {
        &self.partition
    }

    /// The sort value, where there is one.
    pub fn sort(&self) -> Option<&Value> {
        self.sort.as_ref()
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.partition.as_key_text())?;
        if let Some(sort) = &self.sort {
            write!(f, "/{}", sort.as_key_text())?;
        }
        Ok(())
    }
}

/// The type a table declares for a key attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// Text (`S`).
    String,
    /// A number (`N`).
    Number,
    /// Bytes (`B`).
    Binary,
}

impl KeyKind {
    pub(crate) fn holds(self, value: &Value) -> bool {
        matches!(
            (self, value),
            (KeyKind::String, Value::String(_))
                | (KeyKind::Number, Value::Number(_))
                | (KeyKind::Binary, Value::Binary(_))
        )
    }
}

/// One key attribute: its name and type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyAttribute {
    name: String,
    kind: KeyKind,
}

impl KeyAttribute {
    /// The attribute `name`, of the type `kind`.
    pub fn new(name: impl Into<String>, kind: KeyKind) -> Self {
        KeyAttribute { name: name.into(), kind }
    }

    /// The attribute's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The attribute's type.
    pub fn kind(&self) -> KeyKind {
        self.kind
    }
}

/// A text attribute named so.
impl From<&str> for KeyAttribute {
    fn from(name: &str) -> Self {
        KeyAttribute::new(name, KeyKind::String)
    }
}

/// How a table (or one of its indexes) is keyed: a partition attribute,
/// and a sort attribute where it has one.
///
/// ```
/// use celerity::resources::datastore::{KeyAttribute, KeyKind, KeySchema};
///
/// let orders = KeySchema::new("customerId").with_sort(KeyAttribute::new("placedAt", KeyKind::Number));
/// assert_eq!(orders.sort().map(|sort| sort.name()), Some("placedAt"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySchema {
    partition: KeyAttribute,
    sort: Option<KeyAttribute>,
}

impl KeySchema {
    /// Keyed by `partition` alone (a `&str` is a text attribute).
    pub fn new(partition: impl Into<KeyAttribute>) -> Self {
        KeySchema { partition: partition.into(), sort: None }
    }

    /// This schema with the sort attribute `sort`.
    pub fn with_sort(mut self, sort: impl Into<KeyAttribute>) -> Self {
        self.sort = Some(sort.into());
        self
    }

    /// The partition attribute.
    pub fn partition(&self) -> &KeyAttribute {
        &self.partition
    }

    /// The sort attribute, where there is one.
    pub fn sort(&self) -> Option<&KeyAttribute> {
        self.sort.as_ref()
    }

    /// The names of its attributes.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.partition.name.as_str()).chain(self.sort.iter().map(|sort| sort.name.as_str()))
    }

    /// The key's attributes, checked against the schema: a sort value where
    /// there is a sort key and only then, values of the declared types and
    /// within DynamoDB's sizes.
    pub(crate) fn key_item(&self, key: &Key) -> Result<Item, Fault> {
        let mut item = Item::new();
        check_value(&self.partition, &key.partition, MAX_PARTITION_KEY_BYTES)?;
        item.insert(self.partition.name.clone(), key.partition.clone());
        match (&self.sort, &key.sort) {
            (Some(attribute), Some(value)) => {
                check_value(attribute, value, MAX_SORT_KEY_BYTES)?;
                item.insert(attribute.name.clone(), value.clone());
            }
            (None, Some(_)) => {
                return Err(Fault::invalid(
                    "InvalidKey",
                    format!("the key has a sort value, and the table is keyed by `{}` alone", self.partition.name),
                ));
            }
            (Some(attribute), None) => {
                return Err(Fault::invalid(
                    "InvalidKey",
                    format!(
                        "the table is keyed by `{}` and `{}`, and the key has no sort value",
                        self.partition.name, attribute.name
                    ),
                ));
            }
            (None, None) => {}
        }
        Ok(item)
    }

    /// The key of `item`, which must hold the key attributes.
    pub(crate) fn key_of(&self, item: &Item) -> Result<Key, Fault> {
        let take = |attribute: &KeyAttribute| {
            item.get(&attribute.name).cloned().ok_or_else(|| {
                Fault::invalid("MissingKey", format!("the item has no `{}`, the table's key attribute", attribute.name))
            })
        };
        let key = Key { partition: take(&self.partition)?, sort: self.sort.as_ref().map(take).transpose()? };
        self.key_item(&key)?;
        Ok(key)
    }

    /// The key of `item`, where it holds every key attribute; an item an
    /// index does not hold has not.
    pub(crate) fn try_key_of(&self, item: &Item) -> Option<Key> {
        let partition = item.get(&self.partition.name)?.clone();
        let sort = match &self.sort {
            Some(sort) => Some(item.get(&sort.name)?.clone()),
            None => None,
        };
        Some(Key { partition, sort })
    }
}

/// The text that tells `item`'s key apart from every other key under
/// `schema`: its key attributes in DynamoDB's tagged JSON, each number in
/// its one spelling, since DynamoDB holds `1` and `1.0` as one key.
pub(crate) fn slot(schema: &KeySchema, item: &Item) -> String {
    let key: Item = schema
        .names()
        .filter_map(|name| {
            let value = match item.get(name)? {
                Value::Number(text) => Value::Number(number::canonical(text).unwrap_or_else(|| text.clone())),
                other => other.clone(),
            };
            Some((name.to_string(), value))
        })
        .collect();
    tagged::item_to_json(&key).to_string()
}

fn check_value(attribute: &KeyAttribute, value: &Value, most: usize) -> Result<(), Fault> {
    if !attribute.kind.holds(value) {
        return Err(Fault::invalid(
            "InvalidKey",
            format!(
                "the key attribute `{}` holds {:?} values, and was given {value:?}",
                attribute.name, attribute.kind
            ),
        ));
    }
    let size = match value {
        Value::String(text) => text.len(),
        Value::Binary(bytes) => bytes.len(),
        _ => 0,
    };
    if size > most {
        return Err(Fault::invalid(
            "KeyTooLarge",
            format!("the key value of `{}` is {size} bytes, over DynamoDB's {most}", attribute.name),
        ));
    }
    if let Value::Number(text) = value
        && number::canonical(text).is_none()
    {
        return Err(Fault::invalid(
            "InvalidKey",
            format!("the key value of `{}` is `{text}`, which is not a number DynamoDB holds", attribute.name),
        ));
    }
    if size == 0 && !matches!(value, Value::Number(_)) {
        return Err(Fault::invalid("InvalidKey", format!("the key value of `{}` is empty", attribute.name)));
    }
    Ok(())
}

/// A table's key schema and its indexes'.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TableSchema {
    pub(crate) table: KeySchema,
    pub(crate) indexes: BTreeMap<String, KeySchema>,
    /// The indexes that are global: read eventually consistent only.
    pub(crate) global: BTreeSet<String>,
}

impl TableSchema {
    /// The key schema of `index`, or the table's for `None`.
    pub(crate) fn of(&self, index: Option<&str>) -> Result<&KeySchema, Fault> {
        match index {
            None => Ok(&self.table),
            Some(name) => self.indexes.get(name).ok_or_else(|| {
                let known: Vec<&str> = self.indexes.keys().map(String::as_str).collect();
                Fault::invalid(
                    "UnknownIndex",
                    format!("the table has no index named `{name}` (it has: {})", known.join(", ")),
                )
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_checked_against_the_schema() {
        let schema = KeySchema::new("pk").with_sort(KeyAttribute::new("sk", KeyKind::Number));
        let item = schema.key_item(&Key::new("a").with_sort(3)).unwrap();
        assert_eq!(item.len(), 2);
        let code = |key: Key| schema.key_item(&key).unwrap_err().code;
        assert_eq!(code(Key::new("a")).as_deref(), Some("InvalidKey"));
        assert_eq!(code(Key::new("a").with_sort("3")).as_deref(), Some("InvalidKey"));
        assert_eq!(code(Key::new("x".repeat(2049)).with_sort(1)).as_deref(), Some("KeyTooLarge"));
        let sorted = KeySchema::new("pk").with_sort("sk");
        assert_eq!(
            sorted.key_item(&Key::new("a").with_sort("s".repeat(1025))).unwrap_err().code.as_deref(),
            Some("KeyTooLarge")
        );
        assert!(sorted.key_item(&Key::new("a").with_sort("s".repeat(1024))).is_ok());
        assert_eq!(code(Key::new("a").with_sort(Value::number("twelve"))).as_deref(), Some("InvalidKey"));
        assert_eq!(code(Key::new("a").with_sort(Value::number(f64::NAN))).as_deref(), Some("InvalidKey"));
    }

    #[test]
    fn a_key_reads_as_text_and_is_taken_from_an_item() {
        assert_eq!(Key::new(vec![0_u8, 255]).with_sort(12).to_string(), "AP8=/12");
        let schema = KeySchema::new(KeyAttribute::new("id", KeyKind::Binary));
        let mut item = Item::new();
        item.insert("id".into(), Value::Binary(vec![1]));
        item.insert("other".into(), Value::from("x"));
        assert_eq!(schema.key_of(&item).unwrap(), Key::new(vec![1_u8]));
        item.remove("id");
        assert_eq!(schema.key_of(&item).unwrap_err().code.as_deref(), Some("MissingKey"));
        assert_eq!(schema.try_key_of(&item), None);
    }
}
