//! Guards: named checks of who may call a handler, run in the handler
//! process before the handler.
//!
//! The Celerity runtime checks the JWT guards a blueprint declares before it
//! dispatches, but passes the handler neither their claims nor a call-out
//! for guards of its own; a guard here runs in the SDK, beside the handler.
//!
//! A guard is registered on the application under a name
//! ([`App::guard`](crate::App::guard)) and attached to handlers by that
//! name (`guard = "jwt"` in the attribute, or
//! [`Registration::guard`](crate::Registration::guard)). It sees the
//! caller's request ([`GuardRequest`]) and gives a [`Verdict`]: allow, with
//! an identity the handler reads as [`Identity<T>`], or deny, answered
//! `401`/`403 {"message": reason}` for HTTP, a failed `Ack` naming the
//! reason for a WebSocket message, and the invoker's `error_message` for a
//! custom invocation. A guard that fails (an `Err`, a panic) is a
//! `HandlerError`: never an allow. Several guards on one handler run in the
//! order named, and all must allow.
//!
//! Guards protect HTTP, WebSocket and custom handlers: consumer and schedule
//! events carry no caller to authorise. A handler naming a guard the
//! application never registered, a guard registered twice, or a guard on a
//! consumer or schedule stops the application before it serves (and before
//! `--manifest` prints).
//!
//! With the `jwt` feature, `guard::jwt::JwtGuard` is a guard ready-made:
//! it verifies a bearer JWT (HS256, RS256, ES256; keys from a secret, PEM
//! or a JWKS file), checks its issuer, audience and lifetime, and gives the
//! handler its typed claims as an [`Identity<T>`].
//!
//! ```no_run
//! use celerity::guard::{GuardRequest, Identity, Verdict};
//! use celerity::{App, http_handler};
//!
//! struct ApiClient { name: String }
//!
//! #[http_handler("GET::/reports", guard = "api-key")]
//! async fn reports(client: Identity<ApiClient>) -> String {
//!     format!("reports for {}", client.name)
//! }
//!
//! #[celerity::main]
//! async fn main() -> App {
//!     App::new().guard("api-key", |request: GuardRequest| async move {
//!         match request.sole_header("x-api-key") {
//!             Ok(Some("k-123")) => Ok::<_, celerity::Error>(Verdict::allow_as(ApiClient { name: "acme".into() })),
//!             Ok(Some(_)) => Ok(Verdict::forbidden("that API key may not read reports")),
//!             Ok(None) => Ok(Verdict::unauthorized("an x-api-key header is required")),
//!             // Sent more than once: a 401, as which key counts is ambiguous.
//!             Err(refusal) => Ok(refusal),
//!         }
//!     })
//! }
//! ```

pub(crate) mod given;
mod identity;
mod request;
mod verdict;

#[cfg(feature = "jwt")]
pub mod jwt;

use std::collections::BTreeSet;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use celerity_proto::v1 as pb;
use celerity_proto::v1::result::Outcome;

use given::Identities;
pub use identity::Identity;
pub use request::GuardRequest;
use verdict::Decision;
pub use verdict::Verdict;

use crate::error::Error;
use crate::http::HttpError;
use crate::kind::HandlerKind;
use crate::layer::{Answer, Event, Next, NextFuture, Step, Way};
use crate::registry::{Registration, RegistryError};

/// A check of who may call a handler: it sees the caller's request and
/// decides. An `async` closure taking a [`GuardRequest`] and returning
/// `Result<Verdict, E>` is one; so is a type implementing this trait.
///
/// ```
/// use celerity::guard::{Guard, GuardRequest, Verdict};
///
/// /// Allows callers from one network only.
/// struct Internal;
///
/// impl Guard for Internal {
///     async fn check(&self, request: GuardRequest) -> Result<Verdict, celerity::Error> {
///         match request.source_ip() {
///             Some(ip) if ip.is_loopback() => Ok(Verdict::allow()),
///             _ => Ok(Verdict::forbidden("only internal callers may do this")),
///         }
///     }
/// }
///
/// let app = celerity::App::new().guard("internal", Internal);
/// # drop(app);
/// ```
pub trait Guard: Send + Sync + 'static {
    /// Decides on `request`. An `Err` fails the event as a `HandlerError`.
    fn check(&self, request: GuardRequest) -> impl Future<Output = Result<Verdict, Error>> + Send;
}

impl<F, Fut, E> Guard for F
where
    F: Fn(GuardRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Verdict, E>> + Send,
    E: Into<Error>,
{
    async fn check(&self, request: GuardRequest) -> Result<Verdict, Error> {
        (self)(request).await.map_err(Into::into)
    }
}

/// A guard, its type erased.
trait ErasedGuard: Send + Sync + 'static {
    fn check_boxed(&self, request: GuardRequest) -> Pin<Box<dyn Future<Output = Result<Verdict, Error>> + Send + '_>>;
}

impl<G: Guard> ErasedGuard for G {
    fn check_boxed(&self, request: GuardRequest) -> Pin<Box<dyn Future<Output = Result<Verdict, Error>> + Send + '_>> {
        Box::pin(self.check(request))
    }
}

/// Whether handlers of `kind` can be guarded: their events carry a caller.
pub(crate) fn guardable(kind: HandlerKind) -> bool {
    matches!(kind, HandlerKind::Http | HandlerKind::WebSocket | HandlerKind::Custom)
}

/// The guards an application registered, by name.
#[derive(Clone, Default)]
pub(crate) struct Guards {
    named: Vec<(String, Arc<dyn ErasedGuard>)>,
}

impl Guards {
    pub(crate) fn add<G: Guard>(&mut self, name: &str, guard: G) {
        self.named.push((name.to_string(), Arc::new(guard)));
    }

    fn get(&self, name: &str) -> Option<&Arc<dyn ErasedGuard>> {
        self.named.iter().find(|(registered, _)| registered == name).map(|(_, guard)| guard)
    }

    fn names(&self) -> Vec<String> {
        self.named.iter().map(|(name, _)| name.clone()).collect::<BTreeSet<_>>().into_iter().collect()
    }

    /// Whether every guard is registered once, every handler's guards are
    /// registered and of a kind that can be guarded, and every handler
    /// taking an [`Identity`] has a guard to give it.
    pub(crate) fn check(&self, registrations: &[Registration]) -> Result<(), RegistryError> {
        let mut seen = BTreeSet::new();
        for (name, _) in &self.named {
            if !seen.insert(name.as_str()) {
                return Err(RegistryError::DuplicateGuard { name: name.clone() });
            }
        }
        for registration in registrations {
            if let Some(guard) = registration.guards.first()
                && !guardable(registration.kind)
            {
                return Err(RegistryError::GuardOnUnguardable {
                    origin: registration.origin,
                    kind: registration.kind,
                    guard: guard.clone(),
                });
            }
            for guard in &registration.guards {
                if self.get(guard).is_none() {
                    return Err(RegistryError::UnknownGuard {
                        origin: registration.origin,
                        key: registration.key.to_string(),
                        guard: guard.clone(),
                        known: self.names(),
                    });
                }
            }
            if let Some(type_name) = registration.needs.identity
                && registration.guards.is_empty()
            {
                return Err(RegistryError::IdentityWithoutGuard { origin: registration.origin, type_name });
            }
        }
        Ok(())
    }

    /// The step running `registration`'s guards, innermost of its layers;
    /// none for a handler without guards. [`Guards::check`] has passed.
    pub(crate) fn step_for(&self, registration: &Registration) -> Option<Step> {
        if registration.guards.is_empty() {
            return None;
        }
        let guards: Arc<[Named]> = registration
            .guards
            .iter()
            .filter_map(|name| self.get(name).map(|guard| Named { name: name.clone(), guard: Arc::clone(guard) }))
            .collect();
        Some(Step::from_fn(move |next, _limit| Next::way(GuardStep { guards: Arc::clone(&guards), next })))
    }
}

impl fmt::Debug for Guards {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.named.iter().map(|(name, _)| name)).finish()
    }
}

/// A guard with its name, for messages.
#[derive(Clone)]
struct Named {
    name: String,
    guard: Arc<dyn ErasedGuard>,
}

/// The guards of one handler, in order, before it.
struct GuardStep {
    guards: Arc<[Named]>,
    next: Next,
}

impl Way for GuardStep {
    fn call(&self, event: Event) -> NextFuture {
        let guards = Arc::clone(&self.guards);
        let next = self.next.clone();
        NextFuture::layer(async move {
            let mut identities = Vec::new();
            for Named { name, guard } in guards.iter() {
                match guard.check_boxed(GuardRequest::of(&event)).await {
                    Ok(Verdict { decision: Decision::Allow(given) }) => identities.extend(given),
                    Ok(Verdict { decision: Decision::Deny { status, reason } }) => {
                        tracing::debug!(guard = %name, %status, %reason, "a guard denied the event");
                        return denied(event.kind(), status, reason);
                    }
                    Err(error) => {
                        let message = format!("the guard `{name}` failed: {}", error.message());
                        return Answer::error(Error::typed("GuardFailed", message));
                    }
                }
            }
            event.context().give_identities(Identities(identities));
            next.run(event).await
        })
    }
}

/// The answer to an event a guard denied, in its kind's shape.
fn denied(kind: HandlerKind, status: http::StatusCode, reason: String) -> Answer {
    match kind {
        HandlerKind::Http => Answer::http(HttpError::new(status, reason)),
        HandlerKind::WebSocket => {
            Answer::from_wire(Outcome::Websocket(pb::Ack { success: false, error_message: reason }))
        }
        HandlerKind::Custom => Answer::from_wire(Outcome::Custom(pb::CustomInvokeResult {
            output: Default::default(),
            error_message: reason,
        })),
        // Refused at startup: these kinds cannot be guarded.
        HandlerKind::Consumer | HandlerKind::Schedule => Answer::failure(kind, reason),
    }
}
