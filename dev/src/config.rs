//! What the dev runtime serves, and the `RuntimeConfig` it gives the
//! handler: either the application's blueprint (see [`crate::blueprint`]),
//! as the runtime reads it, or, without one, the handler binary's manifest
//! completed by an optional config file.
//!
//! The config file (`--config dev.json`) is small and every field optional:
//!
//! ```json
//! {
//!   "timeoutMs": 30000,
//!   "drainTimeoutMs": 10000,
//!   "handlers": [
//!     { "name": "processOrders", "tag": "source::orders-queue::processOrders", "timeoutMs": 5000 },
//!     { "tag": "GET::/orders/{id}", "name": "getOrder", "publishedName": "orders-get" }
//!   ],
//!   "websocket": { "routeKey": "event", "ackTimeoutMs": 10000, "ackAttempts": 3 }
//! }
//! ```
//!
//! A handler entry matches a manifest handler by `tag`, or by `name` (the
//! blueprint handler name a handler bound by name declares). For a handler
//! bound by name it supplies the tag; a custom handler bound by name needs
//! none (`custom::{name}`).
//!
//! With a blueprint, the blueprint declares the handlers and their
//! timeouts, so `handlers` and `timeoutMs` are refused; the drain deadline
//! and the WebSocket acknowledgement settings still apply.

use std::collections::BTreeMap;
use std::time::Duration;

use celerity_testkit::proto::v1::{HandlerConfig, ProtocolVersion, RuntimeConfig};
use serde::Deserialize;

use crate::blueprint::{self, Blueprint};

/// The timeout of handlers that set none, without a blueprint.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The route key of WebSocket messages when nothing sets one.
const DEFAULT_ROUTE_KEY: &str = "event";

/// One handler of the manifest (`<bin> --manifest`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestEntry {
    /// The tag, for a handler bound by tag.
    #[serde(default)]
    pub tag: Option<String>,
    /// The blueprint handler name, for a handler bound by name.
    #[serde(default)]
    pub name: Option<String>,
    /// `http`, `websocket`, `consumer`, `schedule` or `custom`.
    #[serde(default)]
    pub kind: String,
    /// The Rust function.
    #[serde(default)]
    pub function: String,
    /// The handler's own concurrency cap, if any.
    #[serde(default)]
    pub max_concurrent: Option<u32>,
}

#[derive(Debug, Deserialize)]
struct Manifest {
    #[serde(default)]
    handlers: Vec<ManifestEntry>,
}

/// Parses the manifest JSON a handler binary prints.
pub fn parse_manifest(json: &[u8]) -> Result<Vec<ManifestEntry>, String> {
    let manifest: Manifest = serde_json::from_slice(json).map_err(|e| format!("not a handler manifest: {e}"))?;
    Ok(manifest.handlers)
}

/// The optional config file.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DevConfig {
    /// The timeout of handlers that set none.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// The runtime's drain deadline.
    #[serde(default)]
    pub drain_timeout_ms: Option<u64>,
    /// Per-handler settings.
    #[serde(default)]
    pub handlers: Vec<HandlerSettings>,
    /// WebSocket settings.
    #[serde(default)]
    pub websocket: WsSettings,
}

/// Settings of one handler in the config file.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HandlerSettings {
    /// The blueprint handler name.
    #[serde(default)]
    pub name: Option<String>,
    /// The handler tag.
    #[serde(default)]
    pub tag: Option<String>,
    /// The handler timeout.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// The name the blueprint publishes the handler under.
    #[serde(default)]
    pub published_name: Option<String>,
}

/// WebSocket settings in the config file.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WsSettings {
    /// The JSON field naming a text message's route (default `event`).
    #[serde(default)]
    pub route_key: Option<String>,
    /// How long to wait for a client's acknowledgement (default 10 s).
    #[serde(default)]
    pub ack_timeout_ms: Option<u64>,
    /// How many times a message is sent before it is declared lost
    /// (default 3).
    #[serde(default)]
    pub ack_attempts: Option<u32>,
}

/// Parses the config file.
pub fn parse_config(json: &[u8]) -> Result<DevConfig, String> {
    serde_json::from_slice(json).map_err(|e| format!("invalid dev config: {e}"))
}

/// One handler the dev runtime serves.
#[derive(Debug, Clone, PartialEq)]
pub struct Handler {
    /// The blueprint handler name.
    pub name: String,
    /// The tag.
    pub tag: String,
    /// The kind from the manifest.
    pub kind: String,
    /// The timeout.
    pub timeout: Duration,
    /// The published name (may be empty).
    pub published_name: String,
    /// Whether the handler is traced.
    pub tracing_enabled: bool,
    /// For a schedule handler of a blueprint, what its triggers carry.
    pub schedule: Option<blueprint::Schedule>,
}

/// Everything served.
#[derive(Debug, Clone)]
pub struct App {
    /// The handlers, in manifest (or blueprint) order.
    pub handlers: Vec<Handler>,
    /// The config file (or defaults).
    pub config: DevConfig,
    /// The JSON field a WebSocket text message is routed by.
    pub route_key: String,
    /// The blueprint's configuration stores and linked resources (none
    /// without a blueprint).
    pub resources: blueprint::resources::Declared,
    /// The consumers the blueprint feeds from a queue (none without a
    /// blueprint).
    pub feeds: Vec<blueprint::QueueFeed>,
}

impl App {
    /// Joins the manifest and the config file.
    pub fn resolve(manifest: &[ManifestEntry], config: DevConfig, default_timeout: Duration) -> Result<App, String> {
        let default_timeout = config.timeout_ms.map(Duration::from_millis).unwrap_or(default_timeout);
        let mut handlers = Vec::new();
        let mut problems = Vec::new();
        for entry in manifest {
            let settings = config.handlers.iter().find(|h| match (&entry.tag, &entry.name) {
                (Some(tag), _) => h.tag.as_deref() == Some(tag),
                (None, Some(name)) => {
                    h.name.as_deref() == Some(name) || h.published_name.as_deref() == Some(name.as_str())
                }
                (None, None) => false,
            });
            let settings = settings.cloned().unwrap_or_default();
            let tag = match (&entry.tag, &settings.tag, &entry.name) {
                (Some(tag), _, _) => tag.clone(),
                (None, Some(tag), _) => tag.clone(),
                (None, None, Some(name)) if entry.kind == "custom" => format!("custom::{name}"),
                (None, None, Some(name)) => {
                    problems.push(format!(
                        "handler `{name}` ({} {}) is bound by name; give it a tag in the config file, e.g. \
                         {{\"handlers\": [{{\"name\": \"{name}\", \"tag\": \"...\"}}]}}",
                        entry.kind, entry.function
                    ));
                    continue;
                }
                (None, None, None) => {
                    problems.push(format!("manifest entry for {} has neither tag nor name", entry.function));
                    continue;
                }
            };
            let name = entry
                .name
                .clone()
                .or(settings.name.clone())
                .or_else(|| name_in_tag(&tag))
                .unwrap_or_else(|| entry.function.rsplit("::").next().unwrap_or(&entry.function).to_owned());
            handlers.push(Handler {
                name,
                tag,
                kind: entry.kind.clone(),
                timeout: settings.timeout_ms.map(Duration::from_millis).unwrap_or(default_timeout),
                published_name: settings.published_name.clone().unwrap_or_default(),
                tracing_enabled: false,
                schedule: None,
            });
        }
        for settings in &config.handlers {
            let used = handlers.iter().any(|h| {
                settings.tag.as_deref() == Some(h.tag.as_str()) || settings.name.as_deref() == Some(h.name.as_str())
            });
            if !used {
                problems.push(format!("the config names a handler the binary does not have: {settings:?}"));
            }
        }
        if !problems.is_empty() {
            return Err(problems.join("\n"));
        }
        let route_key = config.websocket.route_key.clone().unwrap_or_else(|| DEFAULT_ROUTE_KEY.to_owned());
        Ok(App { handlers, config, route_key, resources: Default::default(), feeds: Vec::new() })
    }

    /// The handlers of a blueprint, with what of the config file still
    /// applies (the drain deadline, the WebSocket acknowledgement settings).
    pub fn from_blueprint(blueprint: Blueprint, config: DevConfig) -> Result<App, String> {
        let mut problems = Vec::new();
        if !config.handlers.is_empty() {
            problems.push(
                "the config file's `handlers` apply only without a blueprint: the blueprint declares the handlers",
            );
        }
        if config.timeout_ms.is_some() {
            problems.push("the config file's `timeoutMs` applies only without a blueprint: the blueprint sets each handler's timeout");
        }
        if let Some(key) = &config.websocket.route_key
            && *key != blueprint.route_key
        {
            return Err(format!(
                "the config file's websocket.routeKey is {key:?}, the blueprint's API routes by {:?}; leave it to the blueprint",
                blueprint.route_key
            ));
        }
        if !problems.is_empty() {
            return Err(problems.join("\n"));
        }
        let handlers = blueprint
            .handlers
            .into_iter()
            .map(|h| Handler {
                name: h.name,
                tag: h.tag,
                kind: h.kind.as_str().to_owned(),
                timeout: h.timeout,
                published_name: h.published_name,
                tracing_enabled: h.tracing_enabled,
                schedule: h.schedule,
            })
            .collect();
        Ok(App {
            handlers,
            config,
            route_key: blueprint.route_key,
            resources: blueprint.resources,
            feeds: blueprint.feeds,
        })
    }

    /// The `RuntimeConfig` the runtime would give: one `HandlerConfig` per
    /// handler, each with its own tracing setting. `tracing_enabled` for
    /// every handler at once is left off: a blueprint sets it per handler.
    pub fn runtime_config(&self) -> RuntimeConfig {
        RuntimeConfig {
            tracing_enabled: false,
            metrics_enabled: false,
            handlers: self
                .handlers
                .iter()
                .map(|h| HandlerConfig {
                    handler_name: h.name.clone(),
                    handler_tag: h.tag.clone(),
                    timeout_ms: h.timeout.as_millis() as i64,
                    tracing_enabled: h.tracing_enabled,
                    published_name: h.published_name.clone(),
                })
                .collect(),
            protocol_version: Some(ProtocolVersion { major: 1, minor: 0 }),
        }
    }

    /// The handler serving `tag`.
    pub fn by_tag(&self, tag: &str) -> Option<&Handler> {
        self.handlers.iter().find(|h| h.tag == tag)
    }

    /// The handler answering to `name` (its handler name or published name),
    /// as the local invoke endpoint finds it.
    pub fn by_name(&self, name: &str) -> Option<&Handler> {
        self.handlers.iter().find(|h| h.name == name || (!h.published_name.is_empty() && h.published_name == name))
    }

    /// The timeout of `tag`'s handler.
    pub fn timeout(&self, tag: &str) -> Duration {
        self.by_tag(tag).map_or(DEFAULT_TIMEOUT, |h| h.timeout)
    }

    /// The WebSocket route key.
    pub fn route_key(&self) -> &str {
        &self.route_key
    }

    /// Every tag, grouped by kind, for the startup banner.
    pub fn tags_by_kind(&self) -> BTreeMap<&str, Vec<&str>> {
        let mut map: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for h in &self.handlers {
            map.entry(h.kind.as_str()).or_default().push(h.tag.as_str());
        }
        map
    }
}

/// The blueprint handler name a tag carries: `custom::{name}` and
/// `source::{sourceId}::{name}` end with it; HTTP and WebSocket tags do not.
fn name_in_tag(tag: &str) -> Option<String> {
    let parts: Vec<&str> = tag.split("::").collect();
    match parts[..] {
        ["custom", name] | ["source", _, name] if !name.is_empty() => Some(name.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Vec<ManifestEntry> {
        parse_manifest(
            br#"{"sdk":"celerity-rs","handlers":[
                {"tag":"GET::/orders/{id}","kind":"http","function":"orders::get_order","file":"x","line":1,"maxConcurrent":8},
                {"name":"processOrders","kind":"consumer","function":"orders::process","maxConcurrent":null},
                {"name":"reindex","kind":"custom","function":"orders::reindex"}
            ]}"#,
        )
        .unwrap()
    }

    #[test]
    fn a_handler_bound_by_name_needs_a_tag_unless_it_is_custom() {
        let err = App::resolve(&manifest(), DevConfig::default(), DEFAULT_TIMEOUT).unwrap_err();
        assert!(err.contains("processOrders") && err.contains("bound by name"), "{err}");
        assert!(!err.contains("reindex"), "{err}");
    }

    #[test]
    fn the_config_file_supplies_tags_timeouts_and_published_names() {
        let config = parse_config(
            br#"{"timeoutMs": 20000, "handlers": [
                {"name": "processOrders", "tag": "source::orders-queue::processOrders", "timeoutMs": 5000},
                {"tag": "GET::/orders/{id}", "name": "getOrder", "publishedName": "orders-get"}
            ], "websocket": {"routeKey": "action", "ackTimeoutMs": 100, "ackAttempts": 2}}"#,
        )
        .unwrap();
        let app = App::resolve(&manifest(), config, DEFAULT_TIMEOUT).unwrap();
        let rc = app.runtime_config();
        let tags: Vec<(&str, &str, i64, &str)> = rc
            .handlers
            .iter()
            .map(|h| (h.handler_name.as_str(), h.handler_tag.as_str(), h.timeout_ms, h.published_name.as_str()))
            .collect();
        assert_eq!(
            tags,
            [
                ("getOrder", "GET::/orders/{id}", 20000, "orders-get"),
                ("processOrders", "source::orders-queue::processOrders", 5000, ""),
                ("reindex", "custom::reindex", 20000, ""),
            ]
        );
        assert_eq!(app.by_name("orders-get").unwrap().tag, "GET::/orders/{id}");
        assert_eq!(app.by_name("reindex").unwrap().tag, "custom::reindex");
        assert_eq!(app.route_key(), "action");
        assert_eq!(rc.protocol_version, Some(ProtocolVersion { major: 1, minor: 0 }));
    }

    #[test]
    fn custom_and_source_tags_carry_the_blueprint_name() {
        assert_eq!(name_in_tag("custom::quoteOrder").as_deref(), Some("quoteOrder"));
        assert_eq!(name_in_tag("source::order-events::processOrderEvents").as_deref(), Some("processOrderEvents"));
        assert_eq!(name_in_tag("GET::/orders/{id}"), None);
        assert_eq!(name_in_tag("event::$default"), None);
        assert_eq!(name_in_tag("custom::"), None);
    }

    #[test]
    fn tag_bound_handlers_are_named_after_their_function() {
        let app = App::resolve(&manifest()[..1], DevConfig::default(), DEFAULT_TIMEOUT).unwrap();
        assert_eq!(app.handlers[0].name, "get_order");
        assert_eq!(app.timeout("GET::/orders/{id}"), DEFAULT_TIMEOUT);
    }

    fn blueprint() -> Blueprint {
        blueprint::parse(
            "resources:
  reindex: { type: celerity/handler, spec: { timeout: 2, tracingEnabled: true, handlerName: reindex-v1 } }
",
            blueprint::document::Format::Yaml,
        )
        .unwrap()
    }

    #[test]
    fn a_blueprint_gives_the_runtime_config() {
        let app = App::from_blueprint(blueprint(), DevConfig::default()).unwrap();
        let rc = app.runtime_config();
        assert_eq!(
            rc.handlers,
            [HandlerConfig {
                handler_name: "reindex".into(),
                handler_tag: "custom::reindex".into(),
                timeout_ms: 2000,
                tracing_enabled: true,
                published_name: "reindex-v1".into(),
            }]
        );
        assert_eq!(app.by_name("reindex-v1").unwrap().kind, "custom");
        assert_eq!(app.route_key(), "event");
    }

    #[test]
    fn with_a_blueprint_the_config_file_declares_no_handlers() {
        let config = parse_config(br#"{"timeoutMs": 5, "handlers": [{"tag": "custom::reindex"}]}"#).unwrap();
        let err = App::from_blueprint(blueprint(), config).unwrap_err();
        assert!(err.contains("`handlers`") && err.contains("`timeoutMs`"), "{err}");
        let config = parse_config(br#"{"websocket": {"routeKey": "action"}}"#).unwrap();
        assert!(App::from_blueprint(blueprint(), config).unwrap_err().contains("routeKey"));
        let config = parse_config(br#"{"drainTimeoutMs": 5, "websocket": {"ackAttempts": 2}}"#).unwrap();
        assert!(App::from_blueprint(blueprint(), config).is_ok());
    }

    #[test]
    fn unknown_fields_and_strays_are_refused() {
        assert!(parse_config(br#"{"handler": []}"#).is_err());
        let config = parse_config(br#"{"handlers": [{"tag": "GET::/nope"}]}"#).unwrap();
        let err = App::resolve(&manifest()[..1], config, DEFAULT_TIMEOUT).unwrap_err();
        assert!(err.contains("GET::/nope"), "{err}");
    }
}
