//! The datastore, against DynamoDB as an AWS API emulator serves it
//! (moto's server, on loopback, through the official AWS SDK) and against
//! the in-memory stand-in, with the same assertions, so that the stand-in
//! cannot drift from what DynamoDB answers; then what only one of them
//! shows: unprocessed batch entries retried and reported, a local
//! session's table kept in a file, a platform with no backend.

use std::collections::BTreeSet;

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection, ProjectionType,
    ScalarAttributeType,
};
use celerity::config::{Configuration, Values};
use celerity::resources::datastore::{
    BatchOp, Datastore, Key, KeyAttribute, KeyKind, KeySchema, Query, Scan, SortKey, Update, Value, Write, attribute,
};
use celerity::resources::{Links, ResourceError, ResourceErrorKind};
use celerity::testing::TestDatastore;
use celerity_testkit::servers;
use futures_util::TryStreamExt;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Order {
    pk: String,
    sk: String,
    status: String,
    total: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(default)]
    count: i64,
}

fn order(pk: &str, sk: &str, status: &str, total: u64) -> Order {
    Order { pk: pk.into(), sk: sk.into(), status: status.into(), total, note: None, count: 0 }
}

fn key(pk: &str, sk: &str) -> Key {
    Key::new(pk).with_sort(sk)
}

fn handle(config: Configuration) -> Datastore {
    config.resources().handle::<Datastore>(None).unwrap()
}

fn links() -> Links {
    Links::from_json(br#"{"orders": {"type": "datastore", "configKey": "ordersTable"}}"#, "the test's links").unwrap()
}

/// The emulator's DynamoDB, through the AWS SDK directly, to set tables up.
async fn emulator() -> aws_sdk_dynamodb::Client {
    servers::moto().use_in_this_process();
    let http = aws_smithy_http_client::Builder::new()
        .tls_provider(aws_smithy_http_client::tls::Provider::Rustls(
            aws_smithy_http_client::tls::rustls_provider::CryptoMode::Ring,
        ))
        .build_https();
    let sdk = aws_config::defaults(aws_config::BehaviorVersion::latest()).http_client(http).load().await;
    aws_sdk_dynamodb::Client::new(&sdk)
}

/// A table named `name` on the emulator, keyed `pk`/`sk`, with the index
/// `byStatus` (`status`, `total`), as a deployment records it.
async fn on_dynamodb(name: &str) -> Datastore {
    let dynamodb = emulator().await;
    create_table(&dynamodb, name).await;
    let config = Configuration::builder()
        .links(links())
        .values("resources", Values::from_pairs([("ordersTable", name)]))
        .env("CELERITY_PLATFORM", "aws")
        .build();
    handle(config)
}

async fn create_table(dynamodb: &aws_sdk_dynamodb::Client, name: &str) {
    let attribute = |name: &str, kind: ScalarAttributeType| {
        AttributeDefinition::builder().attribute_name(name).attribute_type(kind).build().unwrap()
    };
    let element =
        |name: &str, kind: KeyType| KeySchemaElement::builder().attribute_name(name).key_type(kind).build().unwrap();
    dynamodb
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(attribute("pk", ScalarAttributeType::S))
        .attribute_definitions(attribute("sk", ScalarAttributeType::S))
        .attribute_definitions(attribute("status", ScalarAttributeType::S))
        .attribute_definitions(attribute("total", ScalarAttributeType::N))
        .key_schema(element("pk", KeyType::Hash))
        .key_schema(element("sk", KeyType::Range))
        .global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name("byStatus")
                .key_schema(element("status", KeyType::Hash))
                .key_schema(element("total", KeyType::Range))
                .projection(Projection::builder().projection_type(ProjectionType::All).build())
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
}

fn schema() -> KeySchema {
    KeySchema::new("pk").with_sort("sk")
}

fn in_memory() -> Datastore {
    let index = KeySchema::new("status").with_sort(KeyAttribute::new("total", KeyKind::Number));
    TestDatastore::with_indexes("orders", schema(), [("byStatus".to_string(), index)]).datastore()
}

/// A local session's table kept in a file in `folder`, a fresh one for
/// each test, removed when the test ends.
fn in_file(folder: &std::path::Path) -> Datastore {
    local(folder, &[])
}

/// A folder of a test's own, removed when it is dropped.
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("a folder for the test's table")
}

/// Runs a behaviour against the emulator's DynamoDB, the stand-in and a
/// table kept in a file.
macro_rules! on_all {
    ($($behaviour:ident),* $(,)?) => {
        $(
            mod $behaviour {
                #[tokio::test]
                async fn on_dynamodb() {
                    super::$behaviour(super::on_dynamodb(stringify!($behaviour)).await).await;
                }

                #[tokio::test]
                async fn in_memory() {
                    super::$behaviour(super::in_memory()).await;
                }

                #[tokio::test]
                async fn in_file() {
                    let folder = super::scratch();
                    super::$behaviour(super::in_file(folder.path())).await;
                }
            }
        )*
    };
}

on_all!(
    gets_puts_and_deletes,
    conditional_writes,
    updates,
    sort_key_ranges,
    filters_and_order,
    paging_reads_every_item_once,
    cursors_are_refused_when_changed,
    batches_over_the_request_sizes,
    revisions,
    atomic_groups,
    limits_are_refused_before_sending,
    numbers_are_exact_decimals,
);

/// A table kept in a file has no indexes (a file records no schema), so
/// index queries run against DynamoDB and the stand-in.
mod index_queries {
    #[tokio::test]
    async fn on_dynamodb() {
        super::index_queries(super::on_dynamodb("index_queries").await).await;
    }

    #[tokio::test]
    async fn in_memory() {
        super::index_queries(super::in_memory()).await;
    }
}

/// A query DynamoDB refuses for its number sort key (on the `byStatus`
/// index), refused alike by the stand-in rather than answered empty.
mod number_sort_key_ranges {
    #[tokio::test]
    async fn on_dynamodb() {
        super::number_sort_key_ranges(super::on_dynamodb("number_sort_key_ranges").await).await;
    }

    #[tokio::test]
    async fn in_memory() {
        super::number_sort_key_ranges(super::in_memory()).await;
    }
}

async fn number_sort_key_ranges(store: Datastore) {
    store.put(&order("c1", "o1", "open", 12)).await.unwrap();
    let on_index = |range: SortKey| Query::partition("open").index("byStatus").sort(range);
    for range in [SortKey::begins_with(1), SortKey::eq("12"), SortKey::between(20, 10)] {
        let error = store.query::<Order>(&on_index(range.clone())).await.unwrap_err();
        assert!(matches!(error.kind(), ResourceErrorKind::Invalid | ResourceErrorKind::Refused), "{range:?}: {error}");
    }
    let read = store.query::<Order>(&on_index(SortKey::between(Value::number("11.5"), 12))).await.unwrap();
    assert_eq!(read.items.len(), 1);
}

/// A table kept in a file, opened by two handles of one process: each
/// sees the other's writes, and neither's write loses the other's.
#[tokio::test]
async fn two_handles_on_one_file_share_its_table() {
    let scratch = scratch();
    let folder = scratch.path();
    let (first, second) = (local(folder, &[]), local(folder, &[]));
    first.put(&order("c1", "o1", "open", 1)).await.unwrap();
    second.put(&order("c1", "o2", "open", 2)).await.unwrap();
    first.put(&order("c1", "o3", "open", 3)).await.unwrap();
    assert!(second.get::<Order>(&key("c1", "o3")).await.unwrap().is_some());
    let file = std::fs::read_to_string(folder.join("orders-local.json")).unwrap();
    for sort in ["o1", "o2", "o3"] {
        assert!(file.contains(&format!("\"{sort}\"")), "{sort} is kept: {file}");
    }
}

/// A write the table file does not take is not seen by the next read.
#[tokio::test]
async fn a_write_the_file_refuses_is_not_kept() {
    let scratch = scratch();
    let folder = scratch.path();
    let store = local(folder, &[]);
    store.put(&order("c1", "o1", "open", 1)).await.unwrap();
    // A folder where the file is: the new file cannot be renamed over it.
    let file = folder.join("orders-local.json");
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir_all(file.join("in-the-way")).unwrap();
    let error = store.put(&order("c1", "o2", "open", 2)).await.unwrap_err();
    expect(error, ResourceErrorKind::Unreachable, None);
    assert_eq!(store.get::<Order>(&key("c1", "o2")).await.unwrap(), None);
    let error = store.atomic().put(&order("c1", "o3", "open", 3)).commit().await.unwrap_err();
    expect(error, ResourceErrorKind::Unreachable, None);
    assert_eq!(store.get::<Order>(&key("c1", "o3")).await.unwrap(), None);
}

/// A table kept in a file with two items under one key is refused, not
/// read with one of them dropped.
#[tokio::test]
async fn a_table_file_with_one_key_twice_is_refused() {
    let scratch = scratch();
    let folder = scratch.path();
    std::fs::create_dir_all(folder).unwrap();
    let item = r#"{"pk": {"S": "c1"}, "sk": {"S": "o1"}, "status": {"S": "open"}, "total": {"N": "1"}}"#;
    std::fs::write(folder.join("orders-local.json"), format!(r#"{{"items": [{item}, {item}]}}"#)).unwrap();
    let error = local(folder, &[]).get::<Order>(&key("c1", "o1")).await.unwrap_err();
    expect(error, ResourceErrorKind::Malformed, Some("MalformedTableFile"));
}

fn expect(error: ResourceError, kind: ResourceErrorKind, code: Option<&str>) -> ResourceError {
    assert_eq!(error.kind(), kind, "{error}");
    if let Some(code) = code {
        assert_eq!(error.code(), Some(code), "{error}");
    }
    assert_eq!(error.resource(), "orders");
    error
}

/// An item with a decimal amount.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Priced {
    pk: String,
    sk: String,
    price: f64,
}

async fn numbers_are_exact_decimals(store: Datastore) {
    store.put(&Priced { pk: "c1".into(), sk: "p1".into(), price: 0.1 }).await.unwrap();
    let added = store.update::<Priced>(&key("c1", "p1"), &Update::new().increment("price", Value::number("0.2"))).await;
    assert_eq!(added.unwrap().item.price, 0.3, "0.1 + 0.2 is 0.3 in decimal");
    // Told apart past a 64-bit float's precision, as DynamoDB tells them.
    let set = Update::new().set("exact", Value::number("1.00000000000000001"));
    store.update::<serde_json::Value>(&key("c1", "p1"), &set).await.unwrap();
    let above_one = Scan::new().filter(attribute("exact").gt(1));
    assert_eq!(store.scan::<serde_json::Value>(&above_one).await.unwrap().items.len(), 1);
}

async fn gets_puts_and_deletes(store: Datastore) {
    assert_eq!(store.get::<Order>(&key("c1", "o1")).await.unwrap(), None);
    let placed = order("c1", "o1", "open", 12);
    let revision = store.put(&placed).await.unwrap();
    assert!(revision.is_revisioned());
    assert_eq!(store.get::<Order>(&key("c1", "o1")).await.unwrap(), Some(placed.clone()));
    let stored = store.get_stored::<Order>(&key("c1", "o1"), true).await.unwrap().unwrap();
    assert_eq!((stored.item, stored.revision), (placed.clone(), revision));
    // A read as loose JSON sees no revision attribute: it is taken off.
    let raw = store.get::<serde_json::Value>(&key("c1", "o1")).await.unwrap().unwrap();
    assert_eq!(raw.as_object().unwrap().len(), 5, "{raw}");
    store.delete(&key("c1", "o1")).await.unwrap();
    assert_eq!(store.get::<Order>(&key("c1", "o1")).await.unwrap(), None);
    store.delete(&key("c1", "o1")).await.unwrap();

    let error = store.get::<Order>(&Key::new("c1")).await.unwrap_err();
    let error = expect(error, ResourceErrorKind::Invalid, Some("InvalidKey"));
    assert_eq!(error.operation(), "reading from");
    let error = store.put(&serde_json::json!({"pk": "c1"})).await.unwrap_err();
    expect(error, ResourceErrorKind::Invalid, Some("MissingKey"));
}

async fn conditional_writes(store: Datastore) {
    let placed = order("c1", "o1", "open", 12);
    store.put_with(&placed, &Write::new().if_absent()).await.unwrap();
    let error = store.put_with(&order("c1", "o1", "open", 99), &Write::new().if_absent()).await.unwrap_err();
    let error = expect(error, ResourceErrorKind::ConditionFailed, None);
    assert_eq!(error.key(), Some("c1/o1"));
    assert_eq!(error.operation(), "writing to");
    assert_eq!(store.get::<Order>(&key("c1", "o1")).await.unwrap().unwrap().total, 12, "nothing written");

    let while_open = Write::new().condition(attribute("status").eq("open"));
    store.put_with(&order("c1", "o1", "closed", 13), &while_open).await.unwrap();
    let error = store.put_with(&order("c1", "o1", "open", 14), &while_open).await.unwrap_err();
    expect(error, ResourceErrorKind::ConditionFailed, None);

    let error = store.delete_with(&key("c1", "o1"), &while_open).await.unwrap_err();
    let error = expect(error, ResourceErrorKind::ConditionFailed, None);
    assert_eq!(error.key(), Some("c1/o1"));
    assert!(store.get::<Order>(&key("c1", "o1")).await.unwrap().is_some(), "not deleted");
    let error = store.delete_with(&key("c1", "absent"), &Write::new().if_present()).await.unwrap_err();
    expect(error, ResourceErrorKind::ConditionFailed, None);
    let closed = Write::new().condition(attribute("total").gt(12).and(!attribute("note").exists()));
    store.delete_with(&key("c1", "o1"), &closed).await.unwrap();
    assert_eq!(store.get::<Order>(&key("c1", "o1")).await.unwrap(), None);
}

async fn updates(store: Datastore) {
    let error = store.update::<Order>(&key("c1", "o1"), &Update::new().set("status", "x")).await.unwrap_err();
    let error = expect(error, ResourceErrorKind::NotFound, None);
    assert_eq!((error.key(), error.operation()), (Some("c1/o1"), "updating an item of"));
    assert_eq!(store.get::<Order>(&key("c1", "o1")).await.unwrap(), None, "an update makes no item");

    let mut placed = order("c1", "o1", "open", 12);
    placed.note = Some("fragile".into());
    store.put(&placed).await.unwrap();
    let update = Update::new().set("status", "shipped").remove("note").increment("count", 3).increment("total", -2);
    let after = store.update::<Order>(&key("c1", "o1"), &update).await.unwrap();
    assert_eq!(after.item, Order { status: "shipped".into(), note: None, count: 3, total: 10, ..placed.clone() });
    assert!(after.revision.is_revisioned());
    assert_eq!(store.get::<Order>(&key("c1", "o1")).await.unwrap(), Some(after.item.clone()));

    let shipped_only = Write::new().condition(attribute("status").eq("open"));
    let error = store.update_with::<Order>(&key("c1", "o1"), &Update::new().increment("count", 1), &shipped_only).await;
    expect(error.unwrap_err(), ResourceErrorKind::ConditionFailed, None);
    let error = store.update::<Order>(&key("c1", "o1"), &Update::new().set("sk", "o2")).await.unwrap_err();
    expect(error, ResourceErrorKind::Invalid, Some("InvalidUpdate"));
    assert_eq!(store.get::<Order>(&key("c1", "o1")).await.unwrap().unwrap().count, 3);
}

async fn put_many(store: &Datastore, orders: &[Order]) {
    for order in orders {
        store.put(order).await.unwrap();
    }
}

fn sort_keys(orders: &[Order]) -> Vec<&str> {
    orders.iter().map(|order| order.sk.as_str()).collect()
}

async fn sort_key_ranges(store: Datastore) {
    let mut orders: Vec<Order> = (1..=6).map(|n| order("c1", &format!("o{n}"), "open", n)).collect();
    orders.push(order("c1", "x1", "open", 7));
    orders.push(order("c2", "o1", "open", 8));
    put_many(&store, &orders).await;
    let read = |range: SortKey| {
        let store = store.clone();
        async move { store.query::<Order>(&Query::partition("c1").sort(range)).await.unwrap().items }
    };
    assert_eq!(sort_keys(&read(SortKey::eq("o3")).await), ["o3"]);
    assert_eq!(sort_keys(&read(SortKey::lt("o3")).await), ["o1", "o2"]);
    assert_eq!(sort_keys(&read(SortKey::le("o3")).await), ["o1", "o2", "o3"]);
    assert_eq!(sort_keys(&read(SortKey::gt("o5")).await), ["o6", "x1"]);
    assert_eq!(sort_keys(&read(SortKey::ge("o6")).await), ["o6", "x1"]);
    assert_eq!(sort_keys(&read(SortKey::between("o2", "o4")).await), ["o2", "o3", "o4"]);
    assert_eq!(sort_keys(&read(SortKey::begins_with("x")).await), ["x1"]);
    let all = store.query::<Order>(&Query::partition("c1").consistent()).await.unwrap();
    assert_eq!(all.items.len(), 7);
    assert_eq!(all.cursor, None);
    assert!(store.query::<Order>(&Query::partition("c9")).await.unwrap().items.is_empty());
}

fn some_orders() -> [Order; 4] {
    [
        order("c1", "o1", "open", 30),
        order("c1", "o2", "closed", 10),
        order("c1", "o3", "open", 20),
        order("c2", "o1", "open", 5),
    ]
}

async fn filters_and_order(store: Datastore) {
    put_many(&store, &some_orders()).await;
    let open = Query::partition("c1").filter(attribute("status").eq("open"));
    assert_eq!(sort_keys(&store.query::<Order>(&open).await.unwrap().items), ["o1", "o3"]);
    let newest_first = Query::partition("c1").descending();
    assert_eq!(sort_keys(&store.query::<Order>(&newest_first).await.unwrap().items), ["o3", "o2", "o1"]);
    let on_key = Query::partition("c1").filter(attribute("sk").eq("o1"));
    let error = store.query::<Order>(&on_key).await.unwrap_err();
    expect(error, ResourceErrorKind::Invalid, Some("InvalidFilter"));
    let ranged = Query::partition("c1").sort(SortKey::ge("o2")).filter(attribute("total").le(10)).descending();
    assert_eq!(sort_keys(&store.query::<Order>(&ranged).await.unwrap().items), ["o2"]);

    let cheap = Scan::new().filter(attribute("total").lt(15).or(attribute("sk").begins_with("o3")));
    let mut found: Vec<(String, String)> =
        store.scan::<Order>(&cheap).await.unwrap().items.into_iter().map(|order| (order.pk, order.sk)).collect();
    found.sort();
    let expected: Vec<(String, String)> =
        [("c1", "o2"), ("c1", "o3"), ("c2", "o1")].iter().map(|(pk, sk)| (pk.to_string(), sk.to_string())).collect();
    assert_eq!(found, expected);
    let contains = Scan::new().filter(attribute("status").contains("los"));
    assert_eq!(store.scan::<Order>(&contains).await.unwrap().items.len(), 1);
    let between = Scan::new().filter(attribute("total").between(10, 20).and(attribute("status").ne("closed")));
    assert_eq!(sort_keys(&store.scan::<Order>(&between).await.unwrap().items), ["o3"]);
}

async fn index_queries(store: Datastore) {
    put_many(&store, &some_orders()).await;
    let by_total = Query::partition("open").index("byStatus").sort(SortKey::ge(20));
    let totals: Vec<u64> =
        store.query::<Order>(&by_total).await.unwrap().items.iter().map(|order| order.total).collect();
    assert_eq!(totals, [20, 30], "the index is ordered by its sort key, a number");
    let all_open = Query::partition("open").index("byStatus").descending();
    let totals: Vec<u64> =
        store.query::<Order>(&all_open).await.unwrap().items.iter().map(|order| order.total).collect();
    assert_eq!(totals, [30, 20, 5]);
    // Paged on the index: the cursor carries the index's key and the
    // table's.
    let paged: Vec<Order> =
        store.query_all(Query::partition("open").index("byStatus").limit(1)).try_collect().await.unwrap();
    assert_eq!(paged.iter().map(|order| order.total).collect::<Vec<_>>(), [5, 20, 30]);
    let consistent = Query::partition("open").index("byStatus").consistent();
    let error = store.query::<Order>(&consistent).await.unwrap_err();
    expect(error, ResourceErrorKind::Invalid, Some("InconsistentIndex"));
    let error = store.query::<Order>(&Query::partition("open").index("nope")).await.unwrap_err();
    expect(error, ResourceErrorKind::Invalid, Some("UnknownIndex"));
    let error = store.query::<Order>(&Query::partition(7).index("byStatus")).await.unwrap_err();
    expect(error, ResourceErrorKind::Invalid, Some("InvalidKey"));
}

async fn paging_reads_every_item_once(store: Datastore) {
    let orders: Vec<Order> = (0..23).map(|n| order("c1", &format!("o{n:02}"), "open", n)).collect();
    put_many(&store, &orders).await;
    put_many(&store, &[order("c2", "o1", "open", 1)]).await;

    let mut seen = Vec::new();
    let mut query = Query::partition("c1").limit(5);
    let mut pages = 0;
    loop {
        let page = store.query::<Order>(&query).await.unwrap();
        assert!(page.items.len() <= 5);
        seen.extend(page.items);
        pages += 1;
        match page.cursor {
            Some(cursor) => query = Query::partition("c1").limit(5).cursor(cursor),
            None => break,
        }
    }
    assert!((5..=6).contains(&pages), "{pages} pages");
    assert_eq!(seen, orders, "every item once, in order");

    let descending: Vec<Order> =
        store.query_all(Query::partition("c1").descending().limit(4)).try_collect().await.unwrap();
    let mut reversed = orders.clone();
    reversed.reverse();
    assert_eq!(descending, reversed);

    let mut scanned = Vec::new();
    let mut scan = Scan::new().limit(7);
    loop {
        let page = store.scan::<Order>(&scan).await.unwrap();
        scanned.extend(page.items.into_iter().map(|order| (order.pk, order.sk)));
        match page.cursor {
            Some(cursor) => scan = Scan::new().limit(7).cursor(cursor),
            None => break,
        }
    }
    let unique: BTreeSet<_> = scanned.iter().cloned().collect();
    assert_eq!((scanned.len(), unique.len()), (24, 24), "every item once");
    let streamed: Vec<Order> = store.scan_all(Scan::new().limit(10).consistent()).try_collect().await.unwrap();
    assert_eq!(streamed.len(), 24);
}

async fn cursors_are_refused_when_changed(store: Datastore) {
    let orders: Vec<Order> = (0..6).map(|n| order("c1", &format!("o{n}"), "open", n)).collect();
    put_many(&store, &orders).await;
    let page = store.query::<Order>(&Query::partition("c1").limit(2)).await.unwrap();
    let cursor = page.cursor.unwrap();
    let refused = |query: Query| {
        let store = store.clone();
        async move {
            let error = store.query::<Order>(&query).await.unwrap_err();
            let error = expect(error, ResourceErrorKind::Invalid, Some("InvalidCursor"));
            assert_eq!(error.operation(), "querying");
        }
    };
    let mut changed: Vec<char> = cursor.chars().collect();
    let middle = changed.len() / 2;
    changed[middle] = if changed[middle] == 'A' { 'B' } else { 'A' };
    refused(Query::partition("c1").limit(2).cursor(changed.into_iter().collect::<String>())).await;
    refused(Query::partition("c1").limit(2).cursor(&cursor[..cursor.len() - 4])).await;
    refused(Query::partition("c2").limit(2).cursor(cursor.clone())).await;
    refused(Query::partition("c1").descending().cursor(cursor.clone())).await;
    let error = store.scan::<Order>(&Scan::new().cursor(cursor.clone())).await.unwrap_err();
    expect(error, ResourceErrorKind::Invalid, Some("InvalidCursor"));
    let next = store.query::<Order>(&Query::partition("c1").limit(3).cursor(cursor)).await.unwrap();
    assert_eq!(sort_keys(&next.items), ["o2", "o3", "o4"], "a page size may change between pages");
}

async fn batches_over_the_request_sizes(store: Datastore) {
    let orders: Vec<Order> = (0..130).map(|n| order(&format!("c{}", n % 4), &format!("o{n:03}"), "open", n)).collect();
    let left = store.batch_write(orders.iter().cloned().map(BatchOp::Put)).await.unwrap();
    assert!(left.is_empty());
    let mut keys: Vec<Key> = orders.iter().map(|order| key(&order.pk, &order.sk)).collect();
    keys.push(key("c9", "absent"));
    keys.push(key("c0", "o000"));
    let read = store.batch_get_with::<Order>(keys, true).await.unwrap();
    assert!(read.unprocessed.is_empty());
    let mut items = read.items;
    items.sort_by_key(|order| order.total);
    assert_eq!(items, orders, "every item, the absent key in neither list, the repeated one once");

    let deletes: Vec<BatchOp<Order>> = orders.iter().map(|order| BatchOp::Delete(key(&order.pk, &order.sk))).collect();
    assert!(store.batch_write(deletes).await.unwrap().is_empty());
    assert!(store.scan::<Order>(&Scan::new()).await.unwrap().items.is_empty());

    let twice = vec![BatchOp::Put(order("c1", "o1", "open", 1)), BatchOp::Delete(key("c1", "o1"))];
    let error = store.batch_write(twice).await.unwrap_err();
    let error = expect(error, ResourceErrorKind::Invalid, Some("DuplicateItem"));
    assert_eq!((error.key(), error.operation()), (Some("c1/o1"), "writing a batch to"));
}

async fn revisions(store: Datastore) {
    let first = store.put(&order("c1", "o1", "open", 1)).await.unwrap();
    let read = store.get_stored::<Order>(&key("c1", "o1"), true).await.unwrap().unwrap();
    assert_eq!(read.revision, first);
    let second = store.put_with(&order("c1", "o1", "open", 2), &Write::new().if_revision(&first)).await.unwrap();
    assert_ne!(second, first);
    let error = store.put_with(&order("c1", "o1", "open", 3), &Write::new().if_revision(&first)).await.unwrap_err();
    let error = expect(error, ResourceErrorKind::ConditionFailed, None);
    assert_eq!(error.key(), Some("c1/o1"));
    assert_eq!(store.get::<Order>(&key("c1", "o1")).await.unwrap().unwrap().total, 2, "the stale write was refused");

    let updated = store
        .update_with::<Order>(
            &key("c1", "o1"),
            &Update::new().increment("count", 1),
            &Write::new().if_revision(&second),
        )
        .await
        .unwrap();
    assert_ne!(updated.revision, second, "an update moves the revision on");
    let stale = store.delete_with(&key("c1", "o1"), &Write::new().if_revision(&second)).await.unwrap_err();
    expect(stale, ResourceErrorKind::ConditionFailed, None);
    store.delete_with(&key("c1", "o1"), &Write::new().if_revision(&updated.revision)).await.unwrap();
    assert_eq!(store.get::<Order>(&key("c1", "o1")).await.unwrap(), None);
}

async fn atomic_groups(store: Datastore) {
    put_many(&store, &[order("c1", "o1", "open", 10), order("c1", "o2", "open", 20), order("c1", "o5", "open", 1)])
        .await;
    store
        .atomic()
        .update(key("c1", "o1"), Update::new().increment("total", -5))
        .put(&order("c1", "o3", "open", 5))
        .delete(key("c1", "o2"))
        .check(key("c1", "o5"), attribute("status").eq("open"))
        .put_with(&order("c1", "o4", "open", 1), Write::new().if_absent())
        .commit()
        .await
        .unwrap();
    let now: Vec<Order> = store.query_all(Query::partition("c1")).try_collect().await.unwrap();
    assert_eq!(sort_keys(&now), ["o1", "o3", "o4", "o5"]);
    assert_eq!(now[0].total, 5);

    let error = store
        .atomic()
        .update(key("c1", "o1"), Update::new().increment("total", 100))
        .put_with(&order("c1", "o3", "closed", 0), Write::new().if_absent())
        .delete(key("c1", "o4"))
        .commit()
        .await
        .unwrap_err();
    let error = expect(error, ResourceErrorKind::ConditionFailed, None);
    assert_eq!(error.operation(), "writing an atomic group to");
    assert_eq!(error.key(), Some("c1/o3"), "names the write whose condition failed: {error}");
    let after: Vec<Order> = store.query_all(Query::partition("c1")).try_collect().await.unwrap();
    assert_eq!(after, now, "nothing was written");

    let error = store
        .atomic()
        .check(key("c1", "o1"), attribute("status").eq("closed"))
        .delete(key("c1", "o3"))
        .commit()
        .await
        .unwrap_err();
    assert_eq!(expect(error, ResourceErrorKind::ConditionFailed, None).key(), Some("c1/o1"));
    let error = store.atomic().delete(key("c1", "o1")).delete(key("c1", "o1")).commit().await.unwrap_err();
    expect(error, ResourceErrorKind::Invalid, Some("DuplicateItem"));
    let error = store.atomic().commit().await.unwrap_err();
    expect(error, ResourceErrorKind::Invalid, Some("InvalidGroup"));
}

async fn limits_are_refused_before_sending(store: Datastore) {
    let mut large = order("c1", "big", "open", 1);
    large.note = Some("x".repeat(400 * 1024));
    let error = store.put(&large).await.unwrap_err();
    let error = expect(error, ResourceErrorKind::Invalid, Some("ItemTooLarge"));
    assert_eq!(error.key(), Some("c1/big"));
    large.note = Some("x".repeat(390 * 1024));
    store.put(&large).await.unwrap();

    let grown = Update::new().set("extra", "y".repeat(20 * 1024));
    let error = store.update::<Order>(&key("c1", "big"), &grown).await.unwrap_err();
    expect(error, ResourceErrorKind::Refused, Some("ValidationException"));

    let error = store.put(&order(&"p".repeat(2049), "o1", "open", 1)).await.unwrap_err();
    expect(error, ResourceErrorKind::Invalid, Some("KeyTooLarge"));
    let error = store.get::<Order>(&key("c1", &"s".repeat(1025))).await.unwrap_err();
    expect(error, ResourceErrorKind::Invalid, Some("KeyTooLarge"));
    let error = store.put(&serde_json::json!({"pk": "c1", "sk": "r", "_celerity_rev": "mine"})).await.unwrap_err();
    expect(error, ResourceErrorKind::Invalid, Some("ReservedAttribute"));
    let error = store.query::<Order>(&Query::partition("c1").limit(0)).await.unwrap_err();
    expect(error, ResourceErrorKind::Invalid, Some("InvalidLimit"));
    let names: Vec<String> = store.scan_all::<Order>(Scan::new()).map_ok(|order| order.sk).try_collect().await.unwrap();
    assert_eq!(names, ["big"], "nothing refused was stored");
}

#[tokio::test]
async fn unprocessed_batch_entries_are_retried_then_reported() {
    let stand_in = TestDatastore::new("orders", schema());
    let store = stand_in.datastore();
    let orders: Vec<Order> = (0..40).map(|n| order("c1", &format!("o{n:02}"), "open", n)).collect();
    // The first request (of 25) comes back short twice; the retries write
    // the rest.
    stand_in.leave_unprocessed(2);
    assert!(store.batch_write(orders.iter().cloned().map(BatchOp::Put)).await.unwrap().is_empty());
    assert_eq!(stand_in.len(), 40);
    // Every attempt of the first request is short: what remains of it is
    // reported, as the ops that were asked for.
    stand_in.leave_unprocessed(5);
    let keys = orders.iter().map(|order| key(&order.pk, &order.sk));
    let read = store.batch_get::<Order>(keys).await.unwrap();
    assert_eq!(read.items.len() + read.unprocessed.len(), 40);
    // 40 keys, half processed on each of five attempts: 20, 10, 5, 3, 2 left.
    assert_eq!(read.unprocessed.len(), 2);
    let stored: Vec<Order> = stand_in.items().unwrap();
    assert_eq!(stored, orders);
    stand_in.leave_unprocessed(5);
    let left = store.batch_write(orders[..4].iter().cloned().map(BatchOp::Put)).await.unwrap();
    assert_eq!(left, [BatchOp::Put(orders[3].clone())], "4 halved until 1, the last op reported");
}

#[tokio::test]
async fn the_stand_in_can_be_set_unreachable_or_throttled() {
    let stand_in = TestDatastore::new("orders", schema());
    let store = stand_in.datastore();
    stand_in.set_throttled(true);
    let error = store.put(&order("c1", "o1", "open", 1)).await.unwrap_err();
    let error = expect(error, ResourceErrorKind::Throttled, Some("ProvisionedThroughputExceededException"));
    assert_eq!(error.key(), Some("c1/o1"));
    stand_in.set_unreachable(true);
    let error = store.atomic().delete(key("c1", "o1")).commit().await.unwrap_err();
    expect(error, ResourceErrorKind::Unreachable, None);
    stand_in.set_unreachable(false);
    store.put(&order("c1", "o1", "open", 1)).await.unwrap();
    assert_eq!(stand_in.len(), 1);
}

fn local(folder: &std::path::Path, extra: &[(&str, &str)]) -> Datastore {
    let mut values =
        vec![("ordersTable", "orders-local"), ("ordersTable_partitionKey", "pk"), ("ordersTable_sortKey", "sk")];
    values.extend_from_slice(extra);
    let config = Configuration::builder()
        .links(links())
        .values("resources", Values::from_pairs(values))
        .env("CELERITY_PLATFORM", "local")
        .env("CELERITY_LOCAL_DATASTORE_DIR", folder.to_str().unwrap())
        .build();
    handle(config)
}

#[tokio::test]
async fn a_local_session_keeps_a_table_in_a_file() {
    let scratch = scratch();
    let folder = scratch.path();
    let store = local(folder, &[]);
    store.put(&order("c1", "o1", "open", 1)).await.unwrap();
    store.update::<Order>(&key("c1", "o1"), &Update::new().set("status", "shipped")).await.unwrap();
    store.atomic().put(&order("c1", "o2", "open", 2)).commit().await.unwrap();
    let file = std::fs::read_to_string(folder.join("orders-local.json")).unwrap();
    assert!(file.contains("\"shipped\""), "{file}");

    // A new handle reads what the file holds.
    let again = local(folder, &[]);
    let read: Vec<Order> = again.query_all(Query::partition("c1")).try_collect().await.unwrap();
    assert_eq!(sort_keys(&read), ["o1", "o2"]);
    assert_eq!(read[0].status, "shipped");
    let error = again.put_with(&order("c1", "o1", "x", 0), &Write::new().if_absent()).await.unwrap_err();
    expect(error, ResourceErrorKind::ConditionFailed, None);

    // A file this process has not opened yet is read on first use: one
    // that is not a table is refused.
    let corrupt = folder.join("corrupt");
    std::fs::create_dir_all(&corrupt).unwrap();
    std::fs::write(corrupt.join("orders-local.json"), "{not json").unwrap();
    let error = local(&corrupt, &[]).get::<Order>(&key("c1", "o1")).await.unwrap_err();
    expect(error, ResourceErrorKind::Malformed, Some("MalformedTableFile"));

    let unkeyed = Configuration::builder()
        .links(links())
        .values("resources", Values::from_pairs([("ordersTable", "orders-local")]))
        .env("CELERITY_PLATFORM", "local")
        .env("CELERITY_LOCAL_DATASTORE_DIR", folder.to_str().unwrap())
        .build();
    let error = handle(unkeyed).get::<Order>(&key("c1", "o1")).await.unwrap_err();
    let error = expect(error, ResourceErrorKind::Config, None);
    assert!(error.message().contains("_partitionKey"), "{error}");
}

#[tokio::test]
async fn a_platform_with_no_backend_is_unsupported() {
    let config = Configuration::builder()
        .links(links())
        .values("resources", Values::from_pairs([("ordersTable", "orders")]))
        .env("CELERITY_PLATFORM", "gcp")
        .build();
    let error = handle(config).get::<Order>(&key("c1", "o1")).await.unwrap_err();
    let error = expect(error, ResourceErrorKind::Unsupported, None);
    assert!(error.message().contains("`gcp`"), "{error}");
}

#[tokio::test]
async fn items_written_elsewhere_read_without_a_revision() {
    use aws_sdk_dynamodb::primitives::Blob;
    use aws_sdk_dynamodb::types::AttributeValue;

    let store = on_dynamodb("written_elsewhere").await;
    let dynamodb = emulator().await;
    dynamodb
        .put_item()
        .table_name("written_elsewhere")
        .item("pk", AttributeValue::S("c1".into()))
        .item("sk", AttributeValue::S("o1".into()))
        .item("big", AttributeValue::N("18446744073709551615".into()))
        .item("data", AttributeValue::B(Blob::new(vec![0, 1, 255])))
        .item("tags", AttributeValue::Ss(vec!["a".into()]))
        .send()
        .await
        .unwrap();

    #[derive(Debug, PartialEq, Deserialize)]
    struct Raw {
        pk: String,
        big: u64,
        data: Vec<u8>,
        tags: Vec<String>,
    }
    let read = store.get_stored::<Raw>(&key("c1", "o1"), true).await.unwrap().unwrap();
    assert_eq!(read.item, Raw { pk: "c1".into(), big: u64::MAX, data: vec![0, 1, 255], tags: vec!["a".into()] });
    assert!(!read.revision.is_revisioned());
    // The unrevisioned revision requires that the item still has none.
    let unrevisioned = Write::new().if_revision(&read.revision);
    let updated = store.update_with::<Raw>(&key("c1", "o1"), &Update::new().increment("big", -1), &unrevisioned).await;
    let updated = updated.unwrap();
    assert_eq!(updated.item.big, u64::MAX - 1, "a number past i64 kept exact");
    assert!(updated.revision.is_revisioned());
    let again = store.update_with::<Raw>(&key("c1", "o1"), &Update::new().increment("big", -1), &unrevisioned).await;
    expect(again.unwrap_err(), ResourceErrorKind::ConditionFailed, None);
    let stored = dynamodb
        .get_item()
        .table_name("written_elsewhere")
        .key("pk", AttributeValue::S("c1".into()))
        .key("sk", AttributeValue::S("o1".into()))
        .send()
        .await
        .unwrap();
    let item = stored.item().unwrap();
    assert!(matches!(item.get("data"), Some(AttributeValue::B(_))), "binary stays binary: {item:?}");
    assert!(matches!(item.get("_celerity_rev"), Some(AttributeValue::S(_))));
}

#[tokio::test]
async fn a_local_session_reaches_dynamodb_local_at_its_endpoint() {
    let dynamodb = emulator().await;
    create_table(&dynamodb, "local_endpoint").await;
    let config = Configuration::builder()
        .links(links())
        .values("resources", Values::from_pairs([("ordersTable", "local_endpoint")]))
        .env("CELERITY_PLATFORM", "local")
        .env("CELERITY_AWS_DYNAMODB_ENDPOINT", &servers::moto().endpoint())
        .env("CELERITY_LOCAL_DATASTORE_DIR", "/nonexistent/the-endpoint-comes-first")
        .build();
    let store = handle(config);
    store.put(&order("c1", "o1", "open", 1)).await.unwrap();
    assert_eq!(store.get::<Order>(&key("c1", "o1")).await.unwrap().unwrap().total, 1);

    let config = Configuration::builder()
        .links(links())
        .values("resources", Values::from_pairs([("ordersTable", "local_endpoint")]))
        .env("CELERITY_PLATFORM", "local")
        .env("CELERITY_AWS_DYNAMODB_ENDPOINT", "http://127.0.0.1:9")
        .build();
    let error = handle(config).get::<Order>(&key("c1", "o1")).await.unwrap_err();
    let error = expect(error, ResourceErrorKind::Unreachable, None);
    assert!(error.message().contains("http://127.0.0.1:9"), "names the endpoint: {error}");
}

#[tokio::test]
async fn a_table_that_is_not_there_is_refused() {
    let _ = emulator().await;
    let config = Configuration::builder()
        .links(links())
        .values("resources", Values::from_pairs([("ordersTable", "never-created")]))
        .env("CELERITY_PLATFORM", "aws")
        .build();
    let error = handle(config).get::<Order>(&key("c1", "o1")).await.unwrap_err();
    let error = expect(error, ResourceErrorKind::Refused, Some("ResourceNotFoundException"));
    assert_eq!(error.operation(), "reading from");
}

#[tokio::test]
async fn a_table_in_another_region_is_reached_there() {
    let dynamodb = emulator().await;
    create_table(&dynamodb, "regional").await;
    let in_region = |region: &str| {
        let config = Configuration::builder()
            .links(links())
            .values("resources", Values::from_pairs([("ordersTable", "regional"), ("ordersTable_region", region)]))
            .env("CELERITY_PLATFORM", "aws")
            .build();
        handle(config)
    };
    // The emulator keeps a table per region, as AWS does: the table made
    // in the process's region (eu-west-2) is not in us-east-1.
    let elsewhere = in_region("us-east-1").get::<Order>(&key("c1", "o1")).await.unwrap_err();
    expect(elsewhere, ResourceErrorKind::Refused, Some("ResourceNotFoundException"));
    let here = in_region("eu-west-2");
    here.put(&order("c1", "o1", "open", 1)).await.unwrap();
    assert!(here.get::<Order>(&key("c1", "o1")).await.unwrap().is_some());
}
