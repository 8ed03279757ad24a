//! What a Lambda function serves: the deployment names it with
//! `CELERITY_HANDLER_ID` (the blueprint's handler name),
//! `CELERITY_HANDLER_TAG` and `CELERITY_HANDLER_TYPE`, and one of this
//! binary's handlers is it.
//!
//! A handler is found by its name, else by its tag, else by being the one
//! handler of the function's kind. The kind is `CELERITY_HANDLER_TYPE`, or,
//! when that is unset, each payload's own (see `form`). What can be settled
//! at cold start is: a function that names a handler this binary does not
//! have fails to start, saying which handlers it has.

use std::fmt;

use celerity_tags::parse_tag;

use crate::kind::HandlerKind;
use crate::registry::{HandlerKey, Registration, tag_kind};

/// What the deployment set on the function.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FunctionEnv {
    /// `CELERITY_HANDLER_ID`: the blueprint's handler name.
    pub(crate) id: Option<String>,
    /// `CELERITY_HANDLER_TAG`.
    pub(crate) tag: Option<String>,
    /// `CELERITY_HANDLER_TYPE`.
    pub(crate) kind: Option<HandlerKind>,
}

impl FunctionEnv {
    /// Reads the three variables through `lookup`; an unknown
    /// `CELERITY_HANDLER_TYPE` is an error naming the five that exist.
    pub(crate) fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, FunctionError> {
        let set = |name: &str| lookup(name).map(|value| value.trim().to_string()).filter(|value| !value.is_empty());
        let kind = match set("CELERITY_HANDLER_TYPE") {
            None => None,
            Some(value) => Some(kind_named(&value).ok_or(FunctionError::UnknownType(value))?),
        };
        Ok(FunctionEnv { id: set("CELERITY_HANDLER_ID"), tag: set("CELERITY_HANDLER_TAG"), kind })
    }
}

fn kind_named(name: &str) -> Option<HandlerKind> {
    [HandlerKind::Http, HandlerKind::WebSocket, HandlerKind::Consumer, HandlerKind::Schedule, HandlerKind::Custom]
        .into_iter()
        .find(|kind| kind.as_str().eq_ignore_ascii_case(name))
}

/// The handler a function serves, and the tag its events are dispatched to.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    pub(crate) registration: Registration,
    pub(crate) tag: String,
}

/// How a function's handler is found.
#[derive(Debug, Clone)]
pub(crate) enum Resolution {
    /// Settled at cold start.
    Fixed(Box<Resolved>),
    /// By each payload's kind: the deployment named neither handler nor kind.
    ByPayload,
}

/// Why a function's handler cannot be found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FunctionError {
    /// `CELERITY_HANDLER_TYPE` is not a kind.
    UnknownType(String),
    /// Neither the name nor the tag the deployment gave is a handler here.
    NotFound { id: Option<String>, tag: Option<String>, available: String },
    /// The handler found serves another kind than the function is for.
    WrongKind { handler: String, kind: HandlerKind, expected: HandlerKind },
    /// No handler, or several, of the function's kind.
    NotOne { kind: HandlerKind, found: usize, available: String },
    /// A handler bound by name needs the tag the runtime would have given it.
    NoTag { name: String },
}

impl fmt::Display for FunctionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FunctionError::UnknownType(value) => write!(
                f,
                "CELERITY_HANDLER_TYPE={value:?} is not a kind of handler: it is one of http, websocket, consumer, \
                 schedule or custom"
            ),
            FunctionError::NotFound { id, tag, available } => {
                let asked = match (id, tag) {
                    (Some(id), Some(tag)) => format!("CELERITY_HANDLER_ID={id:?} and CELERITY_HANDLER_TAG={tag:?}"),
                    (Some(id), None) => format!("CELERITY_HANDLER_ID={id:?}"),
                    (None, Some(tag)) => format!("CELERITY_HANDLER_TAG={tag:?}"),
                    (None, None) => "no handler in particular".to_string(),
                };
                write!(f, "this function is for {asked}, but no handler of this binary is bound so; it has {available}")
            }
            FunctionError::WrongKind { handler, kind, expected } => write!(
                f,
                "the handler {handler} serves {kind} events, but CELERITY_HANDLER_TYPE says this function is for {} \
                 events",
                expected.as_str()
            ),
            FunctionError::NotOne { kind, found: 0, available } => write!(
                f,
                "this function is for {} events, and this binary has no {kind} handler; it has {available}",
                kind.as_str()
            ),
            FunctionError::NotOne { kind, found, available } => write!(
                f,
                "this function is for {} events, and this binary has {found} {kind} handlers, so which one it serves \
                 must be named with CELERITY_HANDLER_ID or CELERITY_HANDLER_TAG; it has {available}",
                kind.as_str()
            ),
            FunctionError::NoTag { name } => write!(
                f,
                "the handler {name:?} is bound by name, and takes its tag from the deployment: set CELERITY_HANDLER_TAG"
            ),
        }
    }
}

impl std::error::Error for FunctionError {}

/// Finds the handler `env` names among `registrations`, or says that each
/// payload's kind will.
pub(crate) fn resolve(registrations: &[Registration], env: &FunctionEnv) -> Result<Resolution, FunctionError> {
    let by_id = env
        .id
        .as_deref()
        .and_then(|id| registrations.iter().find(|r| matches!(&r.key, HandlerKey::Name(name) if name == id)));
    let by_tag = || {
        env.tag.as_deref().and_then(|tag| {
            registrations.iter().find(|r| match &r.key {
                HandlerKey::Tag(registered) => {
                    parse_tag(tag_kind(r.kind), tag).map_or(registered == tag, |normal| *registered == normal.tag)
                }
                HandlerKey::Name(_) => false,
            })
        })
    };
    let found = match by_id.or_else(by_tag) {
        Some(found) => found,
        None if env.id.is_some() || env.tag.is_some() => {
            return Err(FunctionError::NotFound {
                id: env.id.clone(),
                tag: env.tag.clone(),
                available: available(registrations),
            });
        }
        None => {
            return match env.kind {
                Some(kind) => by_kind(registrations, kind).map(|resolved| Resolution::Fixed(Box::new(resolved))),
                None => Ok(Resolution::ByPayload),
            };
        }
    };
    if let Some(expected) = env.kind.filter(|kind| *kind != found.kind) {
        return Err(FunctionError::WrongKind { handler: found.key.to_string(), kind: found.kind, expected });
    }
    resolved(found, env.tag.as_deref()).map(|resolved| Resolution::Fixed(Box::new(resolved)))
}

/// The one handler of `kind`.
pub(crate) fn by_kind(registrations: &[Registration], kind: HandlerKind) -> Result<Resolved, FunctionError> {
    let of_kind: Vec<&Registration> = registrations.iter().filter(|r| r.kind == kind).collect();
    match of_kind.as_slice() {
        [only] => resolved(only, None),
        _ => Err(FunctionError::NotOne { kind, found: of_kind.len(), available: available(registrations) }),
    }
}

fn resolved(registration: &Registration, tag: Option<&str>) -> Result<Resolved, FunctionError> {
    let tag = match (&registration.key, tag) {
        (HandlerKey::Tag(registered), _) => registered.clone(),
        (HandlerKey::Name(_), Some(tag)) => {
            parse_tag(tag_kind(registration.kind), tag).map_or_else(|_| tag.to_string(), |normal| normal.tag)
        }
        (HandlerKey::Name(name), None) => return Err(FunctionError::NoTag { name: name.clone() }),
    };
    Ok(Resolved { registration: registration.clone(), tag })
}

/// The handlers of a binary, for an error that names them.
fn available(registrations: &[Registration]) -> String {
    if registrations.is_empty() {
        return "no handlers at all".to_string();
    }
    let each: Vec<String> = registrations
        .iter()
        .map(|r| format!("{} ({} handler {})", r.key, r.kind.as_str(), r.origin.function))
        .collect();
    each.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn handler() {}

    fn registrations() -> Vec<Registration> {
        vec![
            Registration::http(HandlerKey::Tag("GET::/orders/{id}".into()), handler),
            Registration::http(HandlerKey::Tag("POST::/orders".into()), handler),
            Registration::schedule(HandlerKey::Tag("source::nightly::cleanupOrders".into()), handler),
            Registration::custom(HandlerKey::Name("quoteOrder".into()), handler),
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

    fn fixed(resolution: Result<Resolution, FunctionError>) -> Resolved {
        match resolution {
            Ok(Resolution::Fixed(resolved)) => *resolved,
            other => panic!("expected a handler, got {other:?}"),
        }
    }

    #[test]
    fn a_handler_is_found_by_name_then_tag_then_kind() {
        let registrations = registrations();
        let by_name = fixed(resolve(&registrations, &env(Some("quoteOrder"), Some("custom::quoteOrder"), None)));
        assert_eq!((by_name.registration.kind, by_name.tag.as_str()), (HandlerKind::Custom, "custom::quoteOrder"));
        // A name that binds nothing here falls to the tag, written in either form.
        let by_tag = fixed(resolve(&registrations, &env(Some("getOrder"), Some("GET::/orders/{id}"), Some("http"))));
        assert_eq!(by_tag.tag, "GET::/orders/{id}");
        let by_kind = fixed(resolve(&registrations, &env(None, None, Some("schedule"))));
        assert_eq!(by_kind.tag, "source::nightly::cleanupOrders");
        assert!(matches!(resolve(&registrations, &env(None, None, None)), Ok(Resolution::ByPayload)));
    }

    #[test]
    fn a_handler_that_is_not_here_is_an_error_naming_what_is() {
        let registrations = registrations();
        let error = resolve(&registrations, &env(Some("shipOrder"), Some("POST::/ship"), None)).unwrap_err();
        let text = error.to_string();
        assert!(text.contains("CELERITY_HANDLER_ID=\"shipOrder\"") && text.contains("POST::/ship"), "{text}");
        assert!(text.contains("GET::/orders/{id} (http handler") && text.contains("name = \"quoteOrder\""), "{text}");

        let error = resolve(&registrations, &env(None, None, Some("http"))).unwrap_err();
        let expected =
            FunctionError::NotOne { kind: HandlerKind::Http, found: 2, available: available(&registrations) };
        assert_eq!(error, expected);
        assert!(error.to_string().contains("2 HTTP handlers"), "{error}");
        let error = resolve(&registrations, &env(None, None, Some("consumer"))).unwrap_err();
        assert!(error.to_string().contains("no consumer handler"), "{error}");

        let error = resolve(&registrations, &env(None, Some("POST::/orders"), Some("custom"))).unwrap_err();
        assert!(error.to_string().contains("serves HTTP events"), "{error}");
        let error = resolve(&registrations, &env(Some("quoteOrder"), None, None)).unwrap_err();
        assert_eq!(error, FunctionError::NoTag { name: "quoteOrder".into() });
        let error = FunctionEnv::from_lookup(|name| (name == "CELERITY_HANDLER_TYPE").then(|| "queue".into()));
        assert!(error.unwrap_err().to_string().contains("\"queue\" is not a kind"));
    }
}
