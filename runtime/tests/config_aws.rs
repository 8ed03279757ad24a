//! Configuration stores on AWS, read from an AWS API emulator (moto's
//! server) on loopback through the official AWS SDK: Secrets Manager,
//! Parameter Store, and the Parameters and Secrets extension.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use celerity::config::{ConfigErrorKind, Configuration};
use celerity_testkit::servers;

/// The emulator, with this process's AWS SDK pointed at it.
fn moto() -> &'static servers::Moto {
    let moto = servers::moto();
    moto.use_in_this_process();
    moto
}

fn create_secret(name: &str, text: &str) {
    let body = serde_json::json!({"Name": name, "SecretString": text}).to_string();
    let (status, answer) = moto().call_json("secretsmanager.CreateSecret", &body);
    assert_eq!(status, 200, "{answer}");
}

fn put_parameter(name: &str, value: &str, kind: &str) {
    let body = serde_json::json!({"Name": name, "Value": value, "Type": kind, "Overwrite": true}).to_string();
    let (status, answer) = moto().call_json("AmazonSSM.PutParameter", &body);
    assert_eq!(status, 200, "{answer}");
}

fn aws(vars: &[(&str, &str)]) -> Configuration {
    let mut all = vec![("CELERITY_PLATFORM", "aws")];
    all.extend_from_slice(vars);
    Configuration::from_vars(all.iter().map(|(k, v)| (k.to_string(), v.to_string()))).unwrap()
}

#[tokio::test]
async fn a_secrets_manager_store_is_one_json_secret() {
    create_secret("orders/app-config", r#"{"REGION": "eu-west-2", "RETRIES": 3}"#);
    let config =
        aws(&[("CELERITY_CONFIG_STORE_ID", "orders/app-config"), ("CELERITY_CONFIG_STORE_KIND", "secrets-manager")]);
    assert_eq!(config.require("REGION").await.unwrap(), "eu-west-2");
    assert_eq!(config.require("RETRIES").await.unwrap(), "3");
    assert!(config.describe().contains("Secrets Manager"));
}

#[tokio::test]
async fn a_secret_that_is_not_json_or_not_there_is_an_error_naming_it() {
    create_secret("orders/not-json", "hunter2");
    let error = aws(&[("CELERITY_CONFIG_STORE_ID", "orders/not-json")]).get("x").await.unwrap_err();
    assert_eq!(error.kind(), ConfigErrorKind::Malformed);
    assert!(error.message().contains("orders/not-json") && !error.message().contains("hunter2"), "{error}");

    let error = aws(&[("CELERITY_CONFIG_STORE_ID", "orders/never-created")]).get("x").await.unwrap_err();
    assert_eq!(error.kind(), ConfigErrorKind::Store);
    assert!(error.message().contains("orders/never-created"), "{error}");
    assert!(error.message().contains("ResourceNotFoundException"), "{error}");
}

#[tokio::test]
async fn a_parameter_store_is_every_parameter_under_its_path_decrypted_and_paged() {
    // More than a page (the service gives at most 10), nested, and secure.
    for index in 0..23 {
        put_parameter(&format!("/celerity/params/key{index:02}"), &format!("value{index}"), "String");
    }
    put_parameter("/celerity/params/database/host", "db.internal", "String");
    put_parameter("/celerity/params/database/password", "s3cret", "SecureString");
    put_parameter("/celerity/other/key00", "elsewhere", "String");
    let config = aws(&[
        ("CELERITY_CONFIG_ORDERS_STORE_ID", "/celerity/params"),
        ("CELERITY_CONFIG_ORDERS_STORE_KIND", "parameter-store"),
    ]);
    let orders = config.namespace("orders").unwrap();
    let all = orders.all().await.unwrap();
    assert_eq!(all.len(), 25, "{:?}", all.keys().collect::<Vec<_>>());
    assert_eq!(all.get("key22"), Some("value22"));
    assert_eq!(all.get("database/host"), Some("db.internal"));
    assert_eq!(all.get("database/password"), Some("s3cret"), "decrypted");

    #[derive(serde::Deserialize)]
    struct Database {
        host: String,
        password: celerity::config::Secret<String>,
    }
    #[derive(serde::Deserialize)]
    struct Orders {
        database: Database,
    }
    let bound: Orders = orders.bind().await.unwrap();
    assert_eq!((bound.database.host.as_str(), bound.database.password.expose().as_str()), ("db.internal", "s3cret"));
}

#[tokio::test]
async fn an_unknown_store_kind_is_refused_naming_both() {
    let config = aws(&[("CELERITY_CONFIG_STORE_ID", "x"), ("CELERITY_CONFIG_STORE_KIND", "vault")]);
    let error = config.get("x").await.unwrap_err();
    assert_eq!(error.kind(), ConfigErrorKind::Unsupported);
    assert!(error.message().contains("`vault`") && error.message().contains("parameter-store"), "{error}");
}

/// The Lambda Parameters and Secrets extension, as far as the SDK sees it:
/// a local HTTP server answering `GET /secretsmanager/get?secretId=` with
/// the secret, for the function's session token only. `answer` gives the
/// status and body for each request.
fn extension(answer: impl Fn(&str, Option<&str>) -> (u16, String) + Send + 'static) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = Arc::new(AtomicUsize::new(0));
    let count = served.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let target = line.split(' ').nth(1).unwrap_or_default().to_string();
            let mut token = None;
            loop {
                let mut header = String::new();
                reader.read_line(&mut header).unwrap();
                if header.trim().is_empty() {
                    break;
                }
                if let Some((name, value)) = header.split_once(':')
                    && name.eq_ignore_ascii_case("x-aws-parameters-secrets-token")
                {
                    token = Some(value.trim().to_string());
                }
            }
            count.fetch_add(1, Ordering::SeqCst);
            let (status, body) = answer(&target, token.as_deref());
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, served)
}

#[tokio::test]
async fn with_the_extension_a_secret_is_read_through_it_with_the_session_token() {
    moto();
    let (port, served) = extension(|target, token| {
        assert_eq!(target, "/secretsmanager/get?secretId=orders%2Fvia%2Dextension");
        match token {
            Some("session-token") => {
                (200, serde_json::json!({"SecretString": "{\"GREETING\": \"cached\"}"}).to_string())
            }
            _ => (403, "{}".to_string()),
        }
    });
    let port = port.to_string();
    let config = aws(&[
        ("CELERITY_CONFIG_STORE_ID", "orders/via-extension"),
        ("PARAMETERS_SECRETS_EXTENSION_HTTP_PORT", port.as_str()),
        ("AWS_SESSION_TOKEN", "session-token"),
        ("CELERITY_CONFIG_REFRESH_INTERVAL_MS", "1"),
    ]);
    assert_eq!(config.require("GREETING").await.unwrap(), "cached");
    assert!(config.describe().contains("Parameters and Secrets extension"));
    // The extension caches, so the SDK does not re-read on top of it.
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    assert_eq!(config.require("GREETING").await.unwrap(), "cached");
    assert_eq!(served.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_extension_that_fails_falls_back_to_secrets_manager() {
    create_secret("orders/fallback", r#"{"GREETING": "from the service"}"#);
    let (port, served) = extension(|_, _| (500, "{}".to_string()));
    let port = port.to_string();
    let config = aws(&[
        ("CELERITY_CONFIG_STORE_ID", "orders/fallback"),
        ("PARAMETERS_SECRETS_EXTENSION_HTTP_PORT", port.as_str()),
        ("AWS_SESSION_TOKEN", "t"),
    ]);
    assert_eq!(config.require("GREETING").await.unwrap(), "from the service");
    assert_eq!(served.load(Ordering::SeqCst), 1);
}
