//! Sets: unique members in no order, for tags, membership, and counting a
//! thing once however often it happens.

use super::Cache;
use crate::resources::error::ResourceError;

impl Cache {
    /// Adds `members` to the set at `key`: how many were new.
    pub async fn set_add(&self, key: &str, members: &[&str]) -> Result<u64, ResourceError> {
        if members.is_empty() {
            return Ok(0);
        }
        self.query("`set_add` on", &[], |names| redis::cmd("SADD").arg(names.key(key)).arg(members).take()).await
    }

    /// Removes `members` from the set at `key`: how many were there.
    pub async fn set_remove(&self, key: &str, members: &[&str]) -> Result<u64, ResourceError> {
        if members.is_empty() {
            return Ok(0);
        }
        self.query("`set_remove` on", &[], |names| redis::cmd("SREM").arg(names.key(key)).arg(members).take()).await
    }

    /// Every member of the set at `key`, in no order; empty where it holds
    /// nothing.
    pub async fn set_members(&self, key: &str) -> Result<Vec<String>, ResourceError> {
        self.query("`set_members` on", &[], |names| redis::cmd("SMEMBERS").arg(names.key(key)).take()).await
    }

    /// Whether `member` is in the set at `key`.
    pub async fn set_is_member(&self, key: &str, member: &str) -> Result<bool, ResourceError> {
        self.query("`set_is_member` on", &[], |names| redis::cmd("SISMEMBER").arg(names.key(key)).arg(member).take())
            .await
    }

    /// How many members the set at `key` has; 0 where it holds nothing.
    pub async fn set_len(&self, key: &str) -> Result<u64, ResourceError> {
        self.query("`set_len` on", &[], |names| redis::cmd("SCARD").arg(names.key(key)).take()).await
    }

    /// The members of any of the sets at `keys`. On a cluster the keys must
    /// be on one shard, since the cache computes this itself.
    pub async fn set_union(&self, keys: &[&str]) -> Result<Vec<String>, ResourceError> {
        self.combine("`set_union` on", "SUNION", keys).await
    }

    /// The members every set at `keys` has. One shard, as for
    /// [`set_union`](Cache::set_union).
    ///
    /// ```
    /// use celerity::resources::cache::Cache;
    ///
    /// async fn common_friends(cache: &Cache, a: &str, b: &str) -> Result<Vec<String>, celerity::resources::ResourceError> {
    ///     // One hash tag, so that both sets are on one shard of a cluster.
    ///     cache.set_intersect(&[&format!("{{friends}}:{a}"), &format!("{{friends}}:{b}")]).await
    /// }
    /// # let _ = common_friends;
    /// ```
    pub async fn set_intersect(&self, keys: &[&str]) -> Result<Vec<String>, ResourceError> {
        self.combine("`set_intersect` on", "SINTER", keys).await
    }

    /// The members of the first set at `keys` that none of the others has.
    /// One shard, as for [`set_union`](Cache::set_union).
    pub async fn set_diff(&self, keys: &[&str]) -> Result<Vec<String>, ResourceError> {
        self.combine("`set_diff` on", "SDIFF", keys).await
    }

    async fn combine(&self, operation: &'static str, name: &str, keys: &[&str]) -> Result<Vec<String>, ResourceError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        self.query(operation, keys, |names| {
            let mut command = redis::cmd(name);
            for key in keys {
                command.arg(names.key(key));
            }
            command
        })
        .await
    }
}
