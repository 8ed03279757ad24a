//! The blueprint's configuration stores and resource links, served to the
//! handler by `celerity-dev run` as a local session serves them: without a
//! Valkey, as store files the SDK reads; with one named, in Valkey.

use serde_json::{Value, json};

mod common;

use common::{Dev, dev_command, example_binary, http, root, session_redis};

fn quote(dev: &Dev, coupon: &str) -> (u16, Value) {
    let payload = json!({"items": [{"sku": "latte", "quantity": 2}], "coupon": coupon});
    let body = json!({"handlerName": "quoteOrder", "invocationType": "requestResponse", "payload": payload});
    let answer = http(dev.port, "POST", "/runtime/handlers/invoke", &body.to_string());
    (answer.status, answer.json())
}

fn start(env: &[(&str, String)]) -> Dev {
    let mut command = dev_command(&example_binary("orders", "CELERITY_DEV_E2E_ORDERS"));
    command.arg("--blueprint").arg(root().join("examples/orders/app.blueprint.yaml"));
    // The blueprint's queue is a stream in the session's Redis.
    if !env.iter().any(|(name, _)| name.starts_with("CELERITY_CONFIG_VALKEY")) {
        command.env("CELERITY_REDIS_ENDPOINT", session_redis());
    }
    for (name, value) in env {
        command.env(name, value);
    }
    Dev::spawn(command)
}

fn discount(answer: &Value) -> Option<u64> {
    let data: Value = serde_json::from_str(answer["data"].as_str()?).ok()?;
    data["discountCents"].as_u64()
}

#[test]
fn a_blueprint_config_store_reaches_the_handler_as_files_without_a_valkey() {
    let dev = start(&[]);
    let log = dev.text();
    assert!(log.contains("config store ordersConfig (3 values, namespace ordersConfig): the file "), "{log}");

    // LOCAL20 is a coupon only the blueprint's store declares.
    let (status, answer) = quote(&dev, "LOCAL20");
    assert_eq!(status, 200, "{answer}\n{}", dev.text());
    assert_eq!(discount(&answer), Some(140), "{answer}");
    let (status, answer) = quote(&dev, "FREE");
    assert_eq!(status, 500, "{answer}");
}

#[test]
fn with_a_valkey_named_the_stores_are_written_there() {
    let redis = celerity_testkit::servers::redis();
    let dev = start(&[
        ("CELERITY_CONFIG_VALKEY_HOST", "127.0.0.1".to_string()),
        ("CELERITY_CONFIG_VALKEY_PORT", redis.port().to_string()),
    ]);
    let log = dev.text();
    assert!(
        log.contains(&format!(
            "config store ordersConfig (3 values, namespace ordersConfig): the Valkey at 127.0.0.1:{}",
            redis.port()
        )),
        "{log}"
    );
    assert!(redis.command(&["GET", "ordersConfig"]).contains(r#""coupons_LOCAL20":"20""#));
    let (status, answer) = quote(&dev, "LOCAL20");
    assert_eq!(status, 200, "{answer}\n{}", dev.text());
    assert_eq!(discount(&answer), Some(140), "{answer}");
}
