//! Which of a function's handlers an invocation is for, and the tag it is
//! dispatched to.
//!
//! A function the deployment named one handler for serves that handler
//! with every event of its kind. One that serves several (no
//! `CELERITY_HANDLER_ID`: all of its type, or all the binary has) lets the
//! payload choose, as the Celerity runtime's routing would have:
//!
//! - HTTP: by API Gateway's route key (`GET /orders/{id}`, an HTTP API's;
//!   a REST API's method and resource), else by the method and path against
//!   the handlers' routes, literals before parameters (a `HEAD` is served
//!   by a `GET` route). A path some handlers serve with other methods is
//!   answered `405` with them in `allow`, as under the runtime.
//! - WebSocket: by the route, `{CELERITY_ROUTING_KEY}::{route}`: API
//!   Gateway's route key, and for `$default`, the message's own route (its
//!   JSON field named by the routing key, or a binary frame's route),
//!   falling back to the `$default` handler.
//! - A consumer: by its source, the queue, bucket or table a batch came
//!   from, against the source id of the handlers' tags.
//! - A schedule: by its rule, the EventBridge rule named in the event's
//!   `resources`, against the source id of the handlers' tags.
//! - A custom handler: by the `handlerName` of a payload
//!   `{"handlerName": "...", "payload": ...}` (the runtime's local invoke
//!   body), whose `payload` is then the input.
//!
//! An event no handler fits is a Lambda error saying what arrived and what
//! the function serves.

use bytes::Bytes;
use celerity_tags::parse_tag;
use celerity_tags::route::{NoMatch, Router};
use serde_json::Value;

use super::events::{self, route_template, source_id};
use super::form::Form;
use super::function::{Served, handler_ids};
use crate::kind::HandlerKind;
use crate::registry::{HandlerKey, Registration, tag_kind};
use crate::websocket::frame;

/// What an invocation is for.
#[derive(Debug)]
pub(crate) enum Choice {
    /// A handler, the tag it is dispatched to, and, for a custom envelope,
    /// the input it carries.
    Handler { registration: Box<Registration>, tag: String, input: Option<Bytes> },
    /// An HTTP request for a route served only with other methods.
    MethodNotAllowed { method: String, allowed: Vec<String> },
    /// No handler of the function fits: what arrived, and what it serves.
    Unserved(String),
}

/// The handler of `served` that an event of `form`, whose payload is
/// `json` (`raw` as sent), is for.
pub(crate) fn choose(served: &Served, form: Form, json: Option<&Value>, raw: &Bytes) -> Choice {
    let candidates: Vec<&Registration> = served.handlers.iter().filter(|r| r.kind == form.kind()).collect();
    let arrived = Arrived::of(form, json, raw, &served.routing_key);
    if candidates.is_empty() {
        return unserved(&arrived, &served.handlers);
    }
    if let [only] = candidates.as_slice()
        && (served.named || !matches!(form.kind(), HandlerKind::Custom) || arrived.handler_name.is_none())
    {
        return one(served, only, &arrived);
    }
    let chosen = match form.kind() {
        HandlerKind::Http => return http(&candidates, &arrived),
        HandlerKind::WebSocket => {
            // The first of its routes a handler is bound to.
            let first = arrived.routes.iter().find(|route| by_tag(&candidates, |tag| tag == *route).is_ok());
            by_tag(&candidates, |tag| first.is_some_and(|route| route == tag))
        }
        HandlerKind::Consumer | HandlerKind::Schedule => {
            // The first of its names a handler is bound to.
            let first = arrived
                .sources
                .iter()
                .find(|name| by_tag(&candidates, |tag| source_id(tag) == Some(name.as_str())).is_ok());
            by_tag(&candidates, |tag| first.is_some_and(|name| source_id(tag) == Some(name.as_str())))
        }
        HandlerKind::Custom => custom(&candidates, &arrived),
    };
    match chosen {
        Ok(registration) => handler(served, registration, &arrived),
        Err(Ambiguity::None) => unserved(&arrived, &served.handlers),
        Err(Ambiguity::Several(several)) => Choice::Unserved(format!(
            "{} fits several handlers of this function ({}), and an event goes to one",
            arrived.what,
            list(&several)
        )),
    }
}

/// What the payload says about where it is going.
struct Arrived {
    form: Form,
    /// For messages: what it is and where from.
    what: String,
    /// HTTP: the method, the route key's template (none for `$default`),
    /// the paths to route (raw, then without the stage).
    method: String,
    template: Option<String>,
    paths: Vec<String>,
    /// WebSocket: the tags it may be for, in order; the route key.
    routes: Vec<String>,
    route_key: String,
    /// A consumer's or schedule's source: queue, bucket, table, rule.
    sources: Vec<String>,
    /// A custom envelope's handler name and payload.
    handler_name: Option<String>,
    envelope_input: Option<Bytes>,
}

impl Arrived {
    fn of(form: Form, json: Option<&Value>, raw: &Bytes, routing_key: &str) -> Arrived {
        let text = |pointer: &str| json.and_then(|json| json.pointer(pointer)).and_then(Value::as_str);
        let mut arrived = Arrived {
            form,
            what: form.describe().to_string(),
            method: String::new(),
            template: None,
            paths: Vec::new(),
            routes: Vec::new(),
            route_key: String::new(),
            sources: Vec::new(),
            handler_name: None,
            envelope_input: None,
        };
        match form {
            Form::HttpV2 | Form::HttpV1 => {
                let v2 = form == Form::HttpV2;
                let method = if v2 { text("/requestContext/http/method") } else { text("/httpMethod") };
                arrived.method = method.unwrap_or_default().to_ascii_uppercase();
                let path = if v2 { text("/rawPath").or(text("/requestContext/http/path")) } else { text("/path") };
                let path = path.unwrap_or("/").to_string();
                let route_key =
                    if v2 { text("/routeKey").unwrap_or("$default") } else { text("/resource").unwrap_or("") };
                arrived.template = route_template(route_key, v2);
                arrived.what = format!("{} {} {path} (route key {route_key:?})", arrived.what, arrived.method);
                let stage = text("/requestContext/stage").filter(|stage| !stage.is_empty() && *stage != "$default");
                let unstaged = stage.and_then(|stage| path.strip_prefix(&format!("/{stage}"))).map(str::to_string);
                arrived.paths.push(path);
                arrived.paths.extend(unstaged.filter(|rest| rest.starts_with('/')));
            }
            Form::WebSocket => {
                let route_key = text("/requestContext/routeKey").unwrap_or("$default").to_string();
                let mut routes = Vec::new();
                if route_key == "$default" {
                    routes.extend(message_route(json, raw_body(json).as_ref(), routing_key));
                }
                routes.push(route_key.clone());
                if !routes.iter().any(|route| route == "$default") {
                    routes.push("$default".to_string());
                }
                arrived.what = format!("{} on the route {route_key:?}", arrived.what);
                arrived.routes = routes.iter().map(|route| format!("{routing_key}::{route}")).collect();
                arrived.route_key = route_key;
            }
            Form::Queue | Form::Bucket | Form::Stream => {
                arrived.sources = events::source_names(form, json);
                if let Some(source) = arrived.sources.first() {
                    arrived.what = format!("{} from {source:?}", arrived.what);
                }
            }
            Form::Schedule => {
                arrived.sources.extend(text("/resources/0").and_then(rule_name).map(str::to_string));
                arrived.what = match arrived.sources.first() {
                    Some(rule) => format!("{} of the rule {rule:?}", arrived.what),
                    None => "a schedule's input naming no rule".to_string(),
                };
            }
            Form::Custom => {
                let name = text("/handlerName").map(str::to_string);
                if let Some(name) = &name {
                    let input = json.and_then(|json| json.get("payload")).map_or(Value::Null, Value::clone);
                    arrived.envelope_input = Some(Bytes::from(serde_json::to_vec(&input).unwrap_or_default()));
                    arrived.what = format!("a direct invocation for the handler {name:?}");
                } else if json.is_none() && !raw.is_empty() {
                    arrived.what = "a direct invocation whose payload is not JSON".to_string();
                } else {
                    arrived.what = "a direct invocation naming no handlerName".to_string();
                }
                arrived.handler_name = name;
            }
        }
        arrived
    }
}

/// A WebSocket message's own route: the binary frame's, or the JSON
/// message's field `routing_key`.
fn message_route(json: Option<&Value>, body: Option<&Bytes>, routing_key: &str) -> Option<String> {
    let base64 = json.and_then(|json| json.get("isBase64Encoded")).and_then(Value::as_bool).unwrap_or(false);
    let body = body?;
    if base64 {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD.decode(body).ok()?;
        return frame::decode(Bytes::from(bytes)).ok().map(|message| message.route);
    }
    let message: Value = serde_json::from_slice(body).ok()?;
    message.get(routing_key).and_then(Value::as_str).map(str::to_string)
}

fn raw_body(json: Option<&Value>) -> Option<Bytes> {
    json?.get("body")?.as_str().map(|body| Bytes::copy_from_slice(body.as_bytes()))
}

/// The rule of an EventBridge event's resource ARN:
/// `arn:aws:events:{region}:{account}:rule/[{bus}/]{name}`, or an
/// EventBridge Scheduler schedule's `schedule/{group}/{name}`.
fn rule_name(arn: &str) -> Option<&str> {
    let resource = arn.splitn(6, ':').nth(5)?;
    let (kind, rest) = resource.split_once('/')?;
    matches!(kind, "rule" | "schedule").then(|| rest.rsplit('/').next().unwrap_or(rest))
}

enum Ambiguity<'a> {
    None,
    Several(Vec<&'a Registration>),
}

/// The one candidate bound to a tag `fits` takes.
fn by_tag<'a>(candidates: &[&'a Registration], fits: impl Fn(&str) -> bool) -> Result<&'a Registration, Ambiguity<'a>> {
    let fitting: Vec<&Registration> =
        candidates.iter().copied().filter(|r| matches!(&r.key, HandlerKey::Tag(tag) if fits(tag))).collect();
    match fitting.as_slice() {
        [only] => Ok(only),
        [] => Err(Ambiguity::None),
        _ => Err(Ambiguity::Several(fitting)),
    }
}

fn custom<'a>(candidates: &[&'a Registration], arrived: &Arrived) -> Result<&'a Registration, Ambiguity<'a>> {
    let Some(name) = &arrived.handler_name else { return Err(Ambiguity::None) };
    let fitting: Vec<&Registration> =
        candidates.iter().copied().filter(|r| handler_ids(r).iter().any(|id| id == name)).collect();
    match fitting.as_slice() {
        [only] => Ok(only),
        [] => Err(Ambiguity::None),
        _ => Err(Ambiguity::Several(fitting)),
    }
}

fn http(candidates: &[&Registration], arrived: &Arrived) -> Choice {
    let tags: Vec<&str> = candidates
        .iter()
        .filter_map(|r| match &r.key {
            HandlerKey::Tag(tag) => Some(tag.as_str()),
            HandlerKey::Name(_) => None,
        })
        .collect();
    let by_tag = |tag: &str| candidates.iter().copied().find(|r| matches!(&r.key, HandlerKey::Tag(t) if t == tag));
    let method = arrived.method.as_str();
    let methods: &[&str] = if method == "HEAD" { &["HEAD", "GET"] } else { std::slice::from_ref(&method) };
    if let Some(template) = &arrived.template {
        for method in methods {
            let tag = format!("{method}::{template}");
            if let Some(found) = by_tag(&tag) {
                return chosen(found, &tag);
            }
        }
    }
    let router = Router::new(tags.iter().copied());
    let mut allowed = Vec::new();
    for path in &arrived.paths {
        for method in methods {
            match router.route(method, path) {
                Ok(matched) => {
                    if let Some(found) = by_tag(matched.route.tag()) {
                        return chosen(found, matched.route.tag());
                    }
                }
                Err(NoMatch::MethodNotAllowed(methods)) => allowed.extend(methods),
                Err(NoMatch::NotFound) => {}
            }
        }
    }
    if !allowed.is_empty() {
        allowed.dedup();
        return Choice::MethodNotAllowed { method: arrived.method.clone(), allowed };
    }
    Choice::Unserved(format!("{}, and this function serves {}", arrived.what, list(candidates)))
}

fn chosen(registration: &Registration, tag: &str) -> Choice {
    Choice::Handler { registration: Box::new(registration.clone()), tag: tag.to_string(), input: None }
}

/// The function's one handler of the event's kind: it serves the event,
/// with the method its route allows.
fn one(served: &Served, registration: &Registration, arrived: &Arrived) -> Choice {
    if let (HandlerKind::Http, HandlerKey::Tag(tag)) = (registration.kind, &registration.key) {
        let served_method = tag.split_once("::").map_or("", |(method, _)| method);
        let method = arrived.method.as_str();
        if method != served_method && !(method == "HEAD" && served_method == "GET") {
            return Choice::MethodNotAllowed { method: method.to_string(), allowed: vec![served_method.to_string()] };
        }
    }
    handler(served, registration, arrived)
}

/// `registration` for the event: its tag, or, bound by name, the tag the
/// runtime would have given it, from the deployment's tag or the event.
fn handler(served: &Served, registration: &Registration, arrived: &Arrived) -> Choice {
    let name = match &registration.key {
        HandlerKey::Tag(tag) => {
            let input = envelope_input(registration, arrived);
            return Choice::Handler { registration: Box::new(registration.clone()), tag: tag.clone(), input };
        }
        HandlerKey::Name(name) => name,
    };
    let kind = tag_kind(registration.kind);
    let given = served.tag.as_deref().and_then(|tag| parse_tag(kind, tag).ok()).map(|normal| normal.tag);
    let tag = given.unwrap_or_else(|| match registration.kind {
        HandlerKind::Http => {
            let template = arrived.template.clone().or_else(|| arrived.paths.first().cloned()).unwrap_or_default();
            format!("{}::{template}", arrived.method)
        }
        HandlerKind::WebSocket => format!("{}::{}", served.routing_key, arrived.route_key),
        HandlerKind::Consumer | HandlerKind::Schedule => {
            let source = served.tag.as_deref().map(|tag| tag.strip_prefix("source::").unwrap_or(tag).to_string());
            let source = source.or_else(|| arrived.sources.last().cloned());
            format!("source::{}::{name}", source.unwrap_or_else(|| name.clone()))
        }
        HandlerKind::Custom => format!("custom::{name}"),
    });
    let input = envelope_input(registration, arrived);
    Choice::Handler { registration: Box::new(registration.clone()), tag, input }
}

/// A custom envelope's payload, when the envelope names `registration`:
/// any other payload is the input as sent.
fn envelope_input(registration: &Registration, arrived: &Arrived) -> Option<Bytes> {
    let name = arrived.handler_name.as_ref().filter(|_| arrived.form == Form::Custom)?;
    handler_ids(registration).iter().any(|id| id == name).then(|| arrived.envelope_input.clone()).flatten()
}

fn unserved(arrived: &Arrived, handlers: &[Registration]) -> Choice {
    let all: Vec<&Registration> = handlers.iter().collect();
    Choice::Unserved(format!("{}, and this function serves {}", arrived.what, list(&all)))
}

fn list(registrations: &[&Registration]) -> String {
    let each: Vec<String> = registrations.iter().map(|r| format!("{} ({})", r.key, r.kind.as_str())).collect();
    each.join(", ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::lambda::function::{FunctionEnv, resolve};

    async fn handler() {}

    fn registrations() -> Vec<Registration> {
        vec![
            Registration::http(HandlerKey::Tag("GET::/orders".into()), handler),
            Registration::http(HandlerKey::Tag("POST::/orders".into()), handler),
            Registration::http(HandlerKey::Tag("GET::/orders/{id}".into()), handler),
            Registration::http(HandlerKey::Tag("GET::/orders/recent".into()), handler),
            Registration::websocket(HandlerKey::Tag("event::$connect".into()), handler),
            Registration::websocket(HandlerKey::Tag("event::subscribe".into()), handler),
            Registration::websocket(HandlerKey::Tag("event::$default".into()), handler),
            Registration::consumer(HandlerKey::Tag("source::order-events::process".into()), handler),
            Registration::consumer(HandlerKey::Tag("source::invoices::archive".into()), handler),
            Registration::schedule(HandlerKey::Tag("source::nightly::cleanup".into()), handler),
            Registration::schedule(HandlerKey::Tag("source::hourly::report".into()), handler),
            Registration::custom(HandlerKey::Tag("custom::quote".into()), handler),
            Registration::custom(HandlerKey::Tag("custom::reindex".into()), handler),
        ]
    }

    fn served(vars: &[(&str, &str)]) -> Served {
        let env = FunctionEnv::from_lookup(|name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string()));
        resolve(&registrations(), &env.unwrap()).unwrap()
    }

    fn tag_of(served: &Served, payload: Value) -> Result<String, String> {
        let form = served
            .kind
            .and_then(|kind| Form::for_kind(kind, Some(&payload)))
            .unwrap_or_else(|| crate::lambda::form::detect(Some(&payload)));
        match choose(served, form, Some(&payload), &Bytes::new()) {
            Choice::Handler { tag, .. } => Ok(tag),
            Choice::MethodNotAllowed { allowed, .. } => Err(format!("405 {}", allowed.join(","))),
            Choice::Unserved(why) => Err(why),
        }
    }

    fn http_api(route_key: &str, method: &str, path: &str) -> Value {
        json!({"version": "2.0", "routeKey": route_key, "rawPath": path,
               "requestContext": {"http": {"method": method, "path": path}, "stage": "$default"}})
    }

    #[test]
    fn http_goes_by_route_key_else_by_method_and_path() {
        let all = served(&[("CELERITY_HANDLER_TYPE", "http")]);
        assert_eq!(tag_of(&all, http_api("GET /orders/{id}", "GET", "/orders/7")), Ok("GET::/orders/{id}".into()));
        assert_eq!(tag_of(&all, http_api("$default", "GET", "/orders/recent")), Ok("GET::/orders/recent".into()));
        assert_eq!(tag_of(&all, http_api("$default", "POST", "/orders")), Ok("POST::/orders".into()));
        assert_eq!(tag_of(&all, http_api("ANY /orders", "HEAD", "/orders")), Ok("GET::/orders".into()));
        assert_eq!(tag_of(&all, http_api("$default", "DELETE", "/orders")), Err("405 GET,POST".into()));
        let why = tag_of(&all, http_api("$default", "GET", "/nowhere")).unwrap_err();
        assert!(why.contains("GET /nowhere") && why.contains("GET::/orders/{id} (http)"), "{why}");
        // A REST API's resource, and a named stage in the path.
        let rest = json!({"resource": "/orders/{id}", "path": "/orders/7", "httpMethod": "GET",
                          "requestContext": {"stage": "prod"}});
        assert_eq!(tag_of(&all, rest), Ok("GET::/orders/{id}".into()));
        let mut staged = http_api("$default", "GET", "/prod/orders/7");
        staged["requestContext"]["stage"] = json!("prod");
        assert_eq!(tag_of(&all, staged), Ok("GET::/orders/{id}".into()));
    }

    #[test]
    fn websocket_goes_by_route_then_the_messages_own_then_default() {
        let all = served(&[]);
        let ws = |route_key: &str, body: Value| {
            json!({"requestContext": {"routeKey": route_key, "eventType": "MESSAGE", "connectionId": "c"},
                   "body": body.to_string(), "isBase64Encoded": false})
        };
        assert_eq!(tag_of(&all, ws("$connect", json!(null))), Ok("event::$connect".into()));
        assert_eq!(tag_of(&all, ws("subscribe", json!({}))), Ok("event::subscribe".into()));
        assert_eq!(tag_of(&all, ws("$default", json!({"event": "subscribe"}))), Ok("event::subscribe".into()));
        assert_eq!(tag_of(&all, ws("$default", json!({"event": "other"}))), Ok("event::$default".into()));
        let keyed = served(&[("CELERITY_ROUTING_KEY", "action")]);
        let why = tag_of(&keyed, ws("$default", json!({"action": "subscribe"}))).unwrap_err();
        assert!(why.contains("WebSocket event on the route \"$default\""), "{why}");
    }

    #[test]
    fn consumers_go_by_source_and_schedules_by_rule() {
        let all = served(&[]);
        let sqs = json!({"Records": [{"eventSource": "aws:sqs", "messageId": "m",
                                      "eventSourceARN": "arn:aws:sqs:eu-west-1:1:order-events"}]});
        assert_eq!(tag_of(&all, sqs), Ok("source::order-events::process".into()));
        let s3 = json!({"Records": [{"eventSource": "aws:s3", "s3": {"bucket": {"name": "invoices"}}}]});
        assert_eq!(tag_of(&all, s3), Ok("source::invoices::archive".into()));
        let elsewhere = json!({"Records": [{"eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:r:1:other"}]});
        assert!(tag_of(&all, elsewhere).unwrap_err().starts_with("an SQS batch from \"other\""));
        let rule = |arn: &str| json!({"source": "aws.events", "detail-type": "Scheduled Event", "resources": [arn]});
        assert_eq!(tag_of(&all, rule("arn:aws:events:r:1:rule/nightly")), Ok("source::nightly::cleanup".into()));
        assert_eq!(
            tag_of(&all, rule("arn:aws:scheduler:r:1:schedule/default/hourly")),
            Ok("source::hourly::report".into())
        );
        let constant = served(&[("CELERITY_HANDLER_TYPE", "schedule")]);
        let why = tag_of(&constant, json!({"olderThanSeconds": 0})).unwrap_err();
        assert!(why.starts_with("a schedule's input naming no rule"), "{why}");
    }

    #[test]
    fn a_custom_invocation_goes_by_its_handler_name_and_carries_its_payload() {
        let customs = served(&[("CELERITY_HANDLER_TYPE", "custom")]);
        let payload = json!({"handlerName": "reindex", "payload": {"full": true}});
        match choose(&customs, Form::Custom, Some(&payload), &Bytes::new()) {
            Choice::Handler { tag, input, .. } => {
                assert_eq!(tag, "custom::reindex");
                assert_eq!(input.as_deref(), Some(&br#"{"full":true}"#[..]));
            }
            other => panic!("{other:?}"),
        }
        let why = tag_of(&customs, json!({"items": []})).unwrap_err();
        assert!(why.contains("naming no handlerName") && why.contains("custom::quote (custom)"), "{why}");
    }

    #[test]
    fn a_named_handler_takes_its_kinds_events_and_an_event_of_another_kind_is_unserved() {
        let quote = served(&[("CELERITY_HANDLER_ID", "quote")]);
        assert_eq!(tag_of(&quote, json!({"handlerName": "reindex"})), Ok("custom::quote".into()));
        // An envelope naming another handler is this one's input as sent.
        let other = json!({"handlerName": "reindex", "payload": 1});
        let Choice::Handler { input, .. } = choose(&quote, Form::Custom, Some(&other), &Bytes::new()) else { panic!() };
        assert_eq!(input, None);
        let get = served(&[("CELERITY_HANDLER_TAG", "GET::/orders/{id}")]);
        assert_eq!(tag_of(&get, http_api("$default", "GET", "/anything")), Ok("GET::/orders/{id}".into()));
        assert_eq!(tag_of(&get, http_api("$default", "PUT", "/orders/1")), Err("405 GET".into()));
        let why = tag_of(&get, json!({"Records": [{"eventSource": "aws:sqs"}]})).unwrap_err();
        assert!(why.starts_with("an SQS batch") && why.contains("GET::/orders/{id} (http)"), "{why}");
    }

    #[test]
    fn a_name_bound_handler_takes_its_tag_from_the_deployment_or_the_event() {
        let registrations = vec![
            Registration::consumer(HandlerKey::Name("audit".into()), handler),
            Registration::http(HandlerKey::Name("getOrder".into()), handler),
        ];
        let served = |vars: &[(&str, &str)]| {
            let env = FunctionEnv::from_lookup(|n| vars.iter().find(|(k, _)| *k == n).map(|(_, v)| v.to_string()));
            resolve(&registrations, &env.unwrap()).unwrap()
        };
        let sqs = json!({"Records": [{"eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:r:1:q-1"}]});
        assert_eq!(tag_of(&served(&[("CELERITY_HANDLER_ID", "audit")]), sqs.clone()), Ok("source::q-1::audit".into()));
        let tagged = served(&[("CELERITY_HANDLER_ID", "audit"), ("CELERITY_HANDLER_TAG", "order-audit")]);
        assert_eq!(tag_of(&tagged, sqs), Ok("source::order-audit::audit".into()));
        let get = served(&[("CELERITY_HANDLER_ID", "getOrder")]);
        assert_eq!(tag_of(&get, http_api("GET /orders/{id}", "GET", "/orders/1")), Ok("GET::/orders/{id}".into()));
    }
}
