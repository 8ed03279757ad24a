//! Queues and topics on AWS, against an AWS API emulator (moto's server) on
//! loopback through the official AWS SDK: SQS and SNS.

use aws_smithy_http_client::tls;
use celerity::config::{Configuration, Values};
use celerity::resources::queue::{Message, Queue};
use celerity::resources::topic::{self, Topic};
use celerity::resources::{BatchEntry, Links, ResourceErrorKind};
use celerity_testkit::servers;

/// The emulator, with this process's AWS SDK pointed at it.
async fn sdk() -> aws_config::SdkConfig {
    servers::moto().use_in_this_process();
    let http = aws_smithy_http_client::Builder::new()
        .tls_provider(tls::Provider::Rustls(tls::rustls_provider::CryptoMode::Ring))
        .build_https();
    aws_config::defaults(aws_config::BehaviorVersion::latest()).http_client(http).load().await
}

fn aws(queue_url: &str, topic_arn: &str, extra: &[(&str, &str)]) -> Configuration {
    let links = Links::from_json(
        br#"{"orders": {"type": "queue", "configKey": "ordersQueue"},
             "events": {"type": "topic", "configKey": "eventsTopic"}}"#,
        "the test's links",
    )
    .unwrap();
    let mut builder = Configuration::builder()
        .links(links)
        .values("resources", Values::from_pairs([("ordersQueue", queue_url), ("eventsTopic", topic_arn)]))
        .env("CELERITY_PLATFORM", "aws");
    for (name, value) in extra {
        builder = builder.env(name, value);
    }
    builder.build()
}

async fn create_queue(name: &str, fifo: bool) -> (aws_sdk_sqs::Client, String) {
    let sqs = aws_sdk_sqs::Client::new(&sdk().await);
    let mut create = sqs.create_queue().queue_name(name);
    if fifo {
        create = create.attributes(aws_sdk_sqs::types::QueueAttributeName::FifoQueue, "true");
    }
    let url = create.send().await.unwrap().queue_url().unwrap().to_string();
    (sqs, url)
}

fn queue(url: &str) -> Queue {
    aws(url, "arn:aws:sns:eu-west-2:123456789012:none", &[]).resources().handle::<Queue>(None).unwrap()
}

#[tokio::test]
async fn a_send_reaches_sqs_with_its_attributes() {
    let (sqs, url) = create_queue("celerity-send", false).await;
    let id = queue(&url).send(Message::from("order ord-1").with_attribute("kind", "placed")).await.unwrap();
    let received = sqs.receive_message().queue_url(&url).message_attribute_names("All").send().await.unwrap();
    let message = &received.messages()[0];
    assert_eq!(message.message_id(), Some(id.as_str()));
    assert_eq!(message.body(), Some("order ord-1"));
    let kind = &message.message_attributes().unwrap()["kind"];
    assert_eq!(kind.string_value(), Some("placed"));
}

#[tokio::test]
async fn a_batch_is_cut_to_ten_a_request_and_every_entry_is_answered_for() {
    let (sqs, url) = create_queue("celerity-batch", false).await;
    let mut entries: Vec<BatchEntry<Message>> =
        (0..25).map(|i| BatchEntry::new(format!("e{i}"), Message::from(format!("m{i}")))).collect();
    entries.push(BatchEntry::new("huge", Message::new(vec![b'x'; 300_000])));
    entries.push(BatchEntry::new("bytes", Message::new(vec![0xff])));
    entries.push(BatchEntry::new("reserved", Message::from("m").with_attribute("AWS.trace", "x")));
    let result = queue(&url).send_batch(entries).await.unwrap();
    assert_eq!(result.successful.len(), 25);
    let mut refused: Vec<(&str, &str)> = result.failed.iter().map(|f| (f.id.as_str(), f.code.as_str())).collect();
    refused.sort();
    assert_eq!(
        refused,
        [("bytes", "InvalidMessageContents"), ("huge", "MessageTooLarge"), ("reserved", "InvalidAttribute")]
    );
    assert!(result.unsent.is_empty());
    let count = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessages)
        .send()
        .await
        .unwrap();
    let count = &count.attributes().unwrap()[&aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessages];
    assert_eq!(count, "25");
}

#[tokio::test]
async fn a_fifo_queue_takes_the_group_and_deduplication_ids() {
    let (sqs, url) = create_queue("celerity-orders.fifo", true).await;
    let queue = queue(&url);
    queue.send(Message::from("first").with_group_id("c-7").with_deduplication_id("d-1")).await.unwrap();
    let received = sqs
        .receive_message()
        .queue_url(&url)
        .message_system_attribute_names(aws_sdk_sqs::types::MessageSystemAttributeName::MessageGroupId)
        .send()
        .await
        .unwrap();
    let message = &received.messages()[0];
    assert_eq!(message.body(), Some("first"));
    let group = &message.attributes().unwrap()[&aws_sdk_sqs::types::MessageSystemAttributeName::MessageGroupId];
    assert_eq!(group, "c-7");
    let error = queue.send("no group").await.unwrap_err();
    assert_eq!(error.kind(), ResourceErrorKind::Refused, "a FIFO queue refuses a message without a group: {error}");
    assert!(error.code().is_some(), "{error}");
}

#[tokio::test]
async fn a_queue_that_is_not_there_is_refused_and_one_out_of_reach_is_unreachable() {
    sdk().await;
    let config = aws(&format!("{}/123456789012/never-created", servers::moto().endpoint()), "arn", &[]);
    let error = config.resources().handle::<Queue>(None).unwrap().send("hello").await.unwrap_err();
    assert_eq!(error.kind(), ResourceErrorKind::Refused, "{error}");
    assert!(error.to_string().starts_with("sending to the queue `orders`:"), "{error}");

    let nowhere = format!("http://127.0.0.1:{}", servers::free_port());
    let config = aws("http://127.0.0.1/123456789012/q", "arn", &[("CELERITY_AWS_SQS_ENDPOINT", nowhere.as_str())]);
    let queue = config.resources().handle::<Queue>(None).unwrap();
    let error = queue.send("hello").await.unwrap_err();
    assert_eq!(error.kind(), ResourceErrorKind::Unreachable, "{error}");
    let result = queue.send_batch([BatchEntry::new("a", "x"), BatchEntry::new("b", "y")]).await.unwrap();
    assert_eq!(result.unsent.len(), 2, "nothing is lost silently: {result:?}");
}

#[tokio::test]
async fn a_publish_and_a_batch_reach_sns() {
    let sns = aws_sdk_sns::Client::new(&sdk().await);
    let arn = sns.create_topic().name("celerity-events").send().await.unwrap().topic_arn().unwrap().to_string();
    let topic = aws("http://unused", &arn, &[]).resources().handle::<Topic>(None).unwrap();
    let id = topic
        .publish(topic::Message::new("shipped").with_subject("orders").with_attribute("kind", "shipped"))
        .await
        .unwrap();
    assert!(!id.is_empty());
    let entries = (0..12).map(|i| BatchEntry::new(format!("e{i}"), format!("m{i}")));
    let result = topic.publish_batch(entries).await.unwrap();
    assert_eq!(result.successful.len(), 12, "{result:?}");
    assert!(result.is_complete());

    let missing = aws("http://unused", "arn:aws:sns:eu-west-2:123456789012:never-created", &[]);
    let error = missing.resources().handle::<Topic>(None).unwrap().publish("x").await.unwrap_err();
    assert_eq!(error.kind(), ResourceErrorKind::Refused, "{error}");
    assert!(error.to_string().starts_with("publishing to the topic `events`:"), "{error}");
}
