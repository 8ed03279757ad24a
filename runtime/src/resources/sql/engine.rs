//! The sqlx databases a handle gives pools of, and what each needs to
//! connect: the options of one connection, from the recorded settings.

use super::settings::{SqlEngine, SqlSettings};

mod sealed {
    pub trait Sealed {}
}

/// A sqlx database a [`SqlDatabase`](super::SqlDatabase) gives pools of:
/// `sqlx::Postgres` (the `sql-postgres` feature) and `sqlx::MySql`
/// (`sql-mysql`). Sealed: the SDK connects only what it knows how to.
pub trait Engine: sqlx::Database + sealed::Sealed {
    /// The engine the deployment records for this database.
    const ENGINE: SqlEngine;

    /// The options of one connection to `host` as `settings` describe it,
    /// authenticating with `password` (or a signed token).
    #[doc(hidden)]
    fn connect_options(
        settings: &SqlSettings,
        host: &str,
        password: &str,
    ) -> <Self::Connection as sqlx::Connection>::Options;
}

#[cfg(feature = "sql-postgres")]
impl sealed::Sealed for sqlx::Postgres {}

#[cfg(feature = "sql-postgres")]
impl Engine for sqlx::Postgres {
    const ENGINE: SqlEngine = SqlEngine::Postgres;

    fn connect_options(settings: &SqlSettings, host: &str, password: &str) -> sqlx::postgres::PgConnectOptions {
        use sqlx::postgres::{PgConnectOptions, PgSslMode};
        // Not `new()`: it reads the PG* variables and a password file, and a
        // resource is reached as the deployment recorded it, nothing else.
        PgConnectOptions::new_without_pgpass()
            .host(host)
            .port(settings.port)
            .username(&settings.user)
            .password(password)
            .database(&settings.database)
            .ssl_mode(if settings.ssl { PgSslMode::Require } else { PgSslMode::Disable })
    }
}

#[cfg(feature = "sql-mysql")]
impl sealed::Sealed for sqlx::MySql {}

#[cfg(feature = "sql-mysql")]
impl Engine for sqlx::MySql {
    const ENGINE: SqlEngine = SqlEngine::MySql;

    fn connect_options(settings: &SqlSettings, host: &str, password: &str) -> sqlx::mysql::MySqlConnectOptions {
        use sqlx::mysql::{MySqlConnectOptions, MySqlSslMode};
        let options = MySqlConnectOptions::new()
            .host(host)
            .port(settings.port)
            .username(&settings.user)
            .password(password)
            .database(&settings.database)
            .ssl_mode(if settings.ssl { MySqlSslMode::Required } else { MySqlSslMode::Disabled });
        // RDS takes an IAM token only in the clear-text plugin, which it
        // allows only over TLS (always on with IAM).
        if settings.auth_mode == super::super::AuthMode::Iam { options.enable_cleartext_plugin(true) } else { options }
    }
}
