//! A table kept in a JSON file: `{"items": [<item in DynamoDB's tagged
//! JSON>, ...]}`, read when the table is first used and written whole
//! after every write, to a temporary file renamed over the old one, so
//! that a reader never sees half a table.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value as Json, json};

use crate::resources::datastore::key::KeySchema;
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
        let key = schema.key_of(&item).map_err(|fault| malformed(&fault.message))?;
        let key_item = schema.key_item(&key).map_err(|fault| malformed(&fault.message))?;
        items.insert(tagged::item_to_json(&key_item).to_string(), item);
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
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".{}.tmp", std::process::id()));
    let temporary = std::path::PathBuf::from(temporary);
    std::fs::write(&temporary, text).map_err(|error| failed(path, "writing", error))?;
    std::fs::rename(&temporary, path).map_err(|error| failed(path, "replacing", error))
}
