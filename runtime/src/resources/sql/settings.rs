//! What a deployment recorded about a SQL database, read once from the
//! `resources` namespace: the engine, where the writer and the reader are,
//! who connects and how, and how large the pools are.

use std::fmt;
use std::time::Duration;

use super::super::error::{Fault, ResourceErrorKind};
use super::super::{AuthMode, ResourceRef};
use crate::config::Platform;

/// Postgres's own port, where the deployment recorded none.
pub const DEFAULT_POSTGRES_PORT: u16 = 5432;
/// MySQL's own port, where the deployment recorded none.
pub const DEFAULT_MYSQL_PORT: u16 = 3306;
/// What a local session's database is when `CELERITY_LOCAL_SQL_DATABASE_ENDPOINT`
/// does not say: the Postgres `celerity dev` runs.
pub const DEFAULT_LOCAL_ENDPOINT: &str = "postgres://celerity:celerity@localhost:5432/celerity";

/// The database engine (`_engine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SqlEngine {
    /// `postgres`: PostgreSQL, and Aurora PostgreSQL.
    Postgres,
    /// `mysql`: MySQL, MariaDB, and Aurora MySQL.
    MySql,
}

impl SqlEngine {
    /// The name the deployment records.
    pub fn as_str(self) -> &'static str {
        match self {
            SqlEngine::Postgres => "postgres",
            SqlEngine::MySql => "mysql",
        }
    }

    fn parse(name: &str) -> Option<SqlEngine> {
        match name.to_ascii_lowercase().as_str() {
            "postgres" | "postgresql" | "aurora-postgresql" => Some(SqlEngine::Postgres),
            "mysql" | "mariadb" | "aurora-mysql" => Some(SqlEngine::MySql),
            _ => None,
        }
    }

    fn default_port(self) -> u16 {
        match self {
            SqlEngine::Postgres => DEFAULT_POSTGRES_PORT,
            SqlEngine::MySql => DEFAULT_MYSQL_PORT,
        }
    }
}

impl fmt::Display for SqlEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How large a pool is and how long its connections live.
///
/// A function serves one invocation at a time and is frozen between them,
/// so it keeps two connections at most and gives idle ones up within a
/// second: a connection held through a freeze is dead long before the
/// database notices, and counts against its connection limit until then.
/// A long-running runtime serves concurrently and stays up, so its
/// connections are worth keeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolSettings {
    /// At most this many connections (`_poolMax`): 10 under a long-running
    /// runtime, 2 as functions.
    pub max_connections: u32,
    /// At least this many, once the pool has opened them (`_poolMin`): 0.
    pub min_connections: u32,
    /// An idle connection is closed after this long (`_poolIdleTimeoutMs`):
    /// 30 s under a long-running runtime, 1 s as functions.
    pub idle_timeout: Duration,
    /// A connection is closed after this long whatever it does, so that
    /// one a proxy or a failover cut is not handed out for ever: 30 minutes
    /// under a long-running runtime, 5 as functions.
    pub max_lifetime: Duration,
    /// How long a query waits for a connection when all are in use, or for
    /// a new one to open (`_poolAcquireTimeoutMs`): 10 s. A handler's own
    /// deadline ends the wait sooner.
    pub acquire_timeout: Duration,
}

impl PoolSettings {
    /// The pool a long-running runtime keeps.
    pub const RUNTIME: PoolSettings = PoolSettings {
        max_connections: 10,
        min_connections: 0,
        idle_timeout: Duration::from_secs(30),
        max_lifetime: Duration::from_secs(30 * 60),
        acquire_timeout: Duration::from_secs(10),
    };

    /// The pool a function keeps.
    pub const FUNCTION: PoolSettings = PoolSettings {
        max_connections: 2,
        idle_timeout: Duration::from_secs(1),
        max_lifetime: Duration::from_secs(5 * 60),
        ..PoolSettings::RUNTIME
    };
}

/// How a SQL database is reached, as the deployment recorded it under the
/// resource's key (`<key>_engine`, `_host`, `_readHost`, `_port`,
/// `_database`, `_user`, `_authMode`, `_ssl`, `_region`, and the pool's
/// `_poolMax`, `_poolMin`, `_poolIdleTimeoutMs`, `_poolAcquireTimeoutMs`).
/// The password is not kept here.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SqlSettings {
    /// The engine.
    pub engine: SqlEngine,
    /// The writer's host: an instance, or a cluster's writer endpoint.
    pub host: String,
    /// The reader's host (`_readHost`), where the database has one: a
    /// cluster's reader endpoint or a replica. The reader pool uses the
    /// writer's host where there is none.
    pub read_host: Option<String>,
    /// The port (the engine's own where none was recorded).
    pub port: u16,
    /// The database (`_database`; the blueprint resource's name where none
    /// was recorded, which is what a single-database cluster is made with).
    pub database: String,
    /// The user connected as.
    pub user: String,
    /// How connections authenticate.
    pub auth_mode: AuthMode,
    /// Whether connections are encrypted (`_ssl`): on by default on AWS and
    /// off in a local session, and always on with IAM authentication, since
    /// a signed token is a credential in its own right. The server's
    /// certificate is not checked against a root (Postgres's `require`, as
    /// the other Celerity SDKs connect): an RDS certificate is signed by
    /// Amazon's own authority, which a function's trust store need not hold.
    pub ssl: bool,
    /// The database's region where it is not the application's (`_region`),
    /// which an IAM token is signed for.
    pub region: Option<String>,
    /// The pools' sizes and lifetimes.
    pub pool: PoolSettings,
}

impl SqlSettings {
    /// The host the reader pool connects to.
    pub fn reader_host(&self) -> &str {
        self.read_host.as_deref().unwrap_or(&self.host)
    }
}

impl fmt::Debug for SqlSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqlSettings")
            .field("engine", &self.engine)
            .field("host", &self.host)
            .field("read_host", &self.read_host)
            .field("port", &self.port)
            .field("database", &self.database)
            .field("user", &self.user)
            .field("auth_mode", &self.auth_mode)
            .field("ssl", &self.ssl)
            .field("region", &self.region)
            .field("pool", &self.pool)
            .finish()
    }
}

/// Where a database's password comes from.
pub(crate) enum Password {
    /// Recorded in the `resources` namespace, or in a local session's URL.
    Recorded(String),
    /// The id of a secret in the platform's secret store (`_credentialsSecretId`).
    Secret(String),
    /// None: IAM authentication signs a token per connection.
    Iam,
}

impl SqlSettings {
    /// What the deployment recorded for `resource`. In a local session a
    /// database with no `_host` is the session's own
    /// (`CELERITY_LOCAL_SQL_DATABASE_ENDPOINT`).
    pub(crate) async fn read(resource: &ResourceRef) -> Result<(SqlSettings, Password), Fault> {
        let local = resource.deployment().platform == Platform::Local;
        let pool = pool_settings(resource).await?;
        let Some(host) = resource.setting("_host").await? else {
            if local {
                return session(resource, pool).await;
            }
            return Err(resource.required_setting("_host").await.map_or_else(Fault::from, |_| {
                Fault::new(ResourceErrorKind::Config, None, "the deployment recorded no `_host`")
            }));
        };
        let engine_name = resource.required_setting("_engine").await?;
        let engine = SqlEngine::parse(&engine_name).ok_or_else(|| {
            config(format!(
                "the deployment recorded the `_engine` {engine_name:?} for the SQL database `{}`, and Celerity serves \
                 `postgres` and `mysql`",
                resource.name()
            ))
        })?;
        let auth_mode = AuthMode::read(resource).await?;
        let settings = SqlSettings {
            engine,
            host,
            read_host: resource.setting("_readHost").await?,
            port: resource.number_setting("_port", engine.default_port()).await?,
            database: resource.setting("_database").await?.unwrap_or_else(|| resource.name().to_string()),
            user: resource.required_setting("_user").await?,
            auth_mode,
            ssl: resource.flag_setting("_ssl", !local).await? || auth_mode == AuthMode::Iam,
            region: resource.setting("_region").await?,
            pool,
        };
        let password = match auth_mode {
            AuthMode::Iam => Password::Iam,
            _ => match resource.setting("_password").await? {
                Some(password) => Password::Recorded(password),
                None => match resource.setting("_credentialsSecretId").await? {
                    Some(id) => Password::Secret(id),
                    None => {
                        return Err(config(format!(
                            "the SQL database `{}` is reached with a password, and the deployment recorded neither \
                             `_password` nor `_credentialsSecretId`",
                            resource.name()
                        )));
                    }
                },
            },
        };
        Ok((settings, password))
    }
}

/// The pool's sizes: the platform's, with what the deployment recorded
/// over them.
async fn pool_settings(resource: &ResourceRef) -> Result<PoolSettings, Fault> {
    let base = if resource.deployment().long_running { PoolSettings::RUNTIME } else { PoolSettings::FUNCTION };
    let millis = |duration: Duration| u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
    let pool = PoolSettings {
        max_connections: resource.number_setting("_poolMax", base.max_connections).await?,
        min_connections: resource.number_setting("_poolMin", base.min_connections).await?,
        idle_timeout: Duration::from_millis(
            resource.number_setting("_poolIdleTimeoutMs", millis(base.idle_timeout)).await?,
        ),
        max_lifetime: base.max_lifetime,
        acquire_timeout: Duration::from_millis(
            resource.number_setting("_poolAcquireTimeoutMs", millis(base.acquire_timeout)).await?,
        ),
    };
    if pool.max_connections == 0 || pool.min_connections > pool.max_connections {
        return Err(config(format!(
            "the pool of the SQL database `{}` is recorded as {} to {} connections (`_poolMin`, `_poolMax`): at \
             least one, and no fewer at most than at least",
            resource.name(),
            pool.min_connections,
            pool.max_connections
        )));
    }
    Ok(pool)
}

/// A local session's own database, from its endpoint URL
/// (`postgres://user:password@host:port/database?sslmode=disable`); a
/// `_database` recorded for the resource is used over the URL's.
async fn session(resource: &ResourceRef, pool: PoolSettings) -> Result<(SqlSettings, Password), Fault> {
    let endpoint = resource.deployment().endpoints.sql.as_deref().unwrap_or(DEFAULT_LOCAL_ENDPOINT);
    let parsed = Endpoint::parse(endpoint).map_err(|detail| {
        config(format!(
            "the deployment recorded no `_host` for the SQL database `{}`, and CELERITY_LOCAL_SQL_DATABASE_ENDPOINT is \
             not a database URL ({}): {detail}",
            resource.name(),
            super::super::shown::shown(endpoint)
        ))
    })?;
    let database = match resource.setting("_database").await? {
        Some(database) => database,
        None => parsed.database,
    };
    let settings = SqlSettings {
        engine: parsed.engine,
        host: parsed.host,
        read_host: None,
        port: parsed.port,
        database,
        user: parsed.user,
        auth_mode: AuthMode::Password,
        ssl: parsed.ssl,
        region: None,
        pool,
    };
    Ok((settings, Password::Recorded(parsed.password)))
}

fn config(message: String) -> Fault {
    Fault::new(ResourceErrorKind::Config, None, message)
}

/// A database URL, taken apart.
#[derive(Debug, PartialEq, Eq)]
struct Endpoint {
    engine: SqlEngine,
    host: String,
    port: u16,
    user: String,
    password: String,
    database: String,
    ssl: bool,
}

impl Endpoint {
    fn parse(url: &str) -> Result<Endpoint, String> {
        let (scheme, rest) = url.split_once("://").ok_or("it has no scheme")?;
        let engine =
            SqlEngine::parse(scheme).ok_or_else(|| format!("its scheme `{scheme}` is neither postgres nor mysql"))?;
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        let (credentials, address) = authority.rsplit_once('@').unwrap_or(("", authority));
        let (user, password) = credentials.split_once(':').unwrap_or((credentials, ""));
        let decode = |part: &str| percent_encoding::percent_decode_str(part).decode_utf8_lossy().into_owned();
        let (host, port) = match address.rsplit_once(':') {
            // `[::1]` is a host without a port.
            Some((host, port)) if !address.ends_with(']') => {
                (host, port.parse().map_err(|_| format!("its port `{port}` is not a number"))?)
            }
            _ => (address, engine.default_port()),
        };
        if host.is_empty() {
            return Err("it names no host".into());
        }
        let ssl = query
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(name, _)| matches!(*name, "sslmode" | "ssl-mode" | "ssl"))
            .is_some_and(|(_, mode)| !matches!(mode.to_ascii_lowercase().as_str(), "disable" | "disabled" | "false"));
        Ok(Endpoint {
            engine,
            host: host.trim_start_matches('[').trim_end_matches(']').to_string(),
            port,
            user: decode(user),
            password: decode(password),
            database: decode(path),
            ssl,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_url_is_taken_apart() {
        let endpoint = Endpoint::parse("postgres://celerity:p%40ss@sql-database:5433/orders?sslmode=disable").unwrap();
        assert_eq!(
            endpoint,
            Endpoint {
                engine: SqlEngine::Postgres,
                host: "sql-database".into(),
                port: 5433,
                user: "celerity".into(),
                password: "p@ss".into(),
                database: "orders".into(),
                ssl: false,
            }
        );
        let mysql = Endpoint::parse("mysql://root@localhost/app?ssl-mode=REQUIRED").unwrap();
        assert_eq!((mysql.engine, mysql.port, mysql.ssl, mysql.password.as_str()), (SqlEngine::MySql, 3306, true, ""));
        let default = Endpoint::parse(DEFAULT_LOCAL_ENDPOINT).unwrap();
        assert_eq!((default.host.as_str(), default.port, default.ssl), ("localhost", 5432, false));
    }

    #[test]
    fn a_malformed_session_url_says_what_is_wrong() {
        assert_eq!(Endpoint::parse("localhost:5432").unwrap_err(), "it has no scheme");
        assert_eq!(
            Endpoint::parse("redis://localhost").unwrap_err(),
            "its scheme `redis` is neither postgres nor mysql"
        );
        assert_eq!(Endpoint::parse("postgres://u:p@db:fifty/x").unwrap_err(), "its port `fifty` is not a number");
        assert_eq!(Endpoint::parse("postgres://u:p@/x").unwrap_err(), "it names no host");
    }
}
