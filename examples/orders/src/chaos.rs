//! Deliberate panics, to demonstrate how the SDK answers a handler that
//! panics. Off unless the process runs with `ORDERS_CHAOS=1`.
//!
//! With it on, a handler panics when the identifier it works on is
//! [`MARKER`]: the order id of `GET /orders/{id}`, an order event's
//! `orderId`, the schedule trigger's message id, the quote's coupon code, or
//! an order id a WebSocket client subscribes to. The SDK turns each panic
//! into its kind's answer (a `HandlerError` of type `panic`, or for a record
//! of a per-record consumer, that record alone failed), and the process
//! keeps serving. The panic's message is logged, and goes to the runtime
//! only with `CELERITY_EXPOSE_PANICS=true`: otherwise the answer says `the
//! handler panicked` (a record's failure, `panicked`).

use std::sync::OnceLock;

/// The identifier that makes a handler panic when chaos is on.
pub const MARKER: &str = "chaos:panic";

fn enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var("ORDERS_CHAOS").is_ok_and(|value| value == "1"))
}

/// Panics when chaos is on and `id` is [`MARKER`].
pub fn strike(handler: &str, id: &str) {
    if id == MARKER && enabled() {
        panic!("chaos: {handler} was asked to panic");
    }
}
