//! Batches: many items read or written in as few requests as DynamoDB
//! takes (100 keys a read, 25 writes a write), what it leaves unprocessed
//! sent again with exponential backoff, and what still remains after the
//! last attempt answered to the caller.

use std::collections::HashMap;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::backend::BatchWrite;
use super::key::{Key, slot};
use super::{Datastore, item, prepare_put, stored};
use crate::resources::error::{Fault, ResourceError};

/// The most keys one batch get request carries.
const GET_CHUNK: usize = 100;
/// The most writes one batch write request carries.
const WRITE_CHUNK: usize = 25;
/// How many times a request is sent, the unprocessed part of it again
/// each time, before what remains is reported.
const ATTEMPTS: u32 = 5;

const BATCH_GETTING: &str = "reading a batch from";
const BATCH_WRITING: &str = "writing a batch to";

/// What a [`batch_get`](Datastore::batch_get) read: the items found (in no
/// particular order: match them to keys by their key attributes), and the
/// keys DynamoDB left unprocessed through every attempt. A key that holds
/// no item is in neither.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchGet<T> {
    /// The items found.
    pub items: Vec<T>,
    /// The keys still unprocessed, to read again later.
    pub unprocessed: Vec<Key>,
}

/// One write of a [`batch_write`](Datastore::batch_write). A batch write
/// takes no conditions, and is not atomic: see
/// [`atomic`](Datastore::atomic) for that.
#[derive(Debug, Clone, PartialEq)]
pub enum BatchOp<T> {
    /// Puts the item, replacing whatever its key held.
    Put(T),
    /// Deletes the item under the key.
    Delete(Key),
}

/// How long to wait before retry `retry` (from 1): 50 ms, doubled each
/// time, at most 0.8 s.
fn backoff(retry: u32) -> Duration {
    Duration::from_millis(50 << retry.min(5).saturating_sub(1))
}

impl Datastore {
    /// The items under `keys`, any number of them, read eventually
    /// consistent. A key named twice is read once.
    ///
    /// ```
    /// use celerity::resources::datastore::{Datastore, Key};
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Product {
    ///     sku: String,
    ///     price: u64,
    /// }
    ///
    /// async fn prices(products: &Datastore, skus: &[&str]) -> celerity::Result<Vec<(String, u64)>> {
    ///     let read = products.batch_get::<Product>(skus.iter().map(|sku| Key::new(*sku))).await?;
    ///     if !read.unprocessed.is_empty() {
    ///         return Err(celerity::Error::msg("the datastore is busy: try again"));
    ///     }
    ///     Ok(read.items.into_iter().map(|product| (product.sku, product.price)).collect())
    /// }
    /// # let _ = prices;
    /// ```
    pub async fn batch_get<T: DeserializeOwned>(
        &self,
        keys: impl IntoIterator<Item = Key>,
    ) -> Result<BatchGet<T>, ResourceError> {
        self.batch_get_with(keys, false).await
    }

    /// As [`batch_get`](Self::batch_get), read strongly consistent where
    /// `consistent`.
    pub async fn batch_get_with<T: DeserializeOwned>(
        &self,
        keys: impl IntoIterator<Item = Key>,
        consistent: bool,
    ) -> Result<BatchGet<T>, ResourceError> {
        let fail = |fault: Fault, key: Option<&Key>| {
            let error = self.error(BATCH_GETTING, fault);
            match key {
                Some(key) => error.with_key(key.to_string()),
                None => error,
            }
        };
        let resolved = self.resolved().await.map_err(|fault| fail(fault, None))?;
        let schema = &resolved.schema.table;
        let mut by_slot: HashMap<String, Key> = HashMap::new();
        let mut key_items = Vec::new();
        for key in keys {
            let key_item = schema.key_item(&key).map_err(|fault| fail(fault, Some(&key)))?;
            let slot = slot(schema, &key_item);
            if by_slot.insert(slot, key).is_none() {
                key_items.push(key_item);
            }
        }
        let mut items = Vec::new();
        let mut unprocessed = Vec::new();
        for chunk in key_items.chunks(GET_CHUNK) {
            let mut pending = chunk.to_vec();
            for attempt in 1..=ATTEMPTS {
                if attempt > 1 {
                    tokio::time::sleep(backoff(attempt - 1)).await;
                }
                let (found, left) =
                    resolved.backend.batch_get(&pending, consistent).await.map_err(|fault| fail(fault, None))?;
                for found in found {
                    let key = by_slot.get(&slot(schema, &found)).cloned();
                    items.push(stored::<T>(found).map_err(|fault| fail(fault, key.as_ref()))?.item);
                }
                pending = left;
                if pending.is_empty() {
                    break;
                }
            }
            unprocessed.extend(pending.iter().filter_map(|left| by_slot.get(&slot(schema, left)).cloned()));
        }
        Ok(BatchGet { items, unprocessed })
    }

    /// Applies `ops`, any number of them, each item stamped with a fresh
    /// revision; answers the ops DynamoDB left unprocessed through every
    /// attempt, to apply again later. Not atomic: where an error answers,
    /// the requests before it were written. An item may be written only
    /// once in a batch.
    ///
    /// ```
    /// use celerity::resources::datastore::{BatchOp, Datastore, Key};
    ///
    /// #[derive(serde::Serialize)]
    /// struct Reading {
    ///     sensor: String,
    ///     at: u64,
    ///     celsius: f64,
    /// }
    ///
    /// async fn record(readings: &Datastore, batch: Vec<Reading>, stale: Key) -> celerity::Result<usize> {
    ///     let mut ops: Vec<BatchOp<Reading>> = batch.into_iter().map(BatchOp::Put).collect();
    ///     ops.push(BatchOp::Delete(stale));
    ///     let left = readings.batch_write(ops).await?;
    ///     Ok(left.len())
    /// }
    /// # let _ = record;
    /// ```
    pub async fn batch_write<T: Serialize>(
        &self,
        ops: impl IntoIterator<Item = BatchOp<T>>,
    ) -> Result<Vec<BatchOp<T>>, ResourceError> {
        let fail = |fault: Fault, key: Option<String>| self.keyed(BATCH_WRITING, fault, key);
        let resolved = self.resolved().await.map_err(|fault| fail(fault, None))?;
        let schema = &resolved.schema;
        let mut originals = Vec::new();
        let mut writes = Vec::new();
        let mut by_slot: HashMap<String, usize> = HashMap::new();
        for op in ops {
            let (write, key) = match &op {
                BatchOp::Put(value) => {
                    let item = item::to_item(value).map_err(|fault| fail(fault, None))?;
                    let key_text = schema.table.key_of(&item).ok().map(|key| key.to_string());
                    let (item, key, _) = prepare_put(schema, item).map_err(|fault| fail(fault, key_text))?;
                    (BatchWrite::Put(item), key)
                }
                BatchOp::Delete(key) => {
                    let key_item = schema.table.key_item(key).map_err(|fault| fail(fault, Some(key.to_string())))?;
                    (BatchWrite::Delete(key_item), key.clone())
                }
            };
            let slot = match &write {
                BatchWrite::Put(item) | BatchWrite::Delete(item) => slot(&schema.table, item),
            };
            if by_slot.insert(slot, originals.len()).is_some() {
                return Err(fail(
                    Fault::invalid("DuplicateItem", "the batch writes this item more than once"),
                    Some(key.to_string()),
                ));
            }
            originals.push(Some(op));
            writes.push(write);
        }
        let mut unprocessed = Vec::new();
        for chunk in writes.chunks(WRITE_CHUNK) {
            let mut pending = chunk.to_vec();
            for attempt in 1..=ATTEMPTS {
                if attempt > 1 {
                    tokio::time::sleep(backoff(attempt - 1)).await;
                }
                pending = resolved.backend.batch_write(&pending).await.map_err(|fault| fail(fault, None))?;
                if pending.is_empty() {
                    break;
                }
            }
            for left in &pending {
                let slot = match left {
                    BatchWrite::Put(item) | BatchWrite::Delete(item) => slot(&schema.table, item),
                };
                if let Some(op) = by_slot.get(&slot).and_then(|index| originals[*index].take()) {
                    unprocessed.push(op);
                }
            }
        }
        Ok(unprocessed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_bounded() {
        assert_eq!(backoff(1), Duration::from_millis(50));
        assert_eq!(backoff(2), Duration::from_millis(100));
        assert_eq!(backoff(4), Duration::from_millis(400));
        assert_eq!(backoff(40), Duration::from_millis(800));
    }
}
