//! SQL databases: the `celerity/sqlDatabase` resources a blueprint links to
//! the application (a local Postgres in a session, RDS or Aurora on AWS),
//! as [sqlx](https://docs.rs/sqlx) pools. Behind the `sql-postgres` and
//! `sql-mysql` features, with `sql-aws` for IAM authentication and
//! passwords held in Secrets Manager.
//!
//! A handler takes a [`SqlDatabase`] as an argument: the application's one
//! database as the type itself, or a database by name through
//! [`resource!`](crate::resource). It gives two pools:
//! [`writer`](SqlDatabase::writer), on the endpoint that takes writes, and
//! [`reader`](SqlDatabase::reader), on the read endpoint where the
//! deployment recorded one (a cluster's reader, a replica) and on the
//! writer's otherwise, so that a handler that only reads need not know
//! which the deployment has. They are sqlx's own [`sqlx::Pool`]s: every
//! sqlx query, macro, transaction and migration works on them unchanged.
//!
//! Each pool is made on its first use, once, opening its first connection
//! there so that wrong credentials, an unknown database or a host that does
//! not answer are an error naming the database and the setting. It is
//! sized for the platform ([`PoolSettings`]), and closed when the
//! application has drained, after the handlers in flight have finished.
//! With IAM authentication every connection the pool opens signs a fresh
//! token (they last 15 minutes).
//!
//! ```
//! use celerity::http::{HttpError, Json};
//! use celerity::resources::sql::{SqlDatabase, sqlx};
//!
//! #[derive(serde::Deserialize)]
//! struct Note {
//!     text: String,
//! }
//!
//! async fn add(db: SqlDatabase, Json(note): Json<Note>) -> Result<String, HttpError> {
//!     let fail = |error: &dyn std::fmt::Display| HttpError::internal(error.to_string());
//!     let pool: sqlx::PgPool = db.writer().await.map_err(|error| fail(&error))?;
//!     let (id,): (i64,) = sqlx::query_as("INSERT INTO notes (text) VALUES ($1) RETURNING id")
//!         .bind(&note.text)
//!         .fetch_one(&pool)
//!         .await
//!         .map_err(|error| fail(&error))?;
//!     Ok(id.to_string())
//! }
//! # let _ = celerity::App::new().http("POST::/notes", add);
//! ```

mod engine;
#[cfg(feature = "sql-aws")]
mod iam;
mod settings;

use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::OnceCell;

pub use engine::Engine;
pub use settings::{
    DEFAULT_LOCAL_ENDPOINT, DEFAULT_MYSQL_PORT, DEFAULT_POSTGRES_PORT, PoolSettings, SqlEngine, SqlSettings,
};
/// The `sqlx` crate the pools are, for its queries and types.
pub use sqlx;

use super::error::{Fault, ResourceError, ResourceErrorKind};
use super::{ResourceHandle, ResourceKind, ResourceRef};
use crate::config::Platform;
use crate::future::BoxFuture;

/// A handle on one SQL database of the blueprint. Cheap to clone; clones
/// share the pools, made on first use. See the [module](self) docs.
#[derive(Clone)]
pub struct SqlDatabase {
    shared: Arc<Shared>,
}

/// What a handle and its clones share.
struct Shared {
    resource: ResourceRef,
    resolved: OnceCell<Resolved>,
    writer: OnceCell<Built>,
    reader: OnceCell<Built>,
}

/// The settings read, and the password (not for IAM authentication).
struct Resolved {
    settings: SqlSettings,
    password: Option<String>,
}

/// A pool made: a `sqlx::Pool<DB>` of the engine it was made for.
struct Built {
    pool: Box<dyn Any + Send + Sync>,
    #[cfg(feature = "sql-aws")]
    tokens: Option<iam::Tokens>,
}

/// The two pools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Writer,
    Reader,
}

impl SqlDatabase {
    /// The blueprint resource's name.
    pub fn name(&self) -> &str {
        self.shared.resource.name()
    }

    /// The pool on the endpoint that takes writes. `DB` is the engine the
    /// deployment recorded: `sqlx::Postgres` or `sqlx::MySql`; asking
    /// for another is an error naming both.
    ///
    /// ```
    /// use celerity::resources::sql::{SqlDatabase, sqlx};
    ///
    /// async fn count(db: &SqlDatabase) -> Result<i64, Box<dyn std::error::Error>> {
    ///     let pool: sqlx::PgPool = db.writer().await?;
    ///     let mut transaction = pool.begin().await?;
    ///     sqlx::query("UPDATE counters SET value = value + 1 WHERE name = 'visits'").execute(&mut *transaction).await?;
    ///     let (value,): (i64,) =
    ///         sqlx::query_as("SELECT value FROM counters WHERE name = 'visits'").fetch_one(&mut *transaction).await?;
    ///     transaction.commit().await?;
    ///     Ok(value)
    /// }
    /// # let _ = count;
    /// ```
    pub async fn writer<DB: Engine>(&self) -> Result<sqlx::Pool<DB>, ResourceError> {
        self.pool(Role::Writer).await
    }

    /// The pool on the read endpoint (`_readHost`), or on the writer's
    /// where the deployment recorded none. A replica may lag the writer:
    /// read what was just written from [`writer`](Self::writer).
    ///
    /// ```
    /// use celerity::resources::sql::{SqlDatabase, sqlx};
    ///
    /// async fn titles(db: &SqlDatabase) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    ///     let pool: sqlx::PgPool = db.reader().await?;
    ///     Ok(sqlx::query_scalar("SELECT title FROM books ORDER BY title").fetch_all(&pool).await?)
    /// }
    /// # let _ = titles;
    /// ```
    pub async fn reader<DB: Engine>(&self) -> Result<sqlx::Pool<DB>, ResourceError> {
        self.pool(Role::Reader).await
    }

    /// How the deployment recorded the database, read on first use. The
    /// password is not part of it.
    pub async fn settings(&self) -> Result<SqlSettings, ResourceError> {
        let resolved = self.resolved().await.map_err(|fault| self.error("reading the settings of", fault))?;
        Ok(resolved.settings.clone())
    }

    async fn pool<DB: Engine>(&self, role: Role) -> Result<sqlx::Pool<DB>, ResourceError> {
        let operation = match role {
            Role::Writer => "connecting to the writer of",
            Role::Reader => "connecting to the reader of",
        };
        let cell = match role {
            Role::Writer => &self.shared.writer,
            Role::Reader => &self.shared.reader,
        };
        let built = match cell.get() {
            Some(built) => built,
            None => self.build_first::<DB>(cell, role).await.map_err(|fault| self.error(operation, fault))?,
        };
        let Some(pool) = built.pool.downcast_ref::<sqlx::Pool<DB>>() else {
            return Err(self.error(operation, mismatch::<DB>(self.built_engine())));
        };
        #[cfg(feature = "sql-aws")]
        if let Some(tokens) = &built.tokens {
            tokens.refresh_if_due::<DB>(pool).await.map_err(|fault| self.error(operation, fault))?;
        }
        Ok(pool.clone())
    }

    /// The pool made on the first call, boxed: held inline, its future
    /// would make every call's future larger, to be moved on every call.
    fn build_first<'a, DB: Engine>(
        &'a self,
        cell: &'a OnceCell<Built>,
        role: Role,
    ) -> BoxFuture<'a, Result<&'a Built, Fault>> {
        Box::pin(cell.get_or_try_init(move || async move {
            let resolved = self.resolved().await?;
            if resolved.settings.engine != DB::ENGINE {
                return Err(mismatch::<DB>(resolved.settings.engine));
            }
            self.build::<DB>(resolved, role).await
        }))
    }

    async fn build<DB: Engine>(&self, resolved: &Resolved, role: Role) -> Result<Built, Fault> {
        let settings = &resolved.settings;
        let host = match role {
            Role::Writer => settings.host.as_str(),
            Role::Reader => settings.reader_host(),
        };
        #[cfg(feature = "sql-aws")]
        let (password, tokens) = match &resolved.password {
            Some(password) => (password.clone(), None),
            None => {
                let tokens = iam::Tokens::new(settings, host);
                (tokens.sign().await?, Some(tokens))
            }
        };
        #[cfg(not(feature = "sql-aws"))]
        let password = resolved.password.clone().unwrap_or_default();
        let pool = sqlx::pool::PoolOptions::<DB>::new()
            .max_connections(settings.pool.max_connections)
            .min_connections(settings.pool.min_connections)
            .idle_timeout(settings.pool.idle_timeout)
            .max_lifetime(settings.pool.max_lifetime)
            .acquire_timeout(settings.pool.acquire_timeout)
            .connect_lazy_with(DB::connect_options(settings, host, &password));
        // The first connection is opened here, so that what stops every
        // query (credentials, the database's name, the host) is said once,
        // naming the setting; the pool is kept only once it connects.
        if let Err(error) = pool.acquire().await {
            pool.close().await;
            return Err(connect_fault(&error, settings, host));
        }
        let closing = pool.clone();
        self.shared.resource.configuration().on_close(Box::pin(async move { closing.close().await }));
        Ok(Built {
            pool: Box::new(pool),
            #[cfg(feature = "sql-aws")]
            tokens,
        })
    }

    /// The settings and password, read on the first call. A failure is
    /// tried again on the next call.
    async fn resolved(&self) -> Result<&Resolved, Fault> {
        self.shared.resolved.get_or_try_init(|| resolve(&self.shared.resource)).await
    }

    /// The engine of the pools made, for a mismatch's message.
    fn built_engine(&self) -> SqlEngine {
        self.shared.resolved.get().map_or(SqlEngine::Postgres, |resolved| resolved.settings.engine)
    }

    fn error(&self, operation: &'static str, fault: Fault) -> ResourceError {
        ResourceError::new(self.name(), ResourceKind::SqlDatabase, operation, fault)
    }
}

/// Reads the settings of `resource` and its password.
async fn resolve(resource: &ResourceRef) -> Result<Resolved, Fault> {
    let platform = resource.deployment().platform;
    if !matches!(platform, Platform::Local | Platform::Aws) {
        return Err(Fault::unsupported(format!(
            "SQL databases are served on `aws` and in a `local` session, and the deployment's platform is \
             `{platform}` (CELERITY_PLATFORM)"
        )));
    }
    let (settings, password) = SqlSettings::read(resource).await?;
    let password = match password {
        settings::Password::Recorded(password) => Some(password),
        settings::Password::Secret(id) => Some(secret(resource, &id).await?),
        settings::Password::Iam => {
            iam_supported()?;
            None
        }
    };
    Ok(Resolved { settings, password })
}

#[cfg(feature = "sql-aws")]
async fn secret(resource: &ResourceRef, id: &str) -> Result<String, Fault> {
    let text = super::aws_auth::secret(id, &format!("the SQL database `{}`", resource.name())).await?;
    Ok(iam::password_in(text))
}

#[cfg(not(feature = "sql-aws"))]
async fn secret(resource: &ResourceRef, _id: &str) -> Result<String, Fault> {
    Err(Fault::unsupported(format!(
        "the password of the SQL database `{}` is held in Secrets Manager (`_credentialsSecretId`), and the \
         application was built without celerity's `sql-aws` feature, which reads it",
        resource.name()
    )))
}

fn iam_supported() -> Result<(), Fault> {
    if cfg!(feature = "sql-aws") {
        Ok(())
    } else {
        Err(Fault::unsupported(
            "the SQL database is reached with IAM authentication (`_authMode: iam`), and the application was built \
             without celerity's `sql-aws` feature, which signs its connection tokens",
        ))
    }
}

/// The engine recorded is not the one asked for.
fn mismatch<DB: Engine>(recorded: SqlEngine) -> Fault {
    Fault::new(
        ResourceErrorKind::Invalid,
        Some("EngineMismatch"),
        format!(
            "the deployment recorded the engine `{recorded}` (`_engine`), and the handler asked for a `{}` pool",
            DB::ENGINE
        ),
    )
}

/// The first connection's failure, naming what to look at.
fn connect_fault(error: &sqlx::Error, settings: &SqlSettings, host: &str) -> Fault {
    let at = format!("{host}:{} as `{}`", settings.port, settings.user);
    match error {
        sqlx::Error::Database(database) => {
            let code = database.code();
            let (kind, hint) = match code.as_deref() {
                // invalid_authorization_specification, invalid_password.
                Some("28000" | "28P01") => {
                    (ResourceErrorKind::Refused, "check `_user` and `_password` (or `_authMode`)")
                }
                // invalid_catalog_name; MySQL's unknown database.
                Some("3D000") => (ResourceErrorKind::Config, "check `_database`"),
                Some("42000") if unknown_mysql_database(database.as_ref()) => {
                    (ResourceErrorKind::Config, "check `_database`")
                }
                _ => (ResourceErrorKind::Refused, "the server refused the connection"),
            };
            Fault::new(
                kind,
                code.as_deref(),
                format!(
                    "the database at {at} (database `{}`) refused the connection: {}; {hint}",
                    settings.database,
                    database.message()
                ),
            )
        }
        sqlx::Error::PoolTimedOut => Fault::unreachable(format!(
            "the database at {at} did not accept a connection within {} (`_poolAcquireTimeoutMs`); check `_host` and \
             `_port`",
            seconds(settings.pool.acquire_timeout)
        )),
        sqlx::Error::Io(io) => {
            Fault::unreachable(format!("the database at {at} cannot be reached: {io}; check `_host` and `_port`"))
        }
        sqlx::Error::Tls(tls) => {
            Fault::unreachable(format!("the database at {at} cannot be reached over TLS (`_ssl`): {tls}"))
        }
        other => Fault::unreachable(format!("the database at {at} cannot be reached: {other}")),
    }
}

/// Whether MySQL's refusal is its unknown database (error 1049), which
/// shares its SQLSTATE with every syntax error.
#[cfg(feature = "sql-mysql")]
fn unknown_mysql_database(error: &dyn sqlx::error::DatabaseError) -> bool {
    error.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>().is_some_and(|error| error.number() == 1049)
}

#[cfg(not(feature = "sql-mysql"))]
fn unknown_mysql_database(_error: &dyn sqlx::error::DatabaseError) -> bool {
    false
}

fn seconds(duration: Duration) -> String {
    format!("{} s", duration.as_secs_f64())
}

impl ResourceHandle for SqlDatabase {
    fn kind() -> ResourceKind {
        ResourceKind::SqlDatabase
    }

    fn from_resource(resource: ResourceRef) -> Self {
        SqlDatabase {
            shared: Arc::new(Shared {
                resource,
                resolved: OnceCell::new(),
                writer: OnceCell::new(),
                reader: OnceCell::new(),
            }),
        }
    }
}

super::default_handle_argument!(SqlDatabase);

impl fmt::Debug for SqlDatabase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqlDatabase").field("name", &self.name()).finish_non_exhaustive()
    }
}
