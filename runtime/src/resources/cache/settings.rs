//! What a deployment recorded about a cache, read once from the `resources`
//! namespace: where it is, how it is reached and under which prefix.

use std::fmt;

use super::super::error::{Fault, ResourceErrorKind};
use super::super::{AuthMode, ResourceRef, session_redis};
use crate::config::Platform;

/// The Redis protocol's own port, where the deployment recorded none.
pub const DEFAULT_PORT: u16 = 6379;

/// How a cache is reached, as the deployment recorded it under the
/// resource's key (`<key>_host`, `_port`, `_tls`, `_clusterMode`, `_user`,
/// `_authMode`, `_keyPrefix`, `_region`). The password is not kept here:
/// see [`Cache::settings`](super::Cache::settings).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheSettings {
    /// The endpoint; for a sharded cluster, its configuration endpoint.
    pub host: String,
    /// The port (6379 where none was recorded).
    pub port: u16,
    /// Whether the connection is encrypted: `_tls`, on by default on AWS
    /// and off in a local session, and always on with IAM authentication,
    /// since a signed token is a credential in its own right.
    pub tls: bool,
    /// Whether the cache is sharded (`_clusterMode`), so that a command for
    /// a key on another shard is followed there.
    pub cluster_mode: bool,
    /// The user connected as (`_user`), where the cache has users.
    pub user: Option<String>,
    /// How the connection authenticates.
    pub auth_mode: AuthMode,
    /// Put before every key a handle names (`_keyPrefix`): a local session
    /// gives each application its own prefix on one shared cache.
    pub key_prefix: String,
    /// The cache's region where it is not the application's (`_region`).
    pub region: Option<String>,
}

impl fmt::Debug for CacheSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CacheSettings")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("tls", &self.tls)
            .field("cluster_mode", &self.cluster_mode)
            .field("user", &self.user)
            .field("auth_mode", &self.auth_mode)
            .field("key_prefix", &self.key_prefix)
            .field("region", &self.region)
            .finish()
    }
}

/// Where a cache's password comes from.
pub(crate) enum Password {
    None,
    Recorded(String),
    /// The id of a secret in the platform's secret store.
    Secret(String),
}

impl CacheSettings {
    /// What the deployment recorded for `resource`. In a local session a
    /// cache with no `_host` is the session's own Redis
    /// (`CELERITY_REDIS_ENDPOINT`).
    pub(crate) async fn read(resource: &ResourceRef) -> Result<(CacheSettings, Password), Fault> {
        let local = resource.deployment().platform == Platform::Local;
        let Some(host) = resource.setting("_host").await? else {
            if local {
                let (mut settings, password) = session(resource)?;
                settings.key_prefix = resource.setting("_keyPrefix").await?.unwrap_or_default();
                return Ok((settings, password));
            }
            return Err(resource.required_setting("_host").await.err().map_or_else(
                || Fault::new(ResourceErrorKind::Config, None, "the deployment recorded no `_host`"),
                Fault::from,
            ));
        };
        let auth_mode = AuthMode::read(resource).await?;
        let tls = resource.flag_setting("_tls", !local).await? || auth_mode == AuthMode::Iam;
        let settings = CacheSettings {
            host,
            port: resource.number_setting("_port", DEFAULT_PORT).await?,
            tls,
            cluster_mode: resource.flag_setting("_clusterMode", false).await?,
            user: resource.setting("_user").await?,
            auth_mode,
            key_prefix: resource.setting("_keyPrefix").await?.unwrap_or_default(),
            region: resource.setting("_region").await?,
        };
        let password = match resource.setting("_authToken").await? {
            Some(token) => Password::Recorded(token),
            None => resource.setting("_authTokenSecretId").await?.map_or(Password::None, Password::Secret),
        };
        Ok((settings, password))
    }
}

/// A local session's own Redis, from its endpoint URL.
fn session(resource: &ResourceRef) -> Result<(CacheSettings, Password), Fault> {
    use redis::IntoConnectionInfo;
    let endpoint = resource.deployment().endpoints.redis.as_deref().unwrap_or(session_redis::DEFAULT_ENDPOINT);
    let malformed = |detail: String| {
        Fault::new(
            ResourceErrorKind::Config,
            None,
            format!(
                "the deployment recorded no `_host`, and CELERITY_REDIS_ENDPOINT is not a Redis URL ({}): {detail}",
                super::super::shown::shown(endpoint)
            ),
        )
    };
    let info = endpoint.into_connection_info().map_err(|error| malformed(error.to_string()))?;
    let (host, port, tls) = match info.addr() {
        redis::ConnectionAddr::Tcp(host, port) => (host.clone(), *port, false),
        redis::ConnectionAddr::TcpTls { host, port, .. } => (host.clone(), *port, true),
        _ => return Err(malformed("a cache is reached over TCP".into())),
    };
    let redis = info.redis_settings();
    let settings = CacheSettings {
        host,
        port,
        tls,
        cluster_mode: false,
        user: redis.username().map(str::to_string),
        auth_mode: AuthMode::Password,
        key_prefix: String::new(),
        region: None,
    };
    Ok((settings, redis.password().map_or(Password::None, |password| Password::Recorded(password.to_string()))))
}
