//! A topic on AWS: SNS, at the topic ARN the deployment recorded.

use std::collections::HashMap;

use aws_sdk_sns::Client;
use aws_sdk_sns::types::{MessageAttributeValue, PublishBatchRequestEntry};

use super::Message;
use crate::aws::sdk_config;
use crate::future::BoxFuture;
use crate::resources::aws_fault::{fault, unbuilt};
use crate::resources::aws_messaging::{self, entry_id, outcomes};
use crate::resources::batch::{Chunking, EntryOutcome};
use crate::resources::error::Fault;
use crate::resources::message_rules::{ATTRIBUTE_TYPE, AWS_CHUNKING};
use crate::resources::sending::Backend;

pub(crate) struct Sns {
    client: Client,
    arn: String,
}

impl Sns {
    /// SNS for the topic `arn`, through `endpoint` where one is given.
    pub(crate) async fn new(arn: String, endpoint: Option<&str>) -> Self {
        let mut config = aws_sdk_sns::config::Builder::from(sdk_config().await);
        if let Some(endpoint) = endpoint {
            config = config.endpoint_url(endpoint);
        }
        Sns { client: Client::from_conf(config.build()), arn }
    }
}

fn attributes(message: &Message) -> Result<Option<HashMap<String, MessageAttributeValue>>, Fault> {
    aws_messaging::attributes(message.attributes(), |value| {
        MessageAttributeValue::builder().data_type(ATTRIBUTE_TYPE).string_value(value).build()
    })
}

impl Backend<Message> for Sns {
    fn send<'a>(&'a self, message: &'a Message) -> BoxFuture<'a, Result<String, Fault>> {
        Box::pin(async move {
            let output = self
                .client
                .publish()
                .topic_arn(&self.arn)
                .message(message.body())
                .set_subject(message.subject().map(str::to_string))
                .set_message_group_id(message.group_id().map(str::to_string))
                .set_message_deduplication_id(message.deduplication_id().map(str::to_string))
                .set_message_attributes(attributes(message)?)
                .send()
                .await
                .map_err(|error| fault(&error))?;
            Ok(output.message_id().unwrap_or_default().to_string())
        })
    }

    fn chunking(&self) -> Chunking {
        AWS_CHUNKING
    }

    fn send_chunk<'a>(&'a self, messages: Vec<&'a Message>) -> BoxFuture<'a, Result<Vec<EntryOutcome>, Fault>> {
        Box::pin(async move {
            let mut entries = Vec::with_capacity(messages.len());
            for (place, message) in messages.iter().enumerate() {
                let entry = PublishBatchRequestEntry::builder()
                    .id(entry_id(place))
                    .message(message.body())
                    .set_subject(message.subject().map(str::to_string))
                    .set_message_group_id(message.group_id().map(str::to_string))
                    .set_message_deduplication_id(message.deduplication_id().map(str::to_string))
                    .set_message_attributes(attributes(message)?)
                    .build()
                    .map_err(unbuilt)?;
                entries.push(entry);
            }
            let output = self
                .client
                .publish_batch()
                .topic_arn(&self.arn)
                .set_publish_batch_request_entries(Some(entries))
                .send()
                .await
                .map_err(|error| fault(&error))?;
            let sent = output
                .successful()
                .iter()
                .map(|sent| (sent.id().unwrap_or_default(), sent.message_id().unwrap_or_default()));
            let refused = output
                .failed()
                .iter()
                .map(|refused| (refused.id(), refused.code(), refused.message(), refused.sender_fault()));
            Ok(outcomes(messages.len(), "SNS", sent, refused))
        })
    }
}
