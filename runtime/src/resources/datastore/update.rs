//! Updates: the changes to part of an item that an update makes.

use super::condition::{Path, attribute};
use super::value::Value;

/// The changes an [`update`](super::Datastore::update) makes to an item,
/// leaving the rest of it as it was.
///
/// ```
/// use celerity::resources::datastore::{Update, attribute};
///
/// let shipped = Update::new()
///     .set("status", "shipped")
///     .set_path(attribute("address").field("verified"), true)
///     .remove("draftNote")
///     .increment("shipments", 1);
/// # let _ = shipped;
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Update {
    pub(crate) actions: Vec<Action>,
}

/// One change of an [`Update`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Action {
    Set(Path, Value),
    Remove(Path),
    /// Adds a number to the attribute, counting an absent one as zero.
    Increment(Path, Value),
}

impl Update {
    /// No changes yet.
    pub fn new() -> Self {
        Update::default()
    }

    /// Sets the attribute `name` to `value`.
    pub fn set(self, name: &str, value: impl Into<Value>) -> Self {
        self.set_path(attribute(name), value)
    }

    /// Sets the attribute at `path` to `value`.
    pub fn set_path(mut self, path: Path, value: impl Into<Value>) -> Self {
        self.actions.push(Action::Set(path, value.into()));
        self
    }

    /// Removes the attribute `name`.
    pub fn remove(self, name: &str) -> Self {
        self.remove_path(attribute(name))
    }

    /// Removes the attribute at `path`.
    pub fn remove_path(mut self, path: Path) -> Self {
        self.actions.push(Action::Remove(path));
        self
    }

    /// Adds `by` (negative to take away) to the number `name`; an absent
    /// attribute counts as zero.
    pub fn increment(self, name: &str, by: impl Into<Value>) -> Self {
        self.increment_path(attribute(name), by)
    }

    /// Adds `by` to the number at `path`; absent counts as zero.
    pub fn increment_path(mut self, path: Path, by: impl Into<Value>) -> Self {
        self.actions.push(Action::Increment(path, by.into()));
        self
    }

    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }
}
