//! SQL databases against a real MariaDB server on loopback, as MySQL pools:
//! what every engine shows alike (`sql_support::on_every_engine`: the
//! writer and the reader, a transaction, password auth, an unknown
//! database, a host that does not answer, a local session's database, a
//! pool of the wrong engine), then MariaDB recorded as the engine.

use celerity::resources::sql::{SqlEngine, sqlx};

mod sql_support;

use sql_support::{MariaDb, TestEngine as _};

sql_support::on_every_engine!(MariaDb);

#[tokio::test]
async fn mariadb_as_the_recorded_engine_is_a_mysql_database() {
    let db = MariaDb::recorded(MariaDb::port(), "celerity", &[("_engine", "mariadb")]);
    assert_eq!(db.settings().await.unwrap().engine, SqlEngine::MySql);
    let pool: sqlx::MySqlPool = db.writer().await.unwrap();
    let version: String = sqlx::query_scalar("SELECT VERSION()").fetch_one(&pool).await.unwrap();
    assert!(version.contains("MariaDB"), "{version}");
}
