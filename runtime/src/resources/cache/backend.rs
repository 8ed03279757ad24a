//! What a cache's commands run on: one Redis server, a cluster, or a
//! stand-in that answers them in memory.

use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, ConnectionAddr, IntoConnectionInfo, RedisConnectionInfo, RedisError, RedisFuture, Value};

use super::settings::CacheSettings;
use crate::resources::error::{Fault, ResourceErrorKind};

/// How long connecting, and then each answer, may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Answers commands without a server: `celerity::testing`'s stand-in.
pub(crate) trait Runner: Send + Sync + 'static {
    /// Runs `commands` in order with nothing else in between: each one's
    /// answer, or why it was refused.
    fn run(&self, commands: &[&Cmd]) -> Result<Vec<Result<Value, Fault>>, Fault>;
}

/// Where a cache's commands go.
#[derive(Clone)]
pub(crate) enum Backend {
    /// A server, through a connection that reconnects by itself, and its
    /// address for errors.
    Single(ConnectionManager, Arc<str>),
    /// A sharded cluster, each command routed to the shard of its key.
    Cluster(ClusterConnection, Arc<str>),
    /// A stand-in.
    Memory(Arc<dyn Runner>),
}

/// A connection to a cache, for the commands its handle does not wrap:
/// pub/sub, streams, scripts, `WATCH`. It is `redis`'s own connection
/// (a [`ConnectionManager`] or a cluster connection) and implements
/// [`redis::aio::ConnectionLike`], so every `redis` command runs on it.
/// Keys are sent as given: the handle's prefix is not applied.
#[derive(Clone)]
pub struct CacheConnection(Connection);

#[derive(Clone)]
enum Connection {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

impl ConnectionLike for CacheConnection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match &mut self.0 {
            Connection::Single(connection) => connection.req_packed_command(cmd),
            Connection::Cluster(connection) => connection.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match &mut self.0 {
            Connection::Single(connection) => connection.req_packed_commands(cmd, offset, count),
            Connection::Cluster(connection) => connection.req_packed_commands(cmd, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match &self.0 {
            Connection::Single(connection) => connection.get_db(),
            Connection::Cluster(connection) => connection.get_db(),
        }
    }
}

impl std::fmt::Debug for CacheConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shape = match self.0 {
            Connection::Single(_) => "server",
            Connection::Cluster(_) => "cluster",
        };
        f.debug_tuple("CacheConnection").field(&shape).finish()
    }
}

/// What a connection authenticates with.
pub(crate) enum Credentials {
    /// A password, or none.
    Password(Option<String>),
    /// Credentials that change: a connection token signed again before it
    /// lapses, asked for by every new connection.
    #[cfg_attr(not(feature = "cache-aws"), allow(dead_code))]
    Streaming(Arc<dyn redis::auth::StreamingCredentialsProvider>),
}

impl Backend {
    /// Connects to the cache `settings` describe. The connection is made
    /// now, so that a cache that cannot be reached is said so on the first
    /// call; once made it reconnects by itself.
    pub(crate) async fn connect(settings: &CacheSettings, credentials: Credentials) -> Result<Backend, Fault> {
        if settings.tls {
            // rustls needs a process-wide provider to build a TLS client;
            // ring is the one this crate builds with. An application that
            // installed its own keeps it.
            if rustls::crypto::CryptoProvider::get_default().is_none() {
                let _ = rustls::crypto::ring::default_provider().install_default();
            }
        }
        let address = if settings.tls {
            ConnectionAddr::TcpTls {
                host: settings.host.clone(),
                port: settings.port,
                insecure: false,
                tls_params: None,
            }
        } else {
            ConnectionAddr::Tcp(settings.host.clone(), settings.port)
        };
        let config_error = |error: RedisError| {
            Fault::new(ResourceErrorKind::Config, None, format!("the recorded settings are not usable: {error}"))
        };
        let mut redis_settings = RedisConnectionInfo::default();
        if let Some(user) = &settings.user {
            redis_settings = redis_settings.set_username(user);
        }
        let provider = match credentials {
            Credentials::Password(Some(password)) => {
                redis_settings = redis_settings.set_password(password);
                None
            }
            Credentials::Password(None) => None,
            Credentials::Streaming(provider) => Some(provider),
        };
        let info = address.into_connection_info().map_err(config_error)?.set_redis_settings(redis_settings);
        let at: Arc<str> = format!("{}:{}", settings.host, settings.port).into();
        let unreachable = |error: RedisError| fault(&at, &error);
        if settings.cluster_mode {
            let mut builder =
                ClusterClient::builder([info]).connection_timeout(TIMEOUT).response_timeout(TIMEOUT).retries(2);
            if settings.tls {
                builder = builder.tls(redis::TlsMode::Secure);
            }
            if let Some(provider) = provider {
                builder = builder.set_credentials_provider(Shared(provider));
            }
            let client = builder.build().map_err(config_error)?;
            Ok(Backend::Cluster(client.get_async_connection().await.map_err(unreachable)?, at.clone()))
        } else {
            let client = redis::Client::open(info).map_err(config_error)?;
            let mut config = ConnectionManagerConfig::new()
                .set_connection_timeout(Some(TIMEOUT))
                .set_response_timeout(Some(TIMEOUT))
                .set_number_of_retries(1);
            if let Some(provider) = provider {
                config = config.set_credentials_provider(Shared(provider));
            }
            let connection = ConnectionManager::new_with_config(client, config).await.map_err(unreachable)?;
            Ok(Backend::Single(connection, at.clone()))
        }
    }

    /// Whether keys may be on different shards.
    pub(crate) fn clustered(&self) -> bool {
        matches!(self, Backend::Cluster(..))
    }

    /// The connection, for commands the handle does not wrap; `None` for a
    /// stand-in.
    pub(crate) fn connection(&self) -> Option<CacheConnection> {
        match self {
            Backend::Single(connection, _) => Some(CacheConnection(Connection::Single(connection.clone()))),
            Backend::Cluster(connection, _) => Some(CacheConnection(Connection::Cluster(connection.clone()))),
            Backend::Memory(_) => None,
        }
    }

    /// Runs one command: its answer.
    pub(crate) async fn run(&self, command: &Cmd) -> Result<Value, Fault> {
        match self {
            Backend::Single(connection, at) => {
                command.query_async(&mut connection.clone()).await.map_err(|error| fault(at, &error))
            }
            Backend::Cluster(connection, at) => {
                command.query_async(&mut connection.clone()).await.map_err(|error| fault(at, &error))
            }
            Backend::Memory(runner) => runner.run(&[command])?.pop().unwrap_or_else(|| Err(missing_answer())),
        }
    }

    /// Runs `commands` as a transaction (`MULTI` … `EXEC`): applied with
    /// nothing else in between, each one's answer or refusal in order. As
    /// Redis does, a command refused at run time does not undo the others.
    pub(crate) async fn run_atomically(&self, commands: &[Cmd]) -> Result<Vec<Result<Value, Fault>>, Fault> {
        let mut pipeline = redis::pipe();
        pipeline.atomic().ignore_errors();
        for command in commands {
            pipeline.add_command(command.clone());
        }
        let (answers, at): (Result<Vec<redis::RedisResult<Value>>, RedisError>, &str) = match self {
            Backend::Single(connection, at) => (pipeline.query_async(&mut connection.clone()).await, at),
            Backend::Cluster(connection, at) => (pipeline.query_async(&mut connection.clone()).await, at),
            Backend::Memory(runner) => {
                let commands: Vec<&Cmd> = commands.iter().collect();
                return runner.run(&commands);
            }
        };
        let answers = answers.map_err(|error| fault(at, &error))?;
        Ok(answers.into_iter().map(|answer| answer.map_err(|error| fault(at, &error))).collect())
    }

    /// The addresses of a cluster's primaries, each of which holds part of
    /// the keyspace: what a scan walks one after another.
    pub(crate) async fn primaries(&self) -> Result<Vec<(String, u16)>, Fault> {
        let Backend::Cluster(connection, at) = self else {
            return Ok(Vec::new());
        };
        let shards: Value = redis::cmd("CLUSTER")
            .arg("SLOTS")
            .query_async(&mut connection.clone())
            .await
            .map_err(|error| fault(at, &error))?;
        let mut primaries: Vec<(String, u16)> = Vec::new();
        // Each range is [start, end, [host, port, id, ...] of its primary, replicas...].
        if let Value::Array(ranges) = shards {
            for range in ranges {
                let Value::Array(parts) = range else { continue };
                let Some(Value::Array(primary)) = parts.get(2) else { continue };
                let host = primary.first().and_then(|host| redis::from_redis_value_ref::<String>(host).ok());
                let port = primary.get(1).and_then(|port| redis::from_redis_value_ref::<u16>(port).ok());
                if let (Some(host), Some(port)) = (host, port) {
                    // An empty host is the node the question went to.
                    let host = if host.is_empty() {
                        at.rsplit_once(':').map_or(host, |(host, _)| host.to_string())
                    } else {
                        host
                    };
                    if !primaries.contains(&(host.clone(), port)) {
                        primaries.push((host, port));
                    }
                }
            }
        }
        Ok(primaries)
    }

    /// Runs `command` on the cluster node at `address`.
    pub(crate) async fn run_on(&self, address: &(String, u16), command: &Cmd) -> Result<Value, Fault> {
        let Backend::Cluster(connection, at) = self else {
            return self.run(command).await;
        };
        let routing =
            redis::cluster_routing::RoutingInfo::SingleNode(redis::cluster_routing::SingleNodeRoutingInfo::ByAddress {
                host: address.0.clone(),
                port: address.1,
            });
        connection.clone().route_command(command.clone(), routing).await.map_err(|error| fault(at, &error))
    }
}

/// A stand-in that answered nothing for a command: never the case for the
/// SDK's own, which answers every command it is given.
fn missing_answer() -> Fault {
    Fault::unreachable("the stand-in gave no answer")
}

/// A Redis error as the failure of the cache at `at`: unreachable where
/// the connection failed or timed out, refused with the server's code
/// (`WRONGTYPE`, `CROSSSLOT`) where it answered with an error.
fn fault(at: &str, error: &RedisError) -> Fault {
    if error.is_io_error() || error.is_timeout() || error.is_connection_refusal() || error.is_connection_dropped() {
        Fault::unreachable(format!("the cache at {at} cannot be reached: {error}"))
    } else if let Some(code) = error.code() {
        // In Redis's own words, `WRONGTYPE Operation against a key ...`.
        let said = error.detail().map_or_else(|| code.to_string(), |detail| format!("{code} {detail}"));
        Fault::new(ResourceErrorKind::Refused, Some(code), format!("the cache refused it: {said}"))
    } else {
        Fault::unreachable(format!("the cache at {at} failed: {error}"))
    }
}

/// A shared provider, as the `redis` builders take one by value.
struct Shared(Arc<dyn redis::auth::StreamingCredentialsProvider>);

impl redis::auth::StreamingCredentialsProvider for Shared {
    fn subscribe(
        &self,
    ) -> std::pin::Pin<Box<dyn futures_util::Stream<Item = redis::RedisResult<redis::auth::BasicAuth>> + Send + 'static>>
    {
        self.0.subscribe()
    }
}
