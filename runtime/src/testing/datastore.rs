//! An in-memory datastore, standing in for the blueprint's in tests.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use serde::de::DeserializeOwned;

use crate::future::BoxFuture;
use crate::resources::datastore::memory::MemoryTable;
use crate::resources::datastore::{
    Backend, BatchRead, BatchWrite, Condition, Datastore, GroupFault, GroupWrite, Item, KeySchema, QueryRequest,
    RawPage, ScanRequest, TableSchema, UpdateRequest, read_item,
};
use crate::resources::{Fault, ResourceErrorKind};

/// An in-memory datastore for tests: the SDK's own engine behind a
/// [`Datastore`] handle. It evaluates conditions, filters, sort-key
/// ranges and updates from the same model DynamoDB receives compiled,
/// so it follows DynamoDB's rules: conditional writes, revisions, query
/// order and paging, atomic groups. Its items can be read back.
///
/// ```
/// use celerity::config::Configuration;
/// use celerity::http::{HttpError, Json};
/// use celerity::resources::datastore::{Datastore, KeySchema, Write};
/// use celerity::testing::{TestDatastore, TestRequest};
///
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Order {
///     id: String,
///     total: u64,
/// }
///
/// async fn place(orders: Datastore, Json(order): Json<Order>) -> Result<&'static str, HttpError> {
///     match orders.put_with(&order, &Write::new().if_absent()).await {
///         Ok(_) => Ok("placed"),
///         Err(error) => Err(HttpError::conflict(error.to_string())),
///     }
/// }
///
/// # celerity::testing::block_on(async {
/// let orders = TestDatastore::new("orders", KeySchema::new("id"));
/// let config = Configuration::builder().resource("orders", orders.datastore()).build();
/// let app = celerity::App::new()
///     .without_compiled_handlers()
///     .with_configuration(config)
///     .http("POST::/orders", place)
///     .into_test();
/// let order = || TestRequest::post("/orders").json(&Order { id: "o-1".into(), total: 12 });
/// assert_eq!(app.call("POST::/orders", order()).await.expect_http().status(), 200);
/// assert_eq!(app.call("POST::/orders", order()).await.expect_http().status(), 409, "placed once");
/// let stored: Vec<Order> = orders.items().unwrap();
/// assert_eq!(stored[0].total, 12);
/// # });
/// ```
#[derive(Clone)]
pub struct TestDatastore {
    datastore: Datastore,
    stand_in: Arc<StandIn>,
}

/// The engine, and how it is set to fail.
struct StandIn {
    table: MemoryTable,
    outage: AtomicU8,
}

const WORKING: u8 = 0;
const UNREACHABLE: u8 = 1;
const THROTTLED: u8 = 2;

impl StandIn {
    /// The failure every operation answers while it is set to fail.
    fn outage(&self) -> Result<(), Fault> {
        match self.outage.load(Ordering::Relaxed) {
            UNREACHABLE => Err(Fault::unreachable("the stand-in is set unreachable")),
            THROTTLED => Err(Fault::new(
                ResourceErrorKind::Throttled,
                Some("ProvisionedThroughputExceededException"),
                "the stand-in is set throttled",
            )),
            _ => Ok(()),
        }
    }
}

/// Runs `$call` on the engine unless the stand-in is set to fail.
macro_rules! unless_out {
    ($self:ident, $call:expr) => {
        match $self.outage() {
            Ok(()) => $call,
            Err(fault) => Box::pin(std::future::ready(Err(fault.into()))),
        }
    };
}

impl From<Fault> for GroupFault {
    fn from(fault: Fault) -> Self {
        GroupFault { index: None, fault }
    }
}

impl Backend for StandIn {
    fn schema(&self) -> BoxFuture<'_, Result<TableSchema, Fault>> {
        self.table.schema()
    }

    fn get<'a>(&'a self, key: &'a Item, consistent: bool) -> BoxFuture<'a, Result<Option<Item>, Fault>> {
        unless_out!(self, self.table.get(key, consistent))
    }

    fn put<'a>(&'a self, item: &'a Item, condition: Option<&'a Condition>) -> BoxFuture<'a, Result<(), Fault>> {
        unless_out!(self, self.table.put(item, condition))
    }

    fn delete<'a>(&'a self, key: &'a Item, condition: Option<&'a Condition>) -> BoxFuture<'a, Result<(), Fault>> {
        unless_out!(self, self.table.delete(key, condition))
    }

    fn update<'a>(&'a self, request: UpdateRequest<'a>) -> BoxFuture<'a, Result<Item, Fault>> {
        unless_out!(self, self.table.update(request))
    }

    fn query<'a>(&'a self, request: &'a QueryRequest<'a>) -> BoxFuture<'a, Result<RawPage, Fault>> {
        unless_out!(self, self.table.query(request))
    }

    fn scan<'a>(&'a self, request: &'a ScanRequest<'a>) -> BoxFuture<'a, Result<RawPage, Fault>> {
        unless_out!(self, self.table.scan(request))
    }

    fn batch_get<'a>(&'a self, keys: &'a [Item], consistent: bool) -> BoxFuture<'a, Result<BatchRead, Fault>> {
        unless_out!(self, self.table.batch_get(keys, consistent))
    }

    fn batch_write<'a>(&'a self, writes: &'a [BatchWrite]) -> BoxFuture<'a, Result<Vec<BatchWrite>, Fault>> {
        unless_out!(self, self.table.batch_write(writes))
    }

    fn transact<'a>(&'a self, writes: &'a [GroupWrite]) -> BoxFuture<'a, Result<(), GroupFault>> {
        unless_out!(self, self.table.transact(writes))
    }
}

impl TestDatastore {
    /// An empty stand-in for the blueprint's datastore `name`, keyed by
    /// `keys`.
    pub fn new(name: &str, keys: KeySchema) -> Self {
        Self::with_indexes(name, keys, [])
    }

    /// An empty stand-in keyed by `keys`, with the global secondary
    /// `indexes` (name and key schema) a query may name.
    pub fn with_indexes(name: &str, keys: KeySchema, indexes: impl IntoIterator<Item = (String, KeySchema)>) -> Self {
        let indexes: BTreeMap<String, KeySchema> = indexes.into_iter().collect();
        let global = indexes.keys().cloned().collect();
        let schema = TableSchema { table: keys, indexes, global };
        let stand_in = Arc::new(StandIn { table: MemoryTable::new(schema.clone()), outage: AtomicU8::new(WORKING) });
        let datastore = Datastore::with_backend(name, name, Arc::clone(&stand_in) as Arc<dyn Backend>, schema);
        TestDatastore { datastore, stand_in }
    }

    /// The handle handlers take: give it to
    /// [`ConfigurationBuilder::resource`](crate::config::ConfigurationBuilder::resource).
    pub fn datastore(&self) -> Datastore {
        self.datastore.clone()
    }

    /// Every item it holds, in key order, as `T` (revisions taken off);
    /// an error where one does not read as a `T`.
    pub fn items<T: DeserializeOwned>(&self) -> Result<Vec<T>, crate::Error> {
        self.stand_in
            .table
            .items()
            .into_iter()
            .map(|item| read_item(item).map_err(|fault| self.datastore.read_error(fault).into()))
            .collect()
    }

    /// How many items it holds.
    pub fn len(&self) -> usize {
        self.stand_in.table.items().len()
    }

    /// Whether it holds no items.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The next `requests` batch requests each leave half their entries
    /// unprocessed, as DynamoDB does under load, so that a test sees them
    /// retried (and, past the SDK's attempts, reported).
    pub fn leave_unprocessed(&self, requests: usize) {
        self.stand_in.table.leave_unprocessed(requests);
    }
}

impl TestDatastore {
    /// While `unreachable`, every operation fails as a datastore that
    /// cannot be reached would
    /// ([`ResourceErrorKind::Unreachable`](crate::resources::ResourceErrorKind::Unreachable)).
    pub fn set_unreachable(&self, unreachable: bool) {
        self.stand_in.outage.store(if unreachable { UNREACHABLE } else { WORKING }, Ordering::Relaxed);
    }

    /// While `throttled`, every operation fails as DynamoDB over its
    /// throughput does
    /// ([`ResourceErrorKind::Throttled`](crate::resources::ResourceErrorKind::Throttled)).
    pub fn set_throttled(&self, throttled: bool) {
        self.stand_in.outage.store(if throttled { THROTTLED } else { WORKING }, Ordering::Relaxed);
    }
}

impl std::fmt::Debug for TestDatastore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestDatastore").field("name", &self.datastore.name()).finish_non_exhaustive()
    }
}
