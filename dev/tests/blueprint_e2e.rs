//! End to end with a blueprint: `celerity-dev run <binary> --blueprint FILE`
//! gives the handler the `RuntimeConfig` the runtime derives from the
//! blueprint, refuses a binary whose tags do not match it as the runtime
//! does, finds `app.blueprint.yaml` by itself, and refuses a blueprint it
//! cannot read, saying where.

use std::path::{Path, PathBuf};

use serde_json::json;

mod common;

use common::{Dev, PATIENCE, dev_command, example_binary, http, mkfifo, release, run_to_exit};

fn checked_in(example: &str) -> PathBuf {
    common::root().join("examples").join(example).join("app.blueprint.yaml")
}

/// `hello`'s checked-in blueprint with `from` replaced by `to`, written
/// into `dir`.
fn hello_blueprint_with(dir: &Path, name: &str, from: &str, to: &str) -> PathBuf {
    let text = std::fs::read_to_string(checked_in("hello")).unwrap();
    assert!(text.contains(from), "the hello blueprint has no {from:?}");
    let path = dir.join(name);
    std::fs::write(&path, text.replace(from, to)).unwrap();
    path
}

#[test]
fn the_orders_blueprint_configures_the_handler_and_its_schedule() {
    let blueprint = checked_in("orders");
    let mut command = dev_command(&example_binary("orders", "CELERITY_DEV_E2E_ORDERS"));
    command
        .arg("--blueprint")
        .arg(&blueprint)
        .env("RUST_LOG", "info")
        .env("CELERITY_REDIS_ENDPOINT", common::session_redis())
        .env_remove("ORDERS_AUDIT_LOG");
    let mut dev = Dev::spawn(command);
    assert!(dev.text().contains(&format!("blueprint {}: 13 handler(s)", blueprint.display())), "{}", dev.text());
    // The consumer is served under the source id its blueprint names.
    let created = http(dev.port, "POST", "/orders", r#"{"customer":"Ada","items":[{"sku":"latte","quantity":1}]}"#);
    assert_eq!(created.status, 201, "{}", created.body);
    let id = created.json()["id"].as_str().unwrap().to_owned();
    let events = json!([{"messageId": "m-1", "body": {"orderId": id, "type": "cancelled"}}]);
    let pushed = http(dev.port, "POST", "/dev/consumers/order-events/processOrderEvents", &events.to_string());
    assert_eq!(pushed.json()["acknowledged"], json!(["m-1"]), "{}", pushed.body);

    // A trigger carries the schedule's expression and input: the input
    // `olderThanSeconds: 0` removes the order cancelled a moment ago, which
    // the handler's own default (seven days) would keep.
    let fired = http(dev.port, "POST", "/dev/schedules/nightly-cleanup/cleanupOrders", "");
    assert_eq!(fired.json()["acknowledged"], true, "{}", fired.body);
    let logged = dev.wait_for("cleanup removed the orders cancelled more than 0 s ago", PATIENCE);
    assert!(logged.contains("expression=cron(0 3 * * ? *)"), "{logged}");
    assert_eq!(http(dev.port, "GET", &format!("/orders/{id}"), "").status, 404);
}

#[test]
fn a_handler_times_out_after_its_blueprint_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("greeting");
    mkfifo(&fifo);
    let blueprint = hello_blueprint_with(dir.path(), "app.blueprint.yaml", "timeout: 5", "timeout: 1");
    let mut command = dev_command(&example_binary("hello", "CELERITY_DEV_E2E_HELLO"));
    command.arg("--blueprint").arg(&blueprint).env("HELLO_GREETING_FILE", &fifo);
    let dev = Dev::spawn(command);
    // Held in the handler until its deadline, one second after dispatch.
    let response = http(dev.port, "GET", "/hello", "");
    assert_eq!((response.status, response.body.as_str()), (504, "handler timed out"), "{}", dev.text());
    release(&fifo, "late");
}

#[test]
fn a_binary_whose_tags_do_not_match_the_blueprint_is_refused_and_both_exit() {
    let dir = tempfile::tempdir().unwrap();
    let blueprint = hello_blueprint_with(dir.path(), "bye.yaml", "/greetings/{name}", "/bye");
    let mut command = dev_command(&example_binary("hello", "CELERITY_DEV_E2E_HELLO"));
    command.arg("--blueprint").arg(&blueprint);
    let (status, log) = run_to_exit(command);
    assert!(!status.success(), "{status}\n{log}");
    let line =
        |needle: &str| log.lines().find(|l| l.contains(needle)).unwrap_or_else(|| panic!("no {needle:?}:\n{log}"));
    assert!(line("unknown tags (the handler serves them").ends_with(": POST::/greetings/{name}"), "{log}");
    assert!(line("unhandled tags (declared").ends_with(": POST::/bye"), "{log}");
    let exited = line("the handler exited (");
    assert!(!exited.contains("exit status: 0"), "the refused handler exits non-zero: {exited}");
    assert!(!log.contains("serving on"), "{log}");
}

#[test]
fn a_blueprint_in_the_current_directory_is_read_without_being_named() {
    let dir = tempfile::tempdir().unwrap();
    hello_blueprint_with(dir.path(), "app.blueprint.yaml", "timeout: 5", "timeout: 7");
    let mut command = dev_command(&example_binary("hello", "CELERITY_DEV_E2E_HELLO"));
    command.current_dir(dir.path());
    let dev = Dev::spawn(command);
    let found = dir.path().canonicalize().unwrap().join("app.blueprint.yaml");
    assert_eq!(dev.count(&format!("blueprint {}: 2 handler(s)", found.display())), 1, "{}", dev.text());
    assert_eq!(http(dev.port, "GET", "/hello", "").status, 200);

    // --no-blueprint serves the manifest, and says no blueprint was read.
    let mut command = dev_command(&example_binary("hello", "CELERITY_DEV_E2E_HELLO"));
    command.current_dir(dir.path()).arg("--no-blueprint");
    let dev = Dev::spawn(command);
    assert_eq!(dev.count("no blueprint read (--no-blueprint)"), 1, "{}", dev.text());
}

#[test]
fn a_blueprint_that_cannot_be_read_stops_it_before_the_handler_starts() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.yaml");
    std::fs::write(&broken, "resources:\n  hello:\n    type: [celerity/handler\n").unwrap();
    let unlinked =
        hello_blueprint_with(dir.path(), "unlinked.yaml", "application: \"hello\" }", "application: \"other\" }");
    for (blueprint, expected) in [
        (&broken, "line 4".to_owned()),
        (&unlinked, "resource `greet`, field `metadata.labels`: linked to nothing".to_owned()),
    ] {
        let mut command = dev_command(&example_binary("hello", "CELERITY_DEV_E2E_HELLO"));
        command.arg("--blueprint").arg(blueprint);
        let (status, log) = run_to_exit(command);
        assert_eq!(status.code(), Some(1), "{log}");
        assert!(log.contains(&format!("blueprint {}:", blueprint.display())), "{log}");
        assert!(log.contains(&expected), "{expected:?}:\n{log}");
        assert!(!log.contains("started"), "{log}");
    }
}
