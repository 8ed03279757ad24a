//! What a guard decides.

use http::StatusCode;

use super::given::Given;

/// What a guard decides about an event: allow it, with the caller's
/// identity for the handler to read as [`super::Identity`], or deny it
/// with a reason the caller is told.
///
/// ```
/// use celerity::guard::Verdict;
///
/// #[derive(Debug)]
/// struct Caller { user: String }
///
/// let allowed = Verdict::allow_as(Caller { user: "ada".into() });
/// assert!(allowed.is_allow());
/// let denied = Verdict::unauthorized("a bearer token is required");
/// assert!(!denied.is_allow());
/// ```
#[derive(Clone)]
pub struct Verdict {
    pub(crate) decision: Decision,
}

#[derive(Clone)]
pub(crate) enum Decision {
    Allow(Option<Given>),
    Deny { status: StatusCode, reason: String },
}

impl Verdict {
    /// Allow, giving no identity.
    pub fn allow() -> Self {
        Verdict { decision: Decision::Allow(None) }
    }

    /// Allow, giving `identity`: a handler reads it as `Identity<T>`.
    pub fn allow_as<T: Send + Sync + 'static>(identity: T) -> Self {
        Verdict { decision: Decision::Allow(Some(Given::new(identity))) }
    }

    /// Deny: the caller is not known (no credentials, or ones that do not
    /// check out). An HTTP caller is answered `401 {"message": reason}`.
    pub fn unauthorized(reason: impl Into<String>) -> Self {
        Verdict { decision: Decision::Deny { status: StatusCode::UNAUTHORIZED, reason: reason.into() } }
    }

    /// Deny: the caller is known but may not do this. An HTTP caller is
    /// answered `403 {"message": reason}`.
    pub fn forbidden(reason: impl Into<String>) -> Self {
        Verdict { decision: Decision::Deny { status: StatusCode::FORBIDDEN, reason: reason.into() } }
    }

    /// Whether it allows the event.
    pub fn is_allow(&self) -> bool {
        matches!(self.decision, Decision::Allow(_))
    }
}

impl std::fmt::Debug for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.decision {
            Decision::Allow(None) => f.write_str("Verdict::allow()"),
            Decision::Allow(Some(given)) => write!(f, "Verdict::allow_as::<{}>(..)", given.type_name),
            Decision::Deny { status, reason } => write!(f, "Verdict::deny({status}, {reason:?})"),
        }
    }
}
