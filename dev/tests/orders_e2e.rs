//! End to end with the `orders` example: `celerity-dev run <orders binary>`
//! with its blueprint (its datastore, bucket and queue) on a free port, and
//! a real HTTP client and a real WebSocket client for every kind of handler
//! it serves: HTTP (201, 200, 400, 404, 409), a consumer batch that partly
//! fails, a schedule, a custom invocation, a WebSocket message and a pushed
//! update the client acknowledges, a client that goes away mid-request, and
//! a SIGTERM that drains without losing an accepted request.
//!
//! `orders` has no slow handler. What holds a request in flight is its audit
//! log: with `ORDERS_AUDIT_LOG` naming a FIFO, every change opens the FIFO
//! for writing before it is made, and that `open` blocks until the test
//! opens the FIFO for reading ([`AuditPipe`]).

use std::io::{ErrorKind, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

mod common;

use common::{Dev, PATIENCE, dev_command, example_binary, http, mkfifo, number_after, read, send};

/// `orders`'s checked-in blueprint with each handler's timeout 15 s rather
/// than 5, as loaded machines need for the requests held in flight here;
/// written once per test process.
fn blueprint() -> &'static Path {
    static WRITTEN: OnceLock<PathBuf> = OnceLock::new();
    WRITTEN.get_or_init(|| {
        let text = std::fs::read_to_string(common::root().join("examples/orders/app.blueprint.yaml")).unwrap();
        assert!(text.contains("\n    timeout: 5\n"), "the orders blueprint has no `timeout: 5`");
        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("orders_e2e.blueprint.yaml");
        std::fs::write(&path, text.replace("\n    timeout: 5\n", "\n    timeout: 15\n")).unwrap();
        path
    })
}

/// Starts celerity-dev on `orders` with its blueprint (whose datastore and
/// bucket its handlers take: without them it would not start), its queue in
/// a Redis database of its own, `args` after the binary and `env` set, and
/// waits until it serves.
fn start(args: &[&str], env: &[(&str, &Path)]) -> Dev {
    let mut command = dev_command(&example_binary("orders", "CELERITY_DEV_E2E_ORDERS"));
    command
        .arg("--blueprint")
        .arg(blueprint())
        .args(["--drain-timeout-ms", "15000"])
        .args(args)
        .env("CELERITY_REDIS_ENDPOINT", common::session_redis())
        .env("RUST_LOG", "info")
        .env_remove("ORDERS_AUDIT_LOG")
        .env_remove("ORDERS_CHAOS");
    for (name, value) in env {
        command.env(name, value);
    }
    Dev::spawn(command)
}

impl Dev {
    /// The pid of the `orders` process celerity-dev started.
    fn handler_pid(&mut self) -> u32 {
        let line = self.wait_for("(pid ", PATIENCE);
        number_after(&line, "(pid ")
    }

    fn sigterm(&self) {
        // SAFETY: kill(2) has no memory-safety preconditions.
        assert_eq!(unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) }, 0);
    }

    /// Waits for celerity-dev to exit; lets the log catch up.
    fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "celerity-dev did not exit:\n{}", self.text());
            std::thread::sleep(Duration::from_millis(20));
        };
        std::thread::sleep(Duration::from_millis(100));
        status
    }

    /// SIGTERM with nothing in flight: a clean drain and exit code 0.
    fn stop(mut self) {
        self.sigterm();
        let status = self.wait_exit();
        let log = self.text();
        assert!(status.success(), "{status}\n{log}");
        assert!(log.contains("drained: "), "{log}");
        assert!(log.contains("the handler exited (exit status: 0)"), "{log}");
    }
}

/// `POST /orders` for `customer`, expecting a 201; returns the order.
fn create_order(dev: &Dev, customer: &str) -> Value {
    let body = json!({"customer": customer, "items": [{"sku": "latte", "quantity": 2}], "tags": ["gift"]});
    let created = http(dev.port, "POST", "/orders", &body.to_string());
    assert_eq!(created.status, 201, "{}\n{}\n{}", created.head, created.body, dev.text());
    created.json()
}

/// The order `id` once its consumer has confirmed it: `create_order`
/// announces every order on the blueprint's queue, and the session delivers
/// the announcement to `processOrderEvents`, which confirms it (version 2).
/// A test that changes the order waits for this first, so that its change
/// and the confirmation do not race.
fn confirmed(dev: &Dev, id: &str) -> Value {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let fetched = http(dev.port, "GET", &format!("/orders/{id}"), "");
        assert_eq!(fetched.status, 200, "{}", fetched.body);
        let order = fetched.json();
        if order["confirmedAtMs"].is_u64() {
            assert_eq!(order["version"], 2, "{order}");
            return order;
        }
        assert!(Instant::now() < deadline, "{id} was never confirmed:\n{}", dev.text());
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn id_of(order: &Value) -> String {
    order["id"].as_str().unwrap_or_else(|| panic!("no id in {order}")).to_owned()
}

/// The audit log as a FIFO. While it is open for reading, a thread reads
/// whatever the handler writes into `text` and changes go through; while it
/// is closed, every change blocks in the handler's `open` of the FIFO, which
/// is how a request is held in flight.
struct AuditPipe {
    path: PathBuf,
    text: Arc<Mutex<String>>,
    reader: Option<(Arc<AtomicBool>, JoinHandle<()>)>,
}

impl AuditPipe {
    /// Makes the FIFO, closed.
    fn new(dir: &Path) -> AuditPipe {
        let path = dir.join("audit.fifo");
        mkfifo(&path);
        AuditPipe { path, text: Arc::default(), reader: None }
    }

    /// Opens the FIFO for reading (which lets a blocked `open` through) and
    /// reads it until [`close`](Self::close).
    fn open(&mut self) {
        assert!(self.reader.is_none(), "the audit FIFO is open already");
        // Non-blocking: opening for reading needs no writer.
        let mut fifo = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(&self.path).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::spawn({
            let (stop, text) = (Arc::clone(&stop), Arc::clone(&self.text));
            move || {
                let mut buf = [0u8; 4096];
                loop {
                    match fifo.read(&mut buf) {
                        Ok(n) if n > 0 => text.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n])),
                        // No writer (0), or a writer with nothing written yet.
                        Ok(_) | Err(_) if stop.load(Ordering::SeqCst) => return,
                        Ok(_) => std::thread::sleep(Duration::from_millis(10)),
                        Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                            std::thread::sleep(Duration::from_millis(10));
                        }
                        Err(e) => panic!("reading the audit FIFO: {e}"),
                    }
                }
            }
        });
        self.reader = Some((stop, thread));
    }

    /// Stops reading and closes the FIFO: changes block from now on. Only
    /// while no change is being written (a write without a reader fails).
    fn close(&mut self) {
        if let Some((stop, thread)) = self.reader.take() {
            stop.store(true, Ordering::SeqCst);
            thread.join().unwrap();
        }
    }

    fn text(&self) -> String {
        self.text.lock().unwrap().clone()
    }

    /// Waits for the `n`th audit line containing `needle`.
    fn wait_for_nth(&self, needle: &str, n: usize) {
        let deadline = Instant::now() + PATIENCE;
        while self.text().lines().filter(|l| l.contains(needle)).count() < n {
            assert!(Instant::now() < deadline, "no {needle:?} (#{n}) in the audit log:\n{}", self.text());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for AuditPipe {
    fn drop(&mut self) {
        self.close();
    }
}

/// Waits until a thread of process `pid` is blocked opening a FIFO nobody
/// reads (its wait channel is `wait_for_partner`, or `fifo_open` on older
/// kernels). Where the kernel does not tell (`wchan` reads `0` or is
/// unreadable), waits a second instead.
fn wait_blocked_on_fifo(pid: u32) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let mut informative = false;
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("the handler's threads");
        for task in tasks.map_while(Result::ok) {
            let Ok(wchan) = std::fs::read_to_string(task.path().join("wchan")) else { continue };
            let wchan = wchan.trim();
            if wchan == "wait_for_partner" || wchan == "fifo_open" {
                return;
            }
            informative |= !wchan.is_empty() && wchan != "0";
        }
        if !informative {
            std::thread::sleep(Duration::from_secs(1));
            return;
        }
        assert!(Instant::now() < deadline, "no thread of {pid} is blocked opening the audit FIFO");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn orders_http_consumer_and_schedule_end_to_end() {
    let dev = start(&[], &[]);
    let port = dev.port;

    // HTTP success: 201 with a location, then the same order with a 200.
    let order = create_order(&dev, "Ada Lovelace");
    let id = id_of(&order);
    assert_eq!((order["status"].as_str(), order["totalCents"].as_u64()), (Some("pending"), Some(700)), "{order}");
    let created = http(port, "POST", "/orders", r#"{"customer":"Grace","items":[{"sku":"espresso","quantity":1}]}"#);
    assert_eq!(created.status, 201, "{}", created.body);
    let location = created.header("location").unwrap_or_else(|| panic!("no location: {}", created.head));
    assert_eq!(location, format!("/orders/{}", id_of(&created.json())));
    // Read back once the queue's consumer has confirmed it: the same order,
    // confirmed.
    let fetched = confirmed(&dev, &id);
    let pending =
        fetched.as_object().unwrap().iter().filter(|(field, _)| !matches!(field.as_str(), "confirmedAtMs" | "version"));
    let placed = order.as_object().unwrap().iter().filter(|(field, _)| field.as_str() != "version");
    assert!(pending.eq(placed), "{fetched}\n{order}");
    let order = fetched;
    let listed = http(port, "GET", "/customers/Ada%20Lovelace/orders", "");
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert_eq!(listed.json(), json!([order]));

    // 400: the handler's own rules, every field at fault named by its path...
    let invalid = http(port, "POST", "/orders", r#"{"customer":" ","items":[{"sku":"latte","quantity":0}]}"#);
    assert_eq!(invalid.status, 400, "{}", invalid.body);
    let details = invalid.json()["details"].clone();
    let paths: Vec<&Value> = details
        .as_array()
        .unwrap_or_else(|| panic!("no details: {}", invalid.body))
        .iter()
        .map(|d| &d["path"])
        .collect();
    assert_eq!(paths, [&json!(["customer"]), &json!(["items", 0, "quantity"])], "{}", invalid.body);
    // ...and a body that does not fit the type, named by the SDK.
    let mistyped = http(port, "POST", "/orders", r#"{"customer":"Ada","items":[{"sku":"latte","quantity":"two"}]}"#);
    assert_eq!(mistyped.status, 400, "{}", mistyped.body);
    let details = mistyped.json()["details"].clone();
    assert!(
        details.as_array().is_some_and(|d| d.iter().any(|d| d["path"] == json!(["items", 0, "quantity"]))),
        "{}",
        mistyped.body
    );

    // 404: from the handler for a missing order, and from the router.
    let missing = http(port, "GET", "/orders/ord-404", "");
    assert_eq!(missing.status, 404, "{}", missing.body);
    assert!(missing.json()["message"].as_str().is_some_and(|m| m.contains("ord-404")), "{}", missing.body);
    assert_eq!(http(port, "GET", "/nope", "").status, 404);
    // 409: a pending order cannot be shipped.
    let conflict = http(port, "PATCH", &format!("/orders/{id}"), r#"{"status":"shipped"}"#);
    assert_eq!(conflict.status, 409, "{}", conflict.body);

    // Consumer: five order events, two about orders that do not exist; those
    // two alone are left for redelivery.
    let (b, c) = (id_of(&create_order(&dev, "Barbara")), id_of(&create_order(&dev, "Charles")));
    for order in [&b, &c] {
        confirmed(&dev, order);
    }
    let records = json!([
        {"messageId": "m-a-paid", "body": {"orderId": id, "type": "paid"}},
        {"messageId": "m-ghost-1", "body": {"orderId": "ord-901", "type": "paid"}},
        {"messageId": "m-b-paid", "body": {"orderId": b, "type": "paid"}},
        {"messageId": "m-ghost-2", "body": {"orderId": "ord-902", "type": "shipped"}},
        {"messageId": "m-c-cancelled", "body": {"orderId": c, "type": "cancelled"}},
    ]);
    let pushed = http(port, "POST", "/dev/consumers/order-events/processOrderEvents", &records.to_string());
    assert_eq!(pushed.status, 200, "{}\n{}", pushed.body, dev.text());
    let summary = pushed.json();
    assert_eq!(summary["acknowledged"], json!(["m-a-paid", "m-b-paid", "m-c-cancelled"]), "{summary}");
    let redelivered = summary["redelivered"].as_array().unwrap_or_else(|| panic!("{summary}"));
    let ids: Vec<&Value> = redelivered.iter().map(|r| &r["messageId"]).collect();
    assert_eq!(ids, [&json!("m-ghost-1"), &json!("m-ghost-2")], "{summary}");
    assert!(redelivered[0]["error"].as_str().is_some_and(|e| e.contains("ord-901")), "{summary}");
    assert!(redelivered[1]["error"].as_str().is_some_and(|e| e.contains("ord-902")), "{summary}");
    assert_eq!(http(port, "GET", &format!("/orders/{id}"), "").json()["status"], "paid");
    assert_eq!(http(port, "GET", &format!("/orders/{c}"), "").json()["status"], "cancelled");

    // Schedule: the cleanup is acknowledged and removes the cancelled order;
    // input that does not fit is a failed Ack naming the field.
    let fired = http(port, "POST", "/dev/schedules/nightly-cleanup/cleanupOrders", r#"{"olderThanSeconds":0}"#);
    assert_eq!(fired.status, 200, "{}", fired.body);
    assert_eq!(fired.json()["acknowledged"], true, "{}", fired.body);
    assert_eq!(http(port, "GET", &format!("/orders/{c}"), "").status, 404, "the cleanup removed the cancelled order");
    assert_eq!(http(port, "GET", &format!("/orders/{b}"), "").status, 200, "a paid order stays");
    let refused = http(port, "POST", "/dev/schedules/nightly-cleanup/cleanupOrders", r#"{"olderThan":1}"#);
    assert_eq!(refused.status, 200, "{}", refused.body);
    let refused = refused.json();
    assert_eq!(refused["acknowledged"], false, "{refused}");
    assert!(refused["detail"].as_str().is_some_and(|d| d.contains("olderThan")), "{refused}");

    let log = dev.text();
    assert!(log.contains("source::order-events::processOrderEvents -> 2 record failure(s)"), "{log}");
    assert!(log.contains("source::nightly-cleanup::cleanupOrders -> ack"), "{log}");
    dev.stop();
}

/// `custom::quoteOrder` invoked by its handler name, `quoteOrder`, as the
/// runtime's invoke endpoint is called.
#[test]
fn orders_custom_invocation_end_to_end() {
    let mut dev = start(&[], &[]);
    let port = dev.port;
    let invoke = |payload: Value, invocation_type: &str| {
        let body = json!({"handlerName": "quoteOrder", "invocationType": invocation_type, "payload": payload});
        http(port, "POST", "/runtime/handlers/invoke", &body.to_string())
    };

    let quoted = invoke(json!({"items": [{"sku": "latte", "quantity": 2}], "coupon": "WELCOME10"}), "requestResponse");
    // (A 404 "no handler named 'quoteOrder'" means celerity-dev named the
    // tag-bound handler after its Rust function, `quote_order`, instead of
    // after its tag `custom::quoteOrder`, as the runtime knows it.)
    assert_eq!(quoted.status, 200, "{}\n{}", quoted.body, dev.text());
    let answer = quoted.json();
    let data: Value = serde_json::from_str(answer["data"].as_str().unwrap_or_else(|| panic!("no data: {answer}")))
        .unwrap_or_else(|e| panic!("data is not JSON ({e}): {answer}"));
    assert_eq!(
        (data["subtotalCents"].as_u64(), data["discountCents"].as_u64(), data["totalCents"].as_u64()),
        (Some(700), Some(70), Some(630)),
        "{data}"
    );

    // The handler's own error, and the SDK's naming the field.
    let unknown = invoke(json!({"items": [{"sku": "latte", "quantity": 1}], "coupon": "FREE"}), "requestResponse");
    assert_eq!(unknown.status, 500, "{}", unknown.body);
    assert!(unknown.json()["message"].as_str().is_some_and(|m| m.contains("unknown coupon")), "{}", unknown.body);
    let mistyped = invoke(json!({"items": [{"sku": "latte", "quantity": -1}]}), "requestResponse");
    assert_eq!(mistyped.status, 500, "{}", mistyped.body);
    assert!(mistyped.json()["message"].as_str().is_some_and(|m| m.contains("quantity")), "{}", mistyped.body);

    // An async invocation is answered 200 at once, as the runtime answers
    // it, and runs.
    let accepted = invoke(json!({"items": [{"sku": "espresso", "quantity": 1}]}), "async");
    assert_eq!(accepted.status, 200, "{}", accepted.body);
    assert_eq!(accepted.json()["message"], "Handler invocation started", "{}", accepted.body);
    dev.wait_for_nth("custom::quoteOrder -> output", 2, PATIENCE);
    dev.stop();
}

type Ws = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;

/// The next text message, within [`PATIENCE`].
async fn next_text(ws: &mut Ws) -> String {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let frame = tokio::time::timeout_at(deadline, ws.next()).await.expect("no WebSocket message in time");
        match frame {
            Some(Ok(Message::Text(text))) => return text.as_str().to_owned(),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            other => panic!("expected a text message, got {other:?}"),
        }
    }
}

fn ack_frame(message_id: &str) -> Message {
    Message::text(json!({"event": "ack", "data": {"messageId": message_id}}).to_string())
}

async fn websocket_push_with_ack(dev: &mut Dev) {
    let port = dev.port;
    let id = id_of(&create_order(dev, "Ada"));
    confirmed(dev, &id);

    let stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (mut ws, response) =
        tokio_tungstenite::client_async(format!("ws://127.0.0.1:{port}/ws"), stream).await.unwrap();
    assert_eq!(response.status(), 101);
    let first = tokio::time::timeout(PATIENCE, ws.next()).await.expect("no first frame");
    assert_eq!(first.unwrap().unwrap(), Message::binary(vec![1u8, 5, 0, 0]), "the capabilities frame comes first");

    // A message routed by its "event" key; subscribing to no such order fails
    // the handler's Ack, naming the order.
    let subscribe = |ids: &[&str]| Message::text(json!({"event": "subscribe", "data": {"orderIds": ids}}).to_string());
    ws.send(subscribe(&["ord-999"])).await.unwrap();
    let failed = dev.wait_for("event::subscribe -> ack failure", PATIENCE);
    assert!(failed.contains("ord-999"), "{failed}");
    ws.send(subscribe(&[id.as_str()])).await.unwrap();
    dev.wait_for("event::subscribe -> ack (", PATIENCE);
    assert_eq!(dev.count("event::$connect -> ack ("), 1, "{}", dev.text());

    // A change to the order is pushed to the subscriber, asking for an ack.
    let patched = http(port, "PATCH", &format!("/orders/{id}"), r#"{"status":"paid"}"#);
    assert_eq!(patched.status, 200, "{}", patched.body);
    assert_eq!(patched.json()["version"], 3, "placed, confirmed, paid: {}", patched.body);
    let first = next_text(&mut ws).await;
    let update: Value = serde_json::from_str(&first).unwrap_or_else(|e| panic!("not JSON ({e}): {first}"));
    assert_eq!(update["event"], "orderUpdated", "{update}");
    assert_eq!((&update["data"]["id"], &update["data"]["status"]), (&json!(id), &json!("paid")), "{update}");
    assert_eq!(update["ack"], true, "{update}");
    let message_id = update["messageId"].as_str().unwrap_or_else(|| panic!("no messageId: {update}")).to_owned();
    assert!(message_id.starts_with(&format!("{id}:v3:")), "{message_id}");

    // Not acknowledged: after the ack timeout it is sent again, the same.
    let again = next_text(&mut ws).await;
    assert_eq!(again, first, "the resend is the same message");
    ws.send(ack_frame(&message_id)).await.unwrap();

    // Acknowledged: the WsSendAck tells the handler it was delivered. A
    // resend already under way when the ack arrived is acknowledged too.
    let deadline = Instant::now() + PATIENCE;
    while dev.count("order update delivered") == 0 {
        assert!(Instant::now() < deadline, "the handler was not told of the delivery:\n{}", dev.text());
        if let Ok(Some(Ok(Message::Text(text)))) = tokio::time::timeout(Duration::from_millis(50), ws.next()).await {
            assert_eq!(text.as_str(), first, "only the update is sent");
            ws.send(ack_frame(&message_id)).await.unwrap();
        }
    }
    let delivered = dev.wait_for("order update delivered", PATIENCE);
    assert!(delivered.contains(&id) && delivered.contains("subscribers=1"), "{delivered}");
    assert_eq!(dev.count("not delivered"), 0, "{}", dev.text());

    ws.close(None).await.unwrap();
    dev.wait_for("event::$disconnect -> ack (", PATIENCE);
}

#[test]
fn orders_websocket_push_with_an_acknowledgement() {
    let mut dev = start(&["--ack-timeout-ms", "1000", "--ack-attempts", "3"], &[]);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(websocket_push_with_ack(&mut dev));
    dev.stop();
}

#[test]
fn orders_client_gone_cancels_and_sigterm_drains_without_loss() {
    let dir = tempfile::tempdir().unwrap();
    let mut audit = AuditPipe::new(dir.path());
    let mut dev = start(&[], &[("ORDERS_AUDIT_LOG", audit.path.as_path())]);
    let port = dev.port;
    let pid = dev.handler_pid();

    // With the audit FIFO open, changes go through and are audited. Every
    // placed order is announced on the queue and confirmed by its consumer,
    // a change audited too: the FIFO stays open until it is, so that only
    // the requests below are ever held on it.
    audit.open();
    let first = id_of(&create_order(&dev, "Ada"));
    audit.wait_for_nth("order.created", 1);
    assert!(audit.text().contains(&first), "{}", audit.text());
    audit.wait_for_nth("order.confirmed", 1);
    audit.close();

    // A client that goes away while its order is being placed: Cancel(CALLER_GONE).
    let gone = send(port, "POST", "/orders", r#"{"customer":"Gone","items":[{"sku":"latte","quantity":1}]}"#);
    wait_blocked_on_fifo(pid);
    drop(gone);
    let cancelled = " POST::/orders -> client went away: Cancel(CALLER_GONE)";
    let line = dev.wait_for(cancelled, PATIENCE);
    let event = line[..line.find(cancelled).unwrap()].split_whitespace().next_back().expect("the event id").to_owned();
    // Let the blocked handler finish: the SDK answers for the cancelled event
    // (the answer goes nowhere), which frees its place.
    audit.open();
    audit.wait_for_nth("order.created", 2);
    dev.wait_for(&format!("{event}: answered after its caller was released"), PATIENCE);
    audit.wait_for_nth("order.confirmed", 2);
    audit.close();

    // SIGTERM while an accepted request is in the handler: it is answered,
    // a request arriving during the drain is refused, and celerity-dev exits 0.
    let held = send(port, "POST", "/orders", r#"{"customer":"Held","items":[{"sku":"croissant","quantity":3}]}"#);
    wait_blocked_on_fifo(pid);
    dev.sigterm();
    dev.wait_for("draining: 1 event(s) in flight", PATIENCE);
    let late = http(port, "GET", "/orders", "");
    assert_eq!(late.status, 503, "{}", late.body);
    audit.open();
    let answered = read(held);
    assert_eq!(answered.status, 201, "{}\n{}", answered.body, dev.text());
    let held = answered.json();
    assert_eq!((&held["customer"], held["totalCents"].as_u64()), (&json!("Held"), Some(900)), "{held}");
    audit.wait_for_nth("order.created", 3);
    assert!(audit.text().contains(&id_of(&held)), "{}", audit.text());

    let status = dev.wait_exit();
    let log = dev.text();
    assert!(status.success(), "{status}\n{log}");
    assert!(log.contains("drained: 1 event(s) answered"), "{log}");
    assert!(log.contains("POST::/orders -> 201"), "{log}");
    assert!(log.contains("the handler exited (exit status: 0)"), "{log}");
}
