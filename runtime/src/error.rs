//! The error type handlers and `main` return, and the one serving returns.

use std::borrow::Cow;
use std::fmt;

use celerity_proto::v1 as pb;

use crate::http::HttpError;

/// Any error a handler or `main` can return, with `?` from any
/// `std::error::Error`.
///
/// From a handler, an `Error` is an unhandled failure: the runtime is answered
/// with a `HandlerError` carrying the error's type and message. The exception
/// is an [`HttpError`] converted into an `Error`, which an HTTP handler still
/// answers as the HTTP response it describes.
///
/// ```
/// fn parse(input: &str) -> Result<u32, celerity::Error> {
///     Ok(input.parse::<u32>()?)
/// }
/// let error = parse("x").unwrap_err();
/// assert_eq!(error.type_name(), "ParseIntError");
/// ```
pub struct Error {
    type_name: Cow<'static, str>,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    http: Option<Box<HttpError>>,
    /// Converted from a `CustomError`: a custom handler answers it as
    /// `error_message` rather than as a `HandlerError`.
    custom: bool,
}

impl Error {
    /// An error with a message, of type `Error`.
    pub fn msg(message: impl fmt::Display) -> Self {
        Error {
            type_name: Cow::Borrowed("Error"),
            message: message.to_string(),
            source: None,
            http: None,
            custom: false,
        }
    }

    /// An error with the type name the runtime is told, and a message.
    pub fn typed(type_name: impl Into<Cow<'static, str>>, message: impl fmt::Display) -> Self {
        Error { type_name: type_name.into(), message: message.to_string(), source: None, http: None, custom: false }
    }

    /// The type name sent as `HandlerError.type`: the last segment of the
    /// original error's Rust type, such as `ParseIntError`.
    pub fn type_name(&self) -> &str {
        &self.type_name
    }

    /// The message sent as `HandlerError.message`.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The original error, when this one was converted from one.
    pub fn source_error(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.source.as_deref()
    }

    /// The HTTP error this was converted from, if any.
    pub fn as_http(&self) -> Option<&HttpError> {
        self.http.as_deref()
    }

    /// Whether this was converted from a [`crate::custom::CustomError`].
    pub fn is_custom_error(&self) -> bool {
        self.custom
    }

    /// The error a `CustomError` becomes: a custom handler still answers it
    /// as `error_message`.
    pub(crate) fn deliberate(type_name: &'static str, message: String) -> Self {
        Error { type_name: Cow::Borrowed(type_name), message, source: None, http: None, custom: true }
    }

    /// An error of type `type_name` and `http`'s message that an HTTP
    /// handler answers as `http`, and other kinds report by its type.
    pub(crate) fn answered_over_http(type_name: &'static str, http: HttpError) -> Self {
        Error {
            type_name: Cow::Borrowed(type_name),
            message: http.message().to_string(),
            source: None,
            http: Some(Box::new(http)),
            custom: false,
        }
    }

    pub(crate) fn into_http(self) -> Result<HttpError, Error> {
        match self.http {
            Some(http) => Ok(*http),
            None => Err(self),
        }
    }

    /// The `HandlerError` the runtime receives for this error.
    pub fn to_handler_error(&self) -> pb::HandlerError {
        pb::HandlerError { message: self.message.clone(), r#type: self.type_name.to_string(), stack: String::new() }
    }
}

/// Any error, and text: whatever `Box<dyn std::error::Error>` converts from.
/// An error keeps its type's name (`ParseIntError`) and stays reachable
/// through [`Error::source_error`]; text (`&str`, `String`) is a message of
/// type `Error`, as from [`Error::msg`].
///
/// ```
/// fn check(id: u64) -> celerity::Result<u64> {
///     if id == 0 {
///         return Err("order has id 0".into());
///     }
///     let parsed: Result<u64, String> = Ok(id);
///     Ok(parsed?)
/// }
/// assert_eq!(check(0).unwrap_err().message(), "order has id 0");
/// assert_eq!(check(0).unwrap_err().type_name(), "Error");
/// ```
impl<E> From<E> for Error
where
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    fn from(error: E) -> Self {
        let type_name = short_type_name::<E>();
        let error: Box<dyn std::error::Error + Send + Sync> = error.into();
        if is_text(type_name) {
            return Error::msg(error);
        }
        Error {
            type_name: Cow::Borrowed(type_name),
            message: crate::transport::error_chain(error.as_ref()),
            source: Some(error),
            http: None,
            custom: false,
        }
    }
}

/// Whether a type that converts into a boxed error is text, which becomes
/// a message rather than an error of that type.
fn is_text(type_name: &str) -> bool {
    matches!(type_name, "&str" | "String" | "Cow")
}

impl From<HttpError> for Error {
    fn from(error: HttpError) -> Self {
        Error::answered_over_http("HttpError", error)
    }
}

/// The HTTP answer to an error: the `HttpError` it carries, or a `500`
/// with its message. How an HTTP argument that failed for a reason of
/// every kind (missing state, say) is answered.
impl From<Error> for HttpError {
    fn from(error: Error) -> Self {
        error.into_http().unwrap_or_else(|error| HttpError::internal(error.message().to_string()))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.type_name, self.message)
    }
}

/// The last path segment of a type's name, without generic arguments:
/// `std::num::ParseIntError` → `ParseIntError`.
pub(crate) fn short_type_name<T: ?Sized>() -> &'static str {
    let full = std::any::type_name::<T>();
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base)
}

/// A `Result` with [`Error`] as its error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_any_std_error_with_its_type_name() {
        let error: Error = std::io::Error::other("disk on fire").into();
        assert_eq!(error.type_name(), "Error");
        assert_eq!(error.message(), "disk on fire");
        let error: Error = "x".parse::<u8>().unwrap_err().into();
        assert_eq!(error.type_name(), "ParseIntError");
        assert_eq!(error.to_handler_error().r#type, "ParseIntError");
    }

    #[test]
    fn keeps_an_http_error() {
        let error: Error = HttpError::not_found("no such order").into();
        assert_eq!(error.as_http().unwrap().status(), http::StatusCode::NOT_FOUND);
    }

    #[test]
    fn text_is_a_message_and_any_boxed_error_converts() {
        let error: Error = "order has id 0".into();
        assert_eq!((error.type_name(), error.message()), ("Error", "order has id 0"));
        assert!(error.source_error().is_none());
        let error: Error = String::from("no such order").into();
        assert_eq!((error.type_name(), error.message()), ("Error", "no such order"));
        let error: Error = std::borrow::Cow::Borrowed("borrowed").into();
        assert_eq!(error.message(), "borrowed");
        fn parse(text: &str) -> Result<u32, String> {
            text.parse().map_err(|_| format!("{text:?} is not a number"))
        }
        fn handler() -> Result<u32, Error> {
            Ok(parse("x")?)
        }
        assert_eq!(handler().unwrap_err().message(), "\"x\" is not a number");
        // A boxed error keeps what it is.
        let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(std::io::Error::other("disk"));
        let error: Error = boxed.into();
        assert_eq!(error.message(), "disk");
        assert!(error.source_error().unwrap().downcast_ref::<std::io::Error>().is_some());
    }

    #[test]
    fn short_type_names_drop_paths_and_generics() {
        assert_eq!(short_type_name::<Vec<String>>(), "Vec");
        assert_eq!(short_type_name::<std::num::ParseIntError>(), "ParseIntError");
    }
}
