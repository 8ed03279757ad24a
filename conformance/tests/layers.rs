//! Layers run inside the SDK's panic and deadline handling, over the real
//! socket: a layer's panic is answered as a handler's, and an event's
//! deadline covers its layers and its handler together.

mod common;

use std::time::Duration;

use common::{WAIT, get, handler_error, ok_body, start};

#[tokio::test]
async fn a_panic_in_a_layer_is_answered_as_a_handlers_panic_and_serving_goes_on() {
    let mut app = start(&[]).await;
    let result = app.conn.call(get("/layered/panic")).await.unwrap();
    let error = handler_error(&result);
    assert_eq!((error.r#type.as_str(), error.message.as_str()), ("panic", "the handler panicked"));
    assert_eq!(result.credit_grant, 1);
    assert!(app.process.wait_for_output("kaboom from a layer", WAIT).await, "{}", app.process.output_text());
    assert_eq!(ok_body(&app.conn.call(get("/fast")).await.unwrap()), "ok");
    app.drain_and_exit().await;
}

#[tokio::test]
async fn the_deadline_covers_the_layer_and_the_handler_together() {
    let mut app = start(&[]).await;
    // 600 ms in the layer, then 600 ms in a handler that ignores its
    // cancellation: past the one-second deadline, the SDK answers for it.
    let layered = get("/layered/sleep").query("ms", "600").query("honour", "false").query("layer_ms", "600");
    let result = app.conn.call(layered.deadline_in(Duration::from_secs(1))).await.unwrap();
    assert_eq!(handler_error(&result).r#type, "DeadlineExceeded");
    assert_eq!(result.credit_grant, 1);
    // Either alone fits.
    let unlayered = get("/sleep").query("ms", "600").query("honour", "false");
    assert_eq!(ok_body(&app.conn.call(unlayered.deadline_in(Duration::from_secs(1))).await.unwrap()), "slept");
    let short = get("/layered/sleep").query("ms", "100").query("honour", "false").query("layer_ms", "100");
    assert_eq!(ok_body(&app.conn.call(short.deadline_in(Duration::from_secs(1))).await.unwrap()), "slept");
    app.drain_and_exit().await;
}
