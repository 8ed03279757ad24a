//! The sort-key range of a query: which part of a partition it reads.

use std::cmp::Ordering;

use super::key::KeyAttribute;
use super::value::Value;
use crate::resources::error::Fault;

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

impl SortKey {
    /// The range, or why DynamoDB would refuse it for the sort key
    /// `attribute`: bounds of another type than the key's, `begins_with`
    /// on a number, a `between` whose low bound is above its high one.
    /// Refused before sending, so that the in-memory and file tables
    /// refuse it too, rather than answer an empty page.
    pub(crate) fn check(&self, attribute: &KeyAttribute) -> Result<(), Fault> {
        let invalid = |why: String| Fault::invalid("InvalidQuery", why);
        let bounds = match self {
            SortKey::Eq(bound)
            | SortKey::Lt(bound)
            | SortKey::Le(bound)
            | SortKey::Gt(bound)
            | SortKey::Ge(bound)
            | SortKey::BeginsWith(bound) => vec![bound],
            SortKey::Between(low, high) => vec![low, high],
        };
        if let Some(bound) = bounds.iter().find(|bound| !attribute.kind().holds(bound)) {
            return Err(invalid(format!(
                "the sort key `{}` holds {:?} values, and the range is given {bound:?}",
                attribute.name(),
                attribute.kind()
            )));
        }
        match self {
            SortKey::BeginsWith(Value::Number(_)) => Err(invalid(format!(
                "`begins_with` takes text or bytes, and the sort key `{}` is a number",
                attribute.name()
            ))),
            SortKey::Between(low, high) if low.compare(high) == Some(Ordering::Greater) => {
                Err(invalid(format!("the range between {low:?} and {high:?} has its low bound above its high one")))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::datastore::KeyKind;

    #[test]
    fn a_range_dynamodb_would_refuse_is_refused_before_sending() {
        let number = KeyAttribute::new("at", KeyKind::Number);
        let text = KeyAttribute::new("sk", KeyKind::String);
        let code = |range: SortKey, attribute: &KeyAttribute| range.check(attribute).unwrap_err().code;
        assert_eq!(code(SortKey::begins_with(12), &number).as_deref(), Some("InvalidQuery"));
        assert_eq!(code(SortKey::eq("12"), &number).as_deref(), Some("InvalidQuery"));
        assert_eq!(code(SortKey::gt(3), &text).as_deref(), Some("InvalidQuery"));
        assert_eq!(code(SortKey::between(10, 9), &number).as_deref(), Some("InvalidQuery"));
        assert_eq!(code(SortKey::between("b", "a"), &text).as_deref(), Some("InvalidQuery"));
        assert!(SortKey::between(9, 10).check(&number).is_ok());
        assert!(SortKey::between(Value::number("9.5"), 10).check(&number).is_ok());
        assert!(SortKey::begins_with("2026-").check(&text).is_ok());
    }
}
