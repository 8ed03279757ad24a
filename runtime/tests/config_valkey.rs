//! Local configuration stores, read from a real Redis on loopback as a
//! local Celerity session keeps them: a key per store holding its JSON.

use std::time::{Duration, Instant};

use celerity::config::{Config, ConfigErrorKind, Configuration};
use celerity::testing::TestRequest;
use celerity_testkit::servers;

fn local(store: &str, extra: &[(&str, &str)]) -> Configuration {
    let redis = servers::redis();
    let port = redis.port().to_string();
    let mut vars = vec![
        ("CELERITY_PLATFORM", "local"),
        ("CELERITY_CONFIG_VALKEY_HOST", "127.0.0.1"),
        ("CELERITY_CONFIG_VALKEY_PORT", port.as_str()),
        ("CELERITY_CONFIG_STORE_ID", store),
    ];
    vars.extend_from_slice(extra);
    Configuration::from_vars(vars.iter().map(|(k, v)| (k.to_string(), v.to_string()))).unwrap()
}

#[derive(Debug, serde::Deserialize)]
struct Settings {
    #[serde(rename = "REGION")]
    region: String,
    database: Database,
}

#[derive(Debug, serde::Deserialize)]
struct Database {
    port: u16,
}

#[tokio::test]
async fn a_store_is_one_key_holding_json_read_on_first_use() {
    let redis = servers::redis();
    redis.command(&["SET", "valkey-read", r#"{"REGION": "eu-west-2", "database_port": 5432, "FLAG": true}"#]);
    let config = local("valkey-read", &[]);
    assert_eq!(config.require("REGION").await.unwrap(), "eu-west-2");
    assert_eq!(config.get("FLAG").await.unwrap().as_deref(), Some("true"));
    assert_eq!(config.get("MISSING").await.unwrap(), None);
    let settings: Settings = config.bind().await.unwrap();
    assert_eq!((settings.region.as_str(), settings.database.port), ("eu-west-2", 5432));
    assert!(config.describe().contains(&format!("the local Valkey at 127.0.0.1:{}", redis.port())));
}

#[tokio::test]
async fn a_key_not_written_yet_is_an_empty_store() {
    let config = local("valkey-never-written", &[]);
    assert!(config.all().await.unwrap().is_empty());
    let error = config.require("REGION").await.unwrap_err();
    assert_eq!(error.to_string(), "the config namespace `default` holds no value for `REGION`");
}

#[tokio::test]
async fn a_rotated_value_is_picked_up_after_the_refresh_interval() {
    let redis = servers::redis();
    redis.command(&["SET", "valkey-rotate", r#"{"API_KEY": "first"}"#]);
    let config = local("valkey-rotate", &[("CELERITY_CONFIG_REFRESH_INTERVAL_MS", "50")]);
    assert_eq!(config.require("API_KEY").await.unwrap(), "first");
    redis.command(&["SET", "valkey-rotate", r#"{"API_KEY": "second"}"#]);
    // Read until the rotation shows: the interval decides when, this only
    // bounds how long a broken refresh may take to fail the test.
    let start = Instant::now();
    while config.require("API_KEY").await.unwrap() != "second" {
        assert!(start.elapsed() < Duration::from_secs(10), "the rotated value was never read");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn held_values_are_served_while_the_store_is_broken_and_a_first_read_fails_naming_it() {
    let redis = servers::redis();
    redis.command(&["SET", "valkey-broken", r#"{"API_KEY": "kept"}"#]);
    let config = local("valkey-broken", &[]);
    let namespace = config.namespace("default").unwrap();
    assert_eq!(namespace.require("API_KEY").await.unwrap(), "kept");
    redis.command(&["SET", "valkey-broken", "hunter2"]);
    let error = namespace.reload().await.unwrap_err();
    assert_eq!(error.kind(), ConfigErrorKind::Malformed, "a reload says it failed: {error}");
    assert!(!error.message().contains("hunter2"), "{error}");
    assert_eq!(namespace.require("API_KEY").await.unwrap(), "kept", "a failed re-read keeps the values held");

    let fresh = local("valkey-broken", &[]);
    let error = fresh.require("API_KEY").await.unwrap_err();
    assert_eq!(error.kind(), ConfigErrorKind::Malformed);
    assert!(error.message().contains("the Valkey key \"valkey-broken\""), "{error}");
    assert!(!error.message().contains("hunter2"), "{error}");

    redis.command(&["DEL", "valkey-list"]);
    redis.command(&["RPUSH", "valkey-list", "a"]);
    let error = local("valkey-list", &[]).get("x").await.unwrap_err();
    assert_eq!(error.kind(), ConfigErrorKind::Store);
    assert!(error.message().contains("WRONGTYPE"), "{error}");
}

#[tokio::test]
async fn a_valkey_that_is_not_there_is_an_error_naming_its_address() {
    let port = servers::free_port().to_string();
    let config = Configuration::from_vars([
        ("CELERITY_PLATFORM", "local"),
        ("CELERITY_CONFIG_VALKEY_HOST", "127.0.0.1"),
        ("CELERITY_CONFIG_VALKEY_PORT", port.as_str()),
        ("CELERITY_CONFIG_STORE_ID", "anything"),
    ])
    .unwrap();
    let error = config.get("x").await.unwrap_err();
    assert_eq!(error.kind(), ConfigErrorKind::Store);
    assert!(error.message().contains(&format!("the local Valkey at 127.0.0.1:{port}")), "{error}");
}

#[derive(serde::Deserialize)]
struct Greeting {
    #[serde(rename = "GREETING")]
    text: String,
}

async fn greet(greeting: Config<Greeting>) -> String {
    greeting.text.clone()
}

#[tokio::test]
async fn a_handler_takes_typed_configuration_bound_from_the_store() {
    let redis = servers::redis();
    redis.command(&["SET", "valkey-handler", r#"{"GREETING": "hello from Valkey"}"#]);
    let app = celerity::App::new()
        .without_compiled_handlers()
        .with_configuration(local("valkey-handler", &[]))
        .http("GET::/greet", greet);
    let app = app.into_test();
    let response = app.call("GET::/greet", TestRequest::get("/greet")).await.expect_http();
    assert_eq!(response.text(), "hello from Valkey");
}
