//! Queues and topics in a local session, against a real Redis on loopback:
//! the stream entries the runtime's local consumer reads, the envelopes its
//! subscriber reads, and the errors a handler gets.

use celerity::config::{Configuration, Values};
use celerity::resources::queue::{Message, Queue};
use celerity::resources::topic::{self, Topic};
use celerity::resources::{BatchEntry, Links, ResourceErrorKind};
use celerity_testkit::servers;

fn local(queue_name: &str, redis_url: &str) -> Configuration {
    let links = Links::from_json(
        br#"{"orders": {"type": "queue", "configKey": "ordersQueue"},
             "events": {"type": "topic", "configKey": "eventsTopic"}}"#,
        "the test's links",
    )
    .unwrap();
    Configuration::builder()
        .links(links)
        .values("resources", Values::from_pairs([("ordersQueue", queue_name), ("eventsTopic", queue_name)]))
        .env("CELERITY_PLATFORM", "local")
        .env("CELERITY_REDIS_ENDPOINT", redis_url)
        .build()
}

fn queue(name: &str) -> Queue {
    local(name, &servers::redis().url()).resources().handle::<Queue>(Some("orders")).unwrap()
}

/// The entries of a stream, as `XRANGE` answers in RESP.
fn stream(name: &str) -> String {
    servers::redis().command(&["XRANGE", &format!("celerity:queue:{name}"), "-", "+"])
}

#[tokio::test]
async fn a_send_writes_the_entry_the_runtimes_consumer_reads() {
    let queue = queue("local-send");
    let id = queue
        .send(
            Message::from("order ord-1")
                .with_group_id("c-7")
                .with_deduplication_id("d-1")
                .with_attribute("kind", "placed"),
        )
        .await
        .unwrap();
    assert!(id.contains('-'), "a stream entry id: {id}");
    let entries = stream("local-send");
    for field in [
        "body",
        "order ord-1",
        "timestamp",
        "message_type",
        "group_id",
        "c-7",
        "dedup_id",
        "d-1",
        "attributes",
        r#"{"kind":"placed"}"#,
    ] {
        assert!(entries.contains(field), "{field} missing from {entries}");
    }
    queue.send(Message::new(vec![0xff, 0x01])).await.unwrap();
    assert!(stream("local-send").contains("/wE="), "bytes that are not text go as base64");
}

#[tokio::test]
async fn a_batch_is_one_pipeline_and_every_entry_is_sent_or_refused() {
    let queue = queue("local-batch");
    let mut entries: Vec<BatchEntry<Message>> =
        (0..25).map(|i| BatchEntry::new(format!("e{i}"), Message::from(format!("m{i}")))).collect();
    entries.push(BatchEntry::new("huge", Message::new(vec![b'x'; 300_000])));
    let result = queue.send_batch(entries).await.unwrap();
    assert_eq!(result.successful.len(), 25);
    assert_eq!(result.failed.len(), 1);
    assert_eq!((result.failed[0].id.as_str(), result.failed[0].code.as_str()), ("huge", "MessageTooLarge"));
    assert!(result.unsent.is_empty());
    assert_eq!(servers::redis().command(&["XLEN", "celerity:queue:local-batch"]).trim(), ":25");

    let error = queue.send_batch(Vec::new()).await.unwrap_err();
    assert_eq!((error.kind(), error.code()), (ResourceErrorKind::Invalid, Some("EmptyBatch")));
    let thousand = (0..1000).map(|i| BatchEntry::new(i.to_string(), Message::from("m")));
    let error = queue.send_batch(thousand).await.unwrap_err();
    assert_eq!(error.code(), Some("BatchTooLarge"));
    assert!(error.to_string().starts_with("sending a batch to the queue `orders`"), "{error}");
}

#[tokio::test]
async fn a_key_of_another_type_and_an_oversized_message_are_typed_errors_naming_the_queue() {
    servers::redis().command(&["SET", "celerity:queue:local-wrongtype", "a string"]);
    let queue = queue("local-wrongtype");
    let error = queue.send("hello").await.unwrap_err();
    assert_eq!((error.kind(), error.code()), (ResourceErrorKind::Refused, Some("WRONGTYPE")));
    assert_eq!((error.resource(), error.operation()), ("orders", "sending to"));
    let result = queue.send_batch([BatchEntry::new("a", "x"), BatchEntry::new("b", "y")]).await.unwrap();
    assert_eq!(result.failed.len(), 2, "each entry is answered for: {result:?}");

    let error = queue.send(Message::new(vec![b'x'; 262_145])).await.unwrap_err();
    assert_eq!((error.kind(), error.code()), (ResourceErrorKind::Invalid, Some("MessageTooLarge")));
}

#[tokio::test]
async fn a_redis_that_is_not_there_is_unreachable_and_a_batch_stays_unsent() {
    let url = format!("redis://127.0.0.1:{}/", servers::free_port());
    let queue = local("local-nowhere", &url).resources().handle::<Queue>(None).unwrap();
    let error = queue.send("hello").await.unwrap_err();
    assert_eq!(error.kind(), ResourceErrorKind::Unreachable, "{error}");
    assert!(error.to_string().contains("the queue `orders`") && error.to_string().contains(&url), "{error}");
    let result = queue.send_batch([BatchEntry::new("a", "x"), BatchEntry::new("b", "y")]).await.unwrap();
    assert_eq!(result.unsent.iter().map(|unsent| unsent.id.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(result.unsent[0].error.kind(), ResourceErrorKind::Unreachable);
}

#[tokio::test]
async fn a_publish_is_the_envelope_on_the_topics_channel() {
    let client = redis::Client::open(servers::redis().url()).unwrap();
    let mut subscriber = client.get_async_pubsub().await.unwrap();
    subscriber.subscribe("celerity:topic:channel:local-events").await.unwrap();
    let topic = local("local-events", &servers::redis().url()).resources().handle::<Topic>(None).unwrap();

    let id = topic
        .publish(topic::Message::new("shipped").with_subject("orders").with_attribute("kind", "shipped"))
        .await
        .unwrap();
    let batch = topic.publish_batch((0..3).map(|i| BatchEntry::new(format!("e{i}"), format!("m{i}")))).await.unwrap();
    assert_eq!(batch.successful.len(), 3);

    use futures_util::StreamExt as _;
    let mut messages = subscriber.on_message();
    let first: String = messages.next().await.unwrap().get_payload().unwrap();
    let json: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"messageId": id, "body": "shipped", "subject": "orders", "attributes": {"kind": "shipped"}})
    );
    for (i, sent) in batch.successful.iter().enumerate() {
        let payload: String = messages.next().await.unwrap().get_payload().unwrap();
        let json: serde_json::Value = serde_json::from_str(&payload).unwrap();
        assert_eq!(
            (json["messageId"].as_str(), json["body"].as_str()),
            (Some(sent.message_id.as_str()), Some(format!("m{i}").as_str()))
        );
    }
}
