//! What an event's guards gave, kept in its `Context`: the one part of
//! guards the context knows, so that it depends on nothing else of them.

use std::any::Any;
use std::sync::Arc;

/// An identity a guard gave, its type erased; its name kept for messages.
#[derive(Clone)]
pub(crate) struct Given {
    pub(crate) value: Arc<dyn Any + Send + Sync>,
    pub(crate) type_name: &'static str,
}

impl Given {
    pub(crate) fn new<T: Send + Sync + 'static>(identity: T) -> Self {
        Given { value: Arc::new(identity), type_name: std::any::type_name::<T>() }
    }
}

/// The identities an event's guards gave, in the guards' order.
#[derive(Clone, Default)]
pub(crate) struct Identities(pub(crate) Vec<Given>);

impl Identities {
    /// The first identity of type `T`.
    pub(crate) fn find<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.0.iter().find_map(|given| Arc::clone(&given.value).downcast::<T>().ok())
    }
}
