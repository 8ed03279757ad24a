//! The `quoteOrder` custom handler of `orders`.

mod common;

use common::{PANICKED, Service, custom, event, handler_error, json};
use serde_json::json;

fn quote(input: serde_json::Value) -> event::CustomEvent {
    event::custom("quoteOrder").input(input.to_string())
}

#[tokio::test]
async fn a_quote_prices_the_lines_and_applies_the_coupon() {
    let service = Service::start().await;
    let input =
        json!({"items": [{"sku": "latte", "quantity": 2}, {"sku": "croissant", "quantity": 1}], "coupon": "WELCOME10"});
    let result = service.call(quote(input)).await;
    let answer = custom(&result);
    assert_eq!(answer.error_message, "");
    let priced = json(&answer.output);
    assert_eq!(
        (priced["subtotalCents"].clone(), priced["discountCents"].clone(), priced["totalCents"].clone()),
        (json!(1000), json!(100), json!(900))
    );
    assert_eq!(
        priced["lines"][1],
        json!({"sku": "croissant", "quantity": 1, "unitPriceCents": 300, "lineTotalCents": 300})
    );

    let result = service.call(quote(json!({"items": [{"sku": "beans-1kg", "quantity": 1}]}))).await;
    assert_eq!(json(&custom(&result).output)["totalCents"], 2400);
    service.finish().await;
}

#[tokio::test]
async fn invalid_input_is_answered_with_the_error_message() {
    let service = Service::start().await;
    let result = service.call(quote(json!({"items": [{"sku": "latte", "quantity": 0}]}))).await;
    let answer = custom(&result);
    assert!(answer.output.is_empty());
    assert_eq!(answer.error_message, "the quote request is not valid: `items[0].quantity`: the quantity is at least 1");

    let result = service.call(quote(json!({"items": [{"sku": "latte", "quantity": 1}], "coupon": "FREE"}))).await;
    assert_eq!(custom(&result).error_message, "unknown coupon \"FREE\"");

    // Input that does not fit is refused by the SDK the same way, naming the field.
    let result = service.call(quote(json!({"items": [{"sku": "latte", "quantity": "one"}]}))).await;
    let message = &custom(&result).error_message;
    assert!(message.starts_with("the input does not fit at `items[0].quantity`"), "{message}");
    let result = service.call(event::custom("quoteOrder")).await;
    assert!(custom(&result).error_message.contains("the input"), "{result:?}");
    service.finish().await;
}

#[tokio::test]
async fn a_panic_is_a_handler_error_and_serving_goes_on() {
    let service = Service::start_with(&[("ORDERS_CHAOS", "1")]).await;
    let result =
        service.call(quote(json!({"items": [{"sku": "latte", "quantity": 1}], "coupon": "chaos:panic"}))).await;
    let error = handler_error(&result);
    assert_eq!(error.r#type, "panic");
    assert_eq!(error.message, PANICKED, "the panic's message stays in the process's log");

    let result = service.call(quote(json!({"items": [{"sku": "latte", "quantity": 1}]}))).await;
    assert_eq!(json(&custom(&result).output)["totalCents"], 350);
    service.finish().await;
}
