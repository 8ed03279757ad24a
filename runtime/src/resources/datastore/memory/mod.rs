//! The in-memory engine: a table held in a map, answering every backend
//! operation by DynamoDB's rules with the one expression model
//! ([`eval`]). It stands in for a table in tests, and, kept in a file, is
//! a local session's table where there is no DynamoDB.

pub(crate) mod eval;
mod file;

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex};

use super::MAX_ITEM_BYTES;
use super::backend::{
    Backend, BatchRead, BatchWrite, GroupFault, GroupWrite, QueryRequest, RawPage, ScanRequest, UpdateRequest,
};
use super::condition::Condition;
use super::key::{self, KeySchema, TableSchema};
use super::update::Update;
use super::value::{Item, item_size};
use crate::future::BoxFuture;
use crate::resources::error::{Fault, ResourceErrorKind};

/// A table in memory, kept in a file where it has one.
pub(crate) struct MemoryTable {
    schema: TableSchema,
    /// Items by their key's text.
    items: Mutex<BTreeMap<String, Item>>,
    file: Option<PathBuf>,
    /// How many batch requests are still to leave half their entries
    /// unprocessed, as DynamoDB does under load.
    shortfalls: AtomicUsize,
}

fn poisoned() -> Fault {
    Fault::unreachable("the in-memory table was poisoned by a panic")
}

fn condition_failed() -> Fault {
    Fault::new(
        ResourceErrorKind::ConditionFailed,
        Some("ConditionalCheckFailedException"),
        "the conditional request failed: the item is not as the write requires",
    )
}

impl MemoryTable {
    /// An empty table keyed by `schema`.
    pub(crate) fn new(schema: TableSchema) -> Self {
        MemoryTable::with_items(schema, BTreeMap::new(), None)
    }

    /// The table kept in `path`, with the items it holds where it exists:
    /// the one this process already has open there, where it has.
    pub(crate) fn in_file(schema: TableSchema, path: PathBuf) -> Result<Arc<Self>, Fault> {
        file::shared(schema, path)
    }

    fn with_items(schema: TableSchema, items: BTreeMap<String, Item>, file: Option<PathBuf>) -> Self {
        MemoryTable { schema, items: Mutex::new(items), file, shortfalls: AtomicUsize::new(0) }
    }

    /// Every item, in key order.
    pub(crate) fn items(&self) -> Vec<Item> {
        self.items.lock().map(|items| items.values().cloned().collect()).unwrap_or_default()
    }

    pub(crate) fn leave_unprocessed(&self, requests: usize) {
        self.shortfalls.store(requests, AtomicOrdering::Relaxed);
    }

    /// How many of `count` entries a batch request processes.
    fn processed(&self, count: usize) -> usize {
        let short = self
            .shortfalls
            .fetch_update(AtomicOrdering::Relaxed, AtomicOrdering::Relaxed, |left| left.checked_sub(1))
            .is_ok();
        if short { count / 2 } else { count }
    }

    /// The text a key item is held under.
    fn slot(&self, item: &Item) -> String {
        key::slot(&self.schema.table, item)
    }

    /// Runs `change` on the items, then keeps them in the file. A change
    /// the file did not take is undone: a write that answers an error is
    /// not seen by the next read.
    fn write<T>(&self, change: impl FnOnce(&mut BTreeMap<String, Item>) -> Result<T, Fault>) -> Result<T, Fault> {
        let mut items = self.items.lock().map_err(|_| poisoned())?;
        let Some(path) = &self.file else { return change(&mut items) };
        let mut changed = items.clone();
        let answer = change(&mut changed)?;
        file::save(path, &changed)?;
        *items = changed;
        Ok(answer)
    }

    fn check(condition: Option<&Condition>, existing: Option<&Item>) -> Result<(), Fault> {
        match condition {
            Some(condition) if !eval::holds(condition, existing) => Err(condition_failed()),
            _ => Ok(()),
        }
    }

    fn updated(&self, existing: Option<&Item>, key: &Item, update: &Update) -> Result<Item, Fault> {
        let mut item = existing.cloned().unwrap_or_default();
        item.extend(key.iter().map(|(name, value)| (name.clone(), value.clone())));
        eval::apply(update, &mut item)?;
        // DynamoDB refuses an update that makes the item too large, as the
        // handle refuses such a put before sending it.
        if item_size(&item) > MAX_ITEM_BYTES {
            return Err(Fault::new(
                ResourceErrorKind::Refused,
                Some("ValidationException"),
                "the item size to update has exceeded the maximum allowed size",
            ));
        }
        Ok(item)
    }

    /// One page of `candidates` (already in order), from after `start`
    /// (`after` says whether an item is past it), filtered, of at most
    /// `limit` items read. The last key names `keys`' attributes.
    fn page(
        candidates: Vec<Item>,
        after: impl Fn(&Item) -> bool,
        filter: Option<&Condition>,
        limit: Option<u32>,
        keys: &[&KeySchema],
    ) -> RawPage {
        let mut rest = candidates.into_iter().filter(|item| after(item)).peekable();
        let most = limit.map_or(usize::MAX, |limit| limit as usize);
        let mut items = Vec::new();
        let mut read = 0;
        let mut last = None;
        while read < most {
            let Some(item) = rest.next() else { break };
            read += 1;
            if read == most && rest.peek().is_some() {
                last = Some(key_attributes(&item, keys));
            }
            if filter.is_none_or(|filter| eval::holds(filter, Some(&item))) {
                items.push(item);
            }
        }
        RawPage { items, last }
    }
}

fn key_attributes(item: &Item, keys: &[&KeySchema]) -> Item {
    keys.iter()
        .flat_map(|schema| schema.names())
        .filter_map(|name| item.get(name).map(|value| (name.to_string(), value.clone())))
        .collect()
}

/// The order of two items in a query on `index` (its sort key, then the
/// table's key, as DynamoDB orders an index's equal keys).
fn query_order(index: &KeySchema, table: &KeySchema, a: &Item, b: &Item) -> Ordering {
    let by = |name: &str| match (a.get(name), b.get(name)) {
        (Some(x), Some(y)) => x.compare(y).unwrap_or(Ordering::Equal),
        _ => Ordering::Equal,
    };
    let mut order = index.sort().map_or(Ordering::Equal, |sort| by(sort.name()));
    for name in table.names() {
        order = order.then_with(|| by(name));
    }
    order
}

impl Backend for MemoryTable {
    fn schema(&self) -> BoxFuture<'_, Result<TableSchema, Fault>> {
        Box::pin(std::future::ready(Ok(self.schema.clone())))
    }

    fn get<'a>(&'a self, key: &'a Item, _consistent: bool) -> BoxFuture<'a, Result<Option<Item>, Fault>> {
        let found = self.items.lock().map_err(|_| poisoned()).map(|items| items.get(&self.slot(key)).cloned());
        Box::pin(std::future::ready(found))
    }

    fn put<'a>(&'a self, item: &'a Item, condition: Option<&'a Condition>) -> BoxFuture<'a, Result<(), Fault>> {
        let slot = self.slot(item);
        Box::pin(std::future::ready(self.write(|items| {
            Self::check(condition, items.get(&slot))?;
            items.insert(slot, item.clone());
            Ok(())
        })))
    }

    fn delete<'a>(&'a self, key: &'a Item, condition: Option<&'a Condition>) -> BoxFuture<'a, Result<(), Fault>> {
        let slot = self.slot(key);
        Box::pin(std::future::ready(self.write(|items| {
            Self::check(condition, items.get(&slot))?;
            items.remove(&slot);
            Ok(())
        })))
    }

    fn update<'a>(&'a self, request: UpdateRequest<'a>) -> BoxFuture<'a, Result<Item, Fault>> {
        let slot = self.slot(request.key);
        Box::pin(std::future::ready(self.write(|items| {
            Self::check(request.condition, items.get(&slot))?;
            let item = self.updated(items.get(&slot), request.key, request.update)?;
            items.insert(slot, item.clone());
            Ok(item)
        })))
    }

    fn query<'a>(&'a self, request: &'a QueryRequest<'a>) -> BoxFuture<'a, Result<RawPage, Fault>> {
        let run = || {
            let index = self.schema.of(request.index)?;
            let table = &self.schema.table;
            let (partition_name, partition) = request.partition;
            let items = self.items.lock().map_err(|_| poisoned())?;
            let mut candidates: Vec<Item> = items
                .values()
                .filter(|item| index.try_key_of(item).is_some())
                .filter(|item| {
                    item.get(partition_name).is_some_and(|value| value.compare(partition) == Some(Ordering::Equal))
                })
                .filter(|item| {
                    request
                        .sort
                        .is_none_or(|(name, range)| item.get(name).is_some_and(|value| eval::in_range(range, value)))
                })
                .cloned()
                .collect();
            drop(items);
            let order = |a: &Item, b: &Item| {
                let order = query_order(index, table, a, b);
                if request.descending { order.reverse() } else { order }
            };
            candidates.sort_by(order);
            let start = request.start.clone();
            let after = |item: &Item| start.as_ref().is_none_or(|start| order(item, start) == Ordering::Greater);
            let keys: Vec<&KeySchema> = if request.index.is_some() { vec![table, index] } else { vec![table] };
            Ok(Self::page(candidates, after, request.filter, request.limit, &keys))
        };
        Box::pin(std::future::ready(run()))
    }

    fn scan<'a>(&'a self, request: &'a ScanRequest<'a>) -> BoxFuture<'a, Result<RawPage, Fault>> {
        let run = || {
            let items = self.items.lock().map_err(|_| poisoned())?;
            let start = request.start.as_ref().map(|start| self.slot(start));
            let candidates: Vec<Item> = items
                .iter()
                .filter(|(slot, _)| start.as_ref().is_none_or(|start| *slot > start))
                .map(|(_, item)| item.clone())
                .collect();
            drop(items);
            Ok(Self::page(candidates, |_| true, request.filter, request.limit, &[&self.schema.table]))
        };
        Box::pin(std::future::ready(run()))
    }

    fn batch_get<'a>(&'a self, keys: &'a [Item], _consistent: bool) -> BoxFuture<'a, Result<BatchRead, Fault>> {
        let run = || {
            let items = self.items.lock().map_err(|_| poisoned())?;
            let processed = self.processed(keys.len());
            let found = keys[..processed].iter().filter_map(|key| items.get(&self.slot(key)).cloned()).collect();
            Ok((found, keys[processed..].to_vec()))
        };
        Box::pin(std::future::ready(run()))
    }

    fn batch_write<'a>(&'a self, writes: &'a [BatchWrite]) -> BoxFuture<'a, Result<Vec<BatchWrite>, Fault>> {
        let processed = self.processed(writes.len());
        Box::pin(std::future::ready(self.write(|items| {
            for write in &writes[..processed] {
                match write {
                    BatchWrite::Put(item) => {
                        items.insert(self.slot(item), item.clone());
                    }
                    BatchWrite::Delete(key) => {
                        items.remove(&self.slot(key));
                    }
                }
            }
            Ok(writes[processed..].to_vec())
        })))
    }

    fn transact<'a>(&'a self, writes: &'a [GroupWrite]) -> BoxFuture<'a, Result<(), GroupFault>> {
        Box::pin(std::future::ready(self.transact_now(writes)))
    }
}

impl MemoryTable {
    fn transact_now(&self, writes: &[GroupWrite]) -> Result<(), GroupFault> {
        let unplaced = |fault| GroupFault { index: None, fault };
        let mut items = self.items.lock().map_err(|_| unplaced(poisoned()))?;
        // Every condition is checked against the items as they were before
        // any write, and nothing is written unless all hold.
        let mut changes = Vec::with_capacity(writes.len());
        for (index, write) in writes.iter().enumerate() {
            let placed = |fault| GroupFault { index: Some(index), fault };
            let (key, condition) = match write {
                GroupWrite::Put(item, condition) => (item, condition.as_ref()),
                GroupWrite::Update(key, _, condition) | GroupWrite::Delete(key, condition) => (key, condition.as_ref()),
                GroupWrite::Check(key, condition) => (key, Some(condition)),
            };
            let slot = self.slot(key);
            let existing = items.get(&slot);
            if let Some(condition) = condition
                && !eval::holds(condition, existing)
            {
                return Err(placed(Fault::new(
                    ResourceErrorKind::ConditionFailed,
                    Some("TransactionCanceledException"),
                    format!("the atomic group was cancelled: the condition of write {index} did not hold"),
                )));
            }
            let change = match write {
                GroupWrite::Put(item, _) => Some(item.clone()),
                GroupWrite::Update(key, update, _) => Some(self.updated(existing, key, update).map_err(placed)?),
                GroupWrite::Delete(..) => None,
                GroupWrite::Check(..) => continue,
            };
            changes.push((slot, change));
        }
        // Kept in the file first where there is one, so that a group the
        // file did not take is not seen by the next read either.
        let mut changed = if self.file.is_some() { items.clone() } else { std::mem::take(&mut *items) };
        for (slot, change) in changes {
            match change {
                Some(item) => changed.insert(slot, item),
                None => changed.remove(&slot),
            };
        }
        if let Some(path) = &self.file {
            file::save(path, &changed).map_err(unplaced)?;
        }
        *items = changed;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::datastore::key::{KeyAttribute, KeyKind};
    use crate::resources::datastore::value::Value;

    #[tokio::test]
    async fn one_number_spelled_two_ways_is_one_key() {
        let schema = KeySchema::new(KeyAttribute::new("id", KeyKind::Number));
        let table =
            MemoryTable::new(TableSchema { table: schema, indexes: Default::default(), global: Default::default() });
        let item = |id: &str, name: &str| {
            Item::from([("id".to_string(), Value::number(id)), ("name".to_string(), Value::from(name))])
        };
        table.put(&item("1", "first"), None).await.unwrap();
        table.put(&item("1.0", "second"), None).await.unwrap();
        assert_eq!(table.items().len(), 1, "DynamoDB holds 1 and 1.0 under one key");
        let key = Item::from([("id".to_string(), Value::number("1e0"))]);
        assert_eq!(table.get(&key, true).await.unwrap().unwrap()["name"], Value::from("second"));
    }
}
