//! Queues: send messages to the queues a blueprint links to the
//! application. Behind the `queue` feature (locally, a Redis stream), and
//! `queue-aws` (SQS).
//!
//! A handler takes a [`Queue`] as an argument: the application's one queue
//! as the type itself, or a queue by name through
//! [`resource!`](crate::resource). Where the application runs picks the
//! backend (`CELERITY_PLATFORM`):
//!
//! - **`local`** (`celerity dev`, `celerity-dev run`): the Redis stream
//!   `celerity:queue:<queue name>` of the session's Redis
//!   (`CELERITY_REDIS_ENDPOINT`, `redis://localhost:6379` by default), with
//!   the entry the runtime's local consumer reads, so a consumer handler of
//!   the queue receives it.
//! - **`aws`**: SQS, at the queue URL the deployment recorded, with
//!   `CELERITY_AWS_SQS_ENDPOINT` (or `AWS_ENDPOINT_URL`) for an emulator.
//! - **[`celerity::testing::TestQueue`](crate::testing::TestQueue)**: in
//!   memory, for tests.
//!
//! Every backend holds a message to the rules SQS holds it to (256 KiB with
//! its attributes, at most 10 attributes, a delay of at most 15 minutes),
//! so that what a local session sends, a deployment sends too.
//!
//! ```
//! use celerity::http::{HttpError, Json, StatusCode};
//! use celerity::resources::queue::{Message, Queue};
//!
//! #[derive(serde::Deserialize, serde::Serialize)]
//! struct Order {
//!     id: String,
//! }
//!
//! async fn place(queue: Queue, Json(order): Json<Order>) -> Result<StatusCode, HttpError> {
//!     let message = Message::json(&order).map_err(|error| HttpError::bad_request(error.to_string()))?;
//!     queue.send(message.with_attribute("kind", "placed")).await.map_err(|error| HttpError::internal(error.to_string()))?;
//!     Ok(StatusCode::ACCEPTED)
//! }
//! # let _ = celerity::App::new().http("POST::/orders", place);
//! ```

mod message;
#[cfg(feature = "queue-aws")]
mod sqs;
mod stream;

use std::fmt;
use std::sync::Arc;

pub use message::{MAX_DELAY, Message};

use super::batch::{BatchEntry, BatchResult};
use super::error::{Fault, ResourceError};
use super::sending::{Backend, Backends, Operations, Sender};
use super::{ResourceHandle, ResourceKind, ResourceRef};
use crate::future::BoxFuture;

/// A handle on one queue of the blueprint. Cheap to clone; clones share
/// the connection, made on the first send. See the [module](self) docs.
#[derive(Clone)]
pub struct Queue {
    sender: Arc<Sender<Message>>,
}

const OPERATIONS: Operations = Operations { one: "sending to", batch: "sending a batch to" };

impl Queue {
    /// A queue named `name` served by `backend`, such as an in-memory one.
    pub(crate) fn with_backend(name: &str, backend: Arc<dyn Backend<Message>>) -> Self {
        Queue { sender: Arc::new(Sender::with_backend(name, ResourceKind::Queue, OPERATIONS, &BACKENDS, backend)) }
    }

    /// The blueprint resource's name.
    pub fn name(&self) -> &str {
        self.sender.name()
    }

    /// Sends `message`: the queue's id for it (SQS's message id, the
    /// stream entry's id locally).
    pub async fn send(&self, message: impl Into<Message>) -> Result<String, ResourceError> {
        self.sender.send(message.into()).await
    }

    /// Sends the `entries`, in as few requests as the queue takes (10
    /// messages, 256 KiB, for SQS), one after another. Every entry comes
    /// back in one of the result's lists. Fails only when nothing was
    /// sent: an empty batch, one over
    /// [`MAX_BATCH_ENTRIES`](crate::resources::MAX_BATCH_ENTRIES), a queue
    /// that cannot be resolved.
    ///
    /// ```
    /// use celerity::resources::BatchEntry;
    /// use celerity::resources::queue::{Message, Queue};
    ///
    /// async fn notify(queue: &Queue, order_ids: &[&str]) -> celerity::Result<Vec<String>> {
    ///     let entries = order_ids.iter().map(|id| BatchEntry::new(*id, Message::from(format!("placed {id}"))));
    ///     let result = queue.send_batch(entries).await?;
    ///     // What was not sent, to send again or report.
    ///     let mut left: Vec<String> = result.failed.into_iter().map(|refused| refused.id).collect();
    ///     left.extend(result.unsent.into_iter().map(|unsent| unsent.id));
    ///     Ok(left)
    /// }
    /// # let _ = notify;
    /// ```
    pub async fn send_batch(
        &self,
        entries: impl IntoIterator<Item = BatchEntry<Message>>,
    ) -> Result<BatchResult, ResourceError> {
        self.sender.send_batch(entries.into_iter().collect()).await
    }
}

/// Where queues are served: locally on the session's Redis, on AWS by SQS.
static BACKENDS: Backends<Message> = Backends { kinds: "queues", aws };

#[cfg(feature = "queue-aws")]
fn aws(resource: &ResourceRef) -> BoxFuture<'_, Result<Arc<dyn Backend<Message>>, Fault>> {
    Box::pin(async move {
        let url = resource.identifier().await?;
        let backend = sqs::Sqs::new(url, resource.deployment().endpoints.sqs.as_deref()).await;
        Ok(Arc::new(backend) as Arc<dyn Backend<Message>>)
    })
}

#[cfg(not(feature = "queue-aws"))]
fn aws(_resource: &ResourceRef) -> BoxFuture<'_, Result<Arc<dyn Backend<Message>>, Fault>> {
    Box::pin(std::future::ready(Err(Fault::unsupported(
        "the application runs on AWS, and was built without celerity's `queue-aws` feature, which sends to SQS",
    ))))
}

impl ResourceHandle for Queue {
    fn kind() -> ResourceKind {
        ResourceKind::Queue
    }

    fn from_resource(resource: ResourceRef) -> Self {
        Queue { sender: Arc::new(Sender::lazy(resource, OPERATIONS, &BACKENDS)) }
    }
}

super::default_handle_argument!(Queue);

impl fmt::Debug for Queue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Queue").field("name", &self.name()).finish_non_exhaustive()
    }
}
