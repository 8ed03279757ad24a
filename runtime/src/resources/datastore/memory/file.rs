//! A table kept in a JSON file: `{"items": [<item in DynamoDB's tagged
//! JSON>, ...]}`, read when the table is first used and written whole
//! after every write, to a temporary file renamed over the old one, so
//! that a reader never sees half a table.
//!
//! A process opens each file once: every handle on it shares the one
//! table ([`shared`]), so that no handle writes back a copy read before
//! another's write and loses that write. Two processes are not kept
//! apart: a file is for one process at a time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use serde_json::{Value as Json, json};

use super::MemoryTable;
use crate::resources::datastore::key::{KeySchema, TableSchema, slot};
use crate::resources::datastore::value::{Item, tagged};
use crate::resources::error::{Fault, ResourceErrorKind};

fn failed(path: &Path, doing: &str, error: impl std::fmt::Display) -> Fault {
    Fault::unreachable(format!("{doing} the table file {}: {error}", path.display()))
}

/// The items the file at `path` holds, by their key's text; none where
/// there is no file yet.
pub(super) fn load(path: &Path, schema: &KeySchema) -> Result<BTreeMap<String, Item>, Fault> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(error) => return Err(failed(path, "reading", error)),
    };
    let malformed = |why: &str| {
        Fault::new(
            ResourceErrorKind::Malformed,
            Some("MalformedTableFile"),
            format!("the table file {} is not a table: {why}", path.display()),
        )
    };
    let document: Json = serde_json::from_str(&text).map_err(|error| malformed(&error.to_string()))?;
    let listed = document.get("items").and_then(Json::as_array).ok_or_else(|| malformed("it has no `items` list"))?;
    let mut items = BTreeMap::new();
    for entry in listed {
        let item = tagged::item_from_json(entry).ok_or_else(|| malformed("an item is not in DynamoDB's JSON"))?;
        schema.key_of(&item).map_err(|fault| malformed(&fault.message))?;
        // Two items under one key: which one the table holds would be a
        // guess, and the other would be dropped at the next write.
        if items.insert(slot(schema, &item), item).is_some() {
            return Err(malformed("two items have one key"));
        }
    }
    Ok(items)
}

/// Writes `items` to `path`, whole.
pub(super) fn save(path: &Path, items: &BTreeMap<String, Item>) -> Result<(), Fault> {
    let document = json!({ "items": items.values().map(tagged::item_to_json).collect::<Vec<_>>() });
    let text = serde_json::to_string_pretty(&document).map_err(|error| failed(path, "writing", error))?;
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder).map_err(|error| failed(path, "making the folder of", error))?;
    }
    // A name of its own for every write, so that two writes never share
    // one temporary file.
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".{}-{}.tmp", std::process::id(), WRITES.fetch_add(1, Ordering::Relaxed)));
    let temporary = std::path::PathBuf::from(temporary);
    std::fs::write(&temporary, text).map_err(|error| failed(path, "writing", error))?;
    std::fs::rename(&temporary, path).map_err(|error| failed(path, "replacing", error))
}

/// The table kept in the file at `path`, keyed by `schema`: the one this
/// process already has open there, else read from the file.
pub(super) fn shared(schema: TableSchema, path: PathBuf) -> Result<Arc<MemoryTable>, Fault> {
    static OPEN: Mutex<BTreeMap<PathBuf, Weak<MemoryTable>>> = Mutex::new(BTreeMap::new());
    let path = std::path::absolute(&path).unwrap_or(path);
    // A panic elsewhere while the map was held left it whole: each change
    // is one insert or one retain.
    let mut open = OPEN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    open.retain(|_, table| table.strong_count() > 0);
    if let Some(table) = open.get(&path).and_then(Weak::upgrade) {
        if table.schema != schema {
            return Err(Fault::new(
                ResourceErrorKind::Config,
                None,
                format!(
                    "the table file {} is open keyed by {:?}, and another datastore names it keyed by {:?}",
                    path.display(),
                    table.schema.table,
                    schema.table
                ),
            ));
        }
        return Ok(table);
    }
    let items = load(&path, &schema.table)?;
    let table = Arc::new(MemoryTable::with_items(schema, items, Some(path.clone())));
    open.insert(path, Arc::downgrade(&table));
    Ok(table)
}
