//! A queue in a local session: the Redis stream the runtime's local
//! consumer reads, one entry per message.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;

use super::Message;
use crate::resources::batch::EntryOutcome;
use crate::resources::error::{Fault, ResourceErrorKind};
use crate::resources::sending::LocalBackend;
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

/// Writes the fields of the entry for `message` into `command`, as the
/// runtime's consumer reads them: `body`, `timestamp` (Unix seconds;
/// without it the consumer cannot read the entry), `message_type`, and
/// where given `group_id`, `dedup_id` and `attributes` (one JSON object).
/// A delay is not written: a local queue delivers at once. Written straight
/// into the command, as a send is made per message.
fn write_entry(command: &mut redis::Cmd, message: &Message, now: SystemTime) {
    let seconds = now.duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs());
    let message_type = match message.text() {
        Some(text) => {
            command.arg("body").arg(text);
            TEXT
        }
        None => {
            command.arg("body").arg(base64::engine::general_purpose::STANDARD.encode(message.body()));
            BINARY
        }
    };
    command.arg("timestamp").arg(seconds).arg("message_type").arg(message_type);
    if let Some(group_id) = message.group_id() {
        command.arg("group_id").arg(group_id);
    }
    if let Some(deduplication_id) = message.deduplication_id() {
        command.arg("dedup_id").arg(deduplication_id);
    }
    if !message.attributes().is_empty() {
        // A map of strings always serializes.
        let attributes = serde_json::to_string(message.attributes()).unwrap_or_default();
        command.arg("attributes").arg(attributes);
    }
}

fn xadd(key: &str, message: &Message, now: SystemTime) -> redis::Cmd {
    let mut command = redis::cmd("XADD");
    command.arg(key).arg("*");
    write_entry(&mut command, message, now);
    command
}

impl LocalBackend<Message> for Stream {
    fn new(redis: Arc<SessionRedis>, name: &str) -> Self {
        Stream { redis, key: stream_key(name) }
    }

    async fn send_unboxed(&self, message: &Message) -> Result<String, Fault> {
        self.redis.query(&xadd(&self.key, message, SystemTime::now())).await
    }

    async fn send_pipelined<'a>(&'a self, messages: Vec<&'a Message>) -> Result<Vec<EntryOutcome>, Fault> {
        let now = SystemTime::now();
        let added = messages.iter().map(|message| xadd(&self.key, message, now));
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
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// The words of `command` after `XADD <key> *`.
    fn fields(command: &redis::Cmd) -> Vec<String> {
        command
            .args_iter()
            .skip(3)
            .map(|arg| match arg {
                redis::Arg::Simple(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                _ => "<cursor>".to_string(),
            })
            .collect()
    }

    #[test]
    fn an_entry_has_the_fields_the_runtimes_consumer_reads() {
        let at = UNIX_EPOCH + Duration::from_secs(1_767_225_600);
        let message = Message::from("hello")
            .with_group_id("g")
            .with_deduplication_id("d")
            .with_attribute("kind", "placed")
            .with_delay(Duration::from_secs(5));
        assert_eq!(
            fields(&xadd("celerity:queue:orders", &message, at)),
            [
                "body",
                "hello",
                "timestamp",
                "1767225600",
                "message_type",
                "0",
                "group_id",
                "g",
                "dedup_id",
                "d",
                "attributes",
                r#"{"kind":"placed"}"#
            ]
        );
        let bytes = fields(&xadd("k", &Message::new(vec![0xff, 0x00]), at));
        assert_eq!(bytes, ["body", "/wA=", "timestamp", "1767225600", "message_type", "1"]);
        assert_eq!(stream_key("orders"), "celerity:queue:orders");
    }
}
