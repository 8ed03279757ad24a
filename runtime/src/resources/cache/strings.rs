//! Strings and counters: a value per key, and arithmetic done by the cache
//! so that two handlers counting the same thing never lose a count.

use std::collections::HashMap;
use std::time::Duration;

use redis::{Cmd, Value};

use super::Cache;
use super::names::Names;
use crate::resources::error::{Fault, ResourceError};

/// How [`Cache::set_with`] stores a value: for how long, and on what
/// condition.
///
/// ```
/// use std::time::Duration;
///
/// use celerity::resources::cache::SetOptions;
///
/// // A lock: taken only where nobody holds it, and let go after 30 s even
/// // if its holder never comes back.
/// let lock = SetOptions::new().ttl(Duration::from_secs(30)).if_absent();
/// # let _ = lock;
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SetOptions {
    ttl: Option<Duration>,
    condition: Option<&'static str>,
}

/// `SET key value` as `options` say.
pub(super) fn set_command(names: &Names<'_>, key: &str, value: &str, options: SetOptions) -> Result<Cmd, Fault> {
    let mut command = redis::cmd("SET");
    command.arg(names.key(key)).arg(value);
    if let Some(ttl) = options.ttl {
        command.arg("PX").arg(milliseconds(ttl)?);
    }
    if let Some(condition) = options.condition {
        command.arg(condition);
    }
    Ok(command)
}

impl SetOptions {
    /// Stored for good, whatever the key holds.
    pub fn new() -> Self {
        SetOptions::default()
    }

    /// The value expires after `ttl` (at least a millisecond).
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// Stored only where the key holds nothing (`NX`).
    pub fn if_absent(mut self) -> Self {
        self.condition = Some("NX");
        self
    }

    /// Stored only where the key holds something (`XX`).
    pub fn if_present(mut self) -> Self {
        self.condition = Some("XX");
        self
    }
}

/// A TTL as Redis takes it: whole milliseconds, at least one.
pub(crate) fn milliseconds(ttl: Duration) -> Result<u64, Fault> {
    match u64::try_from(ttl.as_millis()) {
        Ok(0) => Err(Fault::invalid("InvalidTtl", "a TTL must be at least a millisecond")),
        Ok(milliseconds) => Ok(milliseconds),
        Err(_) => Err(Fault::invalid("InvalidTtl", format!("a TTL of {ttl:?} is longer than a cache keeps one"))),
    }
}

impl Cache {
    /// The value at `key`; `None` where the cache holds nothing there.
    pub async fn get(&self, key: &str) -> Result<Option<String>, ResourceError> {
        self.query("`get` on", &[], |names| redis::cmd("GET").arg(names.key(key)).take()).await
    }

    /// Stores `value` at `key`, for good, replacing what was there.
    pub async fn set(&self, key: &str, value: &str) -> Result<(), ResourceError> {
        self.query("`set` on", &[], |names| redis::cmd("SET").arg(names.key(key)).arg(value).take()).await
    }

    /// Stores `value` at `key` as `options` say: whether it was stored.
    /// `false` is no failure: a condition that did not hold, which is how a
    /// handler learns it lost a race.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use celerity::resources::cache::{Cache, SetOptions};
    ///
    /// async fn first_to_claim(cache: &Cache, job: &str) -> Result<bool, celerity::resources::ResourceError> {
    ///     let claim = SetOptions::new().ttl(Duration::from_secs(60)).if_absent();
    ///     cache.set_with(&format!("claims:{job}"), "worker-1", claim).await
    /// }
    /// # let _ = first_to_claim;
    /// ```
    pub async fn set_with(&self, key: &str, value: &str, options: SetOptions) -> Result<bool, ResourceError> {
        let answer: Value = self.query_fallible("`set` on", |names| set_command(names, key, value, options)).await?;
        Ok(answer != Value::Nil)
    }

    /// Removes `key`: whether it held anything.
    pub async fn delete(&self, key: &str) -> Result<bool, ResourceError> {
        let removed: i64 = self.query("`delete` on", &[], |names| redis::cmd("DEL").arg(names.key(key)).take()).await?;
        Ok(removed > 0)
    }

    /// Stores `value` at `key` and answers the value it replaced, at once,
    /// so that no other handler sees the key without a value.
    pub async fn get_set(&self, key: &str, value: &str) -> Result<Option<String>, ResourceError> {
        self.query("`get_set` on", &[], |names| redis::cmd("SET").arg(names.key(key)).arg(value).arg("GET").take())
            .await
    }

    /// Adds `value` to the end of the value at `key`, which is made where
    /// it holds nothing: the length of the result, in bytes.
    pub async fn append(&self, key: &str, value: &str) -> Result<u64, ResourceError> {
        self.query("`append` on", &[], |names| redis::cmd("APPEND").arg(names.key(key)).arg(value).take()).await
    }

    /// The values at `keys`, in one request per shard: the keys that hold
    /// a value, with it. A batch read is never atomic, on a cluster or not.
    pub async fn get_many(&self, keys: &[&str]) -> Result<HashMap<String, String>, ResourceError> {
        if keys.is_empty() {
            return Ok(HashMap::new());
        }
        let groups: Vec<(Vec<usize>, Vec<Option<String>>)> = self
            .query_by_shard("`get_many` on", keys, |names, group| {
                let mut command = redis::cmd("MGET");
                for &index in group {
                    command.arg(names.key(keys[index]));
                }
                command
            })
            .await?;
        let mut found = HashMap::with_capacity(keys.len());
        for (group, values) in groups {
            for (index, value) in group.into_iter().zip(values) {
                if let Some(value) = value {
                    found.insert(keys[index].to_string(), value);
                }
            }
        }
        Ok(found)
    }

    /// Stores each of `values` at its key, for good. Each shard's part is
    /// applied at once; on a cluster the parts are not, and one may be
    /// applied where another fails. Where all or none matters, put the keys
    /// on one shard with a hash tag and use a
    /// [`transaction`](Cache::transaction).
    pub async fn set_many(&self, values: &[(&str, &str)]) -> Result<(), ResourceError> {
        if values.is_empty() {
            return Ok(());
        }
        let keys: Vec<&str> = values.iter().map(|(key, _)| *key).collect();
        let _: Vec<(Vec<usize>, Value)> = self
            .query_by_shard("`set_many` on", &keys, |names, group| {
                let mut command = redis::cmd("MSET");
                for &index in group {
                    command.arg(names.key(values[index].0)).arg(values[index].1);
                }
                command
            })
            .await?;
        Ok(())
    }

    /// Removes `keys`, in one request per shard: how many held anything.
    pub async fn delete_many(&self, keys: &[&str]) -> Result<u64, ResourceError> {
        if keys.is_empty() {
            return Ok(0);
        }
        let groups: Vec<(Vec<usize>, u64)> = self
            .query_by_shard("`delete_many` on", keys, |names, group| {
                let mut command = redis::cmd("DEL");
                for &index in group {
                    command.arg(names.key(keys[index]));
                }
                command
            })
            .await?;
        Ok(groups.into_iter().map(|(_, removed)| removed).sum())
    }

    /// Adds `delta` to the counter at `key`, a key holding nothing counting
    /// as 0: what it became. Done by the cache, so overlapping handlers
    /// never lose a count.
    pub async fn increment(&self, key: &str, delta: i64) -> Result<i64, ResourceError> {
        self.query("`increment` on", &[], |names| redis::cmd("INCRBY").arg(names.key(key)).arg(delta).take()).await
    }

    /// Takes `delta` from the counter at `key`: what it became.
    pub async fn decrement(&self, key: &str, delta: i64) -> Result<i64, ResourceError> {
        self.query("`decrement` on", &[], |names| redis::cmd("DECRBY").arg(names.key(key)).arg(delta).take()).await
    }

    /// Adds `delta` (negative to take away) to the counter at `key`, which
    /// need not be whole: what it became.
    pub async fn increment_float(&self, key: &str, delta: f64) -> Result<f64, ResourceError> {
        self.query("`increment_float` on", &[], |names| redis::cmd("INCRBYFLOAT").arg(names.key(key)).arg(delta).take())
            .await
    }
}
