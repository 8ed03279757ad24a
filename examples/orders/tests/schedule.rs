//! The nightly cleanup schedule of `orders`.

mod common;

use common::{PANICKED, Service, event, handler_error, http, schedule_ack};

fn nightly() -> event::ScheduleEvent {
    event::schedule("nightly-cleanup", "cleanupOrders").schedule("cron(0 3 * * ? *)")
}

#[tokio::test]
async fn the_cleanup_removes_cancelled_orders_older_than_asked() {
    let service = Service::start().await;
    let kept = service.create_order("Ada", &[("latte", 1)], &[]).await;
    let cancelled = service.create_order("Grace", &[("espresso", 1)], &[]).await;
    let delete =
        event::http("DELETE", format!("/orders/{cancelled}")).route("/orders/{id}").path_param("id", &cancelled);
    assert_eq!(http(&service.call(delete).await).status, 200);

    // With no input, only orders cancelled over a week ago go.
    let ack = schedule_ack(&service.call(nightly()).await).clone();
    assert!(ack.success, "{ack:?}");
    assert_eq!(http(&service.get_order(&cancelled).await).status, 200);

    let ack =
        schedule_ack(&service.call(nightly().message_id("run-2").input(r#"{"olderThanSeconds": 0}"#)).await).clone();
    assert!(ack.success && ack.error_message.is_empty(), "{ack:?}");
    assert_eq!(http(&service.get_order(&cancelled).await).status, 404);
    assert_eq!(http(&service.get_order(&kept).await).status, 200);
    service.expect_log("removed=1").await;
    service.finish().await;
}

#[tokio::test]
async fn an_unavailable_audit_log_fails_the_trigger() {
    let dir = tempfile::tempdir().unwrap();
    let unavailable = dir.path().to_str().unwrap();
    let service = Service::start_with(&[("ORDERS_AUDIT_LOG", unavailable)]).await;
    let result = service.call(nightly()).await;
    let ack = schedule_ack(&result);
    assert!(!ack.success, "{ack:?}");
    assert!(ack.error_message.starts_with("the audit log is unavailable"), "{ack:?}");
    assert!(!ack.error_message.contains(unavailable), "the path stays in the log: {ack:?}");
    service.expect_log(&format!("path={unavailable}")).await;
    service.finish().await;
}

#[tokio::test]
async fn input_that_does_not_fit_fails_the_trigger_naming_the_field() {
    let service = Service::start().await;
    let result = service.call(nightly().input(r#"{"olderThanSeconds": "soon"}"#)).await;
    let ack = schedule_ack(&result);
    assert!(!ack.success, "{ack:?}");
    assert!(ack.error_message.contains("`olderThanSeconds`"), "{ack:?}");
    service.finish().await;
}

#[tokio::test]
async fn a_panic_is_a_handler_error_and_serving_goes_on() {
    let service = Service::start_with(&[("ORDERS_CHAOS", "1")]).await;
    let result = service.call(nightly().message_id("chaos:panic")).await;
    let error = handler_error(&result);
    assert_eq!(error.r#type, "panic");
    assert_eq!(error.message, PANICKED, "the panic's message stays in the process's log");

    assert!(schedule_ack(&service.call(nightly()).await).success);
    service.finish().await;
}
