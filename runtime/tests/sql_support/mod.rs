//! What the SQL database tests share: a deployment that recorded a
//! database, a pool expected not to connect, and the behaviours every
//! engine shows alike ([`on_every_engine`]), on each engine's test server
//! ([`TestEngine`]). Not every test file uses every item.
#![allow(dead_code)]

use celerity::config::{Configuration, Values};
use celerity::resources::Links;
use celerity::resources::ResourceError;
use celerity::resources::sql::{Engine, SqlDatabase, SqlEngine, sqlx};
use celerity_testkit::servers;

const LINKS: &[u8] = br#"{"ledger": {"type": "sqlDatabase", "configKey": "ledgerDb"}}"#;

/// The configuration of a deployment that recorded `values` for the
/// database `ledger` (under the key `ledgerDb`, each value's name its
/// suffix), on `platform`, with `env` set.
pub fn configuration(platform: &str, values: &[(&str, &str)], env: &[(&str, &str)]) -> Configuration {
    let links = Links::from_json(LINKS, "the test's links").unwrap();
    let values: Vec<(String, String)> =
        values.iter().map(|(name, value)| (format!("ledgerDb{name}"), value.to_string())).collect();
    let mut builder = Configuration::builder()
        .links(links)
        .values("resources", Values::from_pairs(values))
        .env("CELERITY_PLATFORM", platform);
    for (name, value) in env {
        builder = builder.env(name, value);
    }
    builder.build()
}

/// The database `database` of `engine` on the test server at `port`, as an
/// AWS deployment records it (user and password `celerity`, no TLS), with
/// `extra` settings over those.
pub fn recorded(engine: &str, port: u16, database: &str, extra: &[(&str, &str)]) -> SqlDatabase {
    let port = port.to_string();
    let mut values = vec![
        ("_engine", engine),
        ("_host", "127.0.0.1"),
        ("_port", port.as_str()),
        ("_user", "celerity"),
        ("_password", "celerity"),
        ("_database", database),
        ("_ssl", "false"),
    ];
    for (name, value) in extra {
        values.retain(|(existing, _)| existing != name);
        values.push((name, value));
    }
    configuration("aws", &values, &[]).resources().handle::<SqlDatabase>(None).unwrap()
}

/// The error of a pool expected not to connect.
pub fn refused<P>(result: Result<P, ResourceError>) -> ResourceError {
    match result {
        Ok(_) => panic!("the pool connected, and was expected not to"),
        Err(error) => error,
    }
}

/// An engine the shared behaviours ([`on_every_engine`]) run on, with its
/// test server: what differs between engines, so that a behaviour is
/// written once.
pub trait TestEngine {
    /// The sqlx database a handler asks for pools of.
    type Db: Engine;
    /// The other engine, whose pools a database of this one refuses.
    #[cfg(all(feature = "sql-postgres", feature = "sql-mysql"))]
    type Other: TestEngine;
    /// The column type of an id the database generates.
    const GENERATED_ID: &'static str;
    /// The query answering the connection's database.
    const CURRENT_DATABASE: &'static str;
    /// What a session's endpoint URL adds to turn TLS off.
    const WITHOUT_TLS: &'static str;
    /// The SQLSTATE of a wrong password, and the server's words for it.
    const WRONG_PASSWORD: (&'static str, &'static str);
    /// The SQLSTATE of the unknown database `no_such_database`, and the
    /// server's words for it.
    const UNKNOWN_DATABASE: (&'static str, &'static str);

    /// What the settings read the recorded engine as.
    fn engine() -> SqlEngine {
        <Self::Db as Engine>::ENGINE
    }
    /// The `n`th (from 1) parameter of a statement.
    fn parameter(n: usize) -> String;
    /// The shared test server's port.
    fn port() -> u16;
    /// The shared test server's URL for `user` on `database`.
    fn url(user: &str, password: &str, database: &str) -> String;
    /// Runs `statements` on the shared server's `database` as its
    /// superuser, answering what it printed.
    fn sql_on(database: &str, statements: &str) -> String;

    /// A database `name` of its own on the shared server, made afresh for
    /// one test, as an AWS deployment records it.
    fn database(name: &str) -> SqlDatabase {
        Self::sql_on("celerity", &format!("DROP DATABASE IF EXISTS {name};\nCREATE DATABASE {name};"));
        Self::recorded(Self::port(), name, &[])
    }

    /// [`recorded`] as this engine.
    fn recorded(port: u16, database: &str, extra: &[(&str, &str)]) -> SqlDatabase {
        recorded(Self::engine().as_str(), port, database, extra)
    }
}

/// PostgreSQL, on the shared test Postgres.
#[cfg(feature = "sql-postgres")]
pub struct Postgres;

#[cfg(feature = "sql-postgres")]
impl TestEngine for Postgres {
    type Db = sqlx::Postgres;
    #[cfg(feature = "sql-mysql")]
    type Other = MariaDb;
    const GENERATED_ID: &'static str = "bigserial";
    const CURRENT_DATABASE: &'static str = "SELECT current_database()";
    const WITHOUT_TLS: &'static str = "?sslmode=disable";
    const WRONG_PASSWORD: (&'static str, &'static str) =
        ("28P01", "password authentication failed for user \"celerity\"");
    const UNKNOWN_DATABASE: (&'static str, &'static str) = ("3D000", "database \"no_such_database\" does not exist");

    fn parameter(n: usize) -> String {
        format!("${n}")
    }
    fn port() -> u16 {
        servers::postgres().port()
    }
    fn url(user: &str, password: &str, database: &str) -> String {
        servers::postgres().url(user, password, database)
    }
    fn sql_on(database: &str, statements: &str) -> String {
        servers::postgres().psql_on(database, statements)
    }
}

/// MySQL, on the shared test MariaDB.
#[cfg(feature = "sql-mysql")]
pub struct MariaDb;

#[cfg(feature = "sql-mysql")]
impl TestEngine for MariaDb {
    type Db = sqlx::MySql;
    #[cfg(feature = "sql-postgres")]
    type Other = Postgres;
    const GENERATED_ID: &'static str = "BIGINT AUTO_INCREMENT";
    const CURRENT_DATABASE: &'static str = "SELECT DATABASE()";
    const WITHOUT_TLS: &'static str = "?ssl-mode=DISABLED";
    // ER_ACCESS_DENIED_ERROR (1045) is SQLSTATE 28000.
    const WRONG_PASSWORD: (&'static str, &'static str) = ("28000", "Access denied for user 'celerity'");
    // ER_BAD_DB_ERROR (1049) is SQLSTATE 42000.
    const UNKNOWN_DATABASE: (&'static str, &'static str) = ("42000", "Unknown database 'no_such_database'");

    fn parameter(_: usize) -> String {
        "?".to_string()
    }
    fn port() -> u16 {
        servers::mariadb().port()
    }
    fn url(user: &str, password: &str, database: &str) -> String {
        servers::mariadb().url(user, password, database)
    }
    fn sql_on(database: &str, statements: &str) -> String {
        servers::mariadb().sql_on(database, statements)
    }
}

/// The behaviours every engine shows alike, written once: one
/// `#[tokio::test]` each, on `$engine` (the name of a [`TestEngine`] of
/// this module), in a module `every_engine` of the test binary that
/// invokes this, beside the engine's own tests. A macro rather than
/// generic functions, as each expansion names the engine's own sqlx types,
/// which sqlx's bounds want.
// A test binary of one engine's own settings (sql_aws) leaves it unused.
#[allow(unused_macros)]
macro_rules! on_every_engine {
    ($engine:ident) => {
        mod every_engine {
            use std::time::Duration;

            use celerity::resources::ResourceErrorKind;
            use celerity::resources::sql::{SqlDatabase, sqlx};
            use celerity_testkit::servers;

            use $crate::sql_support::{TestEngine, configuration, refused};

            /// The engine the behaviours run on.
            type E = $crate::sql_support::$engine;
            /// Its sqlx database.
            type Db = <E as TestEngine>::Db;
            /// Its pools.
            type Pool = sqlx::Pool<Db>;

            #[tokio::test]
            async fn the_writer_writes_and_the_reader_reads_it_back() {
                let db = E::database("sql_writer_reader");
                assert_eq!(db.settings().await.unwrap().engine, E::engine());
                let writer: Pool = db.writer().await.unwrap();
                let create =
                    format!("CREATE TABLE entries (id {} PRIMARY KEY, amount BIGINT NOT NULL)", E::GENERATED_ID);
                sqlx::query(&create).execute(&writer).await.unwrap();
                let insert = format!("INSERT INTO entries (amount) VALUES ({}) RETURNING id", E::parameter(1));
                let (id,): (i64,) = sqlx::query_as(&insert).bind(250_i64).fetch_one(&writer).await.unwrap();

                let reader: Pool = db.reader().await.unwrap();
                let select = format!("SELECT amount FROM entries WHERE id = {}", E::parameter(1));
                let amount: i64 = sqlx::query_scalar(&select).bind(id).fetch_one(&reader).await.unwrap();
                assert_eq!(amount, 250);
                let name: String = sqlx::query_scalar(E::CURRENT_DATABASE).fetch_one(&reader).await.unwrap();
                assert_eq!(name, "sql_writer_reader");
                // The handle keeps its pools: a clone and a second call share them.
                let again: Pool = db.clone().writer().await.unwrap();
                assert_eq!(again.size(), writer.size());
                // The table is there for the server itself, not only for the pool.
                assert_eq!(E::sql_on("sql_writer_reader", "SELECT amount FROM entries"), "250");
            }

            #[tokio::test]
            async fn the_reader_connects_to_the_read_host_and_the_writer_to_the_host() {
                E::database("sql_read_host");
                // Nothing listens on 127.0.0.2: a reader that went to the writer's
                // host would connect.
                let db = E::recorded(
                    E::port(),
                    "sql_read_host",
                    &[("_readHost", "127.0.0.2"), ("_poolAcquireTimeoutMs", "1000")],
                );
                assert_eq!(db.settings().await.unwrap().reader_host(), "127.0.0.2");
                let _writer: Pool = db.writer().await.unwrap();
                let error = refused(db.reader::<Db>().await);
                assert_eq!(error.kind(), ResourceErrorKind::Unreachable, "{error}");
                assert!(
                    error.to_string().starts_with(
                        "connecting to the reader of the SQL database `ledger`: the database at 127.0.0.2:"
                    ),
                    "{error}"
                );
            }

            #[tokio::test]
            async fn a_transaction_commits_or_rolls_back_as_a_whole() {
                let db = E::database("sql_transactions");
                let pool: Pool = db.writer().await.unwrap();
                // InnoDB, MariaDB's default, has transactions.
                sqlx::query("CREATE TABLE balances (name VARCHAR(16) PRIMARY KEY, value BIGINT NOT NULL)")
                    .execute(&pool)
                    .await
                    .unwrap();
                sqlx::query("INSERT INTO balances VALUES ('a', 100), ('b', 0)").execute(&pool).await.unwrap();

                let mut moved = pool.begin().await.unwrap();
                sqlx::query("UPDATE balances SET value = value - 40 WHERE name = 'a'")
                    .execute(&mut *moved)
                    .await
                    .unwrap();
                sqlx::query("UPDATE balances SET value = value + 40 WHERE name = 'b'")
                    .execute(&mut *moved)
                    .await
                    .unwrap();
                moved.commit().await.unwrap();

                let mut abandoned = pool.begin().await.unwrap();
                sqlx::query("UPDATE balances SET value = 0 WHERE name = 'a'").execute(&mut *abandoned).await.unwrap();
                abandoned.rollback().await.unwrap();

                let balances: Vec<(String, i64)> =
                    sqlx::query_as("SELECT name, value FROM balances ORDER BY name").fetch_all(&pool).await.unwrap();
                assert_eq!(balances, [("a".to_string(), 60), ("b".to_string(), 40)]);
            }

            #[tokio::test]
            async fn a_wrong_password_is_refused_naming_the_settings_and_never_shown() {
                let db = E::recorded(E::port(), "celerity", &[("_password", "not-the-password-7731")]);
                let error = refused(db.writer::<Db>().await);
                assert_eq!(error.kind(), ResourceErrorKind::Refused, "{error}");
                let (code, words) = E::WRONG_PASSWORD;
                assert_eq!(error.code(), Some(code), "{error}");
                let message = error.to_string();
                assert!(message.contains(words), "{message}");
                assert!(message.contains("check `_user` and `_password`"), "{message}");
                assert!(!message.contains("not-the-password-7731"), "{message}");
                assert!(!format!("{error:?} {:?}", db.settings().await.unwrap()).contains("not-the-password-7731"));
                // The right password on a handle of its own connects: the failure
                // was the password's.
                let _pool: Pool = E::recorded(E::port(), "celerity", &[]).writer().await.unwrap();
            }

            #[tokio::test]
            async fn an_unknown_database_is_named() {
                let db = E::recorded(E::port(), "no_such_database", &[]);
                let error = refused(db.writer::<Db>().await);
                let (code, words) = E::UNKNOWN_DATABASE;
                assert_eq!((error.kind(), error.code()), (ResourceErrorKind::Config, Some(code)), "{error}");
                assert!(error.to_string().contains(words), "{error}");
                assert!(error.to_string().contains("(database `no_such_database`)"), "{error}");
                assert!(error.to_string().contains("check `_database`"), "{error}");
            }

            #[tokio::test]
            async fn a_host_that_does_not_answer_is_unreachable_within_the_acquire_timeout() {
                let port = servers::free_port();
                let db = E::recorded(port, "celerity", &[("_poolAcquireTimeoutMs", "500")]);
                let writer = db.writer::<Db>();
                let error = refused(tokio::time::timeout(Duration::from_secs(20), writer).await.unwrap());
                assert_eq!(error.kind(), ResourceErrorKind::Unreachable, "{error}");
                assert!(error.to_string().contains(&format!("127.0.0.1:{port}")), "{error}");
                assert!(error.to_string().contains("check `_host` and `_port`"), "{error}");
            }

            #[tokio::test]
            async fn a_local_session_database_is_the_sessions_endpoint() {
                E::database("sql_local_session");
                let endpoint = format!("{}{}", E::url("celerity", "celerity", "celerity"), E::WITHOUT_TLS);
                let env = [("CELERITY_LOCAL_SQL_DATABASE_ENDPOINT", endpoint.as_str())];
                let db = configuration("local", &[], &env).resources().handle::<SqlDatabase>(None).unwrap();
                let settings = db.settings().await.unwrap();
                assert_eq!(
                    (settings.engine, settings.host.as_str(), settings.port, settings.ssl),
                    (E::engine(), "127.0.0.1", E::port(), false)
                );
                let pool: Pool = db.writer().await.unwrap();
                let name: String = sqlx::query_scalar(E::CURRENT_DATABASE).fetch_one(&pool).await.unwrap();
                assert_eq!(name, "celerity");
                // A database recorded for the resource is used over the URL's.
                let db = configuration("local", &[("_database", "sql_local_session")], &env)
                    .resources()
                    .handle::<SqlDatabase>(None)
                    .unwrap();
                let pool: Pool = db.reader().await.unwrap();
                let name: String = sqlx::query_scalar(E::CURRENT_DATABASE).fetch_one(&pool).await.unwrap();
                assert_eq!(name, "sql_local_session");
            }

            #[cfg(all(feature = "sql-postgres", feature = "sql-mysql"))]
            #[tokio::test]
            async fn a_pool_of_another_engine_than_the_recorded_one_is_refused_naming_both() {
                type Other = <<E as TestEngine>::Other as TestEngine>::Db;
                let db = E::recorded(E::port(), "celerity", &[]);
                let Err(error) = db.writer::<Other>().await else {
                    panic!("a pool of another engine than the recorded one")
                };
                assert_eq!(
                    (error.kind(), error.code()),
                    (ResourceErrorKind::Invalid, Some("EngineMismatch")),
                    "{error}"
                );
                let (recorded, asked) = (E::engine().as_str(), <E as TestEngine>::Other::engine().as_str());
                let expected =
                    format!("the engine `{recorded}` (`_engine`), and the handler asked for a `{asked}` pool");
                assert!(error.to_string().contains(&expected), "{error}");
                // The reader is refused alike, and the pool the database is of
                // still connects.
                let Err(error) = db.reader::<Other>().await else {
                    panic!("a reader of another engine than the recorded one")
                };
                assert_eq!(error.code(), Some("EngineMismatch"), "{error}");
                let _pool: Pool = db.writer().await.unwrap();
            }
        }
    };
}
// Reached by path, `sql_support::on_every_engine!`, as the other items
// are; unused where the macro is.
#[allow(unused_imports)]
pub(crate) use on_every_engine;
