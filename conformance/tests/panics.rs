//! Panics and errors in user code are answers, not crashes.

mod common;

use common::{WAIT, get, handler_error, ok_body, start};

#[tokio::test]
async fn a_panic_is_answered_with_a_fixed_text_and_the_process_keeps_serving() {
    let mut app = start(&[]).await;
    for _ in 0..3 {
        let result = app.conn.call(get("/panic")).await.unwrap();
        let error = handler_error(&result);
        assert_eq!(error.r#type, "panic");
        assert_eq!(error.message, "the handler panicked", "no panic message on the wire without the opt-in");
        assert!(error.stack.is_empty(), "no stack on the wire without the opt-in: {}", error.stack);
        assert_eq!(result.credit_grant, 1);
        assert_eq!(ok_body(&app.conn.call(get("/fast")).await.unwrap()), "ok");
    }
    // The message is not lost: the process logs it.
    assert!(
        app.process.wait_for_output("kaboom from the handler", WAIT).await,
        "the panic message is logged locally\n{}",
        app.process.output_text()
    );
    assert_eq!(app.conn.window(), 4);
    assert!(app.process.try_status().is_none(), "still running");
    app.drain_and_exit().await;
}

#[tokio::test]
async fn a_panics_message_and_stack_go_on_the_wire_only_when_opted_in() {
    let mut app = start(&[("CELERITY_EXPOSE_PANICS", "true")]).await;
    let result = app.conn.call(get("/panic")).await.unwrap();
    let error = handler_error(&result);
    assert_eq!(error.r#type, "panic");
    assert_eq!(error.message, "kaboom from the handler");
    assert!(error.stack.contains("protocol_app::panics"), "the stack names the panicking function:\n{}", error.stack);
    // The panic is still reported where it was before (the previous hook
    // runs too).
    assert!(app.process.wait_for_output("kaboom from the handler", WAIT).await, "{}", app.process.output_text());
    assert_eq!(ok_body(&app.conn.call(get("/fast")).await.unwrap()), "ok");
    app.drain_and_exit().await;
}

#[tokio::test]
async fn an_error_is_answered_with_its_type_and_message() {
    let mut app = start(&[]).await;
    let result = app.conn.call(get("/error")).await.unwrap();
    let error = handler_error(&result);
    assert_eq!((error.r#type.as_str(), error.message.as_str()), ("InventoryError", "out of stock"));
    assert_eq!(result.credit_grant, 1);
    app.drain_and_exit().await;
}
