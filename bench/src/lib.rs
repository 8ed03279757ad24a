//! Benchmarks of the celerity SDK against the practical limit of the handler
//! IPC protocol on the same machine, in the same run.
//!
//! - [`harness`]: the runtime side. A lean tonic server of its own on a real
//!   Unix socket, which spawns a handler process per case, runs the
//!   handshake, keeps the credit window full (within per-tag caps), checks
//!   every answer, and measures throughput, latency, CPU time and RSS.
//! - `bench-sdk-handler` (A): a handler executable built with the SDK.
//! - `bench-raw-handler` (B): a hand-written tonic client with no SDK that
//!   answers every dispatch at once, which is as fast as gRPC over a Unix
//!   socket goes.
//! - [`alloc`]: the counting global allocator of both handlers, and the
//!   shared file the harness reads their counts from.
//!
//! The constants here are what the load generator and both handlers agree
//! on: the tags, the consumer batch, the WebSocket send, and the Redis and
//! Postgres resources of the resource-operation cases.

pub mod alloc;
pub mod case;
pub mod emulator;
pub mod harness;
pub mod load;
pub mod procfs;
pub mod report;

/// The HTTP tag of the one-tag cases: echoes the request body.
pub const HTTP_TAG: &str = "POST::/echo";

/// The HTTP tags of the eight-tag cases, each with a per-tag cap of
/// [`TAG_CAP_ENV`]; they echo the body too.
pub const CAPPED_TAGS: [&str; 8] = [
    "POST::/capped/0",
    "POST::/capped/1",
    "POST::/capped/2",
    "POST::/capped/3",
    "POST::/capped/4",
    "POST::/capped/5",
    "POST::/capped/6",
    "POST::/capped/7",
];

/// The consumer tag: batches of [`BATCH_RECORDS`] records, of which the ones
/// with body [`FAIL_BODY`] fail.
pub const CONSUMER_TAG: &str = "source::bench-queue::consume";

/// The HTTP tag whose handler makes one `WsSend` of as many messages as its
/// body says (decimal), waits for the acknowledgement, and answers 200.
pub const WS_TAG: &str = "POST::/ws-send";

/// The HTTP tag whose handler reads one value from the cache: the request
/// body is the key, [`CACHE_KEY`], and the value, [`CACHE_VALUE`], is the
/// answer.
pub const CACHE_TAG: &str = "POST::/cache-get";

/// The HTTP tag whose handler sends the request body as one message to the
/// queue and answers [`QUEUE_ANSWER`].
pub const QUEUE_TAG: &str = "POST::/queue-send";

/// The HTTP tag whose handler runs [`SQL_QUERY`] once on the application's
/// SQL database and answers [`SQL_ANSWER`].
pub const SQL_TAG: &str = "POST::/sql-select";

/// The HTTP tag whose handler puts the request body, [`OBJECT_BYTES`]
/// bytes, as one object at [`object_key`] in the application's bucket and
/// answers [`BUCKET_ANSWER`].
pub const BUCKET_TAG: &str = "POST::/bucket-put";

/// The HTTP tag whose handler reads the item the request body names (its
/// id, [`ITEM_ID`]) from the application's datastore and answers its
/// `name`, [`ITEM_NAME`].
pub const DATASTORE_TAG: &str = "POST::/datastore-get";

/// The key every cache-get event reads; the harness stores
/// [`CACHE_VALUE`] there before each run.
pub const CACHE_KEY: &str = "bench:cache-get:key";

/// The value at [`CACHE_KEY`]: 64 bytes of text, small enough that the
/// operation, not the copy, is what is measured.
pub const CACHE_VALUE: &str = "cached-value-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNO";

/// The body of every queue-send event, sent as the message: 64 bytes of
/// text.
pub const QUEUE_MESSAGE: &str = r#"{"order":"ord-0123456789","customer":"c-42","total":1234,"ok":1}"#;

/// The answer of a queue-send event.
pub const QUEUE_ANSWER: &str = "sent";

/// The queue's deployed name: its messages are the Redis stream
/// [`QUEUE_STREAM`], as in a local session.
pub const QUEUE_NAME: &str = "bench-sends";

/// The stream a queue send appends to (`celerity:queue:<name>`, the key
/// the runtime's local consumer reads).
pub const QUEUE_STREAM: &str = "celerity:queue:bench-sends";

/// The size of the object every bucket-put event stores: 64 KiB.
pub const OBJECT_BYTES: usize = 64 << 10;

/// The body of every bucket-put event, stored as the object.
pub static OBJECT: [u8; OBJECT_BYTES] = [b'o'; OBJECT_BYTES];

/// The bucket the bucket-put events store into, on the emulator.
pub const BUCKET_NAME: &str = "bench-objects";

/// How many keys the bucket-put events store at, in turn: enough that no
/// two events in flight write one key (the emulator answers concurrent
/// writes of one key with an error now and then), few enough that the
/// emulator holds 64 MiB of them at most.
pub const OBJECT_KEYS: u64 = 1024;

/// The key of the `n`th bucket-put event of a process: both sides make it
/// alike, so that it costs each the same.
pub fn object_key(n: u64) -> String {
    format!("bench/objects/{}", n % OBJECT_KEYS)
}

/// The answer of a bucket-put event.
pub const BUCKET_ANSWER: &str = "stored";

/// The table the datastore-get events read, on the emulator: its
/// partition key is the text attribute `id`.
pub const TABLE_NAME: &str = "bench-items";

/// The id of the item every datastore-get event reads.
pub const ITEM_ID: &str = "item-0001";

/// The item's `name`: the answer of a datastore-get event.
pub const ITEM_NAME: &str = "a bench item of a few attributes, as a handler reads one";

/// The query every sql-select event runs: one round trip that reads no
/// table, so that what is measured is the path to the database and back.
pub const SQL_QUERY: &str = "SELECT 1";

/// The answer of a sql-select event: the value the query returned.
pub const SQL_ANSWER: &str = "1";

/// The user, password and database the sql-select events connect with:
/// the test kit's Postgres superuser, its password and its database.
pub const SQL_USER: &str = "celerity";

/// See [`SQL_USER`].
pub const SQL_PASSWORD: &str = "celerity";

/// See [`SQL_USER`].
pub const SQL_DATABASE: &str = "celerity";

/// The most connections either side's pool opens: the credit of the
/// sql-select case, so that no event waits for a connection.
pub const SQL_POOL_MAX: u32 = 16;

/// The resource links of the handler built with the SDK: its one cache,
/// queue, SQL database, bucket and datastore, so that each is the default
/// handle of its kind.
pub const RESOURCE_LINKS: &str = r#"{"benchCache": {"type": "cache", "configKey": "benchCache"},
 "benchQueue": {"type": "queue", "configKey": "benchQueue"},
 "benchDb": {"type": "sqlDatabase", "configKey": "benchDb"},
 "benchBucket": {"type": "bucket", "configKey": "benchBucket"},
 "benchStore": {"type": "datastore", "configKey": "benchStore"}}"#;

/// The port of the Redis on 127.0.0.1 the cache and queue cases run
/// against, given to the handler by the harness.
pub const REDIS_PORT_ENV: &str = "BENCH_REDIS_PORT";

/// The port of the Postgres on 127.0.0.1 the sql-select case runs
/// against, given to the handler by the harness.
pub const POSTGRES_PORT_ENV: &str = "BENCH_POSTGRES_PORT";

/// The endpoint (`http://127.0.0.1:<port>`) of the AWS API emulator the
/// bucket-put and datastore-get cases run against, given to the handler
/// by the harness.
pub const MOTO_ENDPOINT_ENV: &str = "BENCH_MOTO_ENDPOINT";

/// Which client the resource tags' handlers use: `sdk` (the default), the
/// SDK's `Cache`, `Queue` and `SqlDatabase` handles; `direct`, the client
/// crate called directly: the `redis` crate on a `ConnectionManager` of
/// the handler's own, sqlx on a `PgPool` of its own.
pub const RESOURCE_CLIENT_ENV: &str = "BENCH_RESOURCE_CLIENT";

/// The per-tag cap of [`CAPPED_TAGS`], read by both handlers.
pub const TAG_CAP_ENV: &str = "BENCH_TAG_CAP";

/// Records in a consumer batch.
pub const BATCH_RECORDS: usize = 100;

/// The body of a record that fails.
pub const FAIL_BODY: &[u8] = b"fail";

/// The body of a record that succeeds.
pub const OK_BODY: &[u8] = br#"{"order":1}"#;

/// The error message of a failed record.
pub const FAILURE_MESSAGE: &str = "bench failure";

/// The text of every WebSocket message sent.
pub const WS_MESSAGE: &str = r#"{"event":"bench"}"#;

/// Every tag both handlers serve, and the blueprint declares.
pub fn all_tags() -> Vec<&'static str> {
    let mut tags = vec![HTTP_TAG, CONSUMER_TAG, WS_TAG, CACHE_TAG, QUEUE_TAG, SQL_TAG, BUCKET_TAG, DATASTORE_TAG];
    tags.extend(CAPPED_TAGS);
    tags
}

/// Whether record `k` of a batch fails: one in ten.
pub fn record_fails(k: usize) -> bool {
    k % 10 == 3
}

/// The message id of record `k` of a batch.
pub fn record_id(k: usize) -> String {
    format!("m{k}")
}

/// The ids of the records that fail in every batch, sorted.
pub fn expected_failures() -> Vec<String> {
    let mut ids: Vec<String> = (0..BATCH_RECORDS).filter(|&k| record_fails(k)).map(record_id).collect();
    ids.sort();
    ids
}

/// The connection the `i`-th message of a WebSocket send is for.
pub fn ws_connection_id(i: usize) -> String {
    format!("conn-{i}")
}

/// The per-tag cap of [`CAPPED_TAGS`] from the environment (default 32).
pub fn tag_cap_from_env() -> u32 {
    std::env::var(TAG_CAP_ENV).ok().and_then(|v| v.parse().ok()).unwrap_or(32).max(1)
}

/// The number of messages a [`WS_TAG`] request body asks for (0 when it does
/// not parse).
pub fn ws_batch_size(body: &[u8]) -> usize {
    std::str::from_utf8(body).ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0)
}
