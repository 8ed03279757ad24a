//! A value that is never shown.

use std::fmt;

use serde::{Deserialize, Deserializer};

/// A value kept out of `Debug` output and logs: bind a secret into one so
/// that printing the struct that holds it shows `Secret(..)`. Read it with
/// [`Secret::expose`].
///
/// ```
/// use celerity::config::Secret;
///
/// #[derive(Debug, serde::Deserialize)]
/// struct Database {
///     user: String,
///     password: Secret<String>,
/// }
///
/// let db = Database { user: "orders".into(), password: Secret::new("hunter2".into()) };
/// assert_eq!(format!("{db:?}"), r#"Database { user: "orders", password: Secret(..) }"#);
/// assert_eq!(db.password.expose(), "hunter2");
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret<T>(T);

impl<T> Secret<T> {
    /// Wraps `value`.
    pub fn new(value: T) -> Self {
        Secret(value)
    }

    /// The value itself.
    pub fn expose(&self) -> &T {
        &self.0
    }

    /// The value, unwrapped.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> fmt::Debug for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Secret<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(Secret)
    }
}

impl<T> From<T> for Secret<T> {
    fn from(value: T) -> Self {
        Secret(value)
    }
}
