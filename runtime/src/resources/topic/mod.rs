//! Topics: publish messages to the topics a blueprint links to the
//! application. Behind the `topic` feature (locally, a Redis channel), and
//! `topic-aws` (SNS).
//!
//! A handler takes a [`Topic`] as an argument: the application's one
//! topic as the type itself, or a topic by name through
//! [`resource!`](crate::resource). Where the application runs picks the
//! backend (`CELERITY_PLATFORM`):
//!
//! - **`local`** (`celerity dev`, `celerity-dev run`): the Redis channel
//!   `celerity:topic:channel:<topic name>` of the session's Redis
//!   (`CELERITY_REDIS_ENDPOINT`, `redis://localhost:6379` by default), one
//!   JSON envelope per message (`messageId`, `body`, `subject`,
//!   `attributes`), as the runtime's local subscriber reads it.
//! - **`aws`**: SNS, at the topic ARN the deployment recorded, with
//!   `CELERITY_AWS_SNS_ENDPOINT` (or `AWS_ENDPOINT_URL`) for an emulator.
//! - **[`celerity::testing::TestTopic`](crate::testing::TestTopic)**: in
//!   memory, for tests.
//!
//! A message is text, as SNS and a local session's channel carry it, and
//! every backend holds it to SNS's rules (256 KiB with its attributes, at
//! most 10 attributes, a subject of one line of at most 100 characters).
//!
//! ```
//! use celerity::resources::topic::{Message, Topic};
//!
//! async fn shipped(topic: Topic) -> celerity::Result<String> {
//!     let id = topic.publish(Message::new("ord-1 shipped").with_subject("order shipped")).await?;
//!     Ok(id)
//! }
//! # let _ = celerity::App::new().custom("shipped", shipped);
//! ```

mod channel;
mod message;
#[cfg(feature = "topic-aws")]
mod sns;

use std::fmt;
use std::sync::Arc;

pub use message::{MAX_SUBJECT_CHARS, Message};

use super::batch::{BatchEntry, BatchResult};
use super::error::{Fault, ResourceError};
use super::sending::{Backend, Backends, Operations, Sender};
use super::{ResourceHandle, ResourceKind, ResourceRef};
use crate::future::BoxFuture;

/// A handle on one topic of the blueprint. Cheap to clone; clones share
/// the connection, made on the first publish. See the [module](self) docs.
#[derive(Clone)]
pub struct Topic {
    sender: Arc<Sender<Message>>,
}

const OPERATIONS: Operations = Operations { one: "publishing to", batch: "publishing a batch to" };

impl Topic {
    /// A topic named `name` served by `backend`, such as an in-memory one.
    pub(crate) fn with_backend(name: &str, backend: Arc<dyn Backend<Message>>) -> Self {
        Topic { sender: Arc::new(Sender::with_backend(name, ResourceKind::Topic, OPERATIONS, &BACKENDS, backend)) }
    }

    /// The blueprint resource's name.
    pub fn name(&self) -> &str {
        self.sender.name()
    }

    /// Publishes `message`: the topic's id for it (SNS's message id, the
    /// envelope's locally).
    pub async fn publish(&self, message: impl Into<Message>) -> Result<String, ResourceError> {
        self.sender.send(message.into()).await
    }

    /// Publishes the `entries`, in as few requests as the topic takes (10
    /// messages, 256 KiB, for SNS), one after another. Every entry comes
    /// back in one of the result's lists. Fails only when nothing was
    /// published: an empty batch, one over
    /// [`MAX_BATCH_ENTRIES`](crate::resources::MAX_BATCH_ENTRIES), a topic
    /// that cannot be resolved.
    ///
    /// ```
    /// use celerity::resources::BatchEntry;
    /// use celerity::resources::topic::{Message, Topic};
    ///
    /// async fn announce(topic: &Topic, order_ids: &[&str]) -> celerity::Result<bool> {
    ///     let entries = order_ids.iter().map(|id| BatchEntry::new(*id, Message::new(format!("{id} placed"))));
    ///     Ok(topic.publish_batch(entries).await?.is_complete())
    /// }
    /// # let _ = announce;
    /// ```
    pub async fn publish_batch(
        &self,
        entries: impl IntoIterator<Item = BatchEntry<Message>>,
    ) -> Result<BatchResult, ResourceError> {
        self.sender.send_batch(entries.into_iter().collect()).await
    }
}

/// Where topics are served: locally on the session's Redis, on AWS by SNS.
static BACKENDS: Backends<Message> = Backends { kinds: "topics", aws };

#[cfg(feature = "topic-aws")]
fn aws(resource: &ResourceRef) -> BoxFuture<'_, Result<Arc<dyn Backend<Message>>, Fault>> {
    Box::pin(async move {
        let arn = resource.identifier().await?;
        let backend = sns::Sns::new(arn, resource.deployment().endpoints.sns.as_deref()).await;
        Ok(Arc::new(backend) as Arc<dyn Backend<Message>>)
    })
}

#[cfg(not(feature = "topic-aws"))]
fn aws(_resource: &ResourceRef) -> BoxFuture<'_, Result<Arc<dyn Backend<Message>>, Fault>> {
    Box::pin(std::future::ready(Err(Fault::unsupported(
        "the application runs on AWS, and was built without celerity's `topic-aws` feature, which publishes to SNS",
    ))))
}

impl ResourceHandle for Topic {
    fn kind() -> ResourceKind {
        ResourceKind::Topic
    }

    fn from_resource(resource: ResourceRef) -> Self {
        Topic { sender: Arc::new(Sender::lazy(resource, OPERATIONS, &BACKENDS)) }
    }
}

super::default_handle_argument!(Topic);

impl fmt::Debug for Topic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Topic").field("name", &self.name()).finish_non_exhaustive()
    }
}
