//! What a handle makes of its resource on first use (a connection, a
//! client, a backend), shared by the handle's clones.

use std::future::Future;

use tokio::sync::OnceCell;

use super::ResourceRef;
use super::error::Fault;
use crate::future::BoxFuture;

/// A handle's resource and what is made of it on the first operation.
///
/// Made once: concurrent first operations wait for the one making it, and
/// a failure is tried again by the next operation. A handle made around a
/// stand-in (`ready`) has it from the start and no resource.
pub(crate) struct FirstUse<T> {
    name: String,
    resource: Option<ResourceRef>,
    made: OnceCell<T>,
}

impl<T: Send + Sync> FirstUse<T> {
    /// What will be made of `resource`, on first use.
    pub(crate) fn lazy(resource: ResourceRef) -> Self {
        FirstUse { name: resource.name().to_string(), resource: Some(resource), made: OnceCell::new() }
    }

    /// The resource `name`, served by `made` from the start.
    pub(crate) fn ready(name: &str, made: T) -> Self {
        FirstUse { name: name.to_string(), resource: None, made: OnceCell::new_with(Some(made)) }
    }

    /// The blueprint resource's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// What was made, `make` making it from the resource on the first call.
    pub(crate) async fn get<'a, F, Fut>(&'a self, make: F) -> Result<&'a T, Fault>
    where
        F: FnOnce(&'a ResourceRef) -> Fut + Send + 'a,
        Fut: Future<Output = Result<T, Fault>> + Send + 'a,
    {
        match self.made.get() {
            Some(made) => Ok(made),
            None => self.first(make).await,
        }
    }

    /// The first call's making, boxed: held inline, its future would make
    /// every operation's future larger, to be moved on every operation.
    fn first<'a, F, Fut>(&'a self, make: F) -> BoxFuture<'a, Result<&'a T, Fault>>
    where
        F: FnOnce(&'a ResourceRef) -> Fut + Send + 'a,
        Fut: Future<Output = Result<T, Fault>> + Send + 'a,
    {
        Box::pin(self.made.get_or_try_init(move || async move {
            match &self.resource {
                Some(resource) => make(resource).await,
                None => Err(Fault::unsupported("the handle has no backend")),
            }
        }))
    }
}
