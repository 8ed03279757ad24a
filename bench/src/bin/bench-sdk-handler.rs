//! (A): the benchmark's handler executable built with the SDK, with the
//! explicit API. Every handler does as little as its shape allows:
//!
//! - `POST::/echo` and the eight `POST::/capped/{n}` tags (each capped at
//!   `BENCH_TAG_CAP`): answer with the request body;
//! - `source::bench-queue::consume`: a per-record consumer that fails the
//!   records whose body is `fail`;
//! - `POST::/ws-send`: sends as many WebSocket messages as the body says in
//!   one `WsSend`, waits for the acknowledgement, and answers;
//! - `POST::/cache-get`: reads the key the body names from the application's
//!   cache and answers with the value;
//! - `POST::/queue-send`: sends the body as one message to the
//!   application's queue and answers `sent`;
//! - `POST::/sql-select`: runs `SELECT 1` on the writer pool of the
//!   application's SQL database and answers the value, `1`.
//! - `POST::/bucket-put`: puts the body (64 KiB) as one object into the
//!   application's bucket and answers `stored`;
//! - `POST::/datastore-get`: reads the item whose id is the body from the
//!   application's datastore into a serde type and answers its `name`.
//!
//! The cache and the queue are on the Redis at 127.0.0.1:`BENCH_REDIS_PORT`
//! (a local session's, `CELERITY_PLATFORM=local`; the cache recorded by host
//! and port as a deployment records it), connected on first use. The SQL
//! database is the Postgres at 127.0.0.1:`BENCH_POSTGRES_PORT`, recorded as
//! a deployment records it (`benchDb_engine`, `_host`, `_port`, `_user`,
//! `_password`, `_database`, `_ssl=false`, `_poolMax=16`), its pool made on
//! first use. The bucket and the datastore are on the AWS API emulator at
//! `BENCH_MOTO_ENDPOINT`, a local session's S3 and DynamoDB endpoints. `BENCH_RESOURCE_CLIENT=direct` serves the three resource tags
//! with the client crate called directly instead: the `redis` crate on a
//! `ConnectionManager` made at start-up with the SDK's settings, writing
//! the same commands, sqlx (the SDK's, re-exported) on a `PgPool` made
//! at start-up with the options the SDK's pool is made with, running the
//! same query, and the AWS SDK's S3 and DynamoDB clients, made at start-up
//! as the SDK makes its own (path-style addressing for S3), making the same
//! `PutObject` and `GetItem`, the item read into the same type. Each connects only to the server the harness names. Everything
//! else, the protocol path included, is the same binary doing the same
//! work, so the difference in cost per event is the SDK's handles.
//!
//! `BENCH_SDK_LAYER=1` puts one layer that only hands the event on around
//! every handler: what a layer costs. `BENCH_SDK_IO_THREAD`,
//! `BENCH_SDK_RUNTIME` and `BENCH_SDK_WORKERS` choose where the stream and
//! the handlers run (see `main`); by default, as `run_main` chooses.

use std::process::ExitCode;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use celerity::config::{Configuration, Values};
use celerity::consumer::RawRecord;
use celerity::http::HttpError;
use celerity::layer::{self, Event, Next};
use celerity::resources::Links;
use celerity::resources::bucket::Bucket;
use celerity::resources::cache::Cache;
use celerity::resources::cache::redis::{self, AsyncCommands, aio::ConnectionManager};
use celerity::resources::datastore::{Datastore, Key};
use celerity::resources::queue::{Message, Queue};
use celerity::resources::sql::sqlx::postgres::{PgConnectOptions, PgPoolOptions, PgSslMode};
use celerity::resources::sql::{PoolSettings, SqlDatabase, sqlx};
use celerity::websocket::{Outbound, WsSender};
use celerity::{App, Bytes, HandlerKey, Registration};
use celerity_bench::{
    BUCKET_ANSWER, BUCKET_NAME, BUCKET_TAG, CACHE_TAG, CAPPED_TAGS, CONSUMER_TAG, DATASTORE_TAG, FAIL_BODY,
    FAILURE_MESSAGE, HTTP_TAG, MOTO_ENDPOINT_ENV, POSTGRES_PORT_ENV, QUEUE_ANSWER, QUEUE_NAME, QUEUE_STREAM, QUEUE_TAG,
    REDIS_PORT_ENV, RESOURCE_CLIENT_ENV, RESOURCE_LINKS, SQL_ANSWER, SQL_DATABASE, SQL_PASSWORD, SQL_POOL_MAX,
    SQL_QUERY, SQL_TAG, SQL_USER, TABLE_NAME, WS_MESSAGE, WS_TAG, object_key, tag_cap_from_env, ws_batch_size,
    ws_connection_id,
};

/// Counts heap allocations for the harness (`celerity_bench::alloc`), as
/// (B) does.
#[global_allocator]
static ALLOCATOR: celerity_bench::alloc::Counting = celerity_bench::alloc::Counting;

async fn echo(body: Bytes) -> Bytes {
    body
}

async fn consume(record: RawRecord) -> Result<(), celerity::Error> {
    if record.body().as_ref() == FAIL_BODY { Err(celerity::Error::msg(FAILURE_MESSAGE)) } else { Ok(()) }
}

/// The connection ids, made once: what (B) sends is precomputed too, so
/// that formatting ids is not what the WebSocket cases measure.
fn connections() -> &'static [String] {
    static CONNECTIONS: OnceLock<Vec<String>> = OnceLock::new();
    CONNECTIONS.get_or_init(|| (0..100).map(ws_connection_id).collect())
}

async fn ws_send(ws: WsSender, body: Bytes) -> Result<&'static str, HttpError> {
    let connections = connections();
    let n = ws_batch_size(&body).min(connections.len());
    let messages = connections[..n].iter().map(|connection| Outbound::text(connection.clone(), WS_MESSAGE));
    ws.send_all(messages).await.map_err(|error| HttpError::internal(error.to_string()))?;
    Ok("sent")
}

fn key_of(body: &[u8]) -> Result<&str, HttpError> {
    std::str::from_utf8(body).map_err(|_| HttpError::bad_request("the key is not UTF-8"))
}

/// (A) of the resource cases: one `Cache::get` on the application's cache.
async fn cache_get(cache: Cache, body: Bytes) -> Result<String, HttpError> {
    let value = cache.get(key_of(&body)?).await.map_err(|error| HttpError::internal(error.to_string()))?;
    value.ok_or_else(|| HttpError::not_found("no value"))
}

/// (A) of the resource cases: one `Queue::send` of the body.
async fn queue_send(queue: Queue, body: Bytes) -> Result<&'static str, HttpError> {
    queue.send(Message::from(body)).await.map_err(|error| HttpError::internal(error.to_string()))?;
    Ok(QUEUE_ANSWER)
}

/// What `SELECT 1` answered: [`SQL_ANSWER`] when it was 1.
fn selected(one: i32) -> Result<&'static str, HttpError> {
    if one == 1 { Ok(SQL_ANSWER) } else { Err(HttpError::internal(format!("SELECT 1 answered {one}"))) }
}

/// (A) of the resource cases: one `SELECT 1` on the writer pool of the
/// application's SQL database.
async fn sql_select(db: SqlDatabase) -> Result<&'static str, HttpError> {
    let pool: sqlx::PgPool = db.writer().await.map_err(|error| HttpError::internal(error.to_string()))?;
    let one = sqlx::query_scalar::<_, i32>(SQL_QUERY)
        .fetch_one(&pool)
        .await
        .map_err(|error| HttpError::internal(error.to_string()))?;
    selected(one)
}

/// The key of this process's next bucket put.
fn next_object_key() -> String {
    static PUTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    object_key(PUTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

/// (A) of the resource cases: one `Bucket::put` of the body.
async fn bucket_put(bucket: Bucket, body: Bytes) -> Result<&'static str, HttpError> {
    bucket.put(&next_object_key(), body).await.map_err(|error| HttpError::internal(error.to_string()))?;
    Ok(BUCKET_ANSWER)
}

/// The item every datastore-get event reads, as a handler declares it.
#[derive(serde::Deserialize)]
struct BenchItem {
    #[allow(dead_code)]
    id: String,
    name: String,
    #[allow(dead_code)]
    quantity: u32,
    #[allow(dead_code)]
    price: u64,
}

/// (A) of the resource cases: one `Datastore::get` of the item the body
/// names.
async fn datastore_get(store: Datastore, body: Bytes) -> Result<String, HttpError> {
    let key = Key::new(key_of(&body)?);
    let item: Option<BenchItem> = store.get(&key).await.map_err(|error| HttpError::internal(error.to_string()))?;
    item.map(|item| item.name).ok_or_else(|| HttpError::not_found("no item"))
}

/// The direct clients of the bucket and datastore cases, made at start-up.
static DIRECT_S3: OnceLock<aws_sdk_s3::Client> = OnceLock::new();
static DIRECT_DYNAMODB: OnceLock<aws_sdk_dynamodb::Client> = OnceLock::new();

/// (B) of the resource cases: the same `PutObject` through the AWS SDK's
/// S3 client.
async fn bucket_put_direct(body: Bytes) -> Result<&'static str, HttpError> {
    let client = DIRECT_S3.get().ok_or_else(|| HttpError::internal("the direct S3 client is not made"))?;
    client
        .put_object()
        .bucket(BUCKET_NAME)
        .key(next_object_key())
        .body(aws_sdk_s3::primitives::ByteStream::from(body))
        .send()
        .await
        .map_err(|error| HttpError::internal(format!("{error:?}")))?;
    Ok(BUCKET_ANSWER)
}

/// (B) of the resource cases: the same `GetItem` through the AWS SDK's
/// DynamoDB client, the attributes read into the same type.
async fn datastore_get_direct(body: Bytes) -> Result<String, HttpError> {
    use aws_sdk_dynamodb::types::AttributeValue;

    let client = DIRECT_DYNAMODB.get().ok_or_else(|| HttpError::internal("the direct DynamoDB client is not made"))?;
    let output = client
        .get_item()
        .table_name(TABLE_NAME)
        .key("id", AttributeValue::S(key_of(&body)?.to_string()))
        .send()
        .await
        .map_err(|error| HttpError::internal(format!("{error:?}")))?;
    let item = output.item.ok_or_else(|| HttpError::not_found("no item"))?;
    let text = |name: &str| item.get(name).and_then(|value| value.as_s().ok()).cloned();
    let number = |name: &str| item.get(name).and_then(|value| value.as_n().ok()).and_then(|n| n.parse::<u64>().ok());
    let read = BenchItem {
        id: text("id").ok_or_else(|| HttpError::internal("the item has no id"))?,
        name: text("name").ok_or_else(|| HttpError::internal("the item has no name"))?,
        quantity: number("quantity")
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| HttpError::internal("no quantity"))?,
        price: number("price").ok_or_else(|| HttpError::internal("the item has no price"))?,
    };
    Ok(read.name)
}

/// Makes the direct S3 and DynamoDB clients as the SDK makes its own: the
/// process's AWS configuration over rustls, at the emulator's endpoint,
/// S3 with path-style addressing and checksums only where required.
async fn connect_direct_aws(endpoint: &str) {
    let http = aws_smithy_http_client::Builder::new()
        .tls_provider(aws_smithy_http_client::tls::Provider::Rustls(
            aws_smithy_http_client::tls::rustls_provider::CryptoMode::Ring,
        ))
        .build_https();
    let config = aws_config::defaults(aws_config::BehaviorVersion::latest()).http_client(http).load().await;
    // As the handle configures S3 behind an endpoint of its own: path-style,
    // and checksums only where S3 requires them.
    let s3 = aws_sdk_s3::config::Builder::from(&config)
        .endpoint_url(endpoint)
        .force_path_style(true)
        .request_checksum_calculation(aws_sdk_s3::config::RequestChecksumCalculation::WhenRequired)
        .response_checksum_validation(aws_sdk_s3::config::ResponseChecksumValidation::WhenRequired)
        .build();
    let _ = DIRECT_S3.set(aws_sdk_s3::Client::from_conf(s3));
    let dynamodb = aws_sdk_dynamodb::config::Builder::from(&config).endpoint_url(endpoint).build();
    let _ = DIRECT_DYNAMODB.set(aws_sdk_dynamodb::Client::from_conf(dynamodb));
}

/// The direct client's connection, made at start-up.
static DIRECT: OnceLock<ConnectionManager> = OnceLock::new();

/// The direct client's pool, made at start-up.
static DIRECT_SQL: OnceLock<sqlx::PgPool> = OnceLock::new();

/// (B) of the resource cases: the same query on a pool of the handler's
/// own, through sqlx directly.
async fn sql_select_direct() -> Result<&'static str, HttpError> {
    let pool = DIRECT_SQL.get().cloned().ok_or_else(|| HttpError::internal("the direct pool is not connected"))?;
    let one = sqlx::query_scalar::<_, i32>(SQL_QUERY)
        .fetch_one(&pool)
        .await
        .map_err(|error| HttpError::internal(error.to_string()))?;
    selected(one)
}

fn direct() -> Result<ConnectionManager, HttpError> {
    DIRECT.get().cloned().ok_or_else(|| HttpError::internal("the direct client is not connected"))
}

/// (B) of the resource cases: the same `GET` through the `redis` crate.
async fn cache_get_direct(body: Bytes) -> Result<String, HttpError> {
    let mut connection = direct()?;
    let value: Option<String> =
        connection.get(key_of(&body)?).await.map_err(|error| HttpError::internal(error.to_string()))?;
    value.ok_or_else(|| HttpError::not_found("no value"))
}

/// (B) of the resource cases: the entry `Queue::send` writes for a text
/// message in a local session (`body`, `timestamp` in Unix seconds,
/// `message_type` 0 for text), through the `redis` crate.
async fn queue_send_direct(body: Bytes) -> Result<&'static str, HttpError> {
    let mut connection = direct()?;
    // The SDK writes text as it is and other bytes as base64: the same check.
    let text = std::str::from_utf8(&body).map_err(|_| HttpError::bad_request("the bench sends text"))?;
    let seconds = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs());
    let _id: String = redis::cmd("XADD")
        .arg(QUEUE_STREAM)
        .arg("*")
        .arg("body")
        .arg(text)
        .arg("timestamp")
        .arg(seconds)
        .arg("message_type")
        .arg("0")
        .query_async(&mut connection)
        .await
        .map_err(|error| HttpError::internal(error.to_string()))?;
    Ok(QUEUE_ANSWER)
}

/// The Redis of the resource cases (the default port when the harness
/// gives none: nothing connects unless a resource tag is dispatched).
fn redis_port() -> String {
    std::env::var(REDIS_PORT_ENV).unwrap_or_else(|_| "6379".to_string())
}

/// The Postgres of the sql-select case (the default port when the harness
/// gives none, as for Redis).
fn postgres_port() -> u16 {
    std::env::var(POSTGRES_PORT_ENV).ok().and_then(|port| port.parse().ok()).unwrap_or(5432)
}

/// The application's configuration: its cache and queue on the bench's
/// Redis, as a local session records them, its SQL database on the
/// bench's Postgres, as a deployment records one, and its bucket and
/// datastore on the emulator, as a local session's S3 and DynamoDB. Built in, so that the
/// harness passes no `CELERITY_*` variable and every case's (A) reads the
/// same. `CELERITY_RUNTIME`: the deployment is long-running, as it is
/// under the runtime (the process's own `CELERITY_RUNTIME_SOCKET` is not
/// this configuration's environment), which sizes the SQL pools.
fn configuration() -> Configuration {
    let links = Links::from_json(RESOURCE_LINKS.as_bytes(), "the bench's links").expect("the bench's links parse");
    let port = redis_port();
    let postgres_port = postgres_port().to_string();
    let pool_max = SQL_POOL_MAX.to_string();
    let moto = std::env::var(MOTO_ENDPOINT_ENV).unwrap_or_else(|_| "http://127.0.0.1:5000".to_string());
    let values = Values::from_pairs([
        ("benchBucket", BUCKET_NAME),
        ("benchStore", TABLE_NAME),
        ("benchCache_host", "127.0.0.1"),
        ("benchCache_port", port.as_str()),
        ("benchCache_tls", "false"),
        ("benchQueue", QUEUE_NAME),
        ("benchDb_engine", "postgres"),
        ("benchDb_host", "127.0.0.1"),
        ("benchDb_port", postgres_port.as_str()),
        ("benchDb_user", SQL_USER),
        ("benchDb_password", SQL_PASSWORD),
        ("benchDb_database", SQL_DATABASE),
        ("benchDb_ssl", "false"),
        ("benchDb_poolMax", pool_max.as_str()),
    ]);
    Configuration::builder()
        .links(links)
        .values("resources", values)
        .env("CELERITY_PLATFORM", "local")
        .env("CELERITY_RUNTIME", "1")
        .env("CELERITY_REDIS_ENDPOINT", &format!("redis://127.0.0.1:{port}/"))
        .env("CELERITY_AWS_S3_ENDPOINT", &moto)
        .env("CELERITY_AWS_DYNAMODB_ENDPOINT", &moto)
        .build()
}

/// Connects the direct client as the SDK's handles connect: the same
/// timeouts and retries.
async fn connect_direct() -> Result<(), redis::RedisError> {
    let client = redis::Client::open(format!("redis://127.0.0.1:{}/", redis_port()))?;
    let config = redis::aio::ConnectionManagerConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(5)))
        .set_response_timeout(Some(Duration::from_secs(5)))
        .set_number_of_retries(1);
    let _ = DIRECT.set(ConnectionManager::new_with_config(client, config).await?);
    Ok(())
}

/// Makes the direct client's pool as the SDK's handle makes its writer
/// pool: the same connection options (`new_without_pgpass`, TLS off), the
/// same sizes and lifetimes (a long-running deployment's, at most
/// [`SQL_POOL_MAX`] connections), made lazily and then its first
/// connection opened.
async fn connect_direct_sql() -> Result<(), sqlx::Error> {
    let options = PgConnectOptions::new_without_pgpass()
        .host("127.0.0.1")
        .port(postgres_port())
        .username(SQL_USER)
        .password(SQL_PASSWORD)
        .database(SQL_DATABASE)
        .ssl_mode(PgSslMode::Disable);
    let settings = PoolSettings::RUNTIME;
    let pool = PgPoolOptions::new()
        .max_connections(SQL_POOL_MAX)
        .min_connections(settings.min_connections)
        .idle_timeout(settings.idle_timeout)
        .max_lifetime(settings.max_lifetime)
        .acquire_timeout(settings.acquire_timeout)
        .connect_lazy_with(options);
    drop(pool.acquire().await?);
    let _ = DIRECT_SQL.set(pool);
    Ok(())
}

fn main() -> ExitCode {
    celerity_bench::alloc::attach_from_env();
    let cap = tag_cap_from_env();
    let direct = std::env::var(RESOURCE_CLIENT_ENV).is_ok_and(|client| client == "direct");
    let serve = move || async move {
        let mut app = App::new()
            .without_compiled_handlers()
            .with_configuration(configuration())
            .http(HTTP_TAG, echo)
            .consumer(CONSUMER_TAG, consume)
            .http(WS_TAG, ws_send);
        if direct {
            // On the application's runtime, as a handle's first use
            // connects: the connection's driver and the pool's tasks run
            // there. Only to the server the harness names.
            if std::env::var_os(REDIS_PORT_ENV).is_some()
                && let Err(error) = connect_direct().await
            {
                return Err(celerity::Error::msg(format!("the direct client cannot connect: {error}")));
            }
            if std::env::var_os(POSTGRES_PORT_ENV).is_some()
                && let Err(error) = connect_direct_sql().await
            {
                return Err(celerity::Error::msg(format!("the direct pool cannot connect: {error}")));
            }
            if let Ok(endpoint) = std::env::var(MOTO_ENDPOINT_ENV) {
                connect_direct_aws(&endpoint).await;
            }
            app = app
                .http(CACHE_TAG, cache_get_direct)
                .http(QUEUE_TAG, queue_send_direct)
                .http(SQL_TAG, sql_select_direct);
            app = app.http(BUCKET_TAG, bucket_put_direct).http(DATASTORE_TAG, datastore_get_direct);
        } else {
            app = app.http(CACHE_TAG, cache_get).http(QUEUE_TAG, queue_send).http(SQL_TAG, sql_select);
            app = app.http(BUCKET_TAG, bucket_put).http(DATASTORE_TAG, datastore_get);
        }
        for tag in CAPPED_TAGS {
            app = app.register(Registration::http(HandlerKey::Tag(tag.to_string()), echo).max_concurrent(cap));
        }
        if std::env::var_os("BENCH_SDK_LAYER").is_some_and(|on| on == "1") {
            app = app.layer(layer::from_fn(|event: Event, next: Next| next.run(event)));
        }
        // `BENCH_SDK_IO_THREAD=false`: the stream as a task on the
        // application's runtime (`App::io_thread(false)`), to measure what
        // the thread of its own costs.
        app.io_thread(std::env::var("BENCH_SDK_IO_THREAD").map_or(true, |on| on != "false")).run().await
    };
    // `BENCH_SDK_RUNTIME=current_thread`: the same application on a
    // single-threaded runtime, as (B) runs, to tell the SDK's own cost per
    // event from that of the multi-threaded scheduler (`run_main`'s
    // default) waking its other workers.
    if std::env::var("BENCH_SDK_RUNTIME").is_ok_and(|flavor| flavor == "current_thread") {
        return celerity::run_main_on(tokio::runtime::Builder::new_current_thread(), serve);
    }
    // The stream as a task: on tokio's own runtime size, as
    // `CELERITY_IO_THREAD=false` gets from `run_main` (the harness passes no
    // `CELERITY_*` variable through).
    if std::env::var("BENCH_SDK_IO_THREAD").is_ok_and(|on| on == "false") {
        return celerity::run_main_on(tokio::runtime::Builder::new_multi_thread(), serve);
    }
    // `BENCH_SDK_WORKERS=N`: the multi-threaded runtime with N workers.
    if let Some(workers) = std::env::var("BENCH_SDK_WORKERS").ok().and_then(|n| n.parse::<usize>().ok()) {
        let mut runtime = tokio::runtime::Builder::new_multi_thread();
        runtime.worker_threads(workers.max(1));
        return celerity::run_main_on(runtime, serve);
    }
    celerity::run_main(serve)
}
