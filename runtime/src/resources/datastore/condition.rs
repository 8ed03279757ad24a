//! Conditions on an item's attributes: what a write requires of the item
//! it replaces, and what a query or scan keeps (a filter).
//!
//! One model serves every backend: DynamoDB receives it compiled to a
//! condition expression, and the in-memory engine evaluates it directly,
//! by DynamoDB's rules.

use std::ops::Not;

use super::value::Value;

/// An attribute of an item, at the top level or inside maps: made with
/// [`attribute`], and [`Path::field`] for a map's field.
///
/// ```
/// use celerity::resources::datastore::attribute;
///
/// let open = attribute("status").eq("open");
/// let in_leeds = attribute("address").field("city").eq("Leeds");
/// let _either = open.or(in_leeds);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Path {
    pub(crate) segments: Vec<String>,
}

/// The attribute `name` of an item.
pub fn attribute(name: impl Into<String>) -> Path {
    Path { segments: vec![name.into()] }
}

impl Path {
    /// The field `name` of the map this path holds.
    pub fn field(mut self, name: impl Into<String>) -> Path {
        self.segments.push(name.into());
        self
    }

    /// Holds when the item has the attribute.
    pub fn exists(self) -> Condition {
        Condition::Exists(self)
    }

    /// Holds when the item lacks the attribute.
    pub fn not_exists(self) -> Condition {
        Condition::NotExists(self)
    }

    /// Holds when the attribute equals `value`.
    pub fn eq(self, value: impl Into<Value>) -> Condition {
        Condition::Compare(self, Comparison::Eq, value.into())
    }

    /// Holds when the attribute is not `value`, or is absent.
    pub fn ne(self, value: impl Into<Value>) -> Condition {
        Condition::Compare(self, Comparison::Ne, value.into())
    }

    /// Holds when the attribute is below `value` (of the same type).
    pub fn lt(self, value: impl Into<Value>) -> Condition {
        Condition::Compare(self, Comparison::Lt, value.into())
    }

    /// Holds when the attribute is at most `value` (of the same type).
    pub fn le(self, value: impl Into<Value>) -> Condition {
        Condition::Compare(self, Comparison::Le, value.into())
    }

    /// Holds when the attribute is above `value` (of the same type).
    pub fn gt(self, value: impl Into<Value>) -> Condition {
        Condition::Compare(self, Comparison::Gt, value.into())
    }

    /// Holds when the attribute is at least `value` (of the same type).
    pub fn ge(self, value: impl Into<Value>) -> Condition {
        Condition::Compare(self, Comparison::Ge, value.into())
    }

    /// Holds when the attribute is within `low` and `high`, both included.
    pub fn between(self, low: impl Into<Value>, high: impl Into<Value>) -> Condition {
        Condition::Between(self, low.into(), high.into())
    }

    /// Holds when the attribute (text or bytes) starts with `prefix`.
    pub fn begins_with(self, prefix: impl Into<Value>) -> Condition {
        Condition::BeginsWith(self, prefix.into())
    }

    /// Holds when the attribute contains `value`: a substring of text, an
    /// element of a set or a list.
    pub fn contains(self, value: impl Into<Value>) -> Condition {
        Condition::Contains(self, value.into())
    }
}

/// How [`Condition::Compare`] compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    /// Equal.
    Eq,
    /// Not equal.
    Ne,
    /// Less than.
    Lt,
    /// Less than or equal.
    Le,
    /// Greater than.
    Gt,
    /// Greater than or equal.
    Ge,
}

/// A condition on an item's attributes. Made from a [`Path`] and combined
/// with [`and`](Condition::and), [`or`](Condition::or) and `!`
/// ([`Not`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Condition {
    /// The attribute is there.
    Exists(Path),
    /// The attribute is not there.
    NotExists(Path),
    /// The attribute compared with a value.
    Compare(Path, Comparison, Value),
    /// The attribute within two values, both included.
    Between(Path, Value, Value),
    /// The attribute starts with a prefix.
    BeginsWith(Path, Value),
    /// The attribute contains a value.
    Contains(Path, Value),
    /// Both hold.
    And(Box<Condition>, Box<Condition>),
    /// Either holds.
    Or(Box<Condition>, Box<Condition>),
    /// The condition does not hold.
    Not(Box<Condition>),
}

impl Condition {
    /// Holds when this and `other` hold.
    pub fn and(self, other: Condition) -> Condition {
        Condition::And(Box::new(self), Box::new(other))
    }

    /// Holds when this or `other` holds.
    pub fn or(self, other: Condition) -> Condition {
        Condition::Or(Box::new(self), Box::new(other))
    }
}

impl Not for Condition {
    type Output = Condition;

    fn not(self) -> Condition {
        Condition::Not(Box::new(self))
    }
}

/// `a` and `b`, where either may be absent.
pub(crate) fn both(a: Option<Condition>, b: Option<Condition>) -> Option<Condition> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.and(b)),
        (a, b) => a.or(b),
    }
}

/// The top-level attribute names `condition` reads.
pub(crate) fn first_names(condition: &Condition) -> Box<dyn Iterator<Item = &str> + '_> {
    fn first(path: &Path) -> Option<&str> {
        path.segments.first().map(String::as_str)
    }
    match condition {
        Condition::Exists(path)
        | Condition::NotExists(path)
        | Condition::Compare(path, ..)
        | Condition::Between(path, ..)
        | Condition::BeginsWith(path, _)
        | Condition::Contains(path, _) => Box::new(first(path).into_iter()),
        Condition::And(a, b) | Condition::Or(a, b) => Box::new(first_names(a).chain(first_names(b))),
        Condition::Not(inner) => first_names(inner),
    }
}
