//! The blueprint rules' cases.

use super::super::{document::Format, parse};
use super::*;
use serde_json::json;

const ORDERS: &str = include_str!("../../../../examples/orders/app.blueprint.yaml");
const HELLO: &str = include_str!("../../../../examples/hello/app.blueprint.yaml");

fn problems(yaml: &str) -> Vec<Problem> {
    parse(yaml, Format::Yaml).expect_err("the blueprint should be refused")
}

/// The one problem of `yaml`, as (resource, field, message).
fn problem(yaml: &str) -> (Option<String>, Option<String>, String) {
    let mut found = problems(yaml);
    assert_eq!(found.len(), 1, "{found:#?}");
    let p = found.remove(0);
    (p.resource, p.field, p.message)
}

const API: &str = "
resources:
  api:
    type: celerity/api
    linkSelector: { byLabel: { app: shop } }
    spec: { protocols: [http] }
";

#[test]
fn the_orders_blueprint_gives_the_examples_handlers() {
    let blueprint = parse(ORDERS, Format::Yaml).unwrap();
    let tags: Vec<(&str, &str, Kind)> =
        blueprint.handlers.iter().map(|h| (h.name.as_str(), h.tag.as_str(), h.kind)).collect();
    assert_eq!(
        tags,
        [
            ("createOrder", "POST::/orders", Kind::Http),
            ("listOrders", "GET::/orders", Kind::Http),
            ("getOrder", "GET::/orders/{id}", Kind::Http),
            ("updateOrder", "PATCH::/orders/{id}", Kind::Http),
            ("cancelOrder", "DELETE::/orders/{id}", Kind::Http),
            ("customerOrders", "GET::/customers/{customer}/orders", Kind::Http),
            ("onConnect", "event::$connect", Kind::WebSocket),
            ("onDisconnect", "event::$disconnect", Kind::WebSocket),
            ("subscribe", "event::subscribe", Kind::WebSocket),
            ("processOrderEvents", "source::order-events::processOrderEvents", Kind::Consumer),
            ("auditOrders", "source::order-audit::auditOrders", Kind::Consumer),
            ("cleanupOrders", "source::nightly-cleanup::cleanupOrders", Kind::Schedule),
            ("quoteOrder", "custom::quoteOrder", Kind::Custom),
        ]
    );
    assert!(blueprint.handlers.iter().all(|h| h.timeout == Duration::from_secs(5) && !h.tracing_enabled));
    assert!(blueprint.handlers.iter().all(|h| h.published_name.is_empty()));
    let cleanup = blueprint.handlers.iter().find(|h| h.name == "cleanupOrders").unwrap();
    assert_eq!(
        cleanup.schedule,
        Some(Schedule { expression: "cron(0 3 * * ? *)".into(), input: Some(json!({"olderThanSeconds": 0})) })
    );
    assert_eq!(blueprint.route_key, "event");
    assert!(blueprint.skipped.is_empty());
}

#[test]
fn the_hello_blueprint_gives_its_two_routes() {
    let blueprint = parse(HELLO, Format::Yaml).unwrap();
    let tags: Vec<&str> = blueprint.handlers.iter().map(|h| h.tag.as_str()).collect();
    assert_eq!(tags, ["GET::/hello", "POST::/greetings/{name}"], "in the file's order");
}

#[test]
fn json_blueprints_are_read_by_the_same_rules() {
    let json = json!({"resources": {
        "api": {"type": "celerity/api", "linkSelector": {"byLabel": {"app": "shop"}}, "spec": {"protocols": ["http"]}},
        "files": {"type": "celerity/handler", "metadata": {"labels": {"app": "shop"}, "annotations": {
            "celerity.handler.http": "true", "celerity.handler.http.method": "GET",
            "celerity.handler.http.path": "/files/{path+}"}}, "spec": {"handlerName": "files-v1"}}
    }});
    let blueprint = parse(&json.to_string(), Format::Json).unwrap();
    let files = &blueprint.handlers[0];
    assert_eq!((files.tag.as_str(), files.published_name.as_str()), ("GET::/files/{*path}", "files-v1"));
    assert_eq!(files.timeout, DEFAULT_TIMEOUT);
}

#[test]
fn timeouts_and_tracing_come_from_the_handler_its_config_or_the_shared_config() {
    let yaml = "
metadata:
  sharedHandlerConfig: { timeout: 20, tracingEnabled: true }
resources:
  slowConfig:
    type: celerity/handlerConfig
    metadata: { labels: { group: slow } }
    spec: { timeout: 300, tracingEnabled: false }
  own: { type: celerity/handler, spec: { timeout: 7200 } }
  grouped: { type: celerity/handler, linkSelector: { byLabel: { group: slow } } }
  plain: { type: celerity/handler }
";
    let blueprint = parse(yaml, Format::Yaml).unwrap();
    let settings: Vec<(&str, u64, bool)> =
        blueprint.handlers.iter().map(|h| (h.name.as_str(), h.timeout.as_secs(), h.tracing_enabled)).collect();
    assert_eq!(settings, [("own", 3600, true), ("grouped", 300, false), ("plain", 20, true)]);
    let bare = parse("resources:\n  plain: { type: celerity/handler }\n", Format::Yaml).unwrap();
    assert_eq!((bare.handlers[0].timeout, bare.handlers[0].tracing_enabled), (DEFAULT_TIMEOUT, false));
}

#[test]
fn an_unknown_handler_annotation_names_the_resource_and_the_annotation() {
    let (resource, field, message) = problem(&format!(
        "{API}
  getOrder:
    type: celerity/handler
    metadata:
      labels: {{ app: shop }}
      annotations:
        celerity.handler.http: true
        celerity.handler.http.method: GET
        celerity.handler.http.path: /orders/{{id}}
        celerity.handler.http.pathh: /orders
"
    ));
    assert_eq!(resource.as_deref(), Some("getOrder"));
    assert_eq!(field.as_deref(), Some("metadata.annotations[celerity.handler.http.pathh]"));
    assert!(message.contains("unknown handler annotation"), "{message}");
}

#[test]
fn a_consumer_without_a_source_id_is_named() {
    let (resource, field, message) = problem(
        "
resources:
  events: { type: celerity/consumer, linkSelector: { byLabel: { c: e } }, spec: { batchSize: 10 } }
  process:
    type: celerity/handler
    metadata: { labels: { c: e }, annotations: { celerity.handler.consumer: true } }
",
    );
    assert_eq!((resource.as_deref(), field.as_deref()), (Some("events"), Some("spec.sourceId")));
    assert!(message.starts_with("missing"), "{message}");
}

#[test]
fn a_handler_linked_to_nothing_is_named_with_its_labels() {
    let (resource, field, message) = problem(&format!(
        "{API}
  getOrder:
    type: celerity/handler
    metadata:
      labels: {{ app: shopp }}
      annotations: {{ celerity.handler.http: true, celerity.handler.http.method: GET, celerity.handler.http.path: /x }}
"
    ));
    assert_eq!((resource.as_deref(), field.as_deref()), (Some("getOrder"), Some("metadata.labels")));
    assert!(message.contains("linked to nothing") && message.contains("app: shopp"), "{message}");

    let (resource, _, message) = problem(
        "
resources:
  cleanup:
    type: celerity/handler
    metadata: { annotations: { celerity.handler.schedule: true } }
",
    );
    assert_eq!(resource.as_deref(), Some("cleanup"));
    assert!(message.contains("celerity/schedule") && message.contains("no labels"), "{message}");
}

#[test]
fn other_mistakes_name_their_field() {
    let cases = [
        ("resources: { h: { type: celerity/handler, spec: { timeout: 1.5 } } }", "h", "spec.timeout"),
        ("resources: { h: { type: celerity/handler, spec: { timeout: 0 } } }", "h", "spec.timeout"),
        ("resources: { h: { type: celerity/handler, spec: { tracingEnabled: yes } } }", "h", "spec.tracingEnabled"),
        ("resources: { h: { type: celerity/handler, spec: { handlerName: 3 } } }", "h", "spec.handlerName"),
        ("resources: { h: { spec: {} } }", "h", "type"),
        ("resources: { s: { type: celerity/schedule, spec: { input: {} } } }", "s", "spec.schedule"),
        ("resources: { a: { type: celerity/api, spec: {} } }", "a", "spec.protocols"),
        ("resources: { a: { type: celerity/api, spec: { protocols: [grpc] } } }", "a", "spec.protocols.0"),
        (
            "resources: { h: { type: celerity/handler, metadata: { annotations: { celerity.handler.http: 1 } } } }",
            "h",
            "metadata.annotations[celerity.handler.http]",
        ),
    ];
    for (yaml, resource, field) in cases {
        let (r, f, _) = problem(yaml);
        assert_eq!((r.as_deref(), f.as_deref()), (Some(resource), Some(field)), "{yaml}");
    }
    let http = format!(
            "{API}
  h:
    type: celerity/handler
    metadata: {{ labels: {{ app: shop }}, annotations: {{ celerity.handler.http: true, celerity.handler.http.path: /x }} }}
"
        );
    let (r, f, _) = problem(&http);
    assert_eq!((r.as_deref(), f.as_deref()), (Some("h"), Some("metadata.annotations[celerity.handler.http.method]")));
    let lower =
        http.replace("celerity.handler.http: true,", "celerity.handler.http: true, celerity.handler.http.method: get,");
    let (_, _, message) = problem(&lower);
    assert!(message.contains("`GET::/x`"), "a suggestion: {message}");
    assert_eq!(problem("resources: [1]").1.as_deref(), Some("resources"));
    assert_eq!(problem("version: 1").1.as_deref(), Some("resources"));
}

#[test]
fn one_tag_one_handler_one_trigger() {
    let twice = format!(
            "{API}
  a:
    type: celerity/handler
    metadata: {{ labels: {{ app: shop }}, annotations: {{ celerity.handler.http: true, celerity.handler.http.method: GET, celerity.handler.http.path: /x }} }}
  b:
    type: celerity/handler
    metadata: {{ labels: {{ app: shop }}, annotations: {{ celerity.handler.http: true, celerity.handler.http.method: GET, celerity.handler.http.path: /x }} }}
"
        );
    let (resource, _, message) = problem(&twice);
    assert_eq!(resource.as_deref(), Some("b"));
    assert!(message.contains("`GET::/x`") && message.contains("`a`"), "{message}");
    let (_, field, _) = problem(
        "resources: { h: { type: celerity/handler, metadata: { annotations: { celerity.handler.http: true, celerity.handler.schedule: true } } } }",
    );
    assert_eq!(field.as_deref(), Some("metadata.annotations"));
}

#[test]
fn websocket_route_keys_and_guards() {
    let yaml = "
resources:
  live:
    type: celerity/api
    linkSelector: { byLabel: { app: live } }
    spec: { protocols: [http, { websocketConfig: { routeKey: action } }] }
  send:
    type: celerity/handler
    metadata: { labels: { app: live }, annotations: { celerity.handler.websocket: true, celerity.handler.websocket.route: sendMessage } }
  guard:
    type: celerity/handler
    metadata: { labels: { app: live }, annotations: { celerity.handler.guard.custom: myGuard } }
";
    let blueprint = parse(yaml, Format::Yaml).unwrap();
    assert_eq!(blueprint.route_key, "action");
    let tags: Vec<&str> = blueprint.handlers.iter().map(|h| h.tag.as_str()).collect();
    assert_eq!(tags, ["action::sendMessage"]);
    assert_eq!(blueprint.skipped.len(), 1);
    assert_eq!(blueprint.skipped[0].0, "guard");
}

#[test]
fn the_orders_queue_feeds_its_consumer() {
    let blueprint = parse(ORDERS, Format::Yaml).unwrap();
    assert_eq!(
        blueprint.feeds,
        [QueueFeed {
            queues: vec!["order-events".into()],
            consumer: "orderEventsConsumer".into(),
            source_id: "order-events".into(),
            handler: "processOrderEvents".into(),
            tag: "source::order-events::processOrderEvents".into(),
            batch_size: 10,
            wait: Duration::from_secs(1),
            visibility_timeout: DEFAULT_VISIBILITY_TIMEOUT,
        }]
    );
    assert_eq!(blueprint.feeds[0].stream(), "celerity:queue:order-events");
    assert!(blueprint.unread.is_empty());
}

/// A consumer `c` linking to the handler `h`, with `consumer` as the
/// consumer's extra fields, and `queues` resources.
fn consumer_blueprint(consumer: &str, queues: &str) -> String {
    format!(
        "resources:
  c:
    type: celerity/consumer
    metadata: {{ labels: {{ fed: c }} }}
    linkSelector: {{ byLabel: {{ consumer: c }} }}
    {consumer}
  h:
    type: celerity/handler
    metadata: {{ labels: {{ consumer: c }}, annotations: {{ celerity.handler.consumer: true }} }}
{queues}"
    )
}

const QUEUE_Q: &str = "  q:
    type: celerity/queue
    linkSelector: { byLabel: { fed: c } }
    spec: { name: orders }
";

#[test]
fn a_queue_linking_to_a_consumer_is_its_source_by_resource_name_unless_it_names_one() {
    let linked =
        parse(&consumer_blueprint("spec: { batchSize: 3, visibilityTimeout: 7 }", QUEUE_Q), Format::Yaml).unwrap();
    assert_eq!(linked.handlers[0].tag, "source::q::h");
    let feed = &linked.feeds[0];
    assert_eq!((feed.source_id.as_str(), feed.queues.as_slice()), ("q", &["q".to_owned()][..]));
    assert_eq!((feed.batch_size, feed.wait, feed.visibility_timeout), (3, DEFAULT_WAIT, Duration::from_secs(7)));

    // An explicit sourceId wins, as it does in the runtime: the stream and
    // the tag are the sourceId's.
    let named = parse(&consumer_blueprint("spec: { sourceId: orders }", QUEUE_Q), Format::Yaml).unwrap();
    assert_eq!(named.handlers[0].tag, "source::orders::h");
    assert_eq!(named.feeds[0].stream(), "celerity:queue:orders");

    // A consumer with a sourceId and no queue is fed by hand only.
    let hand_fed = parse(&consumer_blueprint("spec: { sourceId: orders }", ""), Format::Yaml).unwrap();
    assert!(hand_fed.feeds.is_empty());
}

#[test]
fn a_consumer_without_a_source_or_with_two_queues_is_refused() {
    let (resource, field, message) = problem(&consumer_blueprint("spec: {}", ""));
    assert_eq!((resource.as_deref(), field.as_deref()), (Some("c"), Some("spec.sourceId")));
    assert!(message.contains("or a `celerity/queue` links to it"), "{message}");
    let two = format!("{QUEUE_Q}  r:\n    type: celerity/queue\n    linkSelector: {{ byLabel: {{ fed: c }} }}\n");
    let (_, _, message) = problem(&consumer_blueprint("spec: {}", &two));
    assert!(message.contains("(q, r)") && message.contains("`spec.sourceId` names"), "{message}");
    let (_, field, message) = problem(&consumer_blueprint("spec: { batchSize: 0 }", QUEUE_Q));
    assert_eq!((field.as_deref(), message.as_str()), (Some("spec.batchSize"), "expected a whole number, at least 1"));
}

#[test]
fn a_queue_fed_consumer_routing_to_several_handlers_is_not_read() {
    let yaml = consumer_blueprint("spec: {}", QUEUE_Q)
        + "  h2:
    type: celerity/handler
    metadata: { labels: { consumer: c }, annotations: { celerity.handler.consumer: true } }
";
    let blueprint = parse(&yaml, Format::Yaml).unwrap();
    assert_eq!(blueprint.handlers.len(), 2);
    assert!(blueprint.feeds.is_empty());
    assert_eq!(blueprint.unread.len(), 1, "{:?}", blueprint.unread);
    assert_eq!(blueprint.unread[0].0, "c");
    assert!(blueprint.unread[0].1.contains("source::q::h, source::q::h2"), "{:?}", blueprint.unread);
}
