//! What a queue and a topic share: a handle that sends messages, resolved
//! on first use, with its sends and batches named for the resource.

use std::future::Future;
use std::sync::Arc;

use super::batch::{self, BatchEntry, BatchResult, Chunking, EntryOutcome};
use super::error::{Fault, ResourceError};
use super::first_use::FirstUse;
use super::session_redis::SessionRedis;
use super::{ResourceKind, ResourceRef};
use crate::config::Platform;
use crate::future::BoxFuture;

/// A message a queue or a topic sends.
pub(crate) trait Outgoing: Sized + Send + Sync + 'static {
    /// What carries the message in a local session.
    type Local: LocalBackend<Self>;

    /// The size the message counts as, or why no backend sends it.
    fn checked_size(&self) -> Result<usize, Fault>;
}

/// The backend of a local session, which a handle calls without a box:
/// every send of a local run goes through it, and a boxed future there
/// was a fifth of what the handle added to a send.
pub(crate) trait LocalBackend<M: Outgoing>: Sized + Send + Sync + 'static {
    /// The backend of the resource whose deployed identifier is `name`, on
    /// the session's Redis.
    fn new(redis: Arc<SessionRedis>, name: &str) -> Self;

    /// Sends one message: the id the session gave it.
    fn send_unboxed(&self, message: &M) -> impl Future<Output = Result<String, Fault>> + Send;

    /// Sends a batch in one pipeline: what became of each message, in
    /// order.
    fn send_pipelined<'a>(
        &'a self,
        messages: Vec<&'a M>,
    ) -> impl Future<Output = Result<Vec<EntryOutcome>, Fault>> + Send + 'a;
}

/// A local session's backend as every backend is called: a batch is one
/// pipeline, as Redis has no limit per request that a batch could reach.
pub(crate) struct Pipelined<L>(L);

impl<M: Outgoing, L: LocalBackend<M>> Backend<M> for Pipelined<L> {
    fn send<'a>(&'a self, message: &'a M) -> BoxFuture<'a, Result<String, Fault>> {
        Box::pin(self.0.send_unboxed(message))
    }

    fn chunking(&self) -> Chunking {
        Chunking { max_entries: usize::MAX, max_bytes: usize::MAX }
    }

    fn send_chunk<'a>(&'a self, messages: Vec<&'a M>) -> BoxFuture<'a, Result<Vec<EntryOutcome>, Fault>> {
        Box::pin(self.0.send_pipelined(messages))
    }
}

/// The backend a handle resolved to.
pub(crate) enum Served<M: Outgoing> {
    Local(Pipelined<M::Local>),
    Other(Arc<dyn Backend<M>>),
}

impl<M: Outgoing> Served<M> {
    fn backend(&self) -> &dyn Backend<M> {
        match self {
            Served::Local(local) => local,
            Served::Other(other) => other.as_ref(),
        }
    }
}

/// What carries a resource's messages: a local session's Redis, an AWS
/// service, memory.
pub(crate) trait Backend<M: Outgoing>: Send + Sync + 'static {
    /// The size `message` counts as, or why this backend cannot send it.
    fn check(&self, message: &M) -> Result<usize, Fault> {
        message.checked_size()
    }

    /// Sends one message: the service's id for it.
    fn send<'a>(&'a self, message: &'a M) -> BoxFuture<'a, Result<String, Fault>>;

    /// How many messages one request of a batch carries.
    fn chunking(&self) -> Chunking;

    /// Sends one request of a batch: what became of each message, in order.
    fn send_chunk<'a>(&'a self, messages: Vec<&'a M>) -> BoxFuture<'a, Result<Vec<EntryOutcome>, Fault>>;
}

/// Makes the backend that serves a resource on AWS.
pub(crate) type OnAws<M> = for<'a> fn(&'a ResourceRef) -> BoxFuture<'a, Result<Arc<dyn Backend<M>>, Fault>>;

/// The backends of a kind of resource, by platform.
pub(crate) struct Backends<M: Outgoing> {
    /// The kind in the plural, for the error of a platform with none.
    pub(crate) kinds: &'static str,
    /// The backend on AWS.
    pub(crate) aws: OnAws<M>,
}

impl<M: Outgoing> Backends<M> {
    /// The backend the deployment's platform serves `resource` with.
    async fn resolve(&self, resource: &ResourceRef) -> Result<Served<M>, Fault> {
        let deployment = resource.deployment();
        match deployment.platform {
            Platform::Local => {
                let name = resource.identifier().await?;
                let redis = SessionRedis::at(deployment.endpoints.redis.as_deref());
                Ok(Served::Local(Pipelined(M::Local::new(redis, &name))))
            }
            Platform::Aws => Ok(Served::Other((self.aws)(resource).await?)),
            other => Err(Fault::unsupported(format!(
                "{} are served on `aws` and in a `local` session, and the deployment's platform is `{other}` \
                 (CELERITY_PLATFORM)",
                self.kinds
            ))),
        }
    }
}

/// The operations' names, as errors give them.
pub(crate) struct Operations {
    pub(crate) one: &'static str,
    pub(crate) batch: &'static str,
}

/// A handle's shared part: its resource and its backend, made on first use
/// from one of `backends`.
pub(crate) struct Sender<M: Outgoing> {
    kind: ResourceKind,
    operations: Operations,
    backends: &'static Backends<M>,
    backend: FirstUse<Served<M>>,
}

impl<M: Outgoing> Sender<M> {
    /// The sender of `resource`, its backend one of `backends`, made when
    /// first used.
    pub(crate) fn lazy(resource: ResourceRef, operations: Operations, backends: &'static Backends<M>) -> Self {
        let kind = resource.kind().clone();
        Sender { kind, operations, backends, backend: FirstUse::lazy(resource) }
    }

    /// The sender of the resource `name` of `kind`, served by `backend`
    /// rather than one of `backends`.
    pub(crate) fn with_backend(
        name: &str,
        kind: ResourceKind,
        operations: Operations,
        backends: &'static Backends<M>,
        backend: Arc<dyn Backend<M>>,
    ) -> Self {
        Sender { kind, operations, backends, backend: FirstUse::ready(name, Served::Other(backend)) }
    }

    pub(crate) fn name(&self) -> &str {
        self.backend.name()
    }

    pub(crate) async fn send(&self, message: M) -> Result<String, ResourceError> {
        let sent = async {
            let served = self.backend().await?;
            served.backend().check(&message)?;
            match served {
                Served::Local(Pipelined(local)) => local.send_unboxed(&message).await,
                Served::Other(other) => other.send(&message).await,
            }
        };
        sent.await.map_err(|fault| self.error(self.operations.one, fault))
    }

    pub(crate) async fn send_batch(&self, entries: Vec<BatchEntry<M>>) -> Result<BatchResult, ResourceError> {
        let name = |fault| self.error(self.operations.batch, fault);
        batch::check_count(entries.len()).map_err(name)?;
        let backend = self.backend().await.map_err(name)?.backend();
        batch::send_batch(
            &entries,
            backend.chunking(),
            |message| backend.check(message),
            name,
            |messages| backend.send_chunk(messages),
        )
        .await
    }

    async fn backend(&self) -> Result<&Served<M>, Fault> {
        self.backend.get(|resource| self.backends.resolve(resource)).await
    }

    fn error(&self, operation: &'static str, fault: Fault) -> ResourceError {
        ResourceError::new(self.name(), self.kind.clone(), operation, fault)
    }
}

/// The builder methods and getters a queue's and a topic's messages share:
/// a group, a deduplication id and attributes. `$fifo` names the resource
/// that orders and deduplicates messages (`an SQS FIFO queue`).
macro_rules! shared_message_options {
    ($fifo:literal) => {
        #[doc = concat!("The group the message is ordered within, on ", $fifo, ".")]
        pub fn with_group_id(mut self, group_id: impl Into<String>) -> Self {
            self.group_id = Some(group_id.into());
            self
        }

        #[doc = concat!(
                            "The id ", $fifo, " drops a second copy of the message by, within its deduplication window."
                        )]
        pub fn with_deduplication_id(mut self, deduplication_id: impl Into<String>) -> Self {
            self.deduplication_id = Some(deduplication_id.into());
            self
        }

        /// An attribute (a string) carried beside the body, at most
        /// [`MAX_ATTRIBUTES`](crate::resources::MAX_ATTRIBUTES) of them.
        pub fn with_attribute(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
            self.attributes.insert(name.into(), value.into());
            self
        }

        /// The group id, if any.
        pub fn group_id(&self) -> Option<&str> {
            self.group_id.as_deref()
        }

        /// The deduplication id, if any.
        pub fn deduplication_id(&self) -> Option<&str> {
            self.deduplication_id.as_deref()
        }

        /// The attributes.
        pub fn attributes(&self) -> &std::collections::BTreeMap<String, String> {
            &self.attributes
        }
    };
}

pub(crate) use shared_message_options;
