//! SQL databases against a real MariaDB server on loopback, as MySQL pools:
//! the writer and the reader, a transaction, password auth, an unknown
//! database, a host that does not answer, a local session's database, and
//! a pool of the wrong engine.

use std::time::Duration;

use celerity::resources::sql::{SqlDatabase, SqlEngine, sqlx};
use celerity::resources::{ResourceError, ResourceErrorKind};
use celerity_testkit::servers;

mod sql_support;

use sql_support::configuration;

/// The database `database` on the test MariaDB at `port`, as an AWS
/// deployment records it, with `extra` settings over the defaults.
fn recorded(port: u16, database: &str, extra: &[(&str, &str)]) -> SqlDatabase {
    sql_support::recorded("mysql", port, database, extra)
}

/// A database of its own on the shared test MariaDB, for one test.
fn database(name: &str) -> SqlDatabase {
    let mariadb = servers::mariadb();
    mariadb.sql(&format!("DROP DATABASE IF EXISTS {name}; CREATE DATABASE {name}"));
    recorded(mariadb.port(), name, &[])
}

/// The error of a MySQL pool expected not to connect.
fn refused(result: Result<sqlx::MySqlPool, ResourceError>) -> ResourceError {
    sql_support::refused(result)
}

#[tokio::test]
async fn the_writer_writes_and_the_reader_reads_it_back() {
    let db = database("sql_writer_reader");
    assert_eq!(db.settings().await.unwrap().engine, SqlEngine::MySql);
    let writer = db.writer::<sqlx::MySql>().await.unwrap();
    sqlx::query("CREATE TABLE entries (id BIGINT AUTO_INCREMENT PRIMARY KEY, amount BIGINT NOT NULL)")
        .execute(&writer)
        .await
        .unwrap();
    let inserted = sqlx::query("INSERT INTO entries (amount) VALUES (?)").bind(250_i64).execute(&writer).await.unwrap();
    let id = inserted.last_insert_id();

    let reader: sqlx::MySqlPool = db.reader().await.unwrap();
    let amount: i64 =
        sqlx::query_scalar("SELECT amount FROM entries WHERE id = ?").bind(id).fetch_one(&reader).await.unwrap();
    assert_eq!(amount, 250);
    let name: String = sqlx::query_scalar("SELECT DATABASE()").fetch_one(&reader).await.unwrap();
    assert_eq!(name, "sql_writer_reader");
    // The handle keeps its pools: a clone and a second call share them.
    let again: sqlx::MySqlPool = db.clone().writer().await.unwrap();
    assert_eq!(again.size(), writer.size());
    // The table is there for the server itself, not only for the pool.
    assert_eq!(servers::mariadb().sql("SELECT amount FROM sql_writer_reader.entries"), "250");
}

#[tokio::test]
async fn a_transaction_commits_or_rolls_back_as_a_whole() {
    let db = database("sql_transactions");
    let pool: sqlx::MySqlPool = db.writer().await.unwrap();
    // InnoDB, which has transactions, is the default engine.
    sqlx::query("CREATE TABLE balances (name VARCHAR(16) PRIMARY KEY, value BIGINT NOT NULL)")
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("INSERT INTO balances VALUES ('a', 100), ('b', 0)").execute(&pool).await.unwrap();

    let mut moved = pool.begin().await.unwrap();
    sqlx::query("UPDATE balances SET value = value - 40 WHERE name = 'a'").execute(&mut *moved).await.unwrap();
    sqlx::query("UPDATE balances SET value = value + 40 WHERE name = 'b'").execute(&mut *moved).await.unwrap();
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
    let mariadb = servers::mariadb();
    let db = recorded(mariadb.port(), "celerity", &[("_password", "not-the-password-7731")]);
    let error = refused(db.writer().await);
    assert_eq!(error.kind(), ResourceErrorKind::Refused, "{error}");
    // MariaDB's ER_ACCESS_DENIED_ERROR (1045) is SQLSTATE 28000.
    assert_eq!(error.code(), Some("28000"), "{error}");
    let message = error.to_string();
    assert!(message.contains("Access denied for user 'celerity'"), "{message}");
    assert!(message.contains("check `_user` and `_password`"), "{message}");
    assert!(!message.contains("not-the-password-7731"), "{message}");
    assert!(!format!("{error:?} {:?}", db.settings().await.unwrap()).contains("not-the-password-7731"));
    // The right password on a handle of its own connects: the failure was
    // the password's.
    let _pool: sqlx::MySqlPool = recorded(mariadb.port(), "celerity", &[]).writer().await.unwrap();
}

#[tokio::test]
async fn an_unknown_database_is_named() {
    let db = recorded(servers::mariadb().port(), "no_such_database", &[]);
    let error = refused(db.writer().await);
    // MariaDB's ER_BAD_DB_ERROR (1049) is SQLSTATE 42000, "Unknown database".
    assert_eq!((error.kind(), error.code()), (ResourceErrorKind::Config, Some("42000")), "{error}");
    assert!(error.to_string().contains("Unknown database 'no_such_database'"), "{error}");
    assert!(error.to_string().contains("(database `no_such_database`)"), "{error}");
    assert!(error.to_string().contains("check `_database`"), "{error}");
}

#[tokio::test]
async fn a_host_that_does_not_answer_is_unreachable_within_the_acquire_timeout() {
    let port = servers::free_port();
    let db = recorded(port, "celerity", &[("_poolAcquireTimeoutMs", "500")]);
    let error = refused(tokio::time::timeout(Duration::from_secs(20), db.writer()).await.unwrap());
    assert_eq!(error.kind(), ResourceErrorKind::Unreachable, "{error}");
    assert!(error.to_string().contains(&format!("127.0.0.1:{port}")), "{error}");
    assert!(error.to_string().contains("check `_host` and `_port`"), "{error}");
}

#[tokio::test]
async fn mariadb_as_the_recorded_engine_is_a_mysql_database() {
    let mariadb = servers::mariadb();
    let db = recorded(mariadb.port(), "celerity", &[("_engine", "mariadb")]);
    assert_eq!(db.settings().await.unwrap().engine, SqlEngine::MySql);
    let pool: sqlx::MySqlPool = db.writer().await.unwrap();
    let version: String = sqlx::query_scalar("SELECT VERSION()").fetch_one(&pool).await.unwrap();
    assert!(version.contains("MariaDB"), "{version}");
}

#[tokio::test]
async fn a_local_session_mysql_database_is_the_sessions_endpoint() {
    let mariadb = servers::mariadb();
    mariadb.sql("DROP DATABASE IF EXISTS sql_local_session; CREATE DATABASE sql_local_session");
    let endpoint = format!("{}?ssl-mode=DISABLED", mariadb.url("celerity", "celerity", "celerity"));
    let env = [("CELERITY_LOCAL_SQL_DATABASE_ENDPOINT", endpoint.as_str())];
    let db = configuration("local", &[], &env).resources().handle::<SqlDatabase>(None).unwrap();
    let settings = db.settings().await.unwrap();
    assert_eq!(
        (settings.engine, settings.host.as_str(), settings.port, settings.ssl),
        (SqlEngine::MySql, "127.0.0.1", mariadb.port(), false)
    );
    let pool: sqlx::MySqlPool = db.writer().await.unwrap();
    let name: String = sqlx::query_scalar("SELECT DATABASE()").fetch_one(&pool).await.unwrap();
    assert_eq!(name, "celerity");
    // A database recorded for the resource is used over the URL's.
    let db = configuration("local", &[("_database", "sql_local_session")], &env)
        .resources()
        .handle::<SqlDatabase>(None)
        .unwrap();
    let pool: sqlx::MySqlPool = db.reader().await.unwrap();
    let name: String = sqlx::query_scalar("SELECT DATABASE()").fetch_one(&pool).await.unwrap();
    assert_eq!(name, "sql_local_session");
}

#[cfg(feature = "sql-postgres")]
#[tokio::test]
async fn a_pool_of_another_engine_than_the_recorded_one_is_refused_naming_both() {
    let db = recorded(servers::mariadb().port(), "celerity", &[]);
    let Err(error) = db.writer::<sqlx::Postgres>().await else { panic!("a Postgres pool of a MySQL database") };
    assert_eq!((error.kind(), error.code()), (ResourceErrorKind::Invalid, Some("EngineMismatch")), "{error}");
    assert!(
        error.to_string().contains("the engine `mysql` (`_engine`), and the handler asked for a `postgres` pool"),
        "{error}"
    );
    // The reader is refused alike, and the MySQL pool the database is of
    // still connects.
    let Err(error) = db.reader::<sqlx::Postgres>().await else { panic!("a Postgres reader of a MySQL database") };
    assert_eq!(error.code(), Some("EngineMismatch"), "{error}");
    let _pool: sqlx::MySqlPool = db.writer().await.unwrap();
}
