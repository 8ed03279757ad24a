//! Caches: the Redis-protocol caches a blueprint links to the application
//! (Valkey or Redis locally, ElastiCache on AWS). Behind the `cache`
//! feature, with `cache-aws` for IAM authentication and passwords held in
//! Secrets Manager.
//!
//! A handler takes a [`Cache`] as an argument: the application's one cache
//! as the type itself, or a cache by name through
//! [`resource!`](crate::resource). The handle connects on first use, as the
//! deployment recorded the cache in the `resources` namespace
//! ([`CacheSettings`]): host and port, TLS, cluster mode, user and
//! password or IAM tokens, and a key prefix. In a local session a cache
//! with no recorded host is the session's Redis
//! (`CELERITY_REDIS_ENDPOINT`). [`celerity::testing::TestCache`](crate::testing::TestCache)
//! answers the same operations in memory.
//!
//! What it does, grouped as Redis groups it:
//! - strings: [`get`](Cache::get), [`set`](Cache::set) with a TTL and
//!   set-if-absent or -present ([`SetOptions`]), [`get_set`](Cache::get_set),
//!   [`append`](Cache::append), [`delete`](Cache::delete), and the batches
//!   [`get_many`](Cache::get_many), [`set_many`](Cache::set_many),
//!   [`delete_many`](Cache::delete_many);
//! - counters: [`increment`](Cache::increment), [`decrement`](Cache::decrement),
//!   [`increment_float`](Cache::increment_float);
//! - keys: [`exists`](Cache::exists), [`ttl`](Cache::ttl), [`expire`](Cache::expire),
//!   [`persist`](Cache::persist), [`key_type`](Cache::key_type),
//!   [`rename`](Cache::rename), [`scan`](Cache::scan);
//! - hashes (`hash_*`), lists (`list_*`), sets (`set_*`) and sorted sets
//!   (`sorted_set_*`);
//! - [`transaction`](Cache::transaction)s, and the raw
//!   [`connection`](Cache::connection) for everything else.
//!
//! Every key a handle names is put after the deployment's prefix and the
//! handle's own ([`with_prefix`](Cache::with_prefix)); keys a scan yields
//! have them taken off again.
//!
//! On a cluster every single-key operation is routed to its shard. A
//! batch is split by shard. An operation that needs its keys together
//! (`rename`, `set_union`, a transaction) refuses keys on different shards
//! before sending anything, as [`ResourceErrorKind::Invalid`]
//! with the code `CrossSlot`: put such keys on one shard with a hash tag,
//! `{user:7}:name` and `{user:7}:prefs`.
//!
//! ```
//! use std::time::Duration;
//!
//! use celerity::http::{HttpError, Path};
//! use celerity::resources::cache::{Cache, SetOptions};
//!
//! async fn visit(cache: Cache, Path(page): Path<String>) -> Result<String, HttpError> {
//!     let fail = |error: celerity::resources::ResourceError| HttpError::internal(error.to_string());
//!     let visits = cache.increment(&format!("visits:{page}"), 1).await.map_err(fail)?;
//!     // The first visitor of the hour is remembered for an hour.
//!     let first = SetOptions::new().ttl(Duration::from_secs(3600)).if_absent();
//!     cache.set_with(&format!("first:{page}"), "me", first).await.map_err(fail)?;
//!     Ok(format!("{visits} visits"))
//! }
//! # let _ = celerity::App::new().http("GET::/pages/{page}", visit);
//! ```

mod backend;
mod hashes;
#[cfg(feature = "cache-aws")]
mod iam;
mod keys;
mod lists;
mod names;
mod sets;
mod settings;
mod slots;
mod sorted_sets;
mod strings;
mod transaction;

use std::fmt;
use std::sync::Arc;

use super::first_use::FirstUse;
use redis::{Cmd, FromRedisValue, Value};

pub use backend::CacheConnection;
pub(crate) use backend::{Backend, Runner};
pub use keys::{Expiry, KeyType, Scan, ScanOptions};
pub use lists::End;
use names::Names;
/// The `redis` crate this module is built on, for the raw
/// [`connection`](Cache::connection) and the answers of a
/// [`transaction`](Cache::transaction).
pub use redis;
pub use settings::{CacheSettings, DEFAULT_PORT};

pub use super::AuthMode;
pub use sorted_sets::{Limit, Order};
pub use strings::SetOptions;
pub use transaction::Transaction;

use super::error::{Fault, ResourceError, ResourceErrorKind};
use super::{ResourceHandle, ResourceKind, ResourceRef};
use crate::config::Platform;

/// A handle on one cache of the blueprint. Cheap to clone; clones share the
/// connection, made on the first operation. See the [module](self) docs.
#[derive(Clone)]
pub struct Cache {
    /// The cache, connected on the first operation; shared by clones.
    shared: Arc<FirstUse<Connected>>,
    /// The handle's own prefix, after the deployment's.
    prefix: Arc<str>,
}

/// A cache resolved and connected.
struct Connected {
    backend: Backend,
    settings: Option<CacheSettings>,
    /// The deployment's prefix.
    prefix: String,
}

impl Cache {
    /// A cache named `name` whose commands `runner` answers, such as the
    /// in-memory one.
    pub(crate) fn with_runner(name: &str, runner: Arc<dyn Runner>) -> Self {
        let connected = Connected { backend: Backend::Memory(runner), settings: None, prefix: String::new() };
        Cache { shared: Arc::new(FirstUse::ready(name, connected)), prefix: Arc::from("") }
    }

    /// The blueprint resource's name.
    pub fn name(&self) -> &str {
        self.shared.name()
    }

    /// This handle with `prefix` put before every key it names, after any
    /// prefix it already has. It shares the connection.
    ///
    /// ```
    /// use celerity::resources::cache::Cache;
    ///
    /// async fn remember(cache: &Cache, user: &str) -> Result<(), celerity::resources::ResourceError> {
    ///     let sessions = cache.with_prefix("sessions:");
    ///     // The key is `sessions:<user>` (after the deployment's prefix).
    ///     sessions.set(user, "active").await
    /// }
    /// # let _ = remember;
    /// ```
    pub fn with_prefix(&self, prefix: &str) -> Cache {
        Cache { shared: self.shared.clone(), prefix: format!("{}{prefix}", self.prefix).into() }
    }

    /// How the deployment recorded the cache, read on first use; `None` for
    /// an in-memory one. The password is not part of it.
    pub async fn settings(&self) -> Result<Option<CacheSettings>, ResourceError> {
        let connected = self.connected().await.map_err(|fault| self.error("reading the settings of", fault))?;
        Ok(connected.settings.clone())
    }

    /// The connection the handle uses, for the commands it does not wrap:
    /// pub/sub, streams, scripts, `WATCH`, pipelines. Keys sent through it
    /// are not prefixed. The in-memory cache has none, and answers
    /// [`Unsupported`](ResourceErrorKind::Unsupported).
    ///
    /// ```
    /// use celerity::resources::cache::Cache;
    /// use celerity::resources::cache::redis::AsyncCommands;
    ///
    /// async fn announce(cache: &Cache) -> Result<(), Box<dyn std::error::Error>> {
    ///     let mut connection = cache.connection().await?;
    ///     let _receivers: i64 = connection.publish("announcements", "hello").await?;
    ///     Ok(())
    /// }
    /// # let _ = announce;
    /// ```
    pub async fn connection(&self) -> Result<CacheConnection, ResourceError> {
        let operation = "connecting to";
        let connected = self.connected().await.map_err(|fault| self.error(operation, fault))?;
        connected.backend.connection().ok_or_else(|| {
            self.error(operation, Fault::unsupported("the in-memory cache has no connection to hand out"))
        })
    }

    /// Runs the command `build` makes, with the handle's names, and reads
    /// its answer as a `T`. Where `together` holds more than one key, they
    /// must be on one shard of a cluster.
    async fn query<T: FromRedisValue>(
        &self,
        operation: &'static str,
        together: &[&str],
        build: impl FnOnce(&Names<'_>) -> Cmd,
    ) -> Result<T, ResourceError> {
        let run = async {
            let connected = self.connected().await?;
            let names = self.names(connected);
            if together.len() > 1 && connected.backend.clustered() {
                names.on_one_shard(together)?;
            }
            read(connected.backend.run(&build(&names)).await?)
        };
        run.await.map_err(|fault| self.error(operation, fault))
    }

    /// As [`query`](Self::query), for a command `build` may refuse to make.
    async fn query_fallible<T: FromRedisValue>(
        &self,
        operation: &'static str,
        build: impl FnOnce(&Names<'_>) -> Result<Cmd, Fault>,
    ) -> Result<T, ResourceError> {
        let run = async {
            let connected = self.connected().await?;
            let command = build(&self.names(connected))?;
            read(connected.backend.run(&command).await?)
        };
        run.await.map_err(|fault| self.error(operation, fault))
    }

    /// Runs one command per shard the `keys` are on (one command in all on
    /// a single server), made by `build` from the positions of the keys it
    /// carries: each command's positions and answer.
    async fn query_by_shard<T: FromRedisValue>(
        &self,
        operation: &'static str,
        keys: &[&str],
        build: impl Fn(&Names<'_>, &[usize]) -> Cmd,
    ) -> Result<Vec<(Vec<usize>, T)>, ResourceError> {
        let run = async {
            let connected = self.connected().await?;
            let names = self.names(connected);
            let groups = if connected.backend.clustered() {
                let full: Vec<Vec<u8>> = keys.iter().map(|key| names.full(key)).collect();
                let full: Vec<&[u8]> = full.iter().map(Vec::as_slice).collect();
                slots::by_slot(&full)
            } else {
                vec![(0..keys.len()).collect()]
            };
            let commands: Vec<Cmd> = groups.iter().map(|group| build(&names, group)).collect();
            let answers = futures_util::future::join_all(commands.iter().map(|command| connected.backend.run(command)));
            let mut results = Vec::with_capacity(groups.len());
            for (group, answer) in groups.into_iter().zip(answers.await) {
                results.push((group, read(answer?)?));
            }
            Ok(results)
        };
        run.await.map_err(|fault| self.error(operation, fault))
    }

    /// The cache connected, on the first call. A failure is tried again on
    /// the next call.
    async fn connected(&self) -> Result<&Connected, Fault> {
        self.shared.get(connect).await
    }

    fn names<'c>(&'c self, connected: &'c Connected) -> Names<'c> {
        Names::new(&connected.prefix, &self.prefix)
    }

    fn error(&self, operation: &'static str, fault: Fault) -> ResourceError {
        ResourceError::new(self.shared.name(), ResourceKind::Cache, operation, fault)
    }
}

/// Reads an answer as a `T`.
fn read<T: FromRedisValue>(value: Value) -> Result<T, Fault> {
    redis::from_redis_value(value).map_err(|error| {
        Fault::new(
            ResourceErrorKind::Malformed,
            Some("UnexpectedAnswer"),
            format!("the cache's answer is not what was asked for: {error}"),
        )
    })
}

/// Resolves and connects the cache `resource` names.
async fn connect(resource: &ResourceRef) -> Result<Connected, Fault> {
    let platform = resource.deployment().platform;
    if !matches!(platform, Platform::Local | Platform::Aws) {
        return Err(Fault::unsupported(format!(
            "caches are served on `aws` and in a `local` session, and the deployment's platform is `{platform}` \
             (CELERITY_PLATFORM)"
        )));
    }
    let (settings, password) = settings::CacheSettings::read(resource).await?;
    let credentials = match settings.auth_mode {
        AuthMode::Iam => iam_credentials(&settings)?,
        AuthMode::Password => backend::Credentials::Password(match password {
            settings::Password::None => None,
            settings::Password::Recorded(password) => Some(password),
            settings::Password::Secret(id) => Some(secret(&id).await?),
        }),
    };
    let backend = Backend::connect(&settings, credentials).await?;
    let prefix = settings.key_prefix.clone();
    Ok(Connected { backend, settings: Some(settings), prefix })
}

#[cfg(feature = "cache-aws")]
fn iam_credentials(settings: &CacheSettings) -> Result<backend::Credentials, Fault> {
    iam::credentials(settings)
}

#[cfg(not(feature = "cache-aws"))]
fn iam_credentials(_settings: &CacheSettings) -> Result<backend::Credentials, Fault> {
    Err(Fault::unsupported(
        "the cache is reached with IAM authentication (`_authMode: iam`), and the application was built without \
         celerity's `cache-aws` feature, which signs its connection tokens",
    ))
}

#[cfg(feature = "cache-aws")]
async fn secret(id: &str) -> Result<String, Fault> {
    crate::resources::aws_auth::secret(id, "the cache").await
}

#[cfg(not(feature = "cache-aws"))]
async fn secret(_id: &str) -> Result<String, Fault> {
    Err(Fault::unsupported(
        "the cache's password is held in Secrets Manager (`_authTokenSecretId`), and the application was built \
         without celerity's `cache-aws` feature, which reads it",
    ))
}

impl ResourceHandle for Cache {
    fn kind() -> ResourceKind {
        ResourceKind::Cache
    }

    fn from_resource(resource: ResourceRef) -> Self {
        Cache { shared: Arc::new(FirstUse::lazy(resource)), prefix: Arc::from("") }
    }
}

super::default_handle_argument!(Cache);

impl fmt::Debug for Cache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cache").field("name", &self.name()).field("prefix", &&*self.prefix).finish_non_exhaustive()
    }
}
