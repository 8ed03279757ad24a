//! The `orders` binary against the test kit's runtime, over a real socket.
//!
//! [`Service::start`] spawns the real binary and accepts its connection,
//! with the blueprint's datastore and bucket as a local session serves them
//! (see [`Storage`]);
//! [`Service::call`] dispatches an event and checks that the outcome has the
//! shape the event's source can use (or is a `HandlerError`);
//! [`Service::finish`] checks for protocol violations, drains, and expects
//! exit code 0.

#![allow(dead_code)]

mod storage;

use std::time::Duration;

pub use celerity_testkit::http_answer as http;
use celerity_testkit::proto::v1::{self as pb, Dispatch, dispatch::Source, result::Outcome};
use celerity_testkit::{Connection, HandlerProcess, TestRuntime};

pub use celerity_testkit::event;
pub use storage::Storage;

const ORDERS: &str = env!("CARGO_BIN_EXE_orders");

/// Generous: the tests run on loaded machines.
const WAIT: Duration = Duration::from_secs(60);

/// Every handler the service declares: (blueprint handler name, tag).
pub const HANDLERS: &[(&str, &str)] = &[
    ("createOrder", "POST::/orders"),
    ("listOrders", "GET::/orders"),
    ("getOrder", "GET::/orders/{id}"),
    ("updateOrder", "PATCH::/orders/{id}"),
    ("cancelOrder", "DELETE::/orders/{id}"),
    ("customerOrders", "GET::/customers/{customer}/orders"),
    ("processOrderEvents", "source::order-events::processOrderEvents"),
    ("auditOrders", "source::order-audit::auditOrders"),
    ("cleanupOrders", "source::nightly-cleanup::cleanupOrders"),
    ("quoteOrder", "custom::quoteOrder"),
    ("onConnect", "event::$connect"),
    ("onDisconnect", "event::$disconnect"),
    ("subscribe", "event::subscribe"),
];

/// What a panic is answered with unless `CELERITY_EXPOSE_PANICS=true`: the
/// panic's own message stays in the process's log.
pub const PANICKED: &str = "the handler panicked";

/// A running `orders` process and its connection.
pub struct Service {
    pub conn: Connection,
    pub process: HandlerProcess,
    /// Where its datastore and bucket are.
    pub storage: Storage,
    _runtime: TestRuntime,
}

impl Service {
    /// Starts `orders` with the runtime's environment.
    pub async fn start() -> Service {
        Service::start_with(&[]).await
    }

    /// Starts `orders` with the runtime's environment plus `env`.
    pub async fn start_with(env: &[(&str, &str)]) -> Service {
        let mut builder = TestRuntime::builder().wait_timeout(WAIT);
        for (name, tag) in HANDLERS {
            builder = builder.handler(*name, *tag);
        }
        let runtime = builder.bind().await.expect("bind the test runtime");
        let storage = Storage::new();
        let mut command = HandlerProcess::command(ORDERS).envs(runtime.env()).envs(storage.env());
        for name in Storage::unset() {
            command = command.env_remove(name);
        }
        let mut process = command
            .env("RUST_LOG", "info")
            // The default answers to panics; a test opts in through `env`.
            .env_remove("CELERITY_EXPOSE_PANICS")
            .envs(env.iter().copied())
            .spawn()
            .expect("spawn orders");
        let conn = match runtime.accept_connection().await {
            Ok(conn) => conn,
            Err(error) => {
                let _ = process.kill().await;
                panic!("orders did not connect: {error}\n{}", process.output_text());
            }
        };
        Service { conn, process, storage, _runtime: runtime }
    }

    /// Dispatches `event` and waits for its result, checking that the outcome
    /// fits the source: an HTTP response for HTTP, a batch result for a
    /// consumer, an `Ack` for a schedule or a WebSocket message, a custom
    /// result for a custom invocation, or else a `HandlerError`; and that
    /// the credit comes back with it.
    pub async fn call(&self, event: impl Into<Dispatch>) -> pb::Result {
        let dispatch = event.into();
        let source = dispatch.source.clone();
        let result = match self.conn.call_timeout(dispatch, WAIT).await {
            Ok(result) => result,
            Err(error) => panic!("no result: {error}\n{}", self.process.output_text()),
        };
        assert_eq!(result.credit_grant, 1, "{result:?}");
        let fits = matches!(
            (&source, &result.outcome),
            (_, Some(Outcome::Error(_)))
                | (Some(Source::Http(_)), Some(Outcome::Http(_)))
                | (Some(Source::Consumer(_)), Some(Outcome::Consumer(_)))
                | (Some(Source::Schedule(_)), Some(Outcome::Schedule(_)))
                | (Some(Source::Websocket(_)), Some(Outcome::Websocket(_)))
                | (Some(Source::Custom(_)), Some(Outcome::Custom(_)))
        );
        assert!(fits, "the outcome does not fit the source {source:?}: {:?}", result.outcome);
        result
    }

    /// Checks that the handler broke no protocol rule, drains it, and expects
    /// it to exit with code 0.
    pub async fn finish(mut self) {
        self.conn.assert_no_violations();
        self.conn.drain_in(Duration::from_secs(20)).expect("send Drain");
        let status = self.process.wait_timeout(WAIT).await;
        let status = status.unwrap_or_else(|| panic!("orders did not exit\n{}", self.process.output_text()));
        assert_eq!(status.code(), Some(0), "{}", self.process.output_text());
    }

    /// Waits until the process has logged `needle`.
    pub async fn expect_log(&self, needle: &str) {
        let seen = self.process.wait_for_output(needle, WAIT).await;
        assert!(seen, "orders never logged {needle:?}\n{}", self.process.output_text());
    }

    /// Creates an order through `POST /orders`, returning its id.
    pub async fn create_order(&self, customer: &str, items: &[(&str, u32)], tags: &[&str]) -> String {
        let items: Vec<serde_json::Value> =
            items.iter().map(|(sku, quantity)| serde_json::json!({"sku": sku, "quantity": quantity})).collect();
        let body = serde_json::json!({"customer": customer, "items": items, "tags": tags});
        let result = self.call(event::http("POST", "/orders").json_text(body.to_string())).await;
        let response = http(&result);
        assert_eq!(response.status, 201, "{}", text(&response.body));
        json(&response.body)["id"].as_str().expect("an id").to_string()
    }

    /// `GET /orders/{id}`.
    pub async fn get_order(&self, id: &str) -> pb::Result {
        self.call(event::http("GET", format!("/orders/{id}")).route("/orders/{id}").path_param("id", id)).await
    }
}

/// The batch result of a result.
pub fn batch(result: &pb::Result) -> &pb::BatchResult {
    match &result.outcome {
        Some(Outcome::Consumer(batch)) => batch,
        other => panic!("expected a batch result, got {other:?}"),
    }
}

/// The schedule `Ack` of a result.
pub fn schedule_ack(result: &pb::Result) -> &pb::Ack {
    match &result.outcome {
        Some(Outcome::Schedule(ack)) => ack,
        other => panic!("expected a schedule Ack, got {other:?}"),
    }
}

/// The WebSocket `Ack` of a result.
pub fn websocket_ack(result: &pb::Result) -> &pb::Ack {
    match &result.outcome {
        Some(Outcome::Websocket(ack)) => ack,
        other => panic!("expected a WebSocket Ack, got {other:?}"),
    }
}

/// The custom invocation result of a result.
pub fn custom(result: &pb::Result) -> &pb::CustomInvokeResult {
    match &result.outcome {
        Some(Outcome::Custom(custom)) => custom,
        other => panic!("expected a custom invocation result, got {other:?}"),
    }
}

/// The `HandlerError` of a result.
pub fn handler_error(result: &pb::Result) -> &pb::HandlerError {
    match &result.outcome {
        Some(Outcome::Error(error)) => error,
        other => panic!("expected a HandlerError, got {other:?}"),
    }
}

/// A body as JSON.
pub fn json(body: &[u8]) -> serde_json::Value {
    serde_json::from_slice(body).unwrap_or_else(|error| panic!("not JSON ({error}): {}", text(body)))
}

/// A body as text, for messages.
pub fn text(body: &[u8]) -> String {
    String::from_utf8_lossy(body).into_owned()
}

/// The failures a batch result names, by message id, sorted.
pub fn failed_ids(batch: &pb::BatchResult) -> Vec<&str> {
    let mut ids: Vec<&str> = batch.failures.iter().map(|failure| failure.message_id.as_str()).collect();
    ids.sort();
    ids
}

/// The error message a batch result gives for `id`.
pub fn failure_of<'a>(batch: &'a pb::BatchResult, id: &str) -> &'a str {
    let failure = batch.failures.iter().find(|failure| failure.message_id == id);
    &failure.unwrap_or_else(|| panic!("{id} is not named in {batch:?}")).error_message
}
