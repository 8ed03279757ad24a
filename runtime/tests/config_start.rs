//! Typed configuration a handler takes is bound when the application
//! starts: a value that does not fit stops it there, naming the handler,
//! the type and the key, before any runtime is reached.

use celerity::config::{Config, Configuration, Values};
use celerity::testing::TestRequest;

#[derive(serde::Deserialize)]
struct Payments {
    #[serde(rename = "PAYMENTS_URL")]
    #[allow(dead_code)]
    url: String,
    #[serde(rename = "RETRIES")]
    retries: u32,
}

async fn pay(payments: Config<Payments>) -> String {
    payments.retries.to_string()
}

fn app(values: &[(&str, &str)]) -> celerity::App {
    let config = Configuration::builder().values("default", Values::from_pairs(values.iter().copied())).build();
    celerity::App::new().without_compiled_handlers().with_configuration(config).http("POST::/payments", pay)
}

#[tokio::test]
async fn a_missing_key_stops_the_start_naming_the_handler_the_type_and_the_key() {
    let error = app(&[("RETRIES", "3")]).run().await.unwrap_err();
    assert_eq!(error.type_name(), "ConfigError");
    let message = error.message();
    assert!(message.contains("pay") && message.contains("takes Config<"), "{message}");
    assert!(message.contains("Payments>, which cannot be bound"), "{message}");
    assert!(message.contains("PAYMENTS_URL"), "{message}");
}

#[tokio::test]
async fn a_value_of_the_wrong_type_stops_the_start_naming_the_key_and_the_type_never_the_value() {
    let error = app(&[("PAYMENTS_URL", "https://pay.example"), ("RETRIES", "many-s3cret")]).run().await.unwrap_err();
    let message = error.message();
    assert!(message.contains("RETRIES") && message.contains("u32"), "{message}");
    assert!(!message.contains("many-s3cret"), "a value is never shown: {message}");
}

#[tokio::test]
async fn a_test_call_stops_as_the_start_would() {
    let test = app(&[("RETRIES", "3")]).into_test();
    let call = tokio::spawn(async move { test.call("POST::/payments", TestRequest::post("/payments")).await });
    let panic = call.await.unwrap_err().into_panic();
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("takes Config<") && message.contains("PAYMENTS_URL"), "{message}");

    let fits = app(&[("PAYMENTS_URL", "https://pay.example"), ("RETRIES", "3")]).into_test();
    let response = fits.call("POST::/payments", TestRequest::post("/payments")).await.expect_http();
    assert_eq!(response.text(), "3");
}
