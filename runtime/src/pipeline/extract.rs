//! Taking a handler's arguments from its event.

use super::{Kind, Needs};
use crate::context::{Context, State};
use crate::websocket::WsSender;

/// A value a handler of kind `K` can take as an argument.
///
/// Arguments are taken in order before the handler runs; the first that
/// cannot be is answered with its [`Kind::Rejection`] and the handler is not
/// called. Arguments other than the last see the event by reference; the
/// last may take it whole ([`FromEvent::from_event_owned`]).
///
/// A type of your own becomes an argument by implementing this for the
/// kind it serves:
///
/// ```
/// use celerity::http::{Http, HttpError, Request};
/// use celerity::{Context, FromEvent};
///
/// /// The caller's API key, from the `x-api-key` header.
/// struct ApiKey(String);
///
/// impl FromEvent<Http> for ApiKey {
///     fn from_event(request: &mut Request, _cx: &Context) -> Result<Self, HttpError> {
///         // A key sent twice is refused: which one counts would be ambiguous.
///         let mut keys = request.headers().get_all("x-api-key").iter();
///         match (keys.next().and_then(|value| value.to_str().ok()), keys.next()) {
///             (Some(key), None) => Ok(ApiKey(key.to_string())),
///             _ => Err(HttpError::new(celerity::http::StatusCode::UNAUTHORIZED, "one API key is required")),
///         }
///     }
/// }
///
/// async fn whoami(ApiKey(key): ApiKey) -> String {
///     format!("key {key}")
/// }
///
/// let app = celerity::App::new().http("GET::/whoami", whoami);
/// # drop(app);
/// ```
pub trait FromEvent<K: Kind>: Sized {
    /// Whether this argument consumes the event's body (the request body,
    /// a message's body, a custom invocation's input). At most one argument
    /// of a handler may.
    const READS_BODY: bool = false;

    /// Takes the value from the event. Arguments that read the body take it
    /// out of `event`; the others only look.
    fn from_event(event: &mut K::Event, cx: &Context) -> Result<Self, K::Rejection>;

    /// Takes the value when it is the handler's last argument and may have
    /// the whole event. Defaults to [`FromEvent::from_event`].
    fn from_event_owned(mut event: K::Event, cx: &Context) -> Result<Self, K::Rejection> {
        Self::from_event(&mut event, cx)
    }

    /// What the argument needs of the application and of the handler's
    /// route, checked before anything is served. Nothing, by default.
    #[doc(hidden)]
    fn needs(_needs: &mut Needs) {}
}

/// The event's context, for every kind.
impl<K: Kind> FromEvent<K> for Context {
    fn from_event(_event: &mut K::Event, cx: &Context) -> Result<Self, K::Rejection> {
        Ok(cx.clone())
    }
}

/// The application's state of type `T`, for every kind.
impl<K: Kind, T: Send + Sync + 'static> FromEvent<K> for State<T> {
    fn from_event(_event: &mut K::Event, cx: &Context) -> Result<Self, K::Rejection> {
        State::from_context(cx).map_err(K::Rejection::from)
    }

    fn needs(needs: &mut Needs) {
        needs.state::<T>();
    }
}

/// A sender of WebSocket messages on the handler's stream, for every kind.
impl<K: Kind> FromEvent<K> for WsSender {
    fn from_event(_event: &mut K::Event, cx: &Context) -> Result<Self, K::Rejection> {
        Ok(cx.ws())
    }
}
