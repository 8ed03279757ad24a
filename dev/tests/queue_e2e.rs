//! The orders blueprint's queue, end to end over the real protocol and a
//! real redis-server on loopback: `POST /orders` sends a message to the
//! queue `order-events` (the Redis stream `celerity:queue:order-events`),
//! `celerity-dev run` reads it into the consumer the queue links to, and
//! the consumer confirms the order, which `GET /orders/{id}` then shows.
//! The order is kept in the blueprint's datastore and the receipt the
//! consumer writes in its bucket: with no DynamoDB or S3 named, a file and
//! a folder in the session's data folder, which the startup log names.
//! A record the handler fails stays pending in the consumer group and is
//! delivered again; the records it handles are acknowledged and removed.
//!
//! Without a Redis named, the session starts a redis-server of its own,
//! and without one on `PATH` it serves everything but the queue, saying so.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

mod common;

use common::{Dev, PATIENCE, dev_command, example_binary, http, root, run_to_exit, session_redis};

const STREAM: &str = "celerity:queue:order-events";
const GROUP: &str = "consumer-order-events";
const TAG: &str = "source::order-events::processOrderEvents";

fn checked_in() -> PathBuf {
    root().join("examples/orders/app.blueprint.yaml")
}

/// celerity-dev on `orders` with `blueprint`, its queues in `redis`.
fn start(blueprint: &Path, redis: &str) -> Dev {
    let mut command = dev_command(&example_binary("orders", "CELERITY_DEV_E2E_ORDERS"));
    command
        .arg("--blueprint")
        .arg(blueprint)
        .env("RUST_LOG", "info")
        .env("CELERITY_REDIS_ENDPOINT", redis)
        .env_remove("ORDERS_AUDIT_LOG")
        .env_remove("ORDERS_CHAOS");
    Dev::spawn(command)
}

/// A connection to the test's database of the session's Redis.
fn connect(redis: &str) -> redis::Connection {
    redis::Client::open(redis).and_then(|client| client.get_connection()).expect("the test's Redis")
}

/// How many entries the group holds delivered and not acknowledged.
fn pending(connection: &mut redis::Connection) -> u64 {
    let summary: redis::Value = redis::cmd("XPENDING").arg(STREAM).arg(GROUP).query(connection).unwrap();
    let count = match summary {
        redis::Value::Array(fields) => fields.into_iter().next(),
        other => panic!("XPENDING answered {other:?}"),
    };
    match count {
        Some(redis::Value::Int(n)) => n as u64,
        other => panic!("XPENDING answered no count: {other:?}"),
    }
}

fn length(connection: &mut redis::Connection) -> u64 {
    redis::cmd("XLEN").arg(STREAM).query(connection).unwrap()
}

/// Waits until `done` holds, polling, within [`PATIENCE`].
fn wait_until(what: &str, dev: &Dev, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !done() {
        assert!(Instant::now() < deadline, "{what} did not happen:\n{}", dev.text());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `POST /orders`, expecting a 201; the order.
fn create_order(dev: &Dev, customer: &str) -> Value {
    let body = json!({"customer": customer, "items": [{"sku": "latte", "quantity": 1}]});
    let created = http(dev.port, "POST", "/orders", &body.to_string());
    assert_eq!(created.status, 201, "{}\n{}", created.body, dev.text());
    created.json()
}

/// The order `id` once its consumer has confirmed it.
fn wait_confirmed(dev: &Dev, id: &str) -> Value {
    let mut order = Value::Null;
    wait_until(&format!("the confirmation of {id}"), dev, || {
        order = http(dev.port, "GET", &format!("/orders/{id}"), "").json();
        order.get("confirmedAtMs").is_some()
    });
    order
}

/// Sends an entry to the stream as a producer other than the handler would.
fn send(connection: &mut redis::Connection, fields: &[(&str, &str)]) -> String {
    let mut command = redis::cmd("XADD");
    command.arg(STREAM).arg("*");
    for (name, value) in fields {
        command.arg(*name).arg(*value);
    }
    command.query(connection).unwrap()
}

fn now_seconds() -> String {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs().to_string()
}

#[test]
fn an_order_placed_over_http_reaches_the_queues_consumer_which_confirms_it() {
    let redis = session_redis();
    let mut dev = start(&checked_in(), &redis);
    dev.wait_for(&format!("reading {STREAM} (queue order-events) into {TAG} as consumer group {GROUP}"), PATIENCE);

    // Where the buckets and datastores are kept, said at the start.
    let buckets = dev.data.join("buckets");
    let datastores = dev.data.join("datastores");
    let text = dev.text();
    assert!(text.contains(&format!("the buckets `receiptsBucket`: kept in {}", buckets.display())), "{text}");
    assert!(text.contains(&format!("the datastores `ordersStore`: kept in {}", datastores.display())), "{text}");

    let created = create_order(&dev, "Ada");
    let id = created["id"].as_str().unwrap().to_owned();
    assert!(created.get("confirmedAtMs").is_none(), "{created}");
    let confirmed = wait_confirmed(&dev, &id);
    assert_eq!(confirmed["version"], 2, "{confirmed}");
    assert_eq!(confirmed["status"], "pending", "{confirmed}");

    // The order, confirmed, in the datastore's file (DynamoDB's tagged JSON).
    let table: Value = serde_json::from_str(&std::fs::read_to_string(datastores.join("ordersStore.json")).unwrap())
        .expect("the datastore's file is JSON");
    let stored = table["items"].as_array().unwrap().iter().find(|item| item["id"]["S"] == id.as_str());
    let stored = stored.unwrap_or_else(|| panic!("{id} is not in the datastore's file: {table}"));
    assert_eq!(stored["confirmedAtMs"]["N"], confirmed["confirmedAtMs"].to_string(), "{stored}");
    // The receipt in the bucket's folder: the object `receipts/<id>.txt`,
    // a file named by its key, percent-encoded, whose text comes first.
    let receipt = buckets.join("receiptsBucket").join(format!("receipts%2F{id}%2Etxt"));
    wait_until("the receipt's file", &dev, || receipt.is_file());
    let content = String::from_utf8_lossy(&std::fs::read(&receipt).unwrap()).into_owned();
    assert!(content.starts_with(&format!("Receipt for order {id}\nCustomer: Ada\n")), "{content}");

    // Acknowledged and removed: nothing pending, nothing left.
    let line = dev.wait_for(&format!("{TAG} -> {STREAM}: 0 record failure(s): acknowledged ["), PATIENCE);
    let mut connection = connect(&redis);
    wait_until("the removal of the handled message", &dev, || length(&mut connection) == 0);
    assert_eq!(pending(&mut connection), 0, "{line}");

    // A Redis emptied under the session (FLUSHDB) loses the consumer group;
    // it is made again, and the next order is confirmed as the first was.
    let _: () = redis::cmd("FLUSHDB").query(&mut connection).unwrap();
    let again = create_order(&dev, "Grace");
    wait_confirmed(&dev, again["id"].as_str().unwrap());
    dev.wait_for("made the group again", PATIENCE);
}

#[test]
fn a_record_the_handler_fails_stays_pending_and_is_delivered_again() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(checked_in()).unwrap();
    let consumer = "      batchSize: 10\n      waitTimeSeconds: 1\n";
    assert!(text.contains(consumer), "the orders blueprint's orderEventsConsumer has changed");
    // Delivered again a second after it failed, rather than after 30 s.
    let blueprint = dir.path().join("app.blueprint.yaml");
    std::fs::write(&blueprint, text.replacen(consumer, &format!("{consumer}      visibilityTimeout: 1\n"), 1)).unwrap();
    let redis = session_redis();
    let mut connection = connect(&redis);
    // Sent before the session starts: read from the start of the stream.
    let early = send(
        &mut connection,
        &[("body", r#"{"orderId":"ord-2","type":"placed"}"#), ("timestamp", &now_seconds()), ("message_type", "0")],
    );
    let unreadable = send(&mut connection, &[("body", "no timestamp")]);
    let mut dev = start(&blueprint, &redis);

    // No ord-2 yet: the record fails, and stays pending.
    dev.wait_for(&format!("left for redelivery [{early}: no order \"ord-2\"]"), PATIENCE);
    dev.wait_for(
        &format!("entry {unreadable} is not a message the runtime's consumer reads (it has no `timestamp` field)"),
        PATIENCE,
    );
    assert!(pending(&mut connection) >= 1, "{}", dev.text());

    // Once ord-2 exists, the same message, delivered again, succeeds.
    let first = create_order(&dev, "Ada");
    let second = create_order(&dev, "Grace");
    assert_eq!(second["id"], "ord-2", "{second}");
    wait_confirmed(&dev, first["id"].as_str().unwrap());
    wait_confirmed(&dev, "ord-2");
    dev.wait_for(&format!("acknowledged [{early}]"), PATIENCE);
    wait_until("the stream emptied", &dev, || length(&mut connection) == 0 && pending(&mut connection) == 0);
    assert!(dev.count(&format!("left for redelivery [{early}")) >= 1, "{}", dev.text());
}

/// An endpoint where no Redis can answer, whatever the machine runs: a
/// socket path in an empty folder. The session is told to try it instead
/// of `redis://localhost:6379`, where the machine may have a Redis of its
/// own.
fn nowhere(dir: &Path) -> String {
    format!("redis+unix://{}", dir.join("no-redis.sock").display())
}

/// celerity-dev on `orders` with the checked-in blueprint, no Redis named,
/// nothing at the default endpoint, and `path` as its `PATH`.
fn start_unnamed(dir: &Path, path: &std::ffi::OsStr) -> Dev {
    let mut command = dev_command(&example_binary("orders", "CELERITY_DEV_E2E_ORDERS"));
    command
        .arg("--blueprint")
        .arg(checked_in())
        .env("RUST_LOG", "info")
        .env("CELERITY_DEV_DEFAULT_REDIS", nowhere(dir))
        .env("PATH", path)
        .env_remove("ORDERS_AUDIT_LOG")
        .env_remove("ORDERS_CHAOS");
    Dev::spawn(command)
}

#[test]
fn with_no_redis_anywhere_the_session_serves_everything_but_the_queue_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    // A PATH with nothing on it: no redis-server, no valkey-server.
    let empty = dir.path().join("bin");
    std::fs::create_dir(&empty).unwrap();
    let mut dev = start_unnamed(dir.path(), empty.as_os_str());
    let warning = dev.wait_for("warning: the queue(s) `order-events` will not be read", PATIENCE);
    assert!(
        warning.contains("neither redis-server nor valkey-server is on PATH")
            && warning.contains("Install redis-server or valkey")
            && warning.contains("set CELERITY_REDIS_ENDPOINT"),
        "{warning}"
    );
    assert_eq!(dev.count("warning:"), 1, "{}", dev.text());

    // The order is placed; its announcement fails as unreachable, and says so.
    let created = create_order(&dev, "Ada");
    let id = created["id"].as_str().unwrap().to_owned();
    let failed = dev.wait_for("could not be announced on the queue", PATIENCE);
    assert!(failed.contains("cannot be reached"), "{failed}");

    // The consumer is still served: fed by hand, it confirms the order.
    let record = json!([{"messageId": "m-1", "body": {"orderId": id, "type": "placed"}}]);
    let pushed = http(dev.port, "POST", "/dev/consumers/order-events/processOrderEvents", &record.to_string());
    assert_eq!(pushed.status, 200, "{}\n{}", pushed.body, dev.text());
    assert_eq!(pushed.json()["acknowledged"], json!(["m-1"]), "{}", pushed.body);
    assert_eq!(wait_confirmed(&dev, &id)["version"], 2);

    // And so is the custom handler.
    let quote = json!({"handlerName": "quoteOrder", "invocationType": "requestResponse",
                       "payload": {"items": [{"sku": "latte", "quantity": 1}]}});
    let quoted = http(dev.port, "POST", "/runtime/handlers/invoke", &quote.to_string());
    assert_eq!(quoted.status, 200, "{}\n{}", quoted.body, dev.text());
    assert!(!dev.text().contains("reading celerity:queue:"), "{}", dev.text());
}

#[test]
fn with_redis_server_on_path_and_none_named_the_session_starts_its_own_and_stops_it() {
    // Installed if missing, as the test kit installs its servers.
    celerity_testkit::servers::redis();
    let folder = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .chain(["/usr/local/bin", "/usr/bin", "/usr/sbin"].map(PathBuf::from))
        .find(|dir| dir.join("redis-server").is_file())
        .expect("redis-server, installed by the test kit, is nowhere");
    let dir = tempfile::tempdir().unwrap();
    let mut dev = start_unnamed(dir.path(), folder.as_os_str());
    let needle = format!("started {} as pid ", folder.join("redis-server").display());
    let started = dev.wait_for(&needle, PATIENCE);
    let pid: u32 = common::number_after(&started, &needle);
    assert!(started.contains("on redis://127.0.0.1:") && started.contains("`order-events`"), "{started}");
    dev.wait_for(&format!("reading {STREAM} (queue order-events) into {TAG}"), PATIENCE);

    let created = create_order(&dev, "Ada");
    wait_confirmed(&dev, created["id"].as_str().unwrap());
    assert!(!dev.text().contains("warning:"), "{}", dev.text());

    // The server ends with the session.
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe { libc::kill(dev.child.id() as libc::pid_t, libc::SIGTERM) };
    dev.wait_for(&format!("stopped the session's Redis, pid {pid}"), PATIENCE);
    let deadline = Instant::now() + PATIENCE;
    while dev.child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "celerity-dev did not exit:\n{}", dev.text());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!Path::new(&format!("/proc/{pid}")).exists(), "the session's redis-server outlived it");
}

#[test]
fn a_redis_answering_at_the_default_endpoint_is_used() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("bin");
    std::fs::create_dir(&empty).unwrap();
    // The test's Redis stands for one on localhost:6379.
    let redis = session_redis();
    let mut command = dev_command(&example_binary("orders", "CELERITY_DEV_E2E_ORDERS"));
    command
        .arg("--blueprint")
        .arg(checked_in())
        .env("RUST_LOG", "info")
        .env("CELERITY_DEV_DEFAULT_REDIS", &redis)
        .env("PATH", &empty)
        .env_remove("ORDERS_AUDIT_LOG")
        .env_remove("ORDERS_CHAOS");
    let mut dev = Dev::spawn(command);
    dev.wait_for(&format!("using the Redis that answers at {redis} for the queue(s) `order-events`"), PATIENCE);
    let created = create_order(&dev, "Ada");
    wait_confirmed(&dev, created["id"].as_str().unwrap());
}

#[test]
fn a_named_redis_that_does_not_answer_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = dev_command(&example_binary("orders", "CELERITY_DEV_E2E_ORDERS"));
    command.arg("--blueprint").arg(checked_in()).env("CELERITY_REDIS_ENDPOINT", nowhere(dir.path()));
    let (status, log) = run_to_exit(command);
    assert!(!status.success(), "{log}");
    assert!(
        log.contains(&format!(
            "could not reach the Redis at {} that CELERITY_REDIS_ENDPOINT names",
            nowhere(dir.path())
        )),
        "{log}"
    );
    assert!(!log.contains("started "), "nothing is started without the Redis: {log}");
}
