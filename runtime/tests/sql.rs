//! SQL databases against real Postgres servers on loopback: what every
//! engine shows alike (`sql_support::on_every_engine`: the writer and the
//! reader, a transaction, password auth, an unknown database, a host that
//! does not answer, a local session's database, a pool of the wrong
//! engine), then TLS off and required, a pool that runs out, a server that
//! restarts, the pools closed when the application drains, and settings
//! that are wrong.

use std::sync::Arc;
use std::time::Duration;

use celerity::config::Configuration;
use celerity::resources::sql::{SqlDatabase, sqlx};
use celerity::resources::{ResourceError, ResourceErrorKind};
use celerity::settings::Settings;
use celerity::testing::{TestApp, TestRequest};
use celerity::{App, Context};
use celerity_testkit::proto::v1::result::Outcome;
use celerity_testkit::{TestRuntime, event, servers};
use tokio::sync::Notify;

mod sql_support;

use sql_support::{Postgres, TestEngine as _, configuration};

/// The error of a Postgres pool expected not to connect.
fn refused(result: Result<sqlx::PgPool, ResourceError>) -> ResourceError {
    sql_support::refused(result)
}

sql_support::on_every_engine!(Postgres);

#[tokio::test]
async fn settings_the_deployment_left_out_or_wrote_wrong_are_named() {
    let port = servers::postgres().port().to_string();
    let cases: &[(&[(&str, &str)], &str)] = &[
        (&[("_port", "fifty")], "the `_port` recorded for the SQL database `ledger` is not a number"),
        (&[("_engine", "")], "the deployment recorded no `_engine` for the SQL database `ledger`"),
        (&[("_engine", "oracle")], "the `_engine` \"oracle\" for the SQL database `ledger`"),
        (&[("_user", "")], "the deployment recorded no `_user`"),
        (&[("_authMode", "kerberos")], "the `_authMode` \"kerberos\" for the SQL database `ledger`"),
        (&[("_password", "")], "recorded neither `_password` nor `_credentialsSecretId`"),
        (&[("_poolMax", "0")], "(`_poolMin`, `_poolMax`)"),
    ];
    for (extra, expected) in cases {
        let db = Postgres::recorded(port.parse().unwrap(), "celerity", extra);
        let error = refused(db.writer().await);
        assert_eq!(error.kind(), ResourceErrorKind::Config, "{extra:?}: {error}");
        assert!(error.to_string().contains(expected), "{extra:?}: {error}");
    }
    // On AWS the host is needed.
    let no_host =
        configuration("aws", &[("_engine", "postgres")], &[]).resources().handle::<SqlDatabase>(None).unwrap();
    let error = refused(no_host.writer().await);
    assert!(error.to_string().contains("recorded no `_host` for the SQL database `ledger`"), "{error}");
    // A platform no backend serves is said as such.
    let gcp = configuration("gcp", &[], &[]).resources().handle::<SqlDatabase>(None).unwrap();
    let error = refused(gcp.writer().await);
    assert_eq!(error.kind(), ResourceErrorKind::Unsupported, "{error}");
}

#[tokio::test]
async fn tls_is_off_or_required_as_the_deployment_says() {
    let postgres = servers::postgres_tls();
    let as_tls_only = |ssl: &str| {
        Postgres::recorded(
            postgres.port(),
            "celerity",
            &[("_user", "tls_only"), ("_password", "tls_only"), ("_ssl", ssl)],
        )
    };
    // The server takes this user only over TLS.
    let error = refused(as_tls_only("false").writer().await);
    assert_eq!(error.kind(), ResourceErrorKind::Refused, "{error}");
    let pool: sqlx::PgPool = as_tls_only("true").writer().await.unwrap();
    let encrypted: bool =
        sqlx::query_scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetch_one(&pool).await.unwrap();
    assert!(encrypted);
    // Others may connect either way, and without TLS are not encrypted.
    let plain: sqlx::PgPool =
        Postgres::recorded(postgres.port(), "celerity", &[("_ssl", "false")]).writer().await.unwrap();
    let encrypted: bool =
        sqlx::query_scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetch_one(&plain).await.unwrap();
    assert!(!encrypted);
}

/// The application of the pool tests: `/hold` takes the pool's one
/// connection until told to let go, `/count` needs a connection.
fn holding_app(config: Configuration, release: Arc<Notify>, held: Arc<Notify>) -> TestApp {
    let hold = move |db: SqlDatabase| {
        let (release, held) = (release.clone(), held.clone());
        async move {
            let pool: sqlx::PgPool = db.writer().await?;
            let connection = pool.acquire().await?;
            held.notify_one();
            release.notified().await;
            drop(connection);
            Ok::<_, celerity::Error>("released")
        }
    };
    let count = |db: SqlDatabase| async move {
        let pool: sqlx::PgPool = db.writer().await?;
        let one: i32 = sqlx::query_scalar("SELECT 1").fetch_one(&pool).await?;
        Ok::<_, celerity::Error>(one.to_string())
    };
    App::new()
        .without_compiled_handlers()
        .with_configuration(config)
        .http("GET::/hold", hold)
        .http("GET::/count", count)
        .into_test()
}

fn one_connection(acquire_timeout_ms: &str) -> Configuration {
    let port = servers::postgres().port().to_string();
    configuration(
        "aws",
        &[
            ("_engine", "postgres"),
            ("_host", "127.0.0.1"),
            ("_port", &port),
            ("_user", "celerity"),
            ("_password", "celerity"),
            ("_database", "celerity"),
            ("_ssl", "false"),
            ("_poolMax", "1"),
            ("_poolAcquireTimeoutMs", acquire_timeout_ms),
        ],
        &[],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_in_use_makes_a_query_wait_then_fail_clearly_at_its_acquire_timeout() {
    let (release, held) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let app = holding_app(one_connection("300"), release.clone(), held.clone());
    let holding = app.call("GET::/hold", TestRequest::get("/hold")).start();
    held.notified().await;

    let error = app.call("GET::/count", TestRequest::get("/count")).await.expect_error();
    assert!(error.message().contains("pool timed out while waiting for an open connection"), "{error:?}");

    release.notify_one();
    assert_eq!(holding.await.expect_http().text(), "released");
    // Given back, the connection serves the next query.
    assert_eq!(app.call("GET::/count", TestRequest::get("/count")).await.expect_http().text(), "1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_in_use_makes_a_query_wait_no_longer_than_its_events_deadline() {
    let (release, held) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    // The pool would wait a minute; the event has a quarter of a second.
    let app = holding_app(one_connection("60000"), release.clone(), held.clone());
    let holding = app.call("GET::/hold", TestRequest::get("/hold")).start();
    held.notified().await;

    let waited = tokio::time::timeout(
        Duration::from_secs(20),
        app.call("GET::/count", TestRequest::get("/count")).deadline_in(Duration::from_millis(250)),
    )
    .await
    .expect("the waiting query outlived its event's deadline");
    let error = waited.expect_error();
    assert_eq!(error.error_type(), "DeadlineExceeded", "{error:?}");

    release.notify_one();
    assert_eq!(holding.await.expect_http().text(), "released");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_database_fails_the_query_in_flight_and_serves_the_next() {
    let postgres = servers::start_postgres();
    let db = Postgres::recorded(postgres.port(), "celerity", &[]);
    let pool: sqlx::PgPool = db.writer().await.unwrap();
    let in_flight = tokio::spawn({
        let pool = pool.clone();
        async move { sqlx::query("SELECT pg_sleep(60)").execute(&pool).await }
    });
    // Stopped once the query is running on the server.
    while postgres.psql("SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)'") != "1" {
        tokio::task::yield_now().await;
        std::thread::sleep(Duration::from_millis(20));
    }
    postgres.restart();
    let failed = tokio::time::timeout(Duration::from_secs(20), in_flight)
        .await
        .expect("the query in flight hung when its server stopped")
        .unwrap();
    assert!(failed.is_err(), "the query in flight succeeded across a restart");

    let one: i32 = sqlx::query_scalar("SELECT 1").fetch_one(&pool).await.unwrap();
    assert_eq!(one, 1);
    let again: sqlx::PgPool = db.writer().await.unwrap();
    let one: i32 = sqlx::query_scalar("SELECT 1").fetch_one(&again).await.unwrap();
    assert_eq!(one, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pools_close_when_the_application_drains_after_its_handlers() {
    let postgres = servers::postgres();
    postgres.psql("DROP ROLE IF EXISTS sql_drainer; CREATE ROLE sql_drainer LOGIN PASSWORD 'sql_drainer'");
    let connections = || postgres.psql("SELECT count(*) FROM pg_stat_activity WHERE usename = 'sql_drainer'");
    let config = configuration(
        "aws",
        &[
            ("_engine", "postgres"),
            ("_host", "127.0.0.1"),
            ("_port", &postgres.port().to_string()),
            ("_user", "sql_drainer"),
            ("_password", "sql_drainer"),
            ("_database", "celerity"),
            ("_ssl", "false"),
            // Idle connections are kept for the test's length.
            ("_poolIdleTimeoutMs", "600000"),
        ],
        &[],
    );
    let runtime = TestRuntime::builder().handler("sleep", "GET::/sleep").bind().await.unwrap();
    let socket = runtime.socket_path().unwrap().to_string_lossy().into_owned();
    let settings = Settings::from_lookup(|name| (name == "CELERITY_RUNTIME_SOCKET").then(|| socket.clone())).unwrap();
    let sleep = |db: SqlDatabase, _cx: Context| async move {
        let pool: sqlx::PgPool = db.writer().await?;
        sqlx::query("SELECT pg_sleep(0.5)").execute(&pool).await?;
        Ok::<_, celerity::Error>("slept")
    };
    // Held past the application's end, as its handles are: only closing
    // the pools lets their connections go.
    let kept = config.clone();
    let app =
        App::new().without_compiled_handlers().with_configuration(config).http("GET::/sleep", sleep).settings(settings);
    let served = tokio::spawn(app.run());
    let conn = runtime.accept().await.unwrap().accepted().unwrap();

    let result = conn.call(event::http("GET", "/sleep")).await.unwrap();
    let Some(Outcome::Http(response)) = &result.outcome else { panic!("expected a response, got {result:?}") };
    assert_eq!(response.body.as_ref(), b"slept");
    assert_ne!(connections(), "0", "the pool keeps its connections between events");

    conn.drain_in(Duration::from_secs(5)).unwrap();
    tokio::time::timeout(Duration::from_secs(10), served).await.unwrap().unwrap().unwrap();
    // The server sees the connection go as the pool closes it.
    let start = std::time::Instant::now();
    while connections() != "0" {
        assert!(start.elapsed() < Duration::from_secs(10), "the pool's connection was left open after the drain");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(kept);
}
