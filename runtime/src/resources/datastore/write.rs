//! What a write requires of the item it replaces, and revisions:
//! optimistic concurrency without reading before writing.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use super::condition::{Condition, attribute};
use super::key::KeySchema;

/// The attribute a write stamps an item's revision in. Reserved: it is
/// taken off every item read, before the item reaches the application.
pub const REVISION_ATTRIBUTE: &str = "_celerity_rev";

/// The version of an item as read, to make a later write conditional on
/// nothing having changed it since ([`Write::if_revision`]).
///
/// Opaque: every write stamps a new, unrelated one, and revisions are
/// only compared for equality. An item written by anything other than a
/// Celerity SDK has none, and reads with the *unrevisioned* revision, which
/// requires of a write that the item still carries none.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Revision(pub(crate) Option<String>);

impl Revision {
    /// Whether the item carried a revision.
    pub fn is_revisioned(&self) -> bool {
        self.0.is_some()
    }

    /// A revision no other write has stamped: random, as a counter would
    /// need a read before each write.
    pub(crate) fn fresh() -> String {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let mut text = String::with_capacity(32);
        for _ in 0..2 {
            // Each RandomState is seeded anew from the process's random keys.
            let mut hasher = RandomState::new().build_hasher();
            hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
            if let Ok(now) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
                hasher.write_u128(now.as_nanos());
            }
            text.push_str(&format!("{:016x}", hasher.finish()));
        }
        text
    }
}

/// An item as read, with its [`Revision`].
#[derive(Debug, Clone, PartialEq)]
pub struct Stored<T> {
    /// The item.
    pub item: T,
    /// Its revision, for a later write.
    pub revision: Revision,
}

/// What a write (put, update, delete) requires of the item under its key;
/// where it does not hold, nothing is written and the write fails as
/// [`ConditionFailed`](crate::resources::ResourceErrorKind::ConditionFailed).
///
/// ```
/// use celerity::resources::datastore::{Write, attribute};
///
/// let only_new = Write::new().if_absent();
/// let still_open = Write::new().condition(attribute("status").eq("open"));
/// # let _ = (only_new, still_open);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Write {
    condition: Option<Condition>,
    revision: Option<Revision>,
    presence: Option<bool>,
}

impl Write {
    /// No requirement.
    pub fn new() -> Self {
        Write::default()
    }

    /// Requires `condition` of the item (and of an absent item, the
    /// condition as it holds for no attributes at all).
    pub fn condition(mut self, condition: Condition) -> Self {
        self.condition = super::condition::both(self.condition.take(), Some(condition));
        self
    }

    /// Requires the item to be at `revision` still: nothing has written it
    /// since it was read.
    pub fn if_revision(mut self, revision: &Revision) -> Self {
        self.revision = Some(revision.clone());
        self
    }

    /// Requires that there is no item under the key.
    pub fn if_absent(mut self) -> Self {
        self.presence = Some(false);
        self
    }

    /// Requires that there is an item under the key.
    pub fn if_present(mut self) -> Self {
        self.presence = Some(true);
        self
    }

    /// Everything it requires as one condition, for a table keyed by
    /// `schema`.
    pub(crate) fn compile(&self, schema: &KeySchema) -> Option<Condition> {
        let partition = || attribute(schema.partition().name());
        let presence =
            self.presence.map(|present| if present { partition().exists() } else { partition().not_exists() });
        let revision = self.revision.as_ref().map(|revision| match &revision.0 {
            Some(value) => attribute(REVISION_ATTRIBUTE).eq(value.as_str()),
            None => partition().exists().and(attribute(REVISION_ATTRIBUTE).not_exists()),
        });
        super::condition::both(super::condition::both(presence, revision), self.condition.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_do_not_repeat() {
        let a = Revision::fresh();
        assert_eq!(a.len(), 32);
        assert_ne!(a, Revision::fresh());
    }
}
