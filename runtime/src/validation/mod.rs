//! Validation beyond what deserializing checks: [`Valid`] runs a value's
//! [`validator::Validate`] rules after its extractor has taken it. Behind the
//! `validation` feature.
//!
//! The rules are declared with `validator`'s derive, so the application
//! depends on `validator` itself, in the version this SDK uses:
//!
//! ```toml
//! [dependencies]
//! celerity = { version = "0.1", features = ["validation"] }
//! validator = { version = "0.21", features = ["derive"] }
//! ```
//!
//! A value that breaks a rule never reaches the handler. An HTTP request is
//! answered `400` in the SDK's error shape, one detail per broken rule, each
//! with the rule's code (`length`, `email`, `range`, or the code a custom rule
//! gives) and the field's path; a consumer record fails on its own, its
//! message naming the field; any other kind fails the event the same way.

mod report;

use validator::Validate;

use crate::consumer::{PerRecord, Record};
use crate::context::Context;
use crate::custom::Custom;
use crate::http::{Http, Json, Path, Query};
use crate::pipeline::{FromEvent, Kind, Needs};
use crate::schedule::Schedule;
use crate::websocket::WebSocket;

pub use report::Invalid;

/// An extractor whose value is checked with [`validator::Validate`] before
/// the handler runs: `Valid<Json<T>>`, `Valid<Query<T>>`, `Valid<Path<T>>`,
/// `Valid<Record<T>>`.
///
/// ```
/// use celerity::http::{Json, StatusCode};
/// use celerity::validation::Valid;
/// use serde::Deserialize;
/// use validator::Validate;
///
/// #[derive(Deserialize, Validate)]
/// struct NewOrder {
///     #[validate(length(min = 1, max = 64))]
///     customer: String,
///     #[validate(range(min = 1, max = 100))]
///     quantity: u32,
/// }
///
/// async fn place(Valid(Json(order)): Valid<Json<NewOrder>>) -> StatusCode {
///     // `order.quantity` is in 1..=100 here: a request breaking a rule was
///     // answered 400, naming the field, without calling the handler.
///     let _ = (order.customer, order.quantity);
///     StatusCode::CREATED
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Valid<E>(pub E);

/// An extractor whose value [`Valid`] can check for a handler of kind `K`:
/// it lends its value, and names what it was taken from for messages.
#[diagnostic::on_unimplemented(
    message = "`Valid` cannot check `{Self}`",
    label = "not an extractor whose value `Valid` checks",
    note = "`Valid` checks `Json<T>`, `Query<T>` and `Path<T>` in an HTTP handler, `Record<T>` in a consumer, and `Json<T>` in a WebSocket, schedule or custom handler, where `T` derives `validator::Validate`"
)]
pub trait Validatable<K: Kind> {
    /// The value checked.
    type Value: Validate;

    /// What the value was taken from, as messages say it: "the request
    /// body", "the query", "the record body".
    const SUBJECT: &'static str;

    /// The value to check.
    fn value(&self) -> &Self::Value;
}

impl<K, E> FromEvent<K> for Valid<E>
where
    K: Kind,
    E: FromEvent<K> + Validatable<K>,
{
    const READS_BODY: bool = E::READS_BODY;

    fn from_event(event: &mut K::Event, cx: &Context) -> Result<Self, K::Rejection> {
        checked::<K, E>(E::from_event(event, cx)?)
    }

    fn from_event_owned(event: K::Event, cx: &Context) -> Result<Self, K::Rejection> {
        checked::<K, E>(E::from_event_owned(event, cx)?)
    }

    fn needs(needs: &mut Needs) {
        E::needs(needs);
    }
}

fn checked<K: Kind, E: Validatable<K>>(extracted: E) -> Result<Valid<E>, K::Rejection> {
    match extracted.value().validate() {
        Ok(()) => Ok(Valid(extracted)),
        Err(errors) => Err(K::Rejection::from(Invalid::new(E::SUBJECT, &errors).into_error())),
    }
}

/// `Validatable` for an extractor that is a newtype around its value.
macro_rules! validatable {
    ($($kind:ty: $extractor:ident => $subject:expr;)*) => {$(
        impl<T: Validate> Validatable<$kind> for $extractor<T> {
            type Value = T;
            const SUBJECT: &'static str = $subject;

            fn value(&self) -> &T {
                &self.0
            }
        }
    )*};
}

validatable! {
    Http: Json => crate::http::REQUEST_BODY;
    Http: Query => "the query";
    Http: Path => "the path";
    WebSocket: Json => crate::websocket::MESSAGE_BODY;
    Custom: Json => crate::custom::INPUT;
    Schedule: Json => crate::schedule::INPUT;
}

impl<T: Validate> Validatable<PerRecord> for Record<T> {
    type Value = T;
    const SUBJECT: &'static str = crate::consumer::RECORD_BODY;

    fn value(&self) -> &T {
        Record::value(self)
    }
}
