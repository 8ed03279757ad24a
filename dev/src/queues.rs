//! The blueprint's queues, read into the consumers they feed, as the
//! runtime's local consumer reads them: each queue is the Redis stream
//! `celerity:queue:{source}` of the session's Redis, and its entries (the
//! fields the SDK's `Queue::send` writes) arrive at the consumer's handler
//! as the records of a consumer batch, the same dispatch a batch pushed to
//! `/dev/consumers` is.
//!
//! Where the runtime acknowledges a message whatever its handler answered
//! (`shared/contract/README.md`), this follows the specification: the
//! stream is read by a consumer group (`consumer-{source}`, the runtime's
//! name for a source's consumer), and only the records the handler did not
//! report as failed are acknowledged (`XACK`) and removed (`XDEL`, as SQS
//! deletes a message once it is handled). A failed record stays pending in
//! the group and is delivered again once it has been pending for the
//! consumer's visibility timeout (`XAUTOCLAIM`), as an SQS message becomes
//! visible again; so does whatever a previous session left pending.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use bytes::Bytes;
use celerity_testkit::dispatcher::Dispatcher;
use celerity_testkit::proto::v1::ConsumerRecord;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::streams::{StreamAutoClaimReply, StreamId, StreamReadReply};
use redis::{FromRedisValue, RedisError};
use serde_json::{Map, json};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::blueprint::QueueFeed;
use crate::config::App;
use crate::{log, sources};

/// Where `celerity-dev` finds the session's Redis, first to last.
pub const ENV_REDIS_ENDPOINT: &str = "CELERITY_REDIS_ENDPOINT";
const ENV_VALKEY_HOST: &str = "CELERITY_CONFIG_VALKEY_HOST";
const ENV_VALKEY_PORT: &str = "CELERITY_CONFIG_VALKEY_PORT";

/// How long connecting, and an answer other than a blocking read, may take.
const TIMEOUT: Duration = Duration::from_secs(5);
/// How long a failing Redis is left before it is tried again.
const RETRY: Duration = Duration::from_secs(1);

/// The session's Redis: where the handler sends to queues, and where the
/// dev runtime reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redis {
    url: String,
}

impl Redis {
    /// The Redis the dev runtime's environment names: `CELERITY_REDIS_ENDPOINT`
    /// (a `redis://` URL), else the Valkey of the configuration stores
    /// (`CELERITY_CONFIG_VALKEY_HOST`, `CELERITY_CONFIG_VALKEY_PORT`), else
    /// none; with the variable that named it, for the log and for errors.
    pub fn named() -> Option<(Redis, &'static str)> {
        let var = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        if let Some(url) = var(ENV_REDIS_ENDPOINT) {
            return Some((Redis { url }, ENV_REDIS_ENDPOINT));
        }
        let host = var(ENV_VALKEY_HOST)?;
        let port = var(ENV_VALKEY_PORT).unwrap_or_else(|| "6379".to_owned());
        Some((Redis { url: format!("redis://{host}:{port}") }, ENV_VALKEY_HOST))
    }

    /// The Redis at `url`.
    pub fn at(url: &str) -> Redis {
        Redis { url: url.to_owned() }
    }

    /// Whether it answers `PING` within `within`: `Err` says why not.
    pub async fn ping(&self, within: Duration) -> Result<(), String> {
        let client = redis::Client::open(self.url.as_str()).map_err(|e| format!("not a Redis URL: {e}"))?;
        let answer = tokio::time::timeout(within, async {
            let mut connection = client.get_multiplexed_async_connection().await?;
            redis::cmd("PING").query_async::<String>(&mut connection).await
        })
        .await;
        match answer {
            Ok(Ok(pong)) if pong == "PONG" => Ok(()),
            Ok(Ok(other)) => Err(format!("it answered PING with {other:?}")),
            Ok(Err(error)) => Err(error.to_string()),
            Err(_) => Err(format!("no answer to PING within {} ms", within.as_millis())),
        }
    }

    /// The URL, as the handler is given it.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The URL without its credentials, for the log.
    pub fn shown(&self) -> String {
        match (self.url.split_once("://"), self.url.rfind('@')) {
            (Some((scheme, _)), Some(at)) => format!("{scheme}://{}", &self.url[at + 1..]),
            _ => self.url.clone(),
        }
    }

    async fn connect(&self) -> Result<ConnectionManager, String> {
        let client = redis::Client::open(self.url.as_str())
            .map_err(|e| format!("{ENV_REDIS_ENDPOINT} {} is not a Redis URL: {e}", self.shown()))?;
        // A blocking read waits longer than any answer may take otherwise,
        // so answers are given no deadline of their own; each read is
        // bounded by its BLOCK.
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(TIMEOUT))
            .set_response_timeout(None)
            .set_number_of_retries(1);
        ConnectionManager::new_with_config(client, config)
            .await
            .map_err(|e| format!("could not reach the Redis at {}: {e}", self.shown()))
    }
}

/// The consumer group that reads a source's stream.
pub fn group(feed: &QueueFeed) -> String {
    format!("consumer-{}", feed.source_id)
}

/// A feed with its connection, its group made.
pub struct Prepared {
    feed: QueueFeed,
    connection: ConnectionManager,
}

/// Connects to `redis` for each feed and makes its consumer group (from the
/// start of the stream, so that what was sent before the session started is
/// delivered too). A Redis that cannot be reached stops the start.
pub async fn prepare(redis: &Redis, feeds: &[QueueFeed]) -> Result<Vec<Prepared>, String> {
    let mut prepared = Vec::with_capacity(feeds.len());
    for feed in feeds {
        // One connection per feed: a blocking read holds its connection.
        let mut connection = redis.connect().await?;
        make_group(&mut connection, feed).await.map_err(|e| {
            format!(
                "could not make the consumer group {} of {} in the Redis at {}: {e}",
                group(feed),
                feed.stream(),
                redis.shown()
            )
        })?;
        prepared.push(Prepared { feed: feed.clone(), connection });
    }
    Ok(prepared)
}

/// Makes the feed's consumer group, reading from the start of the stream
/// (which it makes when there is none yet), unless it is there already.
async fn make_group(connection: &mut ConnectionManager, feed: &QueueFeed) -> Result<(), RedisError> {
    let made: Result<(), RedisError> = redis::cmd("XGROUP")
        .arg("CREATE")
        .arg(feed.stream())
        .arg(group(feed))
        .arg("0")
        .arg("MKSTREAM")
        .query_async(connection)
        .await;
    match made {
        Err(e) if e.code() == Some("BUSYGROUP") => Ok(()),
        other => other,
    }
}

/// Whether `error` says the stream or its group went away (a `FLUSHALL`,
/// a `DEL` of the stream) while the session ran.
fn group_gone(error: &RedisError) -> bool {
    matches!(error.code(), Some("NOGROUP" | "UNBLOCKED"))
}

/// The running readers.
pub struct Readers {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

/// Starts reading every prepared feed into the dispatcher.
pub fn start(prepared: Vec<Prepared>, dispatcher: &Dispatcher, app: &Arc<App>) -> Readers {
    let (stop, stopped) = watch::channel(false);
    let tasks = prepared
        .into_iter()
        .map(|Prepared { feed, connection }| {
            let timeout = app.timeout(&feed.tag);
            let reader = Reader { feed, connection, dispatcher: dispatcher.clone(), timeout };
            tokio::spawn(reader.run(stopped.clone()))
        })
        .collect();
    Readers { stop, tasks }
}

impl Readers {
    /// Stops reading: a batch in flight is still answered and acknowledged,
    /// nothing more is read.
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }

    /// Waits, at most `within`, for the readers to finish their batches.
    pub async fn finish(self, within: Duration) {
        self.stop();
        let all = futures_util::future::join_all(self.tasks);
        if tokio::time::timeout(within, all).await.is_err() {
            log::line("a queue reader did not finish its batch; its messages stay pending for the next session");
        }
    }
}

/// One feed's reading loop.
struct Reader {
    feed: QueueFeed,
    connection: ConnectionManager,
    dispatcher: Dispatcher,
    timeout: Duration,
}

impl Reader {
    async fn run(mut self, mut stop: watch::Receiver<bool>) {
        let stream = self.feed.stream();
        let mut failing = false;
        loop {
            if *stop.borrow() {
                return;
            }
            let read = tokio::select! {
                biased;
                _ = stop.changed() => return,
                read = self.next_batch() => read,
            };
            match read {
                Ok(entries) => {
                    if failing {
                        log::line(&format!("{stream}: reading again"));
                        failing = false;
                    }
                    if !entries.is_empty()
                        && let Err(e) = self.deliver(entries).await
                    {
                        log::line(&format!(
                            "{stream}: could not acknowledge the handled messages ({e}); they stay pending and are \
                             delivered again"
                        ));
                    }
                }
                Err(e) if group_gone(&e) => {
                    // Made again, from the start of whatever the stream now holds.
                    match make_group(&mut self.connection, &self.feed).await {
                        Ok(()) => log::line(&format!(
                            "{stream}: the stream or its consumer group was removed ({e}); made the group again"
                        )),
                        Err(again) => {
                            log::line(&format!("{stream}: could not make the consumer group again ({again})"));
                            tokio::select! {
                                _ = stop.changed() => return,
                                _ = tokio::time::sleep(RETRY) => {}
                            }
                        }
                    }
                }
                Err(e) => {
                    if !failing {
                        log::line(&format!("{stream}: could not read ({e}); trying again every {}s", RETRY.as_secs()));
                        failing = true;
                    }
                    tokio::select! {
                        _ = stop.changed() => return,
                        _ = tokio::time::sleep(RETRY) => {}
                    }
                }
            }
        }
    }

    /// The messages pending longer than the visibility timeout (failed,
    /// or left by a session that ended), else new ones, waiting for them at
    /// most the consumer's wait time.
    async fn next_batch(&mut self) -> Result<Vec<StreamId>, RedisError> {
        let feed = &self.feed;
        let idle = u64::try_from(feed.visibility_timeout.as_millis()).unwrap_or(u64::MAX);
        let claimed: StreamAutoClaimReply = redis::cmd("XAUTOCLAIM")
            .arg(feed.stream())
            .arg(group(feed))
            .arg(&feed.consumer)
            .arg(idle)
            .arg("0-0")
            .arg("COUNT")
            .arg(feed.batch_size)
            .query_async(&mut self.connection)
            .await?;
        if !claimed.claimed.is_empty() {
            return Ok(claimed.claimed);
        }
        let block = u64::try_from(feed.wait.as_millis()).unwrap_or(u64::MAX).max(1);
        let read: Option<StreamReadReply> = redis::cmd("XREADGROUP")
            .arg("GROUP")
            .arg(group(feed))
            .arg(&feed.consumer)
            .arg("COUNT")
            .arg(feed.batch_size)
            .arg("BLOCK")
            .arg(block)
            .arg("STREAMS")
            .arg(feed.stream())
            .arg(">")
            .query_async(&mut self.connection)
            .await?;
        Ok(read.map(|reply| reply.keys.into_iter().flat_map(|key| key.ids).collect()).unwrap_or_default())
    }

    /// Dispatches the entries as one batch and acknowledges what the
    /// handler did not fail. An entry that is not a message the runtime
    /// reads is said so and removed, undelivered.
    async fn deliver(&mut self, entries: Vec<StreamId>) -> Result<(), RedisError> {
        let feed = &self.feed;
        let stream = feed.stream();
        let mut records = Vec::with_capacity(entries.len());
        let mut done = Vec::new();
        for entry in &entries {
            match record(entry, &feed.source_id) {
                Ok(record) => records.push(record),
                Err(why) => {
                    log::line(&format!(
                        "{stream}: entry {} is not a message the runtime's consumer reads ({why}); removed without \
                         delivering it",
                        entry.id
                    ));
                    done.push(entry.id.clone());
                }
            }
        }
        if !records.is_empty() {
            let started = Instant::now();
            let dispatch =
                sources::consumer_dispatch(&feed.tag, feed.source_id.clone(), "queue", records.clone(), self.timeout);
            let id = dispatch.id.clone();
            let outcome = self.dispatcher.submit(dispatch).await;
            let summary = sources::summarize_batch(&records, &outcome);
            log::event(&id, &feed.tag, &format!("{stream}: {}", summary.describe()), started.elapsed());
            done.extend(summary.acknowledged);
        }
        if done.is_empty() {
            return Ok(());
        }
        redis::pipe()
            .cmd("XACK")
            .arg(&stream)
            .arg(group(feed))
            .arg(&done)
            .ignore()
            .cmd("XDEL")
            .arg(&stream)
            .arg(&done)
            .ignore()
            .query_async(&mut self.connection)
            .await
    }
}

/// How the SDK marks a body: `0` text, `1` base64 of bytes.
const TEXT: &str = "0";
const BINARY: &str = "1";

/// A stream entry as the record the runtime's local consumer makes of it:
/// the entry id as its message id, the body (base64 decoded when its
/// `message_type` is `1`), the source id as its source, its `attributes`
/// as the runtime gives message attributes (`{"name": {"dataType":
/// "String", "stringValue": ...}}`, as SQS does), and its `timestamp` and
/// `message_type` as vendor data. An entry without a body or a timestamp
/// (which the runtime's consumer cannot read) is refused, saying why.
pub fn record(entry: &StreamId, source_id: &str) -> Result<ConsumerRecord, String> {
    let map = &entry.map;
    let text = |name: &str| -> Result<Option<String>, String> {
        map.get(name)
            .map(|value| String::from_redis_value_ref(value).map_err(|_| format!("its `{name}` field is not text")))
            .transpose()
    };
    let body = map.get("body").ok_or("it has no `body` field")?;
    let body = Vec::<u8>::from_redis_value_ref(body).map_err(|_| "its `body` field is not a string".to_owned())?;
    let timestamp = text("timestamp")?.ok_or("it has no `timestamp` field")?;
    let timestamp: u64 = timestamp
        .trim()
        .parse()
        .map_err(|_| format!("its `timestamp` {timestamp:?} is not a whole number of seconds"))?;
    let (body, message_type) = match text("message_type")?.as_deref() {
        None | Some(TEXT) => (body, "Text"),
        Some(BINARY) => {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(&body)
                .map_err(|e| format!("its `message_type` is 1 (base64), and its body is not base64: {e}"))?;
            (decoded, "Binary")
        }
        Some(other) => return Err(format!("its `message_type` {other:?} is neither 0 (text) nor 1 (base64)")),
    };
    let attributes = match text("attributes")? {
        None => Bytes::new(),
        Some(raw) => {
            let given: HashMap<String, String> = serde_json::from_str(&raw)
                .map_err(|e| format!("its `attributes` are not a JSON object of strings: {e}"))?;
            let typed: Map<String, serde_json::Value> = given
                .into_iter()
                .map(|(name, value)| (name, json!({"dataType": "String", "stringValue": value})))
                .collect();
            Bytes::from(serde_json::Value::Object(typed).to_string())
        }
    };
    let vendor = json!({"timestamp": timestamp, "messageType": message_type});
    Ok(ConsumerRecord {
        message_id: entry.id.clone(),
        body: Bytes::from(body),
        source: source_id.to_owned(),
        event_type: String::new(),
        attributes,
        vendor: Bytes::from(vendor.to_string()),
    })
}

/// An entry's fields as a reply carries them.
#[cfg(test)]
fn entry(id: &str, fields: &[(&str, &[u8])]) -> StreamId {
    StreamId {
        id: id.to_owned(),
        map: fields
            .iter()
            .map(|(name, value)| ((*name).to_owned(), redis::Value::BulkString(value.to_vec())))
            .collect(),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value as Json;

    fn json(bytes: &Bytes) -> Json {
        serde_json::from_slice(bytes).unwrap()
    }

    #[test]
    fn an_entry_the_sdk_writes_is_the_record_the_runtime_makes() {
        let sent = entry(
            "1767225600000-0",
            &[
                ("body", br#"{"orderId":"ord-1"}"#),
                ("timestamp", b"1767225600"),
                ("message_type", b"0"),
                ("group_id", b"g"),
                ("attributes", br#"{"type":"placed"}"#),
            ],
        );
        let record = record(&sent, "order-events").unwrap();
        assert_eq!(record.message_id, "1767225600000-0");
        assert_eq!(&record.body[..], br#"{"orderId":"ord-1"}"#);
        assert_eq!(record.source, "order-events");
        assert_eq!(json(&record.attributes), json!({"type": {"dataType": "String", "stringValue": "placed"}}));
        assert_eq!(json(&record.vendor), json!({"timestamp": 1767225600u64, "messageType": "Text"}));
    }

    #[test]
    fn a_binary_body_is_decoded_and_no_attributes_are_empty() {
        let record =
            record(&entry("1-0", &[("body", b"/wA="), ("timestamp", b"1"), ("message_type", b"1")]), "q").unwrap();
        assert_eq!(&record.body[..], &[0xff, 0x00]);
        assert!(record.attributes.is_empty());
        assert_eq!(json(&record.vendor)["messageType"], "Binary");
    }

    #[test]
    fn entries_the_runtime_cannot_read_are_refused_saying_why() {
        let refused = |fields: &[(&str, &[u8])]| record(&entry("1-0", fields), "q").unwrap_err();
        assert_eq!(refused(&[("timestamp", b"1")]), "it has no `body` field");
        assert_eq!(refused(&[("body", b"x")]), "it has no `timestamp` field");
        assert!(refused(&[("body", b"x"), ("timestamp", b"soon")]).contains("not a whole number"));
        assert!(refused(&[("body", b"!"), ("timestamp", b"1"), ("message_type", b"1")]).contains("not base64"));
        assert!(refused(&[("body", b"x"), ("timestamp", b"1"), ("message_type", b"2")]).contains("neither 0"));
        assert!(refused(&[("body", b"x"), ("timestamp", b"1"), ("attributes", b"[1]")]).contains("JSON object"));
    }

    #[test]
    fn credentials_stay_out_of_the_log() {
        let redis = Redis { url: "redis://user:secret@127.0.0.1:6379/2".into() };
        assert_eq!(redis.shown(), "redis://127.0.0.1:6379/2");
        assert_eq!(Redis { url: "redis://127.0.0.1:6379".into() }.shown(), "redis://127.0.0.1:6379");
    }
}
