//! An axum `Router` behind `celerity-dev`, configured from its blueprint:
//! real HTTP requests reach axum's routing and extractors with the raw path
//! and query, and its answers (rejections included) come back as they are.

mod common;

use common::{Dev, dev_command, example_binary, http, read, send_raw};
use serde_json::json;

#[test]
fn the_router_serves_the_blueprints_routes_over_http() {
    let blueprint = common::root().join("examples/axum-router/app.blueprint.yaml");
    let mut command = dev_command(&example_binary("axum-router", "CELERITY_DEV_E2E_AXUM_ROUTER"));
    command.arg("--blueprint").arg(&blueprint);
    let dev = Dev::spawn(command);
    assert!(dev.text().contains("3 handler(s)"), "{}", dev.text());

    let created = http(dev.port, "POST", "/notes", r#"{"text":"buy milk"}"#);
    assert_eq!((created.status, created.json()), (201, json!({"id": 1, "text": "buy milk"})), "{}", dev.text());
    assert_eq!(created.header("cache-control").as_deref(), Some("no-store"));
    http(dev.port, "POST", "/notes", r#"{"text":"call Ada"}"#);

    let page = http(dev.port, "GET", "/notes?limit=1", "");
    assert_eq!(page.json(), json!([{"id": 1, "text": "buy milk"}]));
    let second = http(dev.port, "GET", "/notes/2", "");
    assert_eq!(second.json(), json!({"id": 2, "text": "call Ada"}));
    assert_eq!(http(dev.port, "GET", "/notes/7", "").status, 404);

    // axum's own rejections: a path segment that is not a number, a body
    // that is not JSON.
    assert_eq!(http(dev.port, "GET", "/notes/seven", "").status, 400);
    let plain = read(send_raw(dev.port, "POST", "/notes", &[("content-type", "text/plain")], b"buy milk"));
    assert_eq!(plain.status, 415, "{}", plain.body);
    // What the blueprint does not declare never reaches the router: the
    // dev runtime answers it, as the runtime would.
    assert_eq!(http(dev.port, "DELETE", "/notes/1", "").status, 405);
    assert_eq!(http(dev.port, "GET", "/elsewhere", "").status, 404);
}
