//! Lists: ordered, pushed and popped at either end, which makes them a
//! work queue, a feed of recent activity or a bounded buffer.

use redis::Cmd;

use super::Cache;
use super::names::Names;
use crate::resources::error::ResourceError;

/// An end of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The head: index 0 (`LPUSH`, `LPOP`).
    Front,
    /// The tail: index -1 (`RPUSH`, `RPOP`).
    Back,
}

/// `LPUSH` or `RPUSH key value ...`.
pub(super) fn push_command(names: &Names<'_>, key: &str, values: &[&str], end: End) -> Cmd {
    let name = match end {
        End::Front => "LPUSH",
        End::Back => "RPUSH",
    };
    redis::cmd(name).arg(names.key(key)).arg(values).take()
}

impl Cache {
    /// Pushes `values`, one after another, onto the `end` of the list at
    /// `key`, made where it holds nothing: its length after. Pushed at the
    /// front, the last value ends up first.
    ///
    /// ```
    /// use celerity::resources::cache::{Cache, End};
    ///
    /// async fn remember_view(cache: &Cache, user: &str, page: &str) -> Result<(), celerity::resources::ResourceError> {
    ///     let key = format!("recent:{user}");
    ///     cache.list_push(&key, &[page], End::Front).await?;
    ///     // The ten most recent pages only.
    ///     cache.list_trim(&key, 0, 9).await
    /// }
    /// # let _ = remember_view;
    /// ```
    pub async fn list_push(&self, key: &str, values: &[&str], end: End) -> Result<u64, ResourceError> {
        if values.is_empty() {
            return self.list_len(key).await;
        }
        self.query("`list_push` on", &[], |names| push_command(names, key, values, end)).await
    }

    /// Removes up to `count` values from the `end` of the list at `key`, in
    /// the order they came off; empty where it holds nothing.
    pub async fn list_pop(&self, key: &str, count: u64, end: End) -> Result<Vec<String>, ResourceError> {
        let name = match end {
            End::Front => "LPOP",
            End::Back => "RPOP",
        };
        if count == 0 {
            return Ok(Vec::new());
        }
        let popped: Option<Vec<String>> =
            self.query("`list_pop` on", &[], |names| redis::cmd(name).arg(names.key(key)).arg(count).take()).await?;
        Ok(popped.unwrap_or_default())
    }

    /// The values from index `start` to `stop`, both included, where 0 is
    /// the first and -1 the last; the list is left as it is.
    pub async fn list_range(&self, key: &str, start: i64, stop: i64) -> Result<Vec<String>, ResourceError> {
        self.query("`list_range` on", &[], |names| redis::cmd("LRANGE").arg(names.key(key)).arg(start).arg(stop).take())
            .await
    }

    /// The length of the list at `key`; 0 where it holds nothing.
    pub async fn list_len(&self, key: &str) -> Result<u64, ResourceError> {
        self.query("`list_len` on", &[], |names| redis::cmd("LLEN").arg(names.key(key)).take()).await
    }

    /// Keeps only the values from index `start` to `stop`, both included.
    pub async fn list_trim(&self, key: &str, start: i64, stop: i64) -> Result<(), ResourceError> {
        self.query("`list_trim` on", &[], |names| redis::cmd("LTRIM").arg(names.key(key)).arg(start).arg(stop).take())
            .await
    }

    /// The value at `index` (-1 the last); `None` outside the list.
    pub async fn list_index(&self, key: &str, index: i64) -> Result<Option<String>, ResourceError> {
        self.query("`list_index` on", &[], |names| redis::cmd("LINDEX").arg(names.key(key)).arg(index).take()).await
    }
}
