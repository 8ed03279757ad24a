//! The identity a guard gave, as a handler's argument.

use std::ops::Deref;
use std::sync::Arc;

use super::given::Identities;
use crate::context::Context;
use crate::error::Error;
use crate::pipeline::{FromEvent, Kind, Needs};

/// The identity a guard gave when it allowed the event
/// ([`super::Verdict::allow_as`]): the caller's claims, a user record, ...
/// It derefs to `T`.
///
/// A handler taking `Identity<T>` must be protected by a guard: one that is
/// not stops the application at startup. When the guards gave no `T` (they
/// gave another type, or none), the event is answered as an error naming
/// both: a `500` for HTTP, since the handler and its guards disagree.
///
/// ```
/// use celerity::guard::Identity;
///
/// struct Caller { user: String }
///
/// async fn whoami(caller: Identity<Caller>) -> String {
///     format!("you are {}", caller.user)
/// }
/// ```
#[derive(Debug)]
pub struct Identity<T>(Arc<T>);

impl<T> Identity<T> {
    /// The identity, shared.
    pub fn into_inner(self) -> Arc<T> {
        self.0
    }
}

impl<T> Clone for Identity<T> {
    fn clone(&self) -> Self {
        Identity(Arc::clone(&self.0))
    }
}

impl<T> Deref for Identity<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// The identity of type `T` that the event's guards gave, for every kind.
impl<K: Kind, T: Send + Sync + 'static> FromEvent<K> for Identity<T> {
    fn from_event(_event: &mut K::Event, cx: &Context) -> Result<Self, K::Rejection> {
        let identities = cx.identities();
        match identities.and_then(Identities::find::<T>) {
            Some(identity) => Ok(Identity(identity)),
            None => {
                let given: Vec<&str> =
                    identities.map(|i| i.0.iter().map(|given| given.type_name).collect()).unwrap_or_default();
                let message = format!(
                    "handler {} takes Identity<{}>, but its guards gave {}",
                    cx.handler_name(),
                    std::any::type_name::<T>(),
                    if given.is_empty() { "no identity".to_string() } else { format!("only {}", given.join(", ")) }
                );
                Err(K::Rejection::from(Error::typed("MissingIdentity", message)))
            }
        }
    }

    fn needs(needs: &mut Needs) {
        needs.identity(std::any::type_name::<T>());
    }
}
