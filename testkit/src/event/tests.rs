//! The builders as the test kit starts them.

use celerity_proto::v1::dispatch::Source;

use super::*;

#[test]
fn builds_request() {
    let d = http("GET", "/files/a/b")
        .route("/files/{*path}")
        .path_param("path", "a")
        .path_param("path", "b")
        .query("x", "1")
        .query("x", "2")
        .header("X-Trace", "t1")
        .header("x-trace", "t2")
        .request_id("r1")
        .trace_context("traceparent", "00-abc")
        .build();
    assert_eq!(d.handler_tag, "GET::/files/{*path}");
    assert!(d.timestamp_ms > 0);
    assert!(d.deadline_unix_ms > d.timestamp_ms as i64);
    let Some(Source::Http(req)) = d.source else { panic!("not http") };
    assert_eq!(req.path_params["path"].values, vec!["a", "b"]);
    assert_eq!(req.query_params["x"].values, vec!["1", "2"]);
    assert_eq!(req.headers["x-trace"].values, vec!["t1", "t2"]);
    assert_eq!(d.trace_context["traceparent"], "00-abc");
}

#[test]
fn path_parameters_are_read_from_the_path_as_the_runtime_decodes_them() {
    let params = |path: &str, route: &str| match http("GET", path).route(route).build().source {
        Some(Source::Http(req)) => req.path_params,
        other => panic!("not http: {other:?}"),
    };
    assert_eq!(params("/customers/a%2520b/orders", "/customers/{id}/orders")["id"].values, ["a%20b"]);
    assert_eq!(params("/orders/%25FF", "/orders/{id}")["id"].values, ["%FF"]);
    assert_eq!(params("/files/a%2520b/c", "/files/{*path}")["path"].values, ["a%20b", "c"]);
    assert!(params("/elsewhere", "/orders/{id}").is_empty(), "a path the route does not match has none");
}

#[test]
fn route_defaults_to_path() {
    let d = http("GET", "/health").no_deadline().build();
    assert_eq!(d.handler_tag, "GET::/health");
    assert_eq!(d.deadline_unix_ms, 0);
}
