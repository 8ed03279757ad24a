//! Datastores: the NoSQL tables a blueprint links to the application.
//! Behind the `datastore` feature: DynamoDB on AWS, DynamoDB Local (or a
//! file on disk) in a local session, and
//! [`celerity::testing::TestDatastore`](crate::testing::TestDatastore) in
//! memory for tests.
//!
//! A handler takes a [`Datastore`] as an argument: the application's one
//! datastore as the type itself, or one by name through
//! [`resource!`](crate::resource). The handle resolves the table on first
//! use: its name is the identifier the deployment recorded, and its key
//! schema (partition key, sort key, indexes) is read from DynamoDB once.
//!
//! Items are serde types that carry their key attributes (see
//! [Items](self#items)); a [`Key`] addresses one by its partition value and
//! sort value.
//!
//! - [`get`](Datastore::get) (absent is `Ok(None)`), and
//!   [`get_stored`](Datastore::get_stored), consistent or not, with the
//!   item's [`Revision`];
//! - [`put`](Datastore::put), [`delete`](Datastore::delete) and
//!   [`update`](Datastore::update) (set, remove, increment), each
//!   conditional with a [`Write`]: a [`Condition`], a revision,
//!   absent or present;
//! - [`query`](Datastore::query) one partition by a sort-key range
//!   ([`SortKey`]), filtered, on an index, in either order, page by page
//!   with a cursor, or read through as a stream
//!   ([`query_all`](Datastore::query_all)); [`scan`](Datastore::scan) and
//!   [`scan_all`](Datastore::scan_all) the whole table;
//! - [`batch_get`](Datastore::batch_get) and
//!   [`batch_write`](Datastore::batch_write) of any number of items, cut
//!   to DynamoDB's sizes, what it leaves unprocessed retried with
//!   backoff, and what still remains reported;
//! - an [`atomic`](Datastore::atomic) group of puts, updates, deletes and
//!   condition checks: all written, or none.
//!
//! # Items
//!
//! An item serializes as a map (a struct) holding the table's key
//! attributes. Numbers are kept as DynamoDB's decimal text, so 64-bit
//! integers are exact. One attribute is reserved,
//! [`REVISION_ATTRIBUTE`]: every write stamps a fresh revision in it, and
//! every read takes it off the item before the application sees it.
//!
//! # Errors
//!
//! Every error names the datastore, the operation and, where there is
//! one, the item's key ([`ResourceError::key`]). The kinds a handler acts
//! on: [`ConditionFailed`](ResourceErrorKind::ConditionFailed) (a write's
//! condition or revision did not hold: read again and retry),
//! [`NotFound`](ResourceErrorKind::NotFound) (an update of an item that is
//! not there), [`Throttled`](ResourceErrorKind::Throttled), and
//! [`Invalid`](ResourceErrorKind::Invalid) for what is refused before
//! sending: an item over 400 KB (`ItemTooLarge`), a partition key over
//! 2048 bytes or a sort key over 1024 (`KeyTooLarge`), a cursor changed or
//! from another query (`InvalidCursor`), a sort-key range DynamoDB would
//! refuse (`InvalidQuery`: a bound of another type than the key's,
//! `begins_with` on a number, a `between` whose bounds are the wrong way
//! round).
//!
//! # Backends
//!
//! Picked by the deployment's platform (`CELERITY_PLATFORM`):
//!
//! - **`aws`**: DynamoDB, with `CELERITY_AWS_DYNAMODB_ENDPOINT` (or
//!   `AWS_ENDPOINT_URL`) for an emulator, in the region the deployment
//!   recorded as `<configKey>_region` for a table elsewhere than the
//!   application (an external one), else the application's own.
//! - **`local`**: DynamoDB Local at `CELERITY_AWS_DYNAMODB_ENDPOINT` where
//!   it is set. Else, where `CELERITY_LOCAL_DATASTORE_DIR` is set, a table
//!   kept in `<dir>/<table name>.json` by the SDK's own engine; a file has
//!   no schema of its own, so the deployment records the key names in the
//!   `resources` namespace as `<configKey>_partitionKey` and
//!   `<configKey>_sortKey` (with `_partitionKeyType` / `_sortKeyType` of
//!   `S`, `N` or `B` where not text). Else DynamoDB Local at
//!   `http://localhost:8000`. DynamoDB Local checks neither region nor
//!   credentials; where the environment gives none, `us-east-1` and
//!   placeholder credentials are used.
//!   Numbers in such a table are compared and added as DynamoDB does, as
//!   exact decimals (`1` and `1.0` are one key). Every handle of a process
//!   on one file shares the one table it holds, read once; a file is for
//!   one process at a time: each write replaces it whole, and a write the
//!   file does not take is not kept.
//! - Any other platform is [`Unsupported`](ResourceErrorKind::Unsupported).
//!
//! ```
//! use celerity::http::{HttpError, Json, Path};
//! use celerity::resources::ResourceErrorKind;
//! use celerity::resources::datastore::{Datastore, Key, Update};
//!
//! #[derive(serde::Serialize, serde::Deserialize)]
//! struct Order {
//!     id: String,
//!     status: String,
//!     shipments: u32,
//! }
//!
//! async fn ship(orders: Datastore, Path(id): Path<String>) -> Result<Json<Order>, HttpError> {
//!     let shipped = Update::new().set("status", "shipped").increment("shipments", 1);
//!     match orders.update::<Order>(&Key::new(id), &shipped).await {
//!         Ok(stored) => Ok(Json(stored.item)),
//!         Err(error) if error.kind() == ResourceErrorKind::NotFound => Err(HttpError::not_found("no such order")),
//!         Err(error) => Err(HttpError::internal(error.to_string())),
//!     }
//! }
//!
//! celerity::resource! {
//!     /// The blueprint's `archive` datastore, by name.
//!     pub Archive: Datastore = "archive"
//! }
//!
//! async fn archived(archive: Archive, Path(id): Path<String>) -> Result<Json<Option<Order>>, HttpError> {
//!     archive.get::<Order>(&Key::new(id)).await.map(Json).map_err(|error| HttpError::internal(error.to_string()))
//! }
//! # let _ = celerity::App::new().http("POST::/orders/{id}/ship", ship).http("GET::/archive/{id}", archived);
//! ```

mod atomic;
mod backend;
mod batch;
mod condition;
mod cursor;
mod dynamodb;
mod expression;
mod item;
mod key;
mod key_condition;
pub(crate) mod memory;
mod number;
mod pages;
mod platform;
mod query;
mod update;
mod value;
mod write;

use std::fmt;
use std::sync::Arc;

use super::first_use::FirstUse;
use futures_util::Stream;
use serde::Serialize;
use serde::de::DeserializeOwned;

pub use atomic::{AtomicGroup, MAX_GROUP_WRITES};
pub use batch::{BatchGet, BatchOp};
pub use condition::{Comparison, Condition, Path, attribute};
pub use key::{Key, KeyAttribute, KeyKind, KeySchema, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES};
pub use key_condition::SortKey;
pub use query::{Page, Query, Scan};
pub use update::Update;
pub use value::Value;
pub use write::{REVISION_ATTRIBUTE, Revision, Stored, Write};

pub(crate) use key::TableSchema;

use super::error::{Fault, ResourceError, ResourceErrorKind};
use super::{ResourceHandle, ResourceKind, ResourceRef};
pub(crate) use backend::{
    Backend, BatchRead, BatchWrite, GroupFault, GroupWrite, QueryRequest, RawPage, ScanRequest, UpdateRequest,
};
pub(crate) use value::Item;

/// The most bytes an item may have, as DynamoDB counts them (names and
/// values).
pub const MAX_ITEM_BYTES: usize = 400 * 1024;

/// A handle on one datastore of the blueprint. Cheap to clone; clones
/// share the client and the key schema, resolved on first use. See the
/// [module](self) docs.
#[derive(Clone)]
pub struct Datastore {
    shared: Arc<FirstUse<Resolved>>,
}

/// A datastore resolved: its backend and key schema.
pub(crate) struct Resolved {
    pub(crate) table: String,
    pub(crate) backend: Arc<dyn Backend>,
    pub(crate) schema: TableSchema,
}

const GETTING: &str = "reading from";
const PUTTING: &str = "writing to";
const DELETING: &str = "deleting from";
const UPDATING: &str = "updating an item of";
const QUERYING: &str = "querying";
const SCANNING: &str = "scanning";

impl Datastore {
    /// A datastore named `name` on the table `table` that `backend` serves,
    /// such as an in-memory one.
    pub(crate) fn with_backend(name: &str, table: &str, backend: Arc<dyn Backend>, schema: TableSchema) -> Self {
        let resolved = Resolved { table: table.to_string(), backend, schema };
        Datastore { shared: Arc::new(FirstUse::ready(name, resolved)) }
    }

    /// The blueprint resource's name.
    pub fn name(&self) -> &str {
        self.shared.name()
    }

    /// The item under `key`, read eventually consistent; `None` where
    /// there is none.
    pub async fn get<T: DeserializeOwned>(&self, key: &Key) -> Result<Option<T>, ResourceError> {
        Ok(self.get_stored(key, false).await?.map(|stored| stored.item))
    }

    /// The item under `key` with its [`Revision`], read strongly
    /// consistent where `consistent` (what every write before the read
    /// wrote, at twice the cost); `None` where there is none.
    pub async fn get_stored<T: DeserializeOwned>(
        &self,
        key: &Key,
        consistent: bool,
    ) -> Result<Option<Stored<T>>, ResourceError> {
        let run = async {
            let resolved = self.resolved().await?;
            let key_item = resolved.schema.table.key_item(key)?;
            match resolved.backend.get(&key_item, consistent).await? {
                Some(found) => Ok(Some(stored(found)?)),
                None => Ok(None),
            }
        };
        run.await.map_err(|fault| self.error(GETTING, fault).with_key(key.to_string()))
    }

    /// Writes `item`, replacing whatever its key held; its new revision.
    pub async fn put<T: Serialize + ?Sized>(&self, item: &T) -> Result<Revision, ResourceError> {
        self.put_with(item, &Write::new()).await
    }

    /// Writes `item` where the item its key holds is as `write` requires
    /// ([`ConditionFailed`](ResourceErrorKind::ConditionFailed) and nothing
    /// written where it is not); its new revision.
    ///
    /// ```
    /// use celerity::resources::ResourceErrorKind;
    /// use celerity::resources::datastore::{Datastore, Key, Write};
    ///
    /// #[derive(serde::Serialize, serde::Deserialize)]
    /// struct Account {
    ///     id: String,
    ///     balance: i64,
    /// }
    ///
    /// /// Takes `amount` off the balance, unless another write got there
    /// /// first: then the caller reads again and retries.
    /// async fn withdraw(accounts: &Datastore, id: &str, amount: i64) -> Result<bool, celerity::resources::ResourceError> {
    ///     let Some(mut stored) = accounts.get_stored::<Account>(&Key::new(id), true).await? else {
    ///         return Ok(false);
    ///     };
    ///     stored.item.balance -= amount;
    ///     match accounts.put_with(&stored.item, &Write::new().if_revision(&stored.revision)).await {
    ///         Ok(_) => Ok(true),
    ///         Err(error) if error.kind() == ResourceErrorKind::ConditionFailed => Ok(false),
    ///         Err(error) => Err(error),
    ///     }
    /// }
    /// # let _ = withdraw;
    /// ```
    pub async fn put_with<T: Serialize + ?Sized>(&self, item: &T, write: &Write) -> Result<Revision, ResourceError> {
        let mut key_text = None;
        let run = async {
            let resolved = self.resolved().await?;
            let item = item::to_item(item)?;
            key_text = resolved.schema.table.key_of(&item).ok().map(|key| key.to_string());
            let (item, _, revision) = prepare_put(&resolved.schema, item)?;
            let condition = write.compile(&resolved.schema.table);
            resolved.backend.put(&item, condition.as_ref()).await?;
            Ok(revision)
        };
        let answer = run.await;
        answer.map_err(|fault| self.keyed(PUTTING, fault, key_text))
    }

    /// Deletes the item under `key`. Deleting an item that is not there
    /// is not an error.
    pub async fn delete(&self, key: &Key) -> Result<(), ResourceError> {
        self.delete_with(key, &Write::new()).await
    }

    /// Deletes the item under `key` where it is as `write` requires.
    pub async fn delete_with(&self, key: &Key, write: &Write) -> Result<(), ResourceError> {
        let run = async {
            let resolved = self.resolved().await?;
            let key_item = resolved.schema.table.key_item(key)?;
            let condition = write.compile(&resolved.schema.table);
            resolved.backend.delete(&key_item, condition.as_ref()).await
        };
        run.await.map_err(|fault| self.error(DELETING, fault).with_key(key.to_string()))
    }

    /// Changes part of the item under `key` as `update` says, and answers
    /// the item as it is after. The item must be there:
    /// [`NotFound`](ResourceErrorKind::NotFound) where it is not (a put
    /// makes items).
    pub async fn update<T: DeserializeOwned>(&self, key: &Key, update: &Update) -> Result<Stored<T>, ResourceError> {
        self.update_with(key, update, &Write::new()).await
    }

    /// As [`update`](Self::update), where the item is as `write` requires.
    pub async fn update_with<T: DeserializeOwned>(
        &self,
        key: &Key,
        update: &Update,
        write: &Write,
    ) -> Result<Stored<T>, ResourceError> {
        let run = async {
            let resolved = self.resolved().await?;
            let (key_item, update, condition) = prepare_update(&resolved.schema, key, update, write)?;
            let request = UpdateRequest { key: &key_item, update: &update, condition: Some(&condition) };
            match resolved.backend.update(request).await {
                Ok(item) => stored(item),
                Err(fault) if fault.kind == ResourceErrorKind::ConditionFailed => {
                    // One condition covers both the item being there and
                    // the caller's; a read tells which did not hold.
                    match resolved.backend.get(&key_item, true).await? {
                        None => {
                            Err(Fault::new(ResourceErrorKind::NotFound, Some("NotFound"), "there is no item to update"))
                        }
                        Some(_) => Err(fault),
                    }
                }
                Err(fault) => Err(fault),
            }
        };
        run.await.map_err(|fault| self.error(UPDATING, fault).with_key(key.to_string()))
    }

    /// One page of `query`: its items, and the cursor of the next page.
    ///
    /// ```
    /// use celerity::resources::datastore::{Datastore, Query, SortKey};
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Order {
    ///     id: String,
    /// }
    ///
    /// /// A page of a customer's orders of 2026, newest first, from where
    /// /// the client's last page stopped.
    /// async fn page(orders: &Datastore, customer: &str, cursor: Option<String>) -> celerity::Result<(Vec<String>, Option<String>)> {
    ///     let mut query = Query::partition(customer).sort(SortKey::begins_with("2026-")).descending().limit(25);
    ///     if let Some(cursor) = cursor {
    ///         query = query.cursor(cursor);
    ///     }
    ///     let page = orders.query::<Order>(&query).await?;
    ///     Ok((page.items.into_iter().map(|order| order.id).collect(), page.cursor))
    /// }
    /// # let _ = page;
    /// ```
    pub async fn query<T: DeserializeOwned>(&self, query: &Query) -> Result<Page<T>, ResourceError> {
        let run = async {
            let resolved = self.resolved().await?;
            let index = resolved.schema.of(query.index.as_deref())?;
            let table = &resolved.schema.table;
            check_limit(query.limit)?;
            if query.consistent
                && let Some(name) = query.index.as_deref().filter(|name| resolved.schema.global.contains(*name))
            {
                return Err(Fault::invalid(
                    "InconsistentIndex",
                    format!("`{name}` is a global secondary index, which is read eventually consistent only"),
                ));
            }
            // The partition value is checked as a key is.
            index.key_item(&match index.sort() {
                Some(sort) => Key::new(query.partition.clone()).with_sort(placeholder(sort.kind())),
                None => Key::new(query.partition.clone()),
            })?;
            let sort = match (&query.sort, index.sort()) {
                (Some(range), Some(sort)) => {
                    range.check(sort)?;
                    Some((sort.name(), range))
                }
                (Some(_), None) => {
                    return Err(Fault::invalid(
                        "InvalidQuery",
                        "the query has a sort-key range, and there is no sort key",
                    ));
                }
                (None, _) => None,
            };
            if let Some(filter) = &query.filter
                && let Some(name) = condition::first_names(filter).find(|name| index.names().any(|key| key == *name))
            {
                return Err(Fault::invalid(
                    "InvalidFilter",
                    format!(
                        "a query's filter names only attributes outside its key, and names `{name}`: narrow by the key with a sort-key range"
                    ),
                ));
            }
            let shape = query.shape();
            let keys: Vec<&KeySchema> = if query.index.is_some() { vec![table, index] } else { vec![table] };
            let start = query
                .cursor
                .as_deref()
                .map(|cursor| cursor::decode(&resolved.table, &shape, cursor, &keys))
                .transpose()?;
            let request = QueryRequest {
                index: query.index.as_deref(),
                partition: (index.partition().name(), &query.partition),
                sort,
                filter: query.filter.as_ref(),
                descending: query.descending,
                consistent: query.consistent,
                limit: query.limit,
                start,
            };
            let raw = resolved.backend.query(&request).await?;
            page(&resolved.table, &shape, raw)
        };
        run.await.map_err(|fault| self.error(QUERYING, fault))
    }

    /// Every item `query` reads, page after page, as a stream.
    pub fn query_all<T: DeserializeOwned + Send + 'static>(
        &self,
        query: Query,
    ) -> impl Stream<Item = Result<T, ResourceError>> + Send + 'static {
        let store = self.clone();
        pages::pages(query.cursor.clone(), move |cursor| {
            let store = store.clone();
            let mut query = query.clone();
            query.cursor = cursor;
            async move { store.query::<T>(&query).await }
        })
    }

    /// One page of `scan`: its items, and the cursor of the next page.
    pub async fn scan<T: DeserializeOwned>(&self, scan: &Scan) -> Result<Page<T>, ResourceError> {
        let run = async {
            let resolved = self.resolved().await?;
            check_limit(scan.limit)?;
            let shape = scan.shape();
            let start = scan
                .cursor
                .as_deref()
                .map(|cursor| cursor::decode(&resolved.table, &shape, cursor, &[&resolved.schema.table]))
                .transpose()?;
            let request =
                ScanRequest { filter: scan.filter.as_ref(), limit: scan.limit, consistent: scan.consistent, start };
            let raw = resolved.backend.scan(&request).await?;
            page(&resolved.table, &shape, raw)
        };
        run.await.map_err(|fault| self.error(SCANNING, fault))
    }

    /// Every item `scan` reads, page after page, as a stream.
    pub fn scan_all<T: DeserializeOwned + Send + 'static>(
        &self,
        scan: Scan,
    ) -> impl Stream<Item = Result<T, ResourceError>> + Send + 'static {
        let store = self.clone();
        pages::pages(scan.cursor.clone(), move |cursor| {
            let store = store.clone();
            let mut scan = scan.clone();
            scan.cursor = cursor;
            async move { store.scan::<T>(&scan).await }
        })
    }

    /// The datastore resolved, on the first call. A failure is tried again
    /// on the next call.
    async fn resolved(&self) -> Result<&Resolved, Fault> {
        self.shared.get(platform::resolve).await
    }

    fn error(&self, operation: &'static str, fault: Fault) -> ResourceError {
        ResourceError::new(self.shared.name(), ResourceKind::Datastore, operation, fault)
    }

    fn keyed(&self, operation: &'static str, fault: Fault, key: Option<String>) -> ResourceError {
        let error = self.error(operation, fault);
        match key {
            Some(key) => error.with_key(key),
            None => error,
        }
    }
}

/// A value of `kind`, to check a partition value with as a whole key.
fn placeholder(kind: KeyKind) -> Value {
    match kind {
        KeyKind::String => Value::from("-"),
        KeyKind::Number => Value::from(0),
        KeyKind::Binary => Value::Binary(vec![0]),
    }
}

fn check_limit(limit: Option<u32>) -> Result<(), Fault> {
    if limit == Some(0) {
        return Err(Fault::invalid("InvalidLimit", "a page's limit is at least 1"));
    }
    Ok(())
}

impl Datastore {
    /// The error of reading from it.
    pub(crate) fn read_error(&self, fault: Fault) -> ResourceError {
        self.error(GETTING, fault)
    }
}

/// An item as stored, as a `T`.
pub(crate) fn read_item<T: DeserializeOwned>(item: Item) -> Result<T, Fault> {
    Ok(stored(item)?.item)
}

/// An item as read: its revision taken off, the rest as a `T`.
fn stored<T: DeserializeOwned>(mut item: Item) -> Result<Stored<T>, Fault> {
    let revision = match item.remove(REVISION_ATTRIBUTE) {
        Some(Value::String(revision)) => Revision(Some(revision)),
        _ => Revision(None),
    };
    Ok(Stored { item: item::from_item(item)?, revision })
}

fn page<T: DeserializeOwned>(table: &str, shape: &str, raw: RawPage) -> Result<Page<T>, Fault> {
    let items = raw.items.into_iter().map(|item| stored(item).map(|stored| stored.item)).collect::<Result<_, _>>()?;
    Ok(Page { items, cursor: raw.last.map(|last| cursor::encode(table, shape, &last)) })
}

/// `item` as attributes to put: its key, checked, a fresh revision
/// stamped, and its size within DynamoDB's.
fn prepare_put(schema: &TableSchema, mut item: Item) -> Result<(Item, Key, Revision), Fault> {
    if item.contains_key(REVISION_ATTRIBUTE) {
        return Err(Fault::invalid(
            "ReservedAttribute",
            format!("`{REVISION_ATTRIBUTE}` is reserved for the item's revision, and the item has it"),
        ));
    }
    let key = schema.table.key_of(&item)?;
    let revision = Revision::fresh();
    item.insert(REVISION_ATTRIBUTE.to_string(), Value::String(revision.clone()));
    check_size(&item)?;
    Ok((item, key, Revision(Some(revision))))
}

fn check_size(item: &Item) -> Result<(), Fault> {
    let size = value::item_size(item);
    if size > MAX_ITEM_BYTES {
        return Err(Fault::invalid(
            "ItemTooLarge",
            format!("the item is {size} bytes, over DynamoDB's {MAX_ITEM_BYTES} (400 KB)"),
        ));
    }
    Ok(())
}

/// An update as sent: its key, the update with a fresh revision, and the
/// condition that the item is there and as `write` requires.
fn prepare_update(
    schema: &TableSchema,
    key: &Key,
    update: &Update,
    write: &Write,
) -> Result<(Item, Update, Condition), Fault> {
    let key_item = schema.table.key_item(key)?;
    for action in &update.actions {
        let (update::Action::Set(path, _) | update::Action::Remove(path) | update::Action::Increment(path, _)) = action;
        let name = path.segments.first().map(String::as_str).unwrap_or_default();
        if schema.table.names().any(|key_name| key_name == name) || name == REVISION_ATTRIBUTE {
            return Err(Fault::invalid(
                "InvalidUpdate",
                format!("`{name}` is a key attribute or the reserved revision, which an update does not change"),
            ));
        }
        if let update::Action::Increment(_, by) = action
            && !matches!(by, Value::Number(_))
        {
            return Err(Fault::invalid(
                "InvalidUpdate",
                format!("an increment adds a number, and `{name}` is given {by:?}"),
            ));
        }
    }
    let revision = Revision::fresh();
    let update = update.clone().set(REVISION_ATTRIBUTE, revision);
    let present = attribute(schema.table.partition().name()).exists();
    let condition = match write.compile(&schema.table) {
        Some(required) => present.and(required),
        None => present,
    };
    Ok((key_item, update, condition))
}

impl ResourceHandle for Datastore {
    fn kind() -> ResourceKind {
        ResourceKind::Datastore
    }

    fn from_resource(resource: ResourceRef) -> Self {
        Datastore { shared: Arc::new(FirstUse::lazy(resource)) }
    }
}

super::default_handle_argument!(Datastore);

impl fmt::Debug for Datastore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Datastore").field("name", &self.name()).finish_non_exhaustive()
    }
}
