//! SQL databases as an AWS deployment records them beyond a password: one
//! held in Secrets Manager (against an AWS API emulator), and IAM
//! authentication, which signs a token per connection and always uses TLS
//! (against a real Postgres, which refuses the token as a password: the
//! signing and the TLS are what is checked).

use celerity::resources::sql::{SqlDatabase, sqlx};
use celerity::resources::{AuthMode, ResourceError, ResourceErrorKind};
use celerity_testkit::servers;

mod sql_support;

/// The database on the test Postgres at `port`, as an AWS deployment
/// records it with `values` and no password of its own.
fn handle(port: u16, values: &[(&str, &str)]) -> SqlDatabase {
    servers::moto().use_in_this_process();
    let port = port.to_string();
    let mut recorded = vec![
        ("_engine", "postgres"),
        ("_host", "127.0.0.1"),
        ("_port", &port),
        ("_user", "celerity"),
        ("_database", "celerity"),
    ];
    recorded.extend_from_slice(values);
    sql_support::configuration("aws", &recorded, &[]).resources().handle::<SqlDatabase>(None).unwrap()
}

fn refused(result: Result<sqlx::PgPool, ResourceError>) -> ResourceError {
    sql_support::refused(result)
}

#[tokio::test]
async fn a_password_held_in_secrets_manager_is_read_from_the_secret() {
    let moto = servers::moto();
    moto.use_in_this_process();
    // As RDS keeps a managed secret: a JSON object.
    let (status, body) = moto.call_json(
        "secretsmanager.CreateSecret",
        r#"{"Name": "ledger-db-credentials", "SecretString": "{\"username\": \"celerity\", \"password\": \"celerity\"}"}"#,
    );
    assert!(status == 200 || body.contains("ResourceExistsException"), "{status} {body}");
    let db =
        handle(servers::postgres().port(), &[("_ssl", "false"), ("_credentialsSecretId", "ledger-db-credentials")]);
    let pool: sqlx::PgPool = db.writer().await.unwrap();
    let one: i32 = sqlx::query_scalar("SELECT 1").fetch_one(&pool).await.unwrap();
    assert_eq!(one, 1);

    let missing = handle(servers::postgres().port(), &[("_ssl", "false"), ("_credentialsSecretId", "no-such-secret")]);
    let error = refused(missing.writer().await);
    assert_eq!(error.kind(), ResourceErrorKind::Config, "{error}");
    assert!(error.to_string().contains("could not be read from the secret \"no-such-secret\""), "{error}");
}

#[tokio::test]
async fn iam_authentication_signs_a_token_and_always_uses_tls() {
    // The deployment asked for no TLS; a token is a credential, so TLS it is.
    let db = handle(servers::postgres_tls().port(), &[("_authMode", "iam"), ("_ssl", "false")]);
    let settings = db.settings().await.unwrap();
    assert_eq!((settings.auth_mode, settings.ssl), (AuthMode::Iam, true));
    // The server knows no token: it refuses the signed one as a password,
    // having taken the connection over TLS.
    let error = refused(db.writer().await);
    assert_eq!((error.kind(), error.code()), (ResourceErrorKind::Refused, Some("28P01")), "{error}");
    assert!(error.to_string().contains("(or `_authMode`)"), "{error}");
}
