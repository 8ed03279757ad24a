//! A topic in a local session: the Redis channel the runtime's local
//! subscriber listens on, one JSON envelope per message.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use super::Message;
use crate::resources::batch::EntryOutcome;
use crate::resources::error::Fault;
use crate::resources::sending::LocalBackend;
use crate::resources::session_redis::SessionRedis;

/// The channel of the topic `name`, byte for byte the one the runtime's
/// subscriber listens on: any other is a message published into nothing.
pub(crate) fn channel_key(name: &str) -> String {
    format!("celerity:topic:channel:{name}")
}

/// The JSON the runtime's subscriber reads from the channel.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Envelope<'a> {
    /// A channel names nothing it carries, so the message is given an id
    /// here: a version 4 UUID, as the other SDKs give it.
    message_id: String,
    body: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    subject: Option<&'a str>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    attributes: &'a BTreeMap<String, String>,
}

/// The envelope of `message`, and the id it carries.
pub(crate) fn envelope(message: &Message) -> (String, String) {
    let message_id = uuid::Uuid::new_v4().to_string();
    let envelope = Envelope {
        message_id: message_id.clone(),
        body: message.body(),
        subject: message.subject(),
        attributes: message.attributes(),
    };
    // Strings and a map of strings always serialize.
    (message_id, serde_json::to_string(&envelope).unwrap_or_default())
}

pub(crate) struct Channel {
    redis: Arc<SessionRedis>,
    key: String,
}

fn publish(key: &str, payload: String) -> redis::Cmd {
    let mut command = redis::cmd("PUBLISH");
    command.arg(key).arg(payload);
    command
}

impl LocalBackend<Message> for Channel {
    fn new(redis: Arc<SessionRedis>, name: &str) -> Self {
        Channel { redis, key: channel_key(name) }
    }

    async fn send_unboxed(&self, message: &Message) -> Result<String, Fault> {
        let (message_id, payload) = envelope(message);
        self.redis.query::<i64>(&publish(&self.key, payload)).await?;
        Ok(message_id)
    }

    async fn send_pipelined<'a>(&'a self, messages: Vec<&'a Message>) -> Result<Vec<EntryOutcome>, Fault> {
        let (ids, payloads): (Vec<String>, Vec<String>) = messages.iter().map(|message| envelope(message)).unzip();
        self.redis.query_all::<i64>(payloads.into_iter().map(|payload| publish(&self.key, payload))).await?;
        Ok(ids.into_iter().map(EntryOutcome::Sent).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_is_the_json_the_runtimes_subscriber_reads() {
        let (id, payload) = envelope(&Message::new("hello").with_subject("s").with_attribute("kind", "placed"));
        let json: serde_json::Value = serde_json::from_str(&payload).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"messageId": id, "body": "hello", "subject": "s", "attributes": {"kind": "placed"}})
        );
        assert_eq!(uuid::Uuid::parse_str(&id).unwrap().get_version_num(), 4);
        let (_, bare) = envelope(&Message::new("hi"));
        let json: serde_json::Value = serde_json::from_str(&bare).unwrap();
        assert_eq!(json.as_object().unwrap().len(), 2, "{bare}");
        assert_eq!(channel_key("events"), "celerity:topic:channel:events");
    }
}
