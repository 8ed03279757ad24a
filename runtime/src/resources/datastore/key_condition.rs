//! The sort-key range of a query: which part of a partition it reads.

use super::value::Value;

/// Narrows a query to part of its partition by the sort key. Unlike a
/// filter it narrows what is read, not only what is answered.
///
/// ```
/// use celerity::resources::datastore::{Query, SortKey};
///
/// let march = Query::partition("customer-7").sort(SortKey::between("2026-03-01", "2026-03-31"));
/// let drafts = Query::partition("customer-7").sort(SortKey::begins_with("draft#"));
/// # let _ = (march, drafts);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SortKey {
    /// Equal to the value.
    Eq(Value),
    /// Below the value.
    Lt(Value),
    /// At most the value.
    Le(Value),
    /// Above the value.
    Gt(Value),
    /// At least the value.
    Ge(Value),
    /// Within the two values, both included.
    Between(Value, Value),
    /// Starting with the prefix (text or bytes).
    BeginsWith(Value),
}

impl SortKey {
    /// Equal to `value`.
    pub fn eq(value: impl Into<Value>) -> Self {
        SortKey::Eq(value.into())
    }

    /// Below `value`.
    pub fn lt(value: impl Into<Value>) -> Self {
        SortKey::Lt(value.into())
    }

    /// At most `value`.
    pub fn le(value: impl Into<Value>) -> Self {
        SortKey::Le(value.into())
    }

    /// Above `value`.
    pub fn gt(value: impl Into<Value>) -> Self {
        SortKey::Gt(value.into())
    }

    /// At least `value`.
    pub fn ge(value: impl Into<Value>) -> Self {
        SortKey::Ge(value.into())
    }

    /// Within `low` and `high`, both included.
    pub fn between(low: impl Into<Value>, high: impl Into<Value>) -> Self {
        SortKey::Between(low.into(), high.into())
    }

    /// Starting with `prefix`.
    pub fn begins_with(prefix: impl Into<Value>) -> Self {
        SortKey::BeginsWith(prefix.into())
    }
}
