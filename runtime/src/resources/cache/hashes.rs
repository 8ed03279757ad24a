//! Hashes: fields under one key, for a structured value read and written a
//! field at a time rather than whole.

use std::collections::HashMap;

use redis::Cmd;

use super::Cache;
use super::names::Names;
use crate::resources::error::ResourceError;

/// `HSET key field value ...`.
pub(super) fn hash_set_command(names: &Names<'_>, key: &str, fields: &[(&str, &str)]) -> Cmd {
    let mut command = redis::cmd("HSET");
    command.arg(names.key(key));
    for (field, value) in fields {
        command.arg(*field).arg(*value);
    }
    command
}

impl Cache {
    /// The field `field` of the hash at `key`; `None` where either holds
    /// nothing.
    pub async fn hash_get(&self, key: &str, field: &str) -> Result<Option<String>, ResourceError> {
        self.query("`hash_get` on", &[], |names| redis::cmd("HGET").arg(names.key(key)).arg(field).take()).await
    }

    /// Writes `fields` to the hash at `key`, made where it holds nothing;
    /// fields not named are left as they are. How many fields were new.
    ///
    /// ```
    /// use celerity::resources::cache::Cache;
    ///
    /// async fn save_cart(cache: &Cache, cart: &str) -> Result<(), celerity::resources::ResourceError> {
    ///     cache.hash_set(&format!("cart:{cart}"), &[("apples", "3"), ("pears", "1")]).await?;
    ///     Ok(())
    /// }
    /// # let _ = save_cart;
    /// ```
    pub async fn hash_set(&self, key: &str, fields: &[(&str, &str)]) -> Result<u64, ResourceError> {
        if fields.is_empty() {
            return Ok(0);
        }
        self.query("`hash_set` on", &[], |names| hash_set_command(names, key, fields)).await
    }

    /// Removes `fields` from the hash at `key`: how many were there.
    pub async fn hash_delete(&self, key: &str, fields: &[&str]) -> Result<u64, ResourceError> {
        if fields.is_empty() {
            return Ok(0);
        }
        self.query("`hash_delete` on", &[], |names| redis::cmd("HDEL").arg(names.key(key)).arg(fields).take()).await
    }

    /// Every field of the hash at `key`; empty where it holds nothing.
    pub async fn hash_get_all(&self, key: &str) -> Result<HashMap<String, String>, ResourceError> {
        self.query("`hash_get_all` on", &[], |names| redis::cmd("HGETALL").arg(names.key(key)).take()).await
    }

    /// Whether the hash at `key` has `field`.
    pub async fn hash_exists(&self, key: &str, field: &str) -> Result<bool, ResourceError> {
        self.query("`hash_exists` on", &[], |names| redis::cmd("HEXISTS").arg(names.key(key)).arg(field).take()).await
    }

    /// Adds `delta` to the field `field` of the hash at `key`, a field not
    /// there counting as 0: what it became.
    pub async fn hash_increment(&self, key: &str, field: &str, delta: i64) -> Result<i64, ResourceError> {
        self.query("`hash_increment` on", &[], |names| {
            redis::cmd("HINCRBY").arg(names.key(key)).arg(field).arg(delta).take()
        })
        .await
    }

    /// The field names of the hash at `key`; empty where it holds nothing.
    pub async fn hash_keys(&self, key: &str) -> Result<Vec<String>, ResourceError> {
        self.query("`hash_keys` on", &[], |names| redis::cmd("HKEYS").arg(names.key(key)).take()).await
    }

    /// How many fields the hash at `key` has; 0 where it holds nothing.
    pub async fn hash_len(&self, key: &str) -> Result<u64, ResourceError> {
        self.query("`hash_len` on", &[], |names| redis::cmd("HLEN").arg(names.key(key)).take()).await
    }
}
