//! Transactions: writes queued, then applied by the cache with nothing else
//! in between (`MULTI` … `EXEC`).

use std::time::Duration;

use redis::{Cmd, Value};

use super::Cache;
use super::hashes::hash_set_command;
use super::lists::{End, push_command};
use super::names::Names;
use super::sorted_sets::add_command;
use super::strings::{SetOptions, milliseconds, set_command};
use crate::resources::error::{Fault, ResourceError};

/// The commands of a [`Cache::transaction`], queued in order. Nothing is
/// sent while they are queued, so nothing can be read here: what each
/// answers comes back when the whole has been applied.
pub struct Transaction<'t> {
    names: &'t Names<'t>,
    commands: Vec<Cmd>,
    keys: Vec<String>,
    invalid: Option<Fault>,
}

impl Cache {
    /// Applies the commands `queue` queues, with nothing else in between,
    /// and answers what each answered, in order, as `redis` values (read
    /// them with [`redis::from_redis_value`]). On a cluster every key must
    /// be on one shard, which is checked before anything is sent.
    ///
    /// As Redis does, a command the cache refuses when it runs (a key of
    /// the wrong type) does not undo the others: the transaction answers
    /// that refusal, and the rest were applied.
    ///
    /// ```
    /// use celerity::resources::cache::Cache;
    ///
    /// async fn move_stock(cache: &Cache, amount: i64) -> Result<(), celerity::resources::ResourceError> {
    ///     cache
    ///         .transaction(|tx| {
    ///             tx.increment("{stock}:warehouse", -amount);
    ///             tx.increment("{stock}:shop", amount);
    ///         })
    ///         .await?;
    ///     Ok(())
    /// }
    /// # let _ = move_stock;
    /// ```
    pub async fn transaction(&self, queue: impl FnOnce(&mut Transaction<'_>)) -> Result<Vec<Value>, ResourceError> {
        let applied = async {
            let connected = self.connected().await?;
            let names = self.names(connected);
            let mut transaction = Transaction { names: &names, commands: Vec::new(), keys: Vec::new(), invalid: None };
            queue(&mut transaction);
            let Transaction { commands, keys, invalid, .. } = transaction;
            if let Some(fault) = invalid {
                return Err(fault);
            }
            if commands.is_empty() {
                return Ok(Vec::new());
            }
            if connected.backend.clustered() {
                let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
                names.on_one_shard(&keys)?;
            }
            let answers = connected.backend.run_atomically(&commands).await?;
            let mut values = Vec::with_capacity(answers.len());
            for (position, answer) in answers.into_iter().enumerate() {
                match answer {
                    Ok(value) => values.push(value),
                    Err(mut fault) => {
                        fault.message = format!(
                            "command {} of {} was refused, and the others were applied: {}",
                            position + 1,
                            commands.len(),
                            fault.message
                        );
                        return Err(fault);
                    }
                }
            }
            Ok(values)
        };
        applied.await.map_err(|fault| self.error("a transaction on", fault))
    }
}

impl Transaction<'_> {
    fn push(&mut self, key: &str, command: Cmd) -> &mut Self {
        self.keys.push(key.to_string());
        self.commands.push(command);
        self
    }

    /// Keeps the first command that cannot be sent, so that nothing is.
    fn refuse(&mut self, fault: Fault) -> &mut Self {
        self.invalid.get_or_insert(fault);
        self
    }

    /// Queues [`Cache::get`].
    pub fn get(&mut self, key: &str) -> &mut Self {
        let command = redis::cmd("GET").arg(self.names.key(key)).take();
        self.push(key, command)
    }

    /// Queues [`Cache::set`].
    pub fn set(&mut self, key: &str, value: &str) -> &mut Self {
        let command = redis::cmd("SET").arg(self.names.key(key)).arg(value).take();
        self.push(key, command)
    }

    /// Queues [`Cache::set_with`]; it answers `Okay`, or `Nil` where its
    /// condition did not hold.
    pub fn set_with(&mut self, key: &str, value: &str, options: SetOptions) -> &mut Self {
        match set_command(self.names, key, value, options) {
            Ok(command) => self.push(key, command),
            Err(fault) => self.refuse(fault),
        }
    }

    /// Queues [`Cache::delete`].
    pub fn delete(&mut self, key: &str) -> &mut Self {
        let command = redis::cmd("DEL").arg(self.names.key(key)).take();
        self.push(key, command)
    }

    /// Queues [`Cache::append`].
    pub fn append(&mut self, key: &str, value: &str) -> &mut Self {
        let command = redis::cmd("APPEND").arg(self.names.key(key)).arg(value).take();
        self.push(key, command)
    }

    /// Queues [`Cache::increment`].
    pub fn increment(&mut self, key: &str, delta: i64) -> &mut Self {
        let command = redis::cmd("INCRBY").arg(self.names.key(key)).arg(delta).take();
        self.push(key, command)
    }

    /// Queues [`Cache::increment_float`].
    pub fn increment_float(&mut self, key: &str, delta: f64) -> &mut Self {
        let command = redis::cmd("INCRBYFLOAT").arg(self.names.key(key)).arg(delta).take();
        self.push(key, command)
    }

    /// Queues [`Cache::expire`].
    pub fn expire(&mut self, key: &str, ttl: Duration) -> &mut Self {
        match milliseconds(ttl) {
            Ok(ttl) => {
                let command = redis::cmd("PEXPIRE").arg(self.names.key(key)).arg(ttl).take();
                self.push(key, command)
            }
            Err(fault) => self.refuse(fault),
        }
    }

    /// Queues [`Cache::persist`].
    pub fn persist(&mut self, key: &str) -> &mut Self {
        let command = redis::cmd("PERSIST").arg(self.names.key(key)).take();
        self.push(key, command)
    }

    /// Queues [`Cache::hash_set`].
    pub fn hash_set(&mut self, key: &str, fields: &[(&str, &str)]) -> &mut Self {
        let command = hash_set_command(self.names, key, fields);
        self.push(key, command)
    }

    /// Queues [`Cache::hash_delete`].
    pub fn hash_delete(&mut self, key: &str, fields: &[&str]) -> &mut Self {
        let command = redis::cmd("HDEL").arg(self.names.key(key)).arg(fields).take();
        self.push(key, command)
    }

    /// Queues [`Cache::hash_increment`].
    pub fn hash_increment(&mut self, key: &str, field: &str, delta: i64) -> &mut Self {
        let command = redis::cmd("HINCRBY").arg(self.names.key(key)).arg(field).arg(delta).take();
        self.push(key, command)
    }

    /// Queues [`Cache::list_push`].
    pub fn list_push(&mut self, key: &str, values: &[&str], end: End) -> &mut Self {
        let command = push_command(self.names, key, values, end);
        self.push(key, command)
    }

    /// Queues [`Cache::list_trim`].
    pub fn list_trim(&mut self, key: &str, start: i64, stop: i64) -> &mut Self {
        let command = redis::cmd("LTRIM").arg(self.names.key(key)).arg(start).arg(stop).take();
        self.push(key, command)
    }

    /// Queues [`Cache::set_add`].
    pub fn set_add(&mut self, key: &str, members: &[&str]) -> &mut Self {
        let command = redis::cmd("SADD").arg(self.names.key(key)).arg(members).take();
        self.push(key, command)
    }

    /// Queues [`Cache::set_remove`].
    pub fn set_remove(&mut self, key: &str, members: &[&str]) -> &mut Self {
        let command = redis::cmd("SREM").arg(self.names.key(key)).arg(members).take();
        self.push(key, command)
    }

    /// Queues [`Cache::sorted_set_add`].
    pub fn sorted_set_add(&mut self, key: &str, members: &[(&str, f64)]) -> &mut Self {
        let command = add_command(self.names, key, members);
        self.push(key, command)
    }

    /// Queues [`Cache::sorted_set_remove`].
    pub fn sorted_set_remove(&mut self, key: &str, members: &[&str]) -> &mut Self {
        let command = redis::cmd("ZREM").arg(self.names.key(key)).arg(members).take();
        self.push(key, command)
    }

    /// Queues [`Cache::sorted_set_increment`].
    pub fn sorted_set_increment(&mut self, key: &str, member: &str, delta: f64) -> &mut Self {
        let command = redis::cmd("ZINCRBY").arg(self.names.key(key)).arg(delta).arg(member).take();
        self.push(key, command)
    }
}

impl std::fmt::Debug for Transaction<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction").field("commands", &self.commands.len()).finish_non_exhaustive()
    }
}
