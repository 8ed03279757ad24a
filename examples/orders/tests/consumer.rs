//! The two consumers of `orders`: order events, one record at a time, and
//! audit records, a whole batch at a time.

mod common;

use common::{PANICKED, Service, batch, event, failed_ids, failure_of, handler_error, http, json};
use serde_json::json;

fn order_event(id: &str, kind: &str) -> String {
    json!({"orderId": id, "type": kind}).to_string()
}

fn order_events() -> event::ConsumerEvent {
    event::consumer("order-events", "processOrderEvents").source_type("queue")
}

async fn status_of(service: &Service, id: &str) -> String {
    let result = service.get_order(id).await;
    json(&http(&result).body)["status"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_batch_of_valid_events_is_acknowledged_whole() {
    let service = Service::start().await;
    let first = service.create_order("Ada", &[("latte", 1)], &[]).await;
    let second = service.create_order("Grace", &[("espresso", 2)], &[]).await;
    let result = service
        .call(
            order_events()
                .record("m-1", order_event(&first, "paid"))
                .record("m-2", order_event(&second, "cancelled"))
                .record("m-3", order_event(&first, "shipped")),
        )
        .await;
    let outcome = batch(&result);
    assert!(outcome.success && outcome.failures.is_empty(), "{outcome:?}");
    assert_eq!(status_of(&service, &first).await, "shipped");
    assert_eq!(status_of(&service, &second).await, "cancelled");

    // Delivered again, the same events change nothing and succeed.
    let result = service.call(order_events().record("m-2", order_event(&second, "cancelled"))).await;
    assert!(batch(&result).success, "{result:?}");
    service.finish().await;
}

#[tokio::test]
async fn a_placed_event_confirms_the_order_in_the_datastore_and_writes_its_receipt_to_the_bucket() {
    let service = Service::start().await;
    let id = service.create_order("Ada Lovelace", &[("latte", 2), ("croissant", 1)], &[]).await;
    // Placed: in the datastore's file, unconfirmed, and no receipt yet.
    let stored = service.storage.stored_order(&id).expect("the order is in the datastore's file");
    assert_eq!((&stored["customer"]["S"], &stored["status"]["S"]), (&json!("Ada Lovelace"), &json!("pending")));
    assert!(stored.get("confirmedAtMs").is_none(), "{stored}");
    assert_eq!(service.storage.receipt(&id), None);

    let result = service.call(order_events().record("m-1", order_event(&id, "placed"))).await;
    assert!(batch(&result).success, "{result:?}");
    let stored = service.storage.stored_order(&id).expect("the order is in the datastore's file");
    assert!(stored["confirmedAtMs"]["N"].is_string(), "confirmed in the datastore: {stored}");
    assert_eq!(stored["version"]["N"], "2", "{stored}");
    let receipt = service.storage.receipt(&id).expect("the receipt is in the bucket's folder");
    assert!(receipt.starts_with(&format!("Receipt for order {id}\nCustomer: Ada Lovelace\n")), "{receipt}");
    assert!(receipt.contains("Confirmed: "), "{receipt}");
    assert!(receipt.ends_with("Total: 10.00\n"), "{receipt}");

    // Delivered again: nothing more is confirmed, and the receipt is the same.
    let result = service.call(order_events().record("m-1", order_event(&id, "placed"))).await;
    assert!(batch(&result).success, "{result:?}");
    assert_eq!(service.storage.stored_order(&id).expect("still there")["version"]["N"], "2");
    assert_eq!(service.storage.receipt(&id).as_deref(), Some(receipt.as_str()));
    service.finish().await;
}

#[tokio::test]
async fn two_of_five_records_fail_and_exactly_they_are_named() {
    let service = Service::start().await;
    let first = service.create_order("Ada", &[("latte", 1)], &[]).await;
    let second = service.create_order("Grace", &[("espresso", 2)], &[]).await;
    let third = service.create_order("Alan", &[("croissant", 1)], &[]).await;
    let result = service
        .call(
            order_events()
                .record("m-1", order_event(&first, "paid"))
                .record("m-2", order_event("ord-404", "paid"))
                .record("m-3", order_event(&second, "paid"))
                // A pending order cannot be shipped.
                .record("m-4", order_event(&third, "shipped"))
                .record("m-5", order_event(&third, "cancelled")),
        )
        .await;
    let outcome = batch(&result);
    assert!(!outcome.success, "{outcome:?}");
    assert_eq!(failed_ids(outcome), ["m-2", "m-4"]);
    assert_eq!(failure_of(outcome, "m-2"), "no order \"ord-404\"");
    assert_eq!(failure_of(outcome, "m-4"), format!("order \"{third}\" is pending and cannot become shipped"));

    // The others were applied.
    assert_eq!(status_of(&service, &first).await, "paid");
    assert_eq!(status_of(&service, &second).await, "paid");
    assert_eq!(status_of(&service, &third).await, "cancelled");
    service.finish().await;
}

#[tokio::test]
async fn an_undecodable_record_fails_alone_naming_the_field() {
    let service = Service::start().await;
    let id = service.create_order("Ada", &[("latte", 1)], &[]).await;
    let result = service
        .call(
            order_events()
                .record("m-1", r#"{"orderId": 42, "type": "paid"}"#)
                .record("m-2", "not json")
                .record("m-3", r#"{"orderId": "ord-1", "type": "refunded"}"#)
                .record("m-4", order_event(&id, "paid")),
        )
        .await;
    let outcome = batch(&result);
    assert_eq!(failed_ids(outcome), ["m-1", "m-2", "m-3"], "{outcome:?}");
    let wrong_type = failure_of(outcome, "m-1");
    assert!(wrong_type.starts_with("the record body does not fit at `orderId`: invalid type"), "{wrong_type}");
    assert!(failure_of(outcome, "m-2").starts_with("the record body is not valid JSON"), "{outcome:?}");
    let unknown = failure_of(outcome, "m-3");
    assert!(unknown.contains("`type`") && unknown.contains("unknown variant `refunded`"), "{unknown}");
    // The rest of the batch was processed.
    assert_eq!(status_of(&service, &id).await, "paid");
    service.finish().await;
}

#[tokio::test]
async fn a_record_that_panics_fails_alone() {
    let service = Service::start_with(&[("ORDERS_CHAOS", "1")]).await;
    let id = service.create_order("Ada", &[("latte", 1)], &[]).await;
    let result = service
        .call(
            order_events()
                .record("m-1", order_event("chaos:panic", "paid"))
                .record("m-2", order_event(&id, "paid"))
                .record("m-3", order_event("chaos:panic", "cancelled")),
        )
        .await;
    let outcome = batch(&result);
    assert_eq!(failed_ids(outcome), ["m-1", "m-3"], "{outcome:?}");
    assert_eq!(failure_of(outcome, "m-1"), "panicked", "the panic's message stays in the process's log");
    service.expect_log("chaos: process_order_event was asked to panic").await;
    assert_eq!(status_of(&service, &id).await, "paid");
    service.finish().await;
}

#[tokio::test]
async fn with_the_opt_in_a_record_that_panics_is_failed_with_the_panics_message() {
    let service = Service::start_with(&[("ORDERS_CHAOS", "1"), ("CELERITY_EXPOSE_PANICS", "true")]).await;
    let result = service.call(order_events().record("m-1", order_event("chaos:panic", "paid"))).await;
    let outcome = batch(&result);
    assert_eq!(failed_ids(outcome), ["m-1"], "{outcome:?}");
    assert_eq!(failure_of(outcome, "m-1"), "panicked: chaos: process_order_event was asked to panic");
    service.finish().await;
}

fn audit_records() -> event::ConsumerEvent {
    event::consumer("order-audit", "auditOrders").source_type("topic")
}

fn audit_record(actor: &str, action: &str, order_id: &str) -> String {
    json!({"actor": actor, "action": action, "orderId": order_id}).to_string()
}

#[tokio::test]
async fn the_audit_batch_is_written_naming_the_records_that_do_not_decode() {
    let dir = tempfile::tempdir().unwrap();
    let audit_log = dir.path().join("audit.log");
    let service = Service::start_with(&[("ORDERS_AUDIT_LOG", audit_log.to_str().unwrap())]).await;
    let result = service
        .call(
            audit_records()
                .record("a-1", audit_record("support:kim", "refund.approved", "ord-7"))
                .record("a-2", r#"{"actor": "support:kim"}"#)
                .record("a-3", audit_record("billing", "invoice.sent", "ord-8")),
        )
        .await;
    let outcome = batch(&result);
    assert_eq!(failed_ids(outcome), ["a-2"], "{outcome:?}");
    assert!(failure_of(outcome, "a-2").contains("missing field `action`"), "{outcome:?}");
    let audited = std::fs::read_to_string(&audit_log).unwrap();
    let lines: Vec<serde_json::Value> = audited.lines().map(|line| json(line.as_bytes())).collect();
    assert_eq!(lines.len(), 2, "{audited}");
    assert_eq!(lines[0]["what"], "refund.approved");
    assert_eq!(lines[0]["detail"], "support:kim via order-audit (a-1)");
    assert_eq!(lines[1]["orderId"], "ord-8");
    service.finish().await;
}

#[tokio::test]
async fn an_unavailable_audit_log_fails_the_whole_batch() {
    let dir = tempfile::tempdir().unwrap();
    let unavailable = dir.path().to_str().unwrap();
    let service = Service::start_with(&[("ORDERS_AUDIT_LOG", unavailable)]).await;
    let result = service
        .call(
            audit_records()
                .record("a-1", audit_record("support:kim", "refund.approved", "ord-7"))
                .record("a-2", "not json")
                .record("a-3", audit_record("billing", "invoice.sent", "ord-8")),
        )
        .await;
    let outcome = batch(&result);
    assert!(!outcome.success, "{outcome:?}");
    assert!(outcome.failures.is_empty(), "a failed batch names nothing: {outcome:?}");
    service.finish().await;
}

#[tokio::test]
async fn a_batch_handler_that_panics_is_a_handler_error() {
    let service = Service::start_with(&[("ORDERS_CHAOS", "1")]).await;
    let result = service
        .call(
            audit_records()
                .record("a-1", audit_record("support:kim", "refund.approved", "ord-7"))
                .record("a-2", audit_record("gremlin", "poke", "chaos:panic")),
        )
        .await;
    let error = handler_error(&result);
    assert_eq!(error.r#type, "panic");
    assert_eq!(error.message, PANICKED, "the panic's message stays in the process's log");

    // Still serving.
    let result = service.call(audit_records().record("a-3", audit_record("billing", "invoice.sent", "ord-8"))).await;
    assert!(batch(&result).success, "{result:?}");
    service.finish().await;
}
