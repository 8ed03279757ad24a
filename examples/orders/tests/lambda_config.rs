//! `orders` as a Lambda function of a Celerity deployment reads its
//! configuration from the Secrets Manager store the deployment describes:
//! the real binary, the test kit's Lambda Runtime API, and an AWS API
//! emulator (moto's server) on loopback holding the secret.

use std::time::Duration;

use celerity_testkit::servers;
use celerity_testkit::{HandlerProcess, LambdaRuntimeApi};
use serde_json::json;

const ORDERS: &str = env!("CARGO_BIN_EXE_orders");
const WAIT: Duration = Duration::from_secs(60);

#[tokio::test]
async fn a_function_binds_its_configuration_from_secrets_manager() {
    let moto = servers::moto();
    let secret = json!({"coupons_SPRING30": 30}).to_string();
    let body = json!({"Name": "orders/lambda-config", "SecretString": secret}).to_string();
    let (status, answer) = moto.call_json("secretsmanager.CreateSecret", &body);
    assert_eq!(status, 200, "{answer}");

    let api = LambdaRuntimeApi::start().await.expect("start the Lambda Runtime API");
    let mut process = HandlerProcess::command(ORDERS)
        .envs(api.env())
        .envs(moto.environment())
        .env_remove("CELERITY_RUNTIME_SOCKET")
        .env("CELERITY_PLATFORM", "aws")
        .env("CELERITY_DEPLOY_TARGET", "aws-serverless")
        .env("CELERITY_HANDLER_ID", "quoteOrder")
        .env("CELERITY_HANDLER_TAG", "custom::quoteOrder")
        .env("CELERITY_HANDLER_TYPE", "custom")
        .env("CELERITY_CONFIG_ORDERSCONFIG_STORE_ID", "orders/lambda-config")
        .env("CELERITY_CONFIG_ORDERSCONFIG_NAMESPACE", "ordersConfig")
        .env("RUST_LOG", "info")
        .spawn()
        .expect("spawn orders");

    let invocation = r#"{"items": [{"sku": "latte", "quantity": 2}], "coupon": "SPRING30"}"#;
    let answer = api.invoke(celerity_testkit::LambdaInvocation::from(invocation).wait(WAIT)).await;
    let answer = answer.unwrap_or_else(|| panic!("the function did not answer\n{}", process.output_text()));
    let response = answer.json();
    assert_eq!(
        (response["subtotalCents"].as_u64(), response["discountCents"].as_u64()),
        (Some(700), Some(210)),
        "{response}\n{}",
        process.output_text()
    );
    // The standard coupons are the store's to replace.
    let answer = api
        .invoke(
            celerity_testkit::LambdaInvocation::from(
                r#"{"items": [{"sku": "latte", "quantity": 1}], "coupon": "WELCOME10"}"#,
            )
            .wait(WAIT),
        )
        .await
        .expect("an answer");
    assert!(answer.error().is_some_and(|e| e.error_message.contains("unknown coupon")), "{answer:?}");
    assert_eq!(api.violations(), Vec::<String>::new());
    let _ = process.kill().await;
}
