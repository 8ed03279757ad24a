//! Sorted sets: unique members each with a score, kept in score order,
//! which makes them a leaderboard, a priority queue, a time index or a rate
//! limiter's window.

use std::ops::{Bound, RangeBounds};

use redis::Cmd;

use super::Cache;
use super::names::Names;
use crate::resources::error::ResourceError;

/// Which way a sorted set is read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Order {
    /// Lowest score first.
    #[default]
    Ascending,
    /// Highest score first.
    Descending,
}

/// A page of a range by score: skip `offset` members, then take at most
/// `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// Members skipped.
    pub offset: u64,
    /// Members taken at most.
    pub count: u64,
}

/// A score bound as Redis writes it: `-inf`, `+inf`, `(1.5` (excluded),
/// `1.5` (included).
fn bound(bound: Bound<&f64>, unbounded: &str) -> String {
    match bound {
        Bound::Unbounded => unbounded.to_string(),
        Bound::Included(score) => score.to_string(),
        Bound::Excluded(score) => format!("({score}"),
    }
}

/// The bounds of `scores`: low, high.
fn bounds(scores: &impl RangeBounds<f64>) -> (String, String) {
    (bound(scores.start_bound(), "-inf"), bound(scores.end_bound(), "+inf"))
}

/// `ZADD key score member ...`.
pub(super) fn add_command(names: &Names<'_>, key: &str, members: &[(&str, f64)]) -> Cmd {
    let mut command = redis::cmd("ZADD");
    command.arg(names.key(key));
    for (member, score) in members {
        command.arg(*score).arg(*member);
    }
    command
}

impl Cache {
    /// Adds `members` with their scores to the sorted set at `key`, or
    /// moves the scores of those there: how many were new.
    ///
    /// ```
    /// use celerity::resources::cache::{Cache, Order};
    ///
    /// async fn podium(cache: &Cache) -> Result<Vec<(String, f64)>, celerity::resources::ResourceError> {
    ///     cache.sorted_set_add("scores", &[("ada", 31.0), ("grace", 42.0), ("alan", 27.5)]).await?;
    ///     cache.sorted_set_range("scores", 0, 2, Order::Descending).await
    /// }
    /// # let _ = podium;
    /// ```
    pub async fn sorted_set_add(&self, key: &str, members: &[(&str, f64)]) -> Result<u64, ResourceError> {
        if members.is_empty() {
            return Ok(0);
        }
        self.query("`sorted_set_add` on", &[], |names| add_command(names, key, members)).await
    }

    /// Removes `members` from the sorted set at `key`: how many were there.
    pub async fn sorted_set_remove(&self, key: &str, members: &[&str]) -> Result<u64, ResourceError> {
        if members.is_empty() {
            return Ok(0);
        }
        self.query("`sorted_set_remove` on", &[], |names| redis::cmd("ZREM").arg(names.key(key)).arg(members).take())
            .await
    }

    /// The score of `member`; `None` where it or the set is not there.
    pub async fn sorted_set_score(&self, key: &str, member: &str) -> Result<Option<f64>, ResourceError> {
        self.query("`sorted_set_score` on", &[], |names| redis::cmd("ZSCORE").arg(names.key(key)).arg(member).take())
            .await
    }

    /// Where `member` stands in `order`, from 0; `None` where it is not
    /// there.
    pub async fn sorted_set_rank(&self, key: &str, member: &str, order: Order) -> Result<Option<u64>, ResourceError> {
        let name = match order {
            Order::Ascending => "ZRANK",
            Order::Descending => "ZREVRANK",
        };
        self.query("`sorted_set_rank` on", &[], |names| redis::cmd(name).arg(names.key(key)).arg(member).take()).await
    }

    /// The members standing from `start` to `stop` in `order`, both
    /// included (-1 the last), with their scores.
    pub async fn sorted_set_range(
        &self,
        key: &str,
        start: i64,
        stop: i64,
        order: Order,
    ) -> Result<Vec<(String, f64)>, ResourceError> {
        self.query("`sorted_set_range` on", &[], |names| {
            let mut command = redis::cmd("ZRANGE");
            command.arg(names.key(key)).arg(start).arg(stop);
            if order == Order::Descending {
                command.arg("REV");
            }
            command.arg("WITHSCORES");
            command
        })
        .await
    }

    /// The members scoring within `scores` (`10.0..=20.0`, `..5.0`, `..`),
    /// in `order`, a page of them where `limit` says, with their scores.
    pub async fn sorted_set_range_by_score(
        &self,
        key: &str,
        scores: impl RangeBounds<f64>,
        order: Order,
        limit: Option<Limit>,
    ) -> Result<Vec<(String, f64)>, ResourceError> {
        let (low, high) = bounds(&scores);
        self.query("`sorted_set_range_by_score` on", &[], |names| {
            let mut command = redis::cmd("ZRANGE");
            command.arg(names.key(key));
            match order {
                Order::Ascending => command.arg(&low).arg(&high).arg("BYSCORE"),
                Order::Descending => command.arg(&high).arg(&low).arg("BYSCORE").arg("REV"),
            };
            if let Some(limit) = limit {
                command.arg("LIMIT").arg(limit.offset).arg(limit.count);
            }
            command.arg("WITHSCORES");
            command
        })
        .await
    }

    /// Adds `delta` to the score of `member`, which is added where it is
    /// not there: what the score became.
    pub async fn sorted_set_increment(&self, key: &str, member: &str, delta: f64) -> Result<f64, ResourceError> {
        self.query("`sorted_set_increment` on", &[], |names| {
            redis::cmd("ZINCRBY").arg(names.key(key)).arg(delta).arg(member).take()
        })
        .await
    }

    /// How many members the sorted set at `key` has; 0 where it holds
    /// nothing.
    pub async fn sorted_set_len(&self, key: &str) -> Result<u64, ResourceError> {
        self.query("`sorted_set_len` on", &[], |names| redis::cmd("ZCARD").arg(names.key(key)).take()).await
    }

    /// How many members score within `scores`, without reading them.
    pub async fn sorted_set_count(&self, key: &str, scores: impl RangeBounds<f64>) -> Result<u64, ResourceError> {
        let (low, high) = bounds(&scores);
        self.query("`sorted_set_count` on", &[], |names| {
            redis::cmd("ZCOUNT").arg(names.key(key)).arg(&low).arg(&high).take()
        })
        .await
    }

    /// Removes the members standing from `start` to `stop` (ascending, both
    /// included): how many were removed.
    pub async fn sorted_set_remove_by_rank(&self, key: &str, start: i64, stop: i64) -> Result<u64, ResourceError> {
        self.query("`sorted_set_remove_by_rank` on", &[], |names| {
            redis::cmd("ZREMRANGEBYRANK").arg(names.key(key)).arg(start).arg(stop).take()
        })
        .await
    }

    /// Removes the members scoring within `scores`: how many were removed.
    pub async fn sorted_set_remove_by_score(
        &self,
        key: &str,
        scores: impl RangeBounds<f64>,
    ) -> Result<u64, ResourceError> {
        let (low, high) = bounds(&scores);
        self.query("`sorted_set_remove_by_score` on", &[], |names| {
            redis::cmd("ZREMRANGEBYSCORE").arg(names.key(key)).arg(&low).arg(&high).take()
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_ranges_are_written_as_redis_reads_them() {
        assert_eq!(bounds(&(..)), ("-inf".to_string(), "+inf".to_string()));
        assert_eq!(bounds(&(1.5..=3.0)), ("1.5".to_string(), "3".to_string()));
        assert_eq!(bounds(&(1.5..3.0)), ("1.5".to_string(), "(3".to_string()));
        assert_eq!(bounds(&(Bound::Excluded(-2.0), Bound::Unbounded)), ("(-2".to_string(), "+inf".to_string()));
    }
}
