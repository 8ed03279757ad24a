//! A queue in a local session: the Redis stream the runtime's local
//! consumer reads, one entry per message.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;

use super::Message;
use crate::future::BoxFuture;
use crate::resources::batch::{Chunking, EntryOutcome};
use crate::resources::error::{Fault, ResourceErrorKind};
use crate::resources::sending::Backend;
use crate::resources::session_redis::SessionRedis;

/// The stream of the queue `name`, byte for byte the key the runtime's
/// consumer reads: any other is a message sent and never delivered.
pub(crate) fn stream_key(name: &str) -> String {
    format!("celerity:queue:{name}")
}

/// How the runtime's consumer reads a body: `0` text, `1` base64 of bytes
/// that are not UTF-8.
const TEXT: &str = "0";
const BINARY: &str = "1";

pub(crate) struct Stream {
    redis: Arc<SessionRedis>,
    key: String,
}

impl Stream {
    pub(crate) fn new(redis: Arc<SessionRedis>, name: &str) -> Self {
        Stream { redis, key: stream_key(name) }
    }
}

/// The fields of the entry for `message`, as the runtime's consumer reads
/// them: `body`, `timestamp` (Unix seconds; without it the consumer cannot
/// read the entry), `message_type`, and where given `group_id`, `dedup_id`
/// and `attributes` (one JSON object). A delay is not written: a local
/// queue delivers at once.
pub(crate) fn entry_fields(message: &Message, now: SystemTime) -> Vec<(&'static str, String)> {
    let seconds = now.duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs());
    let (body, message_type) = match message.text() {
        Some(text) => (text.to_string(), TEXT),
        None => (base64::engine::general_purpose::STANDARD.encode(message.body()), BINARY),
    };
    let mut fields =
        vec![("body", body), ("timestamp", seconds.to_string()), ("message_type", message_type.to_string())];
    if let Some(group_id) = message.group_id() {
        fields.push(("group_id", group_id.to_string()));
    }
    if let Some(deduplication_id) = message.deduplication_id() {
        fields.push(("dedup_id", deduplication_id.to_string()));
    }
    if !message.attributes().is_empty() {
        // A map of strings always serializes.
        let attributes = serde_json::to_string(message.attributes()).unwrap_or_default();
        fields.push(("attributes", attributes));
    }
    fields
}

fn xadd(key: &str, message: &Message) -> redis::Cmd {
    let mut command = redis::cmd("XADD");
    command.arg(key).arg("*");
    for (name, value) in entry_fields(message, SystemTime::now()) {
        command.arg(name).arg(value);
    }
    command
}

impl Backend<Message> for Stream {
    fn send<'a>(&'a self, message: &'a Message) -> BoxFuture<'a, Result<String, Fault>> {
        Box::pin(async move { self.redis.query(&xadd(&self.key, message)).await })
    }

    fn chunking(&self) -> Chunking {
        // One pipeline for the whole batch: Redis has no limit per request
        // that a batch could reach.
        Chunking { max_entries: usize::MAX, max_bytes: usize::MAX }
    }

    fn send_chunk<'a>(&'a self, messages: Vec<&'a Message>) -> BoxFuture<'a, Result<Vec<EntryOutcome>, Fault>> {
        Box::pin(async move {
            let added = messages.iter().map(|message| xadd(&self.key, message));
            match self.redis.query_all::<String>(added).await {
                Ok(ids) => Ok(ids.into_iter().map(EntryOutcome::Sent).collect()),
                Err(fault) if fault.kind == ResourceErrorKind::Unreachable => Err(fault),
                Err(fault) => {
                    // Redis answered, refusing the command every entry is
                    // sent by (a key of another type, say): each is refused
                    // alike.
                    let refused = EntryOutcome::Refused {
                        code: fault.code.unwrap_or_default(),
                        message: fault.message,
                        sender_fault: false,
                    };
                    Ok(vec![refused; messages.len()])
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn an_entry_has_the_fields_the_runtimes_consumer_reads() {
        let at = UNIX_EPOCH + Duration::from_secs(1_767_225_600);
        let message = Message::from("hello")
            .with_group_id("g")
            .with_deduplication_id("d")
            .with_attribute("kind", "placed")
            .with_delay(Duration::from_secs(5));
        assert_eq!(
            entry_fields(&message, at),
            vec![
                ("body", "hello".to_string()),
                ("timestamp", "1767225600".to_string()),
                ("message_type", "0".to_string()),
                ("group_id", "g".to_string()),
                ("dedup_id", "d".to_string()),
                ("attributes", r#"{"kind":"placed"}"#.to_string()),
            ]
        );
        let bytes = entry_fields(&Message::new(vec![0xff, 0x00]), at);
        assert_eq!(bytes[0], ("body", "/wA=".to_string()));
        assert_eq!(bytes[2], ("message_type", "1".to_string()));
        assert_eq!(bytes.len(), 3);
        assert_eq!(stream_key("orders"), "celerity:queue:orders");
    }
}
