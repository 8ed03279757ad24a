//! Cursors: where a query or scan stopped, as opaque text a client may
//! carry, bound to the table and the query that gave it.
//!
//! A cursor is base64url (no padding) of a small JSON document: the last
//! key read, in DynamoDB's tagged form, and a checksum over the table's
//! name, the query's shape (everything but its cursor and page size) and
//! that key. A cursor changed, cut short, or handed to another query or
//! table fails the checksum, and is refused as `InvalidCursor` rather than
//! read as a different page. The checksum guards against mistakes and
//! casual edits, not a forger who knows the scheme: the key it carries is
//! the application's own data, and reading from it reads no more than the
//! query already may.

use serde_json::{Value as Json, json};

use super::key::KeySchema;
use super::value::{Item, tagged};
use crate::resources::error::Fault;

/// The cursor to resume after `last`, for `shape` on `table`.
pub(crate) fn encode(table: &str, shape: &str, last: &Item) -> String {
    let key = tagged::item_to_json(last);
    let document = json!({ "k": key, "c": checksum(table, shape, &key.to_string()) });
    to_base64url(&document.to_string())
}

/// The key `cursor` resumes after, where it was made for `shape` on
/// `table` and holds the key attributes of `keys` (the table's, and the
/// index's where the query is on one).
pub(crate) fn decode(table: &str, shape: &str, cursor: &str, keys: &[&KeySchema]) -> Result<Item, Fault> {
    let refused = || {
        Fault::invalid(
            "InvalidCursor",
            "the cursor was not made by this datastore for this query: it is changed, cut short, or from another query",
        )
    };
    let text = from_base64url(cursor).ok_or_else(refused)?;
    let document: Json = serde_json::from_str(&text).map_err(|_| refused())?;
    let key = document.get("k").ok_or_else(refused)?;
    let sum = document.get("c").and_then(Json::as_str).ok_or_else(refused)?;
    if sum != checksum(table, shape, &key.to_string()) {
        return Err(refused());
    }
    let item = tagged::item_from_json(key).ok_or_else(refused)?;
    if keys.iter().any(|schema| schema.names().any(|name| !item.contains_key(name))) {
        return Err(refused());
    }
    Ok(item)
}

/// FNV-1a (64 bits) over the parts, each ended by a byte no text holds.
fn checksum(table: &str, shape: &str, key: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in [table, shape, key] {
        for byte in part.bytes().chain(std::iter::once(0xff)) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

fn to_base64url(text: &str) -> String {
    aws_smithy_types::base64::encode(text)
        .trim_end_matches('=')
        .chars()
        .map(|c| match c {
            '+' => '-',
            '/' => '_',
            other => other,
        })
        .collect()
}

fn from_base64url(cursor: &str) -> Option<String> {
    if cursor.is_empty() || cursor.contains(['+', '/', '=']) {
        return None;
    }
    let mut standard: String = cursor
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            other => other,
        })
        .collect();
    while !standard.len().is_multiple_of(4) {
        standard.push('=');
    }
    let bytes = aws_smithy_types::base64::decode(&standard).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    // Unused low bits of the last character decode to the same bytes; a
    // cursor is taken only in the one spelling it was given out in.
    (to_base64url(&text) == cursor).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::datastore::value::Value;

    fn last() -> Item {
        let mut item = Item::new();
        item.insert("pk".into(), Value::from("customer-7"));
        item.insert("sk".into(), Value::from(12));
        item
    }

    #[test]
    fn a_cursor_round_trips_for_its_own_query_only() {
        let schema = KeySchema::new("pk").with_sort(crate::resources::datastore::KeyAttribute::new(
            "sk",
            crate::resources::datastore::KeyKind::Number,
        ));
        let cursor = encode("orders", "query|a", &last());
        assert!(cursor.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'), "{cursor}");
        assert_eq!(decode("orders", "query|a", &cursor, &[&schema]).unwrap(), last());
        let refused = |table: &str, shape: &str, cursor: &str| {
            decode(table, shape, cursor, &[&schema]).unwrap_err().code.unwrap()
        };
        assert_eq!(refused("orders", "query|b", &cursor), "InvalidCursor", "another query");
        assert_eq!(refused("invoices", "query|a", &cursor), "InvalidCursor", "another table");
        assert_eq!(refused("orders", "query|a", &cursor[..cursor.len() - 3]), "InvalidCursor", "cut short");
        assert_eq!(refused("orders", "query|a", ""), "InvalidCursor");
        assert_eq!(refused("orders", "query|a", "not a cursor!"), "InvalidCursor");
        // Every single changed character is refused.
        for at in 0..cursor.len() {
            let mut changed: Vec<char> = cursor.chars().collect();
            changed[at] = if changed[at] == 'A' { 'B' } else { 'A' };
            let changed: String = changed.into_iter().collect();
            assert!(decode("orders", "query|a", &changed, &[&schema]).is_err(), "position {at}");
        }
        let other = KeySchema::new("gpk");
        assert_eq!(decode("orders", "query|a", &cursor, &[&other]).unwrap_err().code.unwrap(), "InvalidCursor");
    }
}
