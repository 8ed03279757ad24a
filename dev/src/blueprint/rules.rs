//! From a blueprint's value to the handlers the runtime would configure, by
//! the rules of `shared/contract/blueprints/README.md`:
//!
//! - `celerity/handler` resources are the handlers; what triggers one links
//!   to it by label (its `linkSelector.byLabel` matches the handler's
//!   `metadata.labels`);
//! - the trigger annotation decides the kind and the tag: HTTP
//!   `{method}::{path}` from a `celerity/api`; WebSocket
//!   `{routeKey}::{route}` from an API serving WebSocket; consumer
//!   `source::{source}::{handler}` from a `celerity/consumer`, whose source
//!   is its `spec.sourceId`, else the `celerity/queue` that links to it by
//!   label (by the queue's resource name), as the runtime resolves it; schedule
//!   `source::{schedule}::{handler}` from a `celerity/schedule`; no trigger
//!   annotation, `custom::{handler}`;
//! - the timeout is the handler's `spec.timeout` in seconds (at most 3600),
//!   else that of a `celerity/handlerConfig` the handler links to, else the
//!   blueprint's `metadata.sharedHandlerConfig.timeout`, else 60 s; tracing
//!   is resolved the same way from `tracingEnabled`.
//!
//! Every problem found is reported, each naming its resource and field.

use std::collections::BTreeMap;
use std::time::Duration;

use celerity_tags::{TagKind, parse_tag};
use serde_json::{Map, Value};

use super::{Blueprint, Handler, Kind, Problem, QueueFeed, Schedule};

/// The timeout of a handler the blueprint gives none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest timeout the runtime gives a handler, in seconds.
pub const MAX_TIMEOUT_SECONDS: u64 = 3600;

/// The route key of a WebSocket API that sets none.
pub const DEFAULT_ROUTE_KEY: &str = "event";

const HANDLER: &str = "celerity/handler";
const API: &str = "celerity/api";
const CONSUMER: &str = "celerity/consumer";
const SCHEDULE: &str = "celerity/schedule";
const HANDLER_CONFIG: &str = "celerity/handlerConfig";
const QUEUE: &str = "celerity/queue";

/// The batch size of a queue-fed consumer that sets none: SQS's default.
pub const DEFAULT_BATCH_SIZE: usize = 10;
/// How long a read of a queue waits for messages when the consumer sets
/// no `waitTimeSeconds`.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(10);
/// How long a delivered message stays unavailable when the consumer sets no
/// `visibilityTimeout`: the runtime's default lock on a local message.
pub const DEFAULT_VISIBILITY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a read waits at least: `BLOCK 0` would wait for ever.
const MIN_WAIT: Duration = Duration::from_millis(100);

const HTTP: &str = "celerity.handler.http";
const HTTP_METHOD: &str = "celerity.handler.http.method";
const HTTP_PATH: &str = "celerity.handler.http.path";
const WEBSOCKET: &str = "celerity.handler.websocket";
const WEBSOCKET_ROUTE: &str = "celerity.handler.websocket.route";
const CONSUMER_FLAG: &str = "celerity.handler.consumer";
const SCHEDULE_FLAG: &str = "celerity.handler.schedule";
const CUSTOM_GUARD: &str = "celerity.handler.guard.custom";

/// Every handler annotation (`celerity.handler.*`) the runtime knows; any
/// other is a mistake, most often a typo that would leave a handler
/// untriggered.
pub const KNOWN_ANNOTATIONS: [&str; 11] = [
    HTTP,
    HTTP_METHOD,
    HTTP_PATH,
    "celerity.handler.guard.protectedBy",
    CUSTOM_GUARD,
    "celerity.handler.public",
    WEBSOCKET,
    WEBSOCKET_ROUTE,
    CONSUMER_FLAG,
    "celerity.handler.consumer.route",
    SCHEDULE_FLAG,
];

/// The problems found so far.
#[derive(Default)]
struct Problems(Vec<Problem>);

impl Problems {
    fn add(&mut self, resource: Option<&str>, field: Option<String>, message: impl Into<String>) {
        self.0.push(Problem {
            resource: resource.map(str::to_owned),
            field,
            line: None,
            column: None,
            message: message.into(),
        });
    }

    fn at(&mut self, resource: &str, field: impl Into<String>, message: impl Into<String>) {
        self.add(Some(resource), Some(field.into()), message);
    }
}

fn annotation_field(key: &str) -> String {
    format!("metadata.annotations[{key}]")
}

/// One resource, with the parts every rule reads.
struct Resource<'a> {
    name: &'a str,
    kind: &'a str,
    labels: BTreeMap<&'a str, &'a str>,
    annotations: Option<&'a Map<String, Value>>,
    selector: BTreeMap<&'a str, &'a str>,
    spec: Option<&'a Map<String, Value>>,
}

impl<'a> Resource<'a> {
    fn read(name: &'a str, value: &'a Value, problems: &mut Problems) -> Option<Resource<'a>> {
        let Some(fields) = value.as_object() else {
            problems.add(Some(name), None, "a resource is a mapping with a `type`");
            return None;
        };
        let Some(kind) = fields.get("type").and_then(Value::as_str) else {
            problems.at(name, "type", "missing, or not text: every resource names its type");
            return None;
        };
        let metadata = match fields.get("metadata") {
            None => None,
            Some(Value::Object(m)) => Some(m),
            Some(_) => {
                problems.at(name, "metadata", "expected a mapping");
                None
            }
        };
        let labels = text_map(metadata.and_then(|m| m.get("labels")), name, "metadata.labels", problems);
        let annotations = match metadata.and_then(|m| m.get("annotations")) {
            None => None,
            Some(Value::Object(a)) => Some(a),
            Some(_) => {
                problems.at(name, "metadata.annotations", "expected a mapping");
                None
            }
        };
        let selector = match fields.get("linkSelector") {
            None => BTreeMap::new(),
            Some(Value::Object(s)) => text_map(s.get("byLabel"), name, "linkSelector.byLabel", problems),
            Some(_) => {
                problems.at(name, "linkSelector", "expected a mapping with `byLabel`");
                BTreeMap::new()
            }
        };
        let spec = match fields.get("spec") {
            None => None,
            Some(Value::Object(s)) => Some(s),
            Some(_) => {
                problems.at(name, "spec", "expected a mapping");
                None
            }
        };
        Some(Resource { name, kind, labels, annotations, selector, spec })
    }

    /// Whether this resource's `linkSelector.byLabel` selects `other`.
    fn selects(&self, other: &Resource<'_>) -> bool {
        !self.selector.is_empty() && self.selector.iter().all(|(k, v)| other.labels.get(k) == Some(v))
    }

    fn spec_field(&self, field: &str) -> Option<&'a Value> {
        self.spec.and_then(|s| s.get(field))
    }

    fn annotation(&self, key: &str) -> Option<&'a Value> {
        self.annotations.and_then(|a| a.get(key))
    }

    /// A flag annotation: `true` or `"true"` sets it.
    fn flag(&self, key: &str, problems: &mut Problems) -> bool {
        match self.annotation(key) {
            None | Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) => true,
            Some(Value::String(s)) if s == "true" => true,
            Some(Value::String(s)) if s == "false" => false,
            Some(_) => {
                problems.at(self.name, annotation_field(key), "expected true or false");
                false
            }
        }
    }

    /// A text annotation that must be there.
    fn required_text(&self, key: &str, what: &str, problems: &mut Problems) -> Option<&'a str> {
        match self.annotation(key) {
            Some(Value::String(s)) if !s.is_empty() => Some(s),
            None => {
                problems.at(self.name, annotation_field(key), format!("missing: {what}"));
                None
            }
            Some(_) => {
                problems.at(self.name, annotation_field(key), format!("expected text: {what}"));
                None
            }
        }
    }

    fn describe_labels(&self) -> String {
        if self.labels.is_empty() {
            "it has no labels".to_owned()
        } else {
            let labels: Vec<String> = self.labels.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            format!("its labels are {{{}}}", labels.join(", "))
        }
    }
}

fn text_map<'a>(
    value: Option<&'a Value>,
    resource: &str,
    field: &str,
    problems: &mut Problems,
) -> BTreeMap<&'a str, &'a str> {
    let mut out = BTreeMap::new();
    match value {
        None => {}
        Some(Value::Object(map)) => {
            for (key, value) in map {
                match value.as_str() {
                    Some(text) => {
                        out.insert(key.as_str(), text);
                    }
                    None => problems.at(resource, format!("{field}.{key}"), "expected text"),
                }
            }
        }
        Some(_) => problems.at(resource, field, "expected a mapping of names to text"),
    }
    out
}

/// What an API serves.
struct Protocols {
    http: bool,
    websocket: bool,
    route_key: Option<String>,
}

fn protocols(api: &Resource<'_>, problems: &mut Problems) -> Protocols {
    let mut out = Protocols { http: false, websocket: false, route_key: None };
    let Some(list) = api.spec_field("protocols") else {
        problems.at(api.name, "spec.protocols", "missing: an API lists the protocols it serves");
        return out;
    };
    let Some(list) = list.as_array() else {
        problems.at(api.name, "spec.protocols", "expected a list");
        return out;
    };
    for (index, protocol) in list.iter().enumerate() {
        match protocol {
            Value::String(s) if s == "http" => out.http = true,
            Value::String(s) if s == "websocket" => out.websocket = true,
            Value::Object(o) if o.len() == 1 && o.get("websocketConfig").is_some_and(Value::is_object) => {
                out.websocket = true;
                match o.get("websocketConfig").and_then(|c| c.get("routeKey")) {
                    None => {}
                    Some(Value::String(key)) if !key.is_empty() => out.route_key = Some(key.clone()),
                    Some(_) => problems.at(
                        api.name,
                        format!("spec.protocols.{index}.websocketConfig.routeKey"),
                        "expected the name of a JSON field",
                    ),
                }
            }
            _ => problems.at(
                api.name,
                format!("spec.protocols.{index}"),
                "expected `http`, `websocket` or `{websocketConfig: {routeKey: ...}}`",
            ),
        }
    }
    out
}

/// A number of seconds: a whole number, at least 1, capped at the
/// runtime's maximum.
fn seconds(value: &Value, resource: Option<&str>, field: String, problems: &mut Problems) -> Option<Duration> {
    let seconds = match value {
        Value::Number(n) if n.as_i64().is_some_and(|s| s >= 1) => n.as_i64().map(|s| s as u64),
        // Past i64: a whole number of seconds, far over the cap.
        Value::Number(n) if n.as_i64().is_none() && n.as_u64().is_some() => Some(MAX_TIMEOUT_SECONDS),
        _ => None,
    };
    match seconds {
        Some(s) => Some(Duration::from_secs(s.min(MAX_TIMEOUT_SECONDS))),
        None => {
            problems.add(resource, Some(field), "expected a whole number of seconds, at least 1");
            None
        }
    }
}

fn boolean(value: &Value, resource: Option<&str>, field: String, problems: &mut Problems) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        _ => {
            problems.add(resource, Some(field), "expected true or false");
            None
        }
    }
}

/// Where a handler's shared settings come from after its own spec.
struct Inherited<'r, 'a> {
    config: Option<&'r Resource<'a>>,
    shared: Option<&'a Map<String, Value>>,
}

impl Inherited<'_, '_> {
    /// The first of the handler's `spec.{field}`, its handler config's, and
    /// the blueprint's shared config's, read by `read`.
    fn resolve<T>(
        &self,
        handler: &Resource<'_>,
        field: &str,
        problems: &mut Problems,
        read: impl Fn(&Value, Option<&str>, String, &mut Problems) -> Option<T>,
    ) -> Option<T> {
        if let Some(value) = handler.spec_field(field) {
            return read(value, Some(handler.name), format!("spec.{field}"), problems);
        }
        if let Some(config) = self.config
            && let Some(value) = config.spec_field(field)
        {
            return read(value, Some(config.name), format!("spec.{field}"), problems);
        }
        let value = self.shared?.get(field)?;
        read(value, None, format!("metadata.sharedHandlerConfig.{field}"), problems)
    }
}

/// The one resource of `candidates` that links to `handler`, or a problem.
fn one_link<'r, 'a>(
    handler: &Resource<'_>,
    candidates: &[&'r Resource<'a>],
    what: &str,
    problems: &mut Problems,
) -> Option<&'r Resource<'a>> {
    let linked: Vec<&Resource<'_>> = candidates.iter().copied().filter(|c| c.selects(handler)).collect();
    match linked[..] {
        [one] => Some(one),
        [] => {
            problems.at(
                handler.name,
                "metadata.labels",
                format!(
                    "linked to nothing: {what} links to this handler when its `linkSelector.byLabel` matches \
                     the handler's labels, and none does ({})",
                    handler.describe_labels()
                ),
            );
            None
        }
        _ => {
            let names: Vec<&str> = linked.iter().map(|r| r.name).collect();
            problems.at(
                handler.name,
                "metadata.labels",
                format!("linked from more than one {what} ({}); the runtime gives a handler one tag", names.join(", ")),
            );
            None
        }
    }
}

fn checked_tag(kind: TagKind, tag: String, handler: &str, field: String, problems: &mut Problems) -> Option<String> {
    match parse_tag(kind, &tag) {
        Ok(normalised) => Some(normalised.tag),
        Err(error) => {
            let hint = error.suggestion.map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default();
            problems.at(handler, field, format!("the tag `{tag}` is not valid: {}{hint}", error.message));
            None
        }
    }
}

/// The handlers of the blueprint `value`, and its WebSocket route key.
pub fn handlers(value: &Value) -> Result<Blueprint, Vec<Problem>> {
    let mut problems = Problems::default();
    let Some(root) = value.as_object() else {
        problems.add(None, None, "a blueprint is a mapping with `resources`");
        return Err(problems.0);
    };
    let resources = match root.get("resources") {
        Some(Value::Object(resources)) => resources,
        Some(_) => {
            problems.add(None, Some("resources".to_owned()), "expected a mapping of resource names to resources");
            return Err(problems.0);
        }
        None => {
            problems.add(None, Some("resources".to_owned()), "missing: a blueprint declares its resources");
            return Err(problems.0);
        }
    };
    let shared = match root.get("metadata").and_then(|m| m.get("sharedHandlerConfig")) {
        None => None,
        Some(Value::Object(shared)) => Some(shared),
        Some(_) => {
            problems.add(None, Some("metadata.sharedHandlerConfig".to_owned()), "expected a mapping");
            None
        }
    };

    let all: Vec<Resource<'_>> =
        resources.iter().filter_map(|(name, value)| Resource::read(name, value, &mut problems)).collect();
    let of_type = |kind: &str| all.iter().filter(|r| r.kind == kind).collect::<Vec<_>>();
    let (apis, consumers, schedules, configs, queues) =
        (of_type(API), of_type(CONSUMER), of_type(SCHEDULE), of_type(HANDLER_CONFIG), of_type(QUEUE));
    let mut readings = BTreeMap::new();

    // What every trigger needs is checked whether or not it links to a
    // handler yet: a consumer without a source is wrong on its own.
    let served: Vec<Protocols> = apis.iter().map(|api| protocols(api, &mut problems)).collect();
    let mut source_ids = BTreeMap::new();
    let mut fed_by: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for consumer in &consumers {
        // The runtime takes an explicit `sourceId` first; without one, the
        // queue that links to the consumer is its source, by resource name.
        let feeding: Vec<&str> = queues.iter().filter(|q| q.selects(consumer)).map(|q| q.name).collect();
        let source = match (consumer.spec_field("sourceId"), &feeding[..]) {
            (Some(Value::String(id)), _) if !id.is_empty() => Some(id.as_str()),
            (Some(_), _) => {
                problems.at(consumer.name, "spec.sourceId", "expected the source's id, as text");
                None
            }
            (None, [queue]) => Some(*queue),
            (None, []) => {
                problems.at(
                    consumer.name,
                    "spec.sourceId",
                    "missing: a consumer names the source it reads, or a `celerity/queue` links to it by label",
                );
                None
            }
            (None, several) => {
                problems.at(
                    consumer.name,
                    "spec.sourceId",
                    format!(
                        "missing: more than one `celerity/queue` links to this consumer ({}); `spec.sourceId` names \
                         the one it reads",
                        several.join(", ")
                    ),
                );
                None
            }
        };
        if let Some(source) = source {
            source_ids.insert(consumer.name, source);
        }
        let reading = QueueReading::read(consumer, &mut problems);
        if !feeding.is_empty() {
            fed_by.insert(consumer.name, feeding);
            readings.insert(consumer.name, reading);
        }
    }
    let mut expressions = BTreeMap::new();
    for schedule in &schedules {
        match schedule.spec_field("schedule") {
            Some(Value::String(e)) if !e.is_empty() => {
                expressions.insert(schedule.name, e.as_str());
            }
            None => problems.at(schedule.name, "spec.schedule", "missing: a schedule says when it fires"),
            Some(_) => problems.at(schedule.name, "spec.schedule", "expected an expression such as `rate(1 day)`"),
        }
    }

    let mut handlers = Vec::new();
    let mut skipped = Vec::new();
    // The queue-fed consumers' handlers: (consumer, queues, source, reading, tag).
    let mut feeding: Vec<(&Resource<'_>, Vec<&str>, &str, QueueReading, String)> = Vec::new();
    let mut route_keys: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for handler in all.iter().filter(|r| r.kind == HANDLER) {
        for key in handler.annotations.into_iter().flat_map(|a| a.keys()) {
            if key.starts_with("celerity.handler.") && !KNOWN_ANNOTATIONS.contains(&key.as_str()) {
                problems.at(
                    handler.name,
                    annotation_field(key),
                    format!("unknown handler annotation; the runtime knows {}", KNOWN_ANNOTATIONS.join(", ")),
                );
            }
        }
        if handler.annotation(CUSTOM_GUARD).is_some() {
            skipped.push((handler.name.to_owned(), "a custom guard; the dev runtime runs no guards".to_owned()));
            continue;
        }
        let flags = [HTTP, WEBSOCKET, CONSUMER_FLAG, SCHEDULE_FLAG].map(|key| (key, handler.flag(key, &mut problems)));
        let set: Vec<&str> = flags.iter().filter(|(_, on)| *on).map(|(key, _)| *key).collect();
        if set.len() > 1 {
            problems.at(
                handler.name,
                "metadata.annotations",
                format!("more than one trigger ({}); a handler has one", set.join(", ")),
            );
            continue;
        }
        let name = handler.name;
        let mut schedule = None;
        let derived = match set.first().copied() {
            Some(HTTP) => {
                let method = handler.required_text(HTTP_METHOD, "an HTTP handler names its method", &mut problems);
                let path = handler.required_text(HTTP_PATH, "an HTTP handler names its path", &mut problems);
                let http_apis: Vec<&Resource<'_>> =
                    apis.iter().zip(&served).filter(|(_, p)| p.http).map(|(a, _)| *a).collect();
                let linked = one_link(handler, &http_apis, "a `celerity/api` serving `http`", &mut problems);
                match (method, path, linked) {
                    (Some(method), Some(path), Some(_)) => checked_tag(
                        TagKind::Http,
                        format!("{method}::{path}"),
                        name,
                        annotation_field(HTTP_PATH),
                        &mut problems,
                    )
                    .map(|tag| (Kind::Http, tag)),
                    _ => None,
                }
            }
            Some(WEBSOCKET) => {
                let route =
                    handler.required_text(WEBSOCKET_ROUTE, "a WebSocket handler names its route", &mut problems);
                let ws_apis: Vec<(&Resource<'_>, &Protocols)> =
                    apis.iter().zip(&served).filter(|(_, p)| p.websocket).map(|(a, p)| (*a, p)).collect();
                let candidates: Vec<&Resource<'_>> = ws_apis.iter().map(|(a, _)| *a).collect();
                let linked = one_link(handler, &candidates, "a `celerity/api` serving `websocket`", &mut problems);
                match (route, linked) {
                    (Some(route), Some(api)) => {
                        let key = ws_apis
                            .iter()
                            .find(|(a, _)| a.name == api.name)
                            .and_then(|(_, p)| p.route_key.clone())
                            .unwrap_or_else(|| DEFAULT_ROUTE_KEY.to_owned());
                        route_keys.entry(key.clone()).or_default().push(api.name);
                        checked_tag(
                            TagKind::WebSocket,
                            format!("{key}::{route}"),
                            name,
                            annotation_field(WEBSOCKET_ROUTE),
                            &mut problems,
                        )
                        .map(|tag| (Kind::WebSocket, tag))
                    }
                    _ => None,
                }
            }
            Some(CONSUMER_FLAG) => one_link(handler, &consumers, "a `celerity/consumer`", &mut problems)
                .and_then(|consumer| Some((consumer, *source_ids.get(consumer.name)?)))
                .and_then(|(consumer, source)| {
                    let tag = checked_tag(
                        TagKind::Consumer,
                        format!("source::{source}::{name}"),
                        name,
                        annotation_field(CONSUMER_FLAG),
                        &mut problems,
                    )?;
                    if let (Some(queues), Some(reading)) = (fed_by.get(consumer.name), readings.get(consumer.name)) {
                        feeding.push((consumer, queues.clone(), source, *reading, tag.clone()));
                    }
                    Some((Kind::Consumer, tag))
                }),
            Some(_) => one_link(handler, &schedules, "a `celerity/schedule`", &mut problems).and_then(|linked| {
                let expression = expressions.get(linked.name)?;
                schedule =
                    Some(Schedule { expression: (*expression).to_owned(), input: linked.spec_field("input").cloned() });
                checked_tag(
                    TagKind::Schedule,
                    format!("source::{}::{name}", linked.name),
                    name,
                    annotation_field(SCHEDULE_FLAG),
                    &mut problems,
                )
                .map(|tag| (Kind::Schedule, tag))
            }),
            None => checked_tag(TagKind::Custom, format!("custom::{name}"), name, "type".to_owned(), &mut problems)
                .map(|tag| (Kind::Custom, tag)),
        };

        let linked_configs: Vec<&Resource<'_>> = configs.iter().copied().filter(|c| handler.selects(c)).collect();
        if linked_configs.len() > 1 {
            let names: Vec<&str> = linked_configs.iter().map(|c| c.name).collect();
            problems.at(
                name,
                "linkSelector.byLabel",
                format!("links to more than one `celerity/handlerConfig` ({})", names.join(", ")),
            );
        }
        let inherited = Inherited { config: linked_configs.first().copied(), shared };
        let timeout = inherited.resolve(handler, "timeout", &mut problems, seconds).unwrap_or(DEFAULT_TIMEOUT);
        let tracing_enabled = inherited.resolve(handler, "tracingEnabled", &mut problems, boolean).unwrap_or(false);
        let published_name = match handler.spec_field("handlerName") {
            None => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(_) => {
                problems.at(name, "spec.handlerName", "expected text");
                String::new()
            }
        };
        if let Some((kind, tag)) = derived {
            if let Some(other) = handlers.iter().find(|h: &&Handler| h.tag == tag) {
                problems.add(
                    Some(name),
                    None,
                    format!("has the tag `{tag}`, as `{}` has; a tag is served once", other.name),
                );
                continue;
            }
            handlers.push(Handler {
                name: name.to_owned(),
                published_name,
                tag,
                kind,
                timeout,
                tracing_enabled,
                schedule,
            });
        }
    }
    if route_keys.len() > 1 {
        let keys: Vec<String> = route_keys.iter().map(|(key, apis)| format!("`{key}` ({})", apis.join(", "))).collect();
        problems.add(
            None,
            None,
            format!("WebSocket handlers are linked from APIs with different route keys: {}", keys.join(", ")),
        );
    }
    if !problems.0.is_empty() {
        return Err(problems.0);
    }
    let route_key = route_keys.into_keys().next().unwrap_or_else(|| DEFAULT_ROUTE_KEY.to_owned());
    let (feeds, unread) = feeds(feeding, &handlers);
    Ok(Blueprint { handlers, route_key, skipped, resources: Default::default(), feeds, unread })
}

/// How a queue-fed consumer reads: its `spec.batchSize`, `waitTimeSeconds`
/// and `visibilityTimeout`.
#[derive(Debug, Clone, Copy)]
struct QueueReading {
    batch_size: usize,
    wait: Duration,
    visibility_timeout: Duration,
}

impl QueueReading {
    fn read(consumer: &Resource<'_>, problems: &mut Problems) -> QueueReading {
        let mut whole = |field: &str, least: u64| -> Option<u64> {
            let value = consumer.spec_field(field)?;
            match value.as_u64() {
                Some(n) if n >= least => Some(n),
                _ => {
                    problems.at(
                        consumer.name,
                        format!("spec.{field}"),
                        format!("expected a whole number, at least {least}"),
                    );
                    None
                }
            }
        };
        let batch_size = whole("batchSize", 1).map_or(DEFAULT_BATCH_SIZE, |n| usize::try_from(n).unwrap_or(usize::MAX));
        let wait = whole("waitTimeSeconds", 0).map_or(DEFAULT_WAIT, |s| Duration::from_secs(s).max(MIN_WAIT));
        let visibility_timeout = whole("visibilityTimeout", 1).map_or(DEFAULT_VISIBILITY_TIMEOUT, Duration::from_secs);
        QueueReading { batch_size, wait, visibility_timeout }
    }
}

/// The feeds of the queue-fed consumers whose handler is served, and the
/// consumers left unread: one that links to several handlers is routed by
/// the runtime, which the dev runtime does not do.
fn feeds(
    feeding: Vec<(&Resource<'_>, Vec<&str>, &str, QueueReading, String)>,
    handlers: &[Handler],
) -> (Vec<QueueFeed>, Vec<(String, String)>) {
    let mut feeds = Vec::new();
    let mut unread = Vec::new();
    for (consumer, queues, source, reading, tag) in &feeding {
        let siblings: Vec<&str> = feeding.iter().filter(|f| f.0.name == consumer.name).map(|f| f.4.as_str()).collect();
        let Some(handler) = handlers.iter().find(|h| h.tag == *tag) else { continue };
        if siblings.len() > 1 {
            if siblings[0] == tag {
                unread.push((
                    consumer.name.to_owned(),
                    format!(
                        "links to more than one handler ({}), which the runtime routes by `routingKey`; the dev \
                         runtime does not read its queue (push its messages to /dev/consumers instead)",
                        siblings.join(", ")
                    ),
                ));
            }
            continue;
        }
        feeds.push(QueueFeed {
            queues: queues.iter().map(|q| (*q).to_owned()).collect(),
            consumer: consumer.name.to_owned(),
            source_id: (*source).to_owned(),
            handler: handler.name.clone(),
            tag: tag.clone(),
            batch_size: reading.batch_size,
            wait: reading.wait,
            visibility_timeout: reading.visibility_timeout,
        });
    }
    (feeds, unread)
}

#[cfg(test)]
mod tests;
