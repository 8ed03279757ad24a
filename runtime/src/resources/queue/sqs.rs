//! A queue on AWS: SQS, at the queue URL the deployment recorded.

use std::collections::HashMap;

use aws_sdk_sqs::Client;
use aws_sdk_sqs::types::{MessageAttributeValue, SendMessageBatchRequestEntry};

use super::Message;
use crate::aws::sdk_config;
use crate::future::BoxFuture;
use crate::resources::aws_fault::{fault, unbuilt};
use crate::resources::aws_messaging::{self, entry_id, outcomes};
use crate::resources::batch::{Chunking, EntryOutcome};
use crate::resources::error::Fault;
use crate::resources::message_rules::{ATTRIBUTE_TYPE, AWS_CHUNKING};
use crate::resources::sending::{Backend, Outgoing};

pub(crate) struct Sqs {
    client: Client,
    url: String,
}

impl Sqs {
    /// SQS for the queue at `url`, through `endpoint` where one is given.
    pub(crate) async fn new(url: String, endpoint: Option<&str>) -> Self {
        let mut config = aws_sdk_sqs::config::Builder::from(sdk_config().await);
        if let Some(endpoint) = endpoint {
            config = config.endpoint_url(endpoint);
        }
        Sqs { client: Client::from_conf(config.build()), url }
    }
}

/// The body as SQS takes it: text.
fn body(message: &Message) -> Result<&str, Fault> {
    message.text().ok_or_else(|| {
        Fault::invalid(
            "InvalidMessageContents",
            "SQS carries text, and the body is not UTF-8: encode bytes (as base64, say) before sending them",
        )
    })
}

fn attributes(message: &Message) -> Result<Option<HashMap<String, MessageAttributeValue>>, Fault> {
    aws_messaging::attributes(message.attributes(), |value| {
        MessageAttributeValue::builder().data_type(ATTRIBUTE_TYPE).string_value(value).build()
    })
}

/// A delay in whole seconds, cut down rather than rounded up: a message
/// is never held back longer than asked.
fn delay_seconds(message: &Message) -> Option<i32> {
    message.delay().map(|delay| delay.as_secs().min(i32::MAX as u64) as i32)
}

impl Backend<Message> for Sqs {
    fn check(&self, message: &Message) -> Result<usize, Fault> {
        body(message)?;
        message.checked_size()
    }

    fn send<'a>(&'a self, message: &'a Message) -> BoxFuture<'a, Result<String, Fault>> {
        Box::pin(async move {
            let output = self
                .client
                .send_message()
                .queue_url(&self.url)
                .message_body(body(message)?)
                .set_delay_seconds(delay_seconds(message))
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
            for (index, message) in messages.iter().enumerate() {
                let entry = SendMessageBatchRequestEntry::builder()
                    .id(entry_id(index))
                    .message_body(body(message)?)
                    .set_delay_seconds(delay_seconds(message))
                    .set_message_group_id(message.group_id().map(str::to_string))
                    .set_message_deduplication_id(message.deduplication_id().map(str::to_string))
                    .set_message_attributes(attributes(message)?)
                    .build()
                    .map_err(unbuilt)?;
                entries.push(entry);
            }
            let output = self
                .client
                .send_message_batch()
                .queue_url(&self.url)
                .set_entries(Some(entries))
                .send()
                .await
                .map_err(|error| fault(&error))?;
            let sent = output.successful().iter().map(|sent| (sent.id(), sent.message_id()));
            let refused = output
                .failed()
                .iter()
                .map(|refused| (refused.id(), refused.code(), refused.message(), refused.sender_fault()));
            Ok(outcomes(messages.len(), "SQS", sent, refused))
        })
    }
}
