//! What a Lambda function serves, read at cold start from what a Celerity
//! deployment sets on it:
//!
//! - `CELERITY_HANDLER_ID`: the blueprint handler's `spec.handler`, verbatim;
//! - `CELERITY_HANDLER_TYPE`: the kind of its events;
//! - `CELERITY_HANDLER_TAG`: a consumer's or a schedule's route, when set;
//! - `CELERITY_ROUTING_KEY`: the field of a WebSocket message that names
//!   its route (`event` when unset).
//!
//! An id names a handler in one of these ways (see [`handler_ids`]): by the
//! name it is bound to (`name = "..."`), by the name its tag ends in
//! (`source::orders-queue::processOrders`, `custom::quoteOrder`), by its
//! function's name in the blueprint's lowerCamelCase (`get_order` is
//! `getOrder`), or by its function's Rust path as the manifest prints it
//! (`orders::http::get_order`), of which the leading modules may be left
//! out (`http::get_order`) and which may be written with `.` for `::`, as
//! the contract's `moduleName.exportName`. An id that names no handler, or
//! handlers of several functions, stops the function at init, saying what
//! the binary has.
//!
//! Without an id (or a tag naming one), the function serves every handler
//! of its type (every handler, when the type is unset too), and each
//! invocation's payload chooses among them (see `route`).

use std::fmt;

use celerity_tags::parse_tag;

use crate::kind::HandlerKind;
use crate::registry::{HandlerKey, Registration, tag_kind};

/// The route field of a WebSocket message when `CELERITY_ROUTING_KEY` is
/// not set.
pub(crate) const DEFAULT_ROUTING_KEY: &str = "event";

/// What the deployment set on the function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FunctionEnv {
    /// `CELERITY_HANDLER_ID`.
    pub(crate) id: Option<String>,
    /// `CELERITY_HANDLER_TAG`.
    pub(crate) tag: Option<String>,
    /// `CELERITY_HANDLER_TYPE`.
    pub(crate) kind: Option<HandlerKind>,
    /// `CELERITY_ROUTING_KEY`, or `event`.
    pub(crate) routing_key: String,
}

impl FunctionEnv {
    /// Reads the variables through `lookup`; an unknown
    /// `CELERITY_HANDLER_TYPE` is an error naming the five that exist.
    pub(crate) fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, FunctionError> {
        let set = |name: &str| lookup(name).map(|value| value.trim().to_string()).filter(|value| !value.is_empty());
        let kind = match set("CELERITY_HANDLER_TYPE") {
            None => None,
            Some(value) => Some(kind_named(&value).ok_or(FunctionError::UnknownType(value))?),
        };
        Ok(FunctionEnv {
            id: set("CELERITY_HANDLER_ID"),
            tag: set("CELERITY_HANDLER_TAG"),
            kind,
            routing_key: set("CELERITY_ROUTING_KEY").unwrap_or_else(|| DEFAULT_ROUTING_KEY.to_string()),
        })
    }
}

fn kind_named(name: &str) -> Option<HandlerKind> {
    [HandlerKind::Http, HandlerKind::WebSocket, HandlerKind::Consumer, HandlerKind::Schedule, HandlerKind::Custom]
        .into_iter()
        .find(|kind| kind.as_str().eq_ignore_ascii_case(name))
}

/// The handlers a function serves.
#[derive(Debug, Clone)]
pub(crate) struct Served {
    /// Those the payload chooses among: one, when the deployment named it.
    pub(crate) handlers: Vec<Registration>,
    /// Whether the deployment named them (by id or tag), rather than each
    /// payload finding its own among the binary's.
    pub(crate) named: bool,
    /// The kind of the function's events, when it is known before a payload
    /// arrives: `CELERITY_HANDLER_TYPE`, or the named handler's.
    pub(crate) kind: Option<HandlerKind>,
    /// `CELERITY_HANDLER_TAG`, which also gives a handler bound by name its
    /// tag.
    pub(crate) tag: Option<String>,
    pub(crate) routing_key: String,
}

/// Why a function's handler cannot be found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FunctionError {
    /// `CELERITY_HANDLER_TYPE` is not a kind.
    UnknownType(String),
    /// The id or tag names no handler of this binary.
    NotFound { variable: &'static str, value: String, available: String },
    /// The id or tag names handlers of several functions.
    Several { variable: &'static str, value: String, named: String, available: String },
    /// The handler named serves another kind than the function is for.
    WrongKind { handler: String, kind: HandlerKind, expected: HandlerKind },
    /// The function is for a kind the binary has no handler of.
    NoneOfKind { kind: HandlerKind, available: String },
    /// The binary has no handlers at all.
    Empty,
}

impl fmt::Display for FunctionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FunctionError::UnknownType(value) => write!(
                f,
                "CELERITY_HANDLER_TYPE={value:?} is not a kind of handler: it is one of http, websocket, consumer, \
                 schedule or custom"
            ),
            FunctionError::NotFound { variable, value, available } => write!(
                f,
                "{variable}={value:?} names no handler of this binary (an id is a handler's blueprint name, the \
                 name its tag ends in, or its function's path as `--manifest` prints it as `handlerId`); it has \
                 {available}"
            ),
            FunctionError::Several { variable, value, named, available } => write!(
                f,
                "{variable}={value:?} names several handlers ({named}), and a function serves one: give its full \
                 `handlerId` from `--manifest`; this binary has {available}"
            ),
            FunctionError::WrongKind { handler, kind, expected } => write!(
                f,
                "the handler {handler} serves {kind} events, but CELERITY_HANDLER_TYPE says this function is for {} \
                 events",
                expected.as_str()
            ),
            FunctionError::NoneOfKind { kind, available } => write!(
                f,
                "CELERITY_HANDLER_TYPE says this function is for {} events, and this binary has no {kind} handler; \
                 it has {available}",
                kind.as_str()
            ),
            FunctionError::Empty => {
                f.write_str("this binary registers no handlers, so a function of it serves nothing")
            }
        }
    }
}

impl std::error::Error for FunctionError {}

/// What `env` says the function serves among `registrations`.
pub(crate) fn resolve(registrations: &[Registration], env: &FunctionEnv) -> Result<Served, FunctionError> {
    if registrations.is_empty() {
        return Err(FunctionError::Empty);
    }
    let served = |handlers: Vec<Registration>, named: bool| {
        let kind = env.kind.or_else(|| named.then(|| handlers[0].kind));
        Served { handlers, named, kind, tag: env.tag.clone(), routing_key: env.routing_key.clone() }
    };
    if let Some(id) = &env.id {
        let named = one_handler(registrations, "CELERITY_HANDLER_ID", id, |r| handler_ids(r).iter().any(|n| n == id))?;
        return checked_kind(named, env.kind).map(|handlers| served(handlers, true));
    }
    if let Some(tag) = &env.tag {
        let named = one_handler(registrations, "CELERITY_HANDLER_TAG", tag, |r| tag_names(r, tag))?;
        return checked_kind(named, env.kind).map(|handlers| served(handlers, true));
    }
    let handlers: Vec<Registration> =
        registrations.iter().filter(|r| env.kind.is_none_or(|kind| r.kind == kind)).cloned().collect();
    match (handlers.is_empty(), env.kind) {
        (true, Some(kind)) => Err(FunctionError::NoneOfKind { kind, available: available(registrations) }),
        _ => Ok(served(handlers, false)),
    }
}

/// The registrations `matches` picks, when they are one handler: one
/// registration, or the several of one service registered for several
/// tags (an axum `Router`), which the payload then chooses among.
fn one_handler(
    registrations: &[Registration],
    variable: &'static str,
    value: &str,
    matches: impl Fn(&Registration) -> bool,
) -> Result<Vec<Registration>, FunctionError> {
    let found: Vec<Registration> = registrations.iter().filter(|r| matches(r)).cloned().collect();
    let Some(first) = found.first() else {
        return Err(FunctionError::NotFound {
            variable,
            value: value.to_string(),
            available: available(registrations),
        });
    };
    let one = found.iter().all(|r| r.origin.function == first.origin.function && r.kind == first.kind);
    if !one {
        return Err(FunctionError::Several {
            variable,
            value: value.to_string(),
            named: describe(&found),
            available: available(registrations),
        });
    }
    Ok(found)
}

fn checked_kind(
    handlers: Vec<Registration>,
    expected: Option<HandlerKind>,
) -> Result<Vec<Registration>, FunctionError> {
    match expected {
        Some(expected) if handlers[0].kind != expected => Err(FunctionError::WrongKind {
            handler: format!("{} ({})", handlers[0].origin.function, handlers[0].key),
            kind: handlers[0].kind,
            expected,
        }),
        _ => Ok(handlers),
    }
}

/// Every id that names `registration`, in the order of the module docs:
/// its bound name, the name its tag ends in, its function's name in
/// lowerCamelCase, and its function's path with each shorter form of it.
pub(crate) fn handler_ids(registration: &Registration) -> Vec<String> {
    let mut ids = Vec::new();
    match &registration.key {
        HandlerKey::Name(name) => ids.push(name.clone()),
        HandlerKey::Tag(tag) => ids.extend(tag_name(registration.kind, tag).map(str::to_string)),
    }
    let path = registration.origin.function;
    let segments: Vec<&str> = path.split("::").collect();
    if let Some(last) = segments.last() {
        ids.push(camel_case(last));
    }
    for start in 0..segments.len() {
        let rest = &segments[start..];
        ids.push(rest.join("::"));
        if rest.len() > 1 {
            ids.push(rest.join("."));
        }
    }
    ids.dedup();
    ids
}

/// The handler name a tag ends in: `source::{id}::{name}` and
/// `custom::{name}`. HTTP and WebSocket tags carry none.
fn tag_name(kind: HandlerKind, tag: &str) -> Option<&str> {
    match kind {
        HandlerKind::Consumer | HandlerKind::Schedule => tag.strip_prefix("source::")?.split_once("::").map(|(_, n)| n),
        HandlerKind::Custom => tag.strip_prefix("custom::"),
        HandlerKind::Http | HandlerKind::WebSocket => None,
    }
}

/// Whether a deployment's `CELERITY_HANDLER_TAG` names `registration`:
/// its tag (in either form of a catch-all), or, for a consumer or a
/// schedule, its source (`source::{id}` or `{id}`).
fn tag_names(registration: &Registration, tag: &str) -> bool {
    let HandlerKey::Tag(registered) = &registration.key else { return false };
    let normal = parse_tag(tag_kind(registration.kind), tag).map_or_else(|_| tag.to_string(), |normal| normal.tag);
    if *registered == normal {
        return true;
    }
    let source = tag.strip_prefix("source::").unwrap_or(tag);
    matches!(registration.kind, HandlerKind::Consumer | HandlerKind::Schedule)
        && !source.contains("::")
        && crate::lambda::events::source_id(registered) == Some(source)
}

/// `snake_case` as `lowerCamelCase`: how a blueprint names the resource of
/// a Rust function.
fn camel_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for ch in name.trim_start_matches('_').chars() {
        if ch == '_' {
            upper = !out.is_empty();
        } else if upper {
            out.extend(ch.to_uppercase());
            upper = false;
        } else {
            out.push(ch);
        }
    }
    out
}

fn describe(registrations: &[Registration]) -> String {
    let each: Vec<String> = registrations
        .iter()
        .map(|r| format!("{} ({} handler {})", r.key, r.kind.as_str(), r.origin.function))
        .collect();
    each.join(", ")
}

/// The handlers of a binary, for an error that names them.
pub(crate) fn available(registrations: &[Registration]) -> String {
    if registrations.is_empty() { "no handlers at all".to_string() } else { describe(registrations) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Origin;

    async fn handler() {}

    fn at(registration: Registration, function: &'static str) -> Registration {
        registration.origin(Origin { function, file: "src/main.rs", line: 1 })
    }

    fn registrations() -> Vec<Registration> {
        vec![
            at(Registration::http(HandlerKey::Tag("GET::/orders/{id}".into()), handler), "orders::http::get_order"),
            at(Registration::http(HandlerKey::Tag("POST::/orders".into()), handler), "orders::http::create_order"),
            at(
                Registration::schedule(HandlerKey::Tag("source::nightly::cleanupOrders".into()), handler),
                "orders::cleanup::cleanup_orders",
            ),
            at(Registration::custom(HandlerKey::Tag("custom::quoteOrder".into()), handler), "orders::quote::quote"),
            at(Registration::consumer(HandlerKey::Name("auditOrders".into()), handler), "orders::events::audit"),
            at(Registration::custom(HandlerKey::Tag("custom::reindex".into()), handler), "orders::admin::get_order"),
        ]
    }

    fn env(id: Option<&str>, tag: Option<&str>, kind: Option<&str>) -> FunctionEnv {
        FunctionEnv::from_lookup(|name| match name {
            "CELERITY_HANDLER_ID" => id.map(str::to_string),
            "CELERITY_HANDLER_TAG" => tag.map(str::to_string),
            "CELERITY_HANDLER_TYPE" => kind.map(str::to_string),
            _ => None,
        })
        .unwrap()
    }

    fn one(served: Result<Served, FunctionError>) -> String {
        let served = served.unwrap_or_else(|error| panic!("expected a handler: {error}"));
        assert!(served.named && served.handlers.len() == 1, "{served:?}");
        served.handlers[0].origin.function.to_string()
    }

    #[test]
    fn an_id_is_a_bound_name_a_tags_name_a_camel_case_function_name_or_a_path() {
        let all = registrations();
        let id = |id: &str, kind: Option<&str>| one(resolve(&all, &env(Some(id), None, kind)));
        assert_eq!(id("quoteOrder", Some("custom")), "orders::quote::quote");
        assert_eq!(id("cleanupOrders", None), "orders::cleanup::cleanup_orders");
        assert_eq!(id("auditOrders", Some("consumer")), "orders::events::audit");
        assert_eq!(id("createOrder", Some("http")), "orders::http::create_order");
        assert_eq!(id("orders::http::get_order", None), "orders::http::get_order");
        assert_eq!(id("http::get_order", Some("http")), "orders::http::get_order");
        assert_eq!(id("http.get_order", None), "orders::http::get_order");
        assert_eq!(id("orders.quote.quote", None), "orders::quote::quote");
    }

    #[test]
    fn an_id_naming_nothing_or_several_fails_listing_what_there_is() {
        let all = registrations();
        let error = resolve(&all, &env(Some("shipOrder"), None, Some("http"))).unwrap_err();
        let text = error.to_string();
        assert!(text.starts_with("CELERITY_HANDLER_ID=\"shipOrder\" names no handler"), "{text}");
        assert!(text.contains("GET::/orders/{id} (http handler orders::http::get_order)"), "{text}");
        // `getOrder` and `get_order` are two functions' names here.
        for id in ["getOrder", "get_order"] {
            let error = resolve(&all, &env(Some(id), None, None)).unwrap_err();
            assert!(matches!(error, FunctionError::Several { .. }), "{error}");
            let text = error.to_string();
            assert!(text.contains("orders::http::get_order") && text.contains("orders::admin::get_order"), "{text}");
        }
        // A binary's own name is no handler's.
        assert!(matches!(resolve(&all, &env(Some("orders"), None, None)), Err(FunctionError::NotFound { .. })));
        let error = resolve(&all, &env(Some("quoteOrder"), None, Some("http"))).unwrap_err();
        assert!(error.to_string().contains("serves custom events, but CELERITY_HANDLER_TYPE says"), "{error}");
        assert_eq!(resolve(&[], &env(None, None, None)).unwrap_err(), FunctionError::Empty);
    }

    #[test]
    fn a_tag_names_a_handler_or_a_consumers_source() {
        let all = registrations();
        let tag = |tag: &str| one(resolve(&all, &env(None, Some(tag), None)));
        assert_eq!(tag("GET::/orders/{id}"), "orders::http::get_order");
        assert_eq!(tag("source::nightly::cleanupOrders"), "orders::cleanup::cleanup_orders");
        assert_eq!(tag("nightly"), "orders::cleanup::cleanup_orders");
        assert_eq!(tag("source::nightly"), "orders::cleanup::cleanup_orders");
        assert!(matches!(resolve(&all, &env(None, Some("elsewhere"), None)), Err(FunctionError::NotFound { .. })));
        // With an id, the tag is the route a name-bound handler takes.
        let served = resolve(&all, &env(Some("auditOrders"), Some("order-audit"), Some("consumer"))).unwrap();
        assert_eq!(served.tag.as_deref(), Some("order-audit"));
    }

    #[test]
    fn without_an_id_the_function_serves_its_kind_and_the_payload_chooses() {
        let all = registrations();
        let served = resolve(&all, &env(None, None, Some("http"))).unwrap();
        assert!(!served.named);
        assert_eq!(served.handlers.len(), 2);
        assert_eq!(served.kind, Some(HandlerKind::Http));
        let served = resolve(&all, &env(None, None, None)).unwrap();
        assert_eq!((served.handlers.len(), served.kind), (all.len(), None));
        let error = resolve(&all[..2], &env(None, None, Some("websocket"))).unwrap_err();
        assert!(error.to_string().contains("no WebSocket handler"), "{error}");
        let error = FunctionEnv::from_lookup(|name| (name == "CELERITY_HANDLER_TYPE").then(|| "queue".into()));
        assert!(error.unwrap_err().to_string().contains("\"queue\" is not a kind"));
    }

    #[test]
    fn camel_case_is_how_a_blueprint_names_a_function() {
        assert_eq!(camel_case("get_order"), "getOrder");
        assert_eq!(camel_case("on_connect"), "onConnect");
        assert_eq!(camel_case("subscribe"), "subscribe");
        assert_eq!(camel_case("_private_thing"), "privateThing");
        assert_eq!(camel_case("a__b"), "aB");
    }
}
