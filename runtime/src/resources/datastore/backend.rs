//! What a datastore backend answers: DynamoDB, or the in-memory engine.
//! The handle does everything else (items as serde types, keys, sizes,
//! revisions, cursors, batches cut to size and retried).

use super::condition::Condition;
use super::key::TableSchema;
use super::key_condition::SortKey;
use super::update::Update;
use super::value::{Item, Value};
use crate::future::BoxFuture;
use crate::resources::error::Fault;

/// A query as a backend receives it: key attribute names resolved, and
/// the cursor decoded into the key to start after.
pub(crate) struct QueryRequest<'a> {
    pub(crate) index: Option<&'a str>,
    pub(crate) partition: (&'a str, &'a Value),
    pub(crate) sort: Option<(&'a str, &'a SortKey)>,
    pub(crate) filter: Option<&'a Condition>,
    pub(crate) descending: bool,
    pub(crate) consistent: bool,
    pub(crate) limit: Option<u32>,
    pub(crate) start: Option<Item>,
}

/// An update as a backend receives it: the item's key, the changes, and
/// what the item must hold for them to be made.
#[derive(Clone, Copy)]
pub(crate) struct UpdateRequest<'a> {
    pub(crate) key: &'a Item,
    pub(crate) update: &'a Update,
    pub(crate) condition: Option<&'a Condition>,
}

/// A scan as a backend receives it.
pub(crate) struct ScanRequest<'a> {
    pub(crate) filter: Option<&'a Condition>,
    pub(crate) limit: Option<u32>,
    pub(crate) consistent: bool,
    pub(crate) start: Option<Item>,
}

/// A page as a backend answers it: the items, and the key of the last one
/// read where the read stopped short.
pub(crate) struct RawPage {
    pub(crate) items: Vec<Item>,
    pub(crate) last: Option<Item>,
}

/// One write of a batch: an item to put, or the key of one to delete.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum BatchWrite {
    Put(Item),
    Delete(Item),
}

/// One write of an atomic group, with what it requires.
#[derive(Debug, Clone)]
pub(crate) enum GroupWrite {
    Put(Item, Option<Condition>),
    Update(Item, Update, Option<Condition>),
    Delete(Item, Option<Condition>),
    Check(Item, Condition),
}

/// Why an atomic group was not written: the fault, and which of its
/// writes it was about, where the backend says.
pub(crate) struct GroupFault {
    pub(crate) index: Option<usize>,
    pub(crate) fault: Fault,
}

/// The items a batch get found, and the keys it left unprocessed.
pub(crate) type BatchRead = (Vec<Item>, Vec<Item>);

pub(crate) trait Backend: Send + Sync {
    /// The table's key schema and its indexes'.
    fn schema(&self) -> BoxFuture<'_, Result<TableSchema, Fault>>;

    fn get<'a>(&'a self, key: &'a Item, consistent: bool) -> BoxFuture<'a, Result<Option<Item>, Fault>>;

    fn put<'a>(&'a self, item: &'a Item, condition: Option<&'a Condition>) -> BoxFuture<'a, Result<(), Fault>>;

    fn delete<'a>(&'a self, key: &'a Item, condition: Option<&'a Condition>) -> BoxFuture<'a, Result<(), Fault>>;

    /// Applies the update, answering the item as it is after.
    fn update<'a>(&'a self, request: UpdateRequest<'a>) -> BoxFuture<'a, Result<Item, Fault>>;

    fn query<'a>(&'a self, request: &'a QueryRequest<'a>) -> BoxFuture<'a, Result<RawPage, Fault>>;

    fn scan<'a>(&'a self, request: &'a ScanRequest<'a>) -> BoxFuture<'a, Result<RawPage, Fault>>;

    /// The items of (at most 100) `keys` found, and the keys left
    /// unprocessed.
    fn batch_get<'a>(&'a self, keys: &'a [Item], consistent: bool) -> BoxFuture<'a, Result<BatchRead, Fault>>;

    /// Applies (at most 25) `writes`, answering those left unprocessed.
    fn batch_write<'a>(&'a self, writes: &'a [BatchWrite]) -> BoxFuture<'a, Result<Vec<BatchWrite>, Fault>>;

    /// Applies every write of the group, or none.
    fn transact<'a>(&'a self, writes: &'a [GroupWrite]) -> BoxFuture<'a, Result<(), GroupFault>>;
}
