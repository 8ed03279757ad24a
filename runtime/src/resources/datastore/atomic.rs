//! Atomic groups: several writes applied all together or not at all
//! (DynamoDB's `TransactWriteItems`).

use std::collections::HashSet;

use serde::Serialize;

use super::backend::GroupWrite;
use super::condition::Condition;
use super::key::{Key, slot};
use super::update::Update;
use super::value::Item;
use super::write::Write;
use super::{Datastore, item, prepare_put, prepare_update};
use crate::resources::error::{Fault, ResourceError};

/// The most writes one group holds, as DynamoDB takes them.
pub const MAX_GROUP_WRITES: usize = 100;

const GROUP_WRITING: &str = "writing an atomic group to";

/// Writes that are applied together or not at all: puts, updates and
/// deletes, each with what it requires ([`Write`]), and condition checks
/// on items the group does not write. Made by
/// [`Datastore::atomic`]; nothing is sent until [`commit`](Self::commit).
///
/// Where any condition does not hold, nothing is written, and the error
/// ([`ConditionFailed`](crate::resources::ResourceErrorKind::ConditionFailed))
/// names the key of the write whose condition failed.
///
/// ```
/// use celerity::resources::datastore::{Datastore, Key, Update, Write, attribute};
///
/// #[derive(serde::Serialize)]
/// struct Transfer {
///     id: String,
///     amount: i64,
/// }
///
/// async fn transfer(accounts: &Datastore, from: &str, to: &str, amount: i64) -> celerity::Result<()> {
///     let has_enough = Write::new().condition(attribute("balance").ge(amount));
///     accounts
///         .atomic()
///         .update_with(Key::new(from), Update::new().increment("balance", -amount), has_enough)
///         .update(Key::new(to), Update::new().increment("balance", amount))
///         .put_with(&Transfer { id: format!("{from}->{to}"), amount }, Write::new().if_absent())
///         .commit()
///         .await?;
///     Ok(())
/// }
/// # let _ = transfer;
/// ```
#[must_use = "an atomic group writes nothing until it is committed"]
pub struct AtomicGroup {
    store: Datastore,
    entries: Vec<Entry>,
}

enum Entry {
    Put(Result<Item, Fault>, Write),
    Update(Key, Update, Write),
    Delete(Key, Write),
    Check(Key, Condition),
}

impl Datastore {
    /// An empty atomic group of writes to this datastore.
    pub fn atomic(&self) -> AtomicGroup {
        AtomicGroup { store: self.clone(), entries: Vec::new() }
    }
}

impl AtomicGroup {
    /// Puts `item`, replacing whatever its key holds.
    pub fn put<T: Serialize + ?Sized>(self, item: &T) -> Self {
        self.put_with(item, Write::new())
    }

    /// Puts `item` where its key's item is as `write` requires.
    pub fn put_with<T: Serialize + ?Sized>(mut self, item: &T, write: Write) -> Self {
        self.entries.push(Entry::Put(item::to_item(item), write));
        self
    }

    /// Updates the item under `key`, which must be there.
    pub fn update(self, key: Key, update: Update) -> Self {
        self.update_with(key, update, Write::new())
    }

    /// Updates the item under `key`, which must be there and as `write`
    /// requires.
    pub fn update_with(mut self, key: Key, update: Update, write: Write) -> Self {
        self.entries.push(Entry::Update(key, update, write));
        self
    }

    /// Deletes the item under `key`.
    pub fn delete(self, key: Key) -> Self {
        self.delete_with(key, Write::new())
    }

    /// Deletes the item under `key` where it is as `write` requires.
    pub fn delete_with(mut self, key: Key, write: Write) -> Self {
        self.entries.push(Entry::Delete(key, write));
        self
    }

    /// Requires `condition` of the item under `key`, which the group does
    /// not write.
    pub fn check(mut self, key: Key, condition: Condition) -> Self {
        self.entries.push(Entry::Check(key, condition));
        self
    }

    /// How many writes and checks the group holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the group holds none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Applies every write, or none.
    pub async fn commit(self) -> Result<(), ResourceError> {
        let store = &self.store;
        let fail = |fault: Fault, key: Option<String>| store.keyed(GROUP_WRITING, fault, key);
        let resolved = store.resolved().await.map_err(|fault| fail(fault, None))?;
        let schema = &resolved.schema;
        if self.entries.is_empty() || self.entries.len() > MAX_GROUP_WRITES {
            return Err(fail(
                Fault::invalid(
                    "InvalidGroup",
                    format!(
                        "an atomic group holds 1 to {MAX_GROUP_WRITES} writes, and this one {}",
                        self.entries.len()
                    ),
                ),
                None,
            ));
        }
        let mut writes = Vec::with_capacity(self.entries.len());
        let mut keys = Vec::with_capacity(self.entries.len());
        let mut seen = HashSet::new();
        for entry in self.entries {
            let (write, key) = match entry {
                Entry::Put(item, write) => {
                    let item = item.map_err(|fault| fail(fault, None))?;
                    let key_text = schema.table.key_of(&item).ok().map(|key| key.to_string());
                    let (item, key, _) = prepare_put(schema, item).map_err(|fault| fail(fault, key_text))?;
                    (GroupWrite::Put(item, write.compile(&schema.table)), key)
                }
                Entry::Update(key, update, write) => {
                    let (key_item, update, condition) = prepare_update(schema, &key, &update, &write)
                        .map_err(|fault| fail(fault, Some(key.to_string())))?;
                    (GroupWrite::Update(key_item, update, Some(condition)), key)
                }
                Entry::Delete(key, write) => {
                    let key_item = schema.table.key_item(&key).map_err(|fault| fail(fault, Some(key.to_string())))?;
                    (GroupWrite::Delete(key_item, write.compile(&schema.table)), key)
                }
                Entry::Check(key, condition) => {
                    let key_item = schema.table.key_item(&key).map_err(|fault| fail(fault, Some(key.to_string())))?;
                    (GroupWrite::Check(key_item, condition), key)
                }
            };
            let key_item = schema.table.key_item(&key).map_err(|fault| fail(fault, Some(key.to_string())))?;
            if !seen.insert(slot(&schema.table, &key_item)) {
                return Err(fail(
                    Fault::invalid("DuplicateItem", "an atomic group names each item once"),
                    Some(key.to_string()),
                ));
            }
            writes.push(write);
            keys.push(key);
        }
        resolved.backend.transact(&writes).await.map_err(|group| {
            let key = group.index.and_then(|index| keys.get(index)).map(Key::to_string);
            fail(group.fault, key)
        })
    }
}

impl std::fmt::Debug for AtomicGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AtomicGroup")
            .field("datastore", &self.store.name())
            .field("writes", &self.entries.len())
            .finish()
    }
}
