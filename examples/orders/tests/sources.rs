//! What `orders` declares, and events sent to a handler of another kind.

mod common;

use std::collections::BTreeSet;

use common::{HANDLERS, Service, custom, event, handler_error, http};

#[test]
fn the_manifest_lists_every_handler() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_orders"))
        .env("CELERITY_EXTRACT_MANIFEST", "1")
        .env("RUST_LOG", "error")
        .output()
        .expect("run orders");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let manifest: serde_json::Value = serde_json::from_slice(&output.stdout).expect("a JSON manifest");
    let declared: BTreeSet<&str> =
        manifest["handlers"].as_array().unwrap().iter().map(|h| h["tag"].as_str().unwrap()).collect();
    let expected: BTreeSet<&str> = HANDLERS.iter().map(|(_, tag)| *tag).collect();
    assert_eq!(declared, expected);
}

#[tokio::test]
async fn every_handler_refuses_an_event_of_another_kind_naming_both() {
    let service = Service::start().await;
    for (_, tag) in HANDLERS.iter().filter(|(_, tag)| !tag.starts_with("custom::")) {
        // The runtime's local invoke endpoint can send a custom invocation to
        // any declared handler.
        let result = service.call(event::custom("invoked").tag(*tag).input("{}")).await;
        let error = handler_error(&result);
        assert_eq!(error.r#type, "WrongEventSource", "{tag}: {error:?}");
        assert!(error.message.contains("a custom invocation") && error.message.contains(tag), "{tag}: {error:?}");
    }
    let result = service.call(event::http("POST", "/quote").tag("custom::quoteOrder")).await;
    let error = handler_error(&result);
    assert_eq!(error.r#type, "WrongEventSource");
    assert!(error.message.contains("an HTTP request") && error.message.contains("custom::quoteOrder"), "{error:?}");
    let result = service.call(event::schedule("order-events", "processOrderEvents")).await;
    assert!(handler_error(&result).message.contains("a schedule trigger"), "{result:?}");

    // Every handler still serves its own kind.
    service.create_order("Ada", &[("latte", 1)], &[]).await;
    assert_eq!(http(&service.get_order("ord-1").await).status, 200);
    let result =
        service.call(event::custom("quoteOrder").input(r#"{"items": [{"sku": "latte", "quantity": 1}]}"#)).await;
    assert_eq!(custom(&result).error_message, "");
    service.finish().await;
}
