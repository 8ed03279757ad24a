//! Queries and scans: what they read, and the pages they answer with.

use super::condition::Condition;
use super::key_condition::SortKey;
use super::value::Value;

/// The options a query and a scan share: a consistent read (`$consistent`
/// says what it means for the kind), a page's size, and the cursor to
/// start from.
macro_rules! page_options {
    ($consistent:literal) => {
        #[doc = $consistent]
        pub fn consistent(mut self) -> Self {
            self.consistent = true;
            self
        }

        /// At most `limit` items read for a page.
        pub fn limit(mut self, limit: u32) -> Self {
            self.limit = Some(limit);
            self
        }

        /// From where the page that gave `cursor` stopped.
        pub fn cursor(mut self, cursor: impl Into<String>) -> Self {
            self.cursor = Some(cursor.into());
            self
        }
    };
}

/// A read of the items under one partition, in sort-key order: narrowed by
/// a sort-key range, filtered, on the table or one of its indexes, forward
/// or backward, a page of at most `limit` items at a time from a cursor.
///
/// ```
/// use celerity::resources::datastore::{Query, SortKey, attribute};
///
/// let recent_open = Query::partition("customer-7")
///     .sort(SortKey::ge("2026-01-01"))
///     .filter(attribute("status").eq("open"))
///     .descending()
///     .limit(20);
/// # let _ = recent_open;
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub(crate) partition: Value,
    pub(crate) sort: Option<SortKey>,
    pub(crate) filter: Option<Condition>,
    pub(crate) index: Option<String>,
    pub(crate) descending: bool,
    pub(crate) consistent: bool,
    pub(crate) limit: Option<u32>,
    pub(crate) cursor: Option<String>,
}

impl Query {
    /// The items whose partition key is `value`.
    pub fn partition(value: impl Into<Value>) -> Self {
        Query {
            partition: value.into(),
            sort: None,
            filter: None,
            index: None,
            descending: false,
            consistent: false,
            limit: None,
            cursor: None,
        }
    }

    /// Only the items whose sort key is in `range`.
    pub fn sort(mut self, range: SortKey) -> Self {
        self.sort = Some(range);
        self
    }

    /// Only the items `filter` holds for. A filter applies after the read:
    /// a page may hold fewer than `limit` items, and still not be the last.
    pub fn filter(mut self, filter: Condition) -> Self {
        self.filter = Some(filter);
        self
    }

    /// On the index `name` rather than the table: the partition and sort
    /// values are the index's.
    pub fn index(mut self, name: impl Into<String>) -> Self {
        self.index = Some(name.into());
        self
    }

    /// From the highest sort key down.
    pub fn descending(mut self) -> Self {
        self.descending = true;
        self
    }

    page_options!(
        "Read strongly consistent: every write before the query is seen, at twice the cost. A global secondary \
         index is read eventually consistent only, and refuses it."
    );

    /// What a cursor is bound to: the query, but for its cursor and page
    /// size.
    pub(crate) fn shape(&self) -> String {
        format!("query|{:?}|{:?}|{:?}|{:?}|{}", self.index, self.partition, self.sort, self.filter, self.descending)
    }
}

/// A read of the whole table, filtered, a page of at most `limit` items at
/// a time from a cursor. Every item is read, whatever the filter keeps:
/// prefer a [`Query`] where the data allows one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scan {
    pub(crate) filter: Option<Condition>,
    pub(crate) limit: Option<u32>,
    pub(crate) consistent: bool,
    pub(crate) cursor: Option<String>,
}

impl Scan {
    /// Every item.
    pub fn new() -> Self {
        Scan::default()
    }

    /// Only the items `filter` holds for.
    pub fn filter(mut self, filter: Condition) -> Self {
        self.filter = Some(filter);
        self
    }

    page_options!("Read strongly consistent, at twice the cost.");

    pub(crate) fn shape(&self) -> String {
        format!("scan|{:?}", self.filter)
    }
}

/// One page of a query or scan: its items, and the cursor to read the
/// next page from, `None` after the last. A page can be empty and still
/// have a cursor, where a filter kept none of what was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    /// The items, in the order read.
    pub items: Vec<T>,
    /// Where the next page starts: opaque text to hand back to
    /// [`Query::cursor`] or [`Scan::cursor`] (a client may carry it).
    pub cursor: Option<String>,
}
