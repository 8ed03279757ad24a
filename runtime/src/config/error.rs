//! What can go wrong reading configuration, said once and clearly.

use std::fmt;

/// Why configuration or a resource link could not be read. Its message names
/// the source (the namespace, the store, the file or variable) and never a
/// value, since any value may be a secret.
#[derive(Clone, PartialEq, Eq)]
pub struct ConfigError {
    kind: ConfigErrorKind,
    message: String,
}

/// The kind of a [`ConfigError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigErrorKind {
    /// No namespace of that name, or none at all.
    MissingNamespace,
    /// A value was asked for without a namespace, and the application has
    /// several of its own.
    AmbiguousNamespace,
    /// The namespace holds no value for the key.
    MissingKey,
    /// The values do not fit the type they were bound into.
    Bind,
    /// The store could not be read: refused, unreachable, or not there.
    Store,
    /// The store did not answer in time.
    Timeout,
    /// The store, the links file or a value does not hold what it should.
    Malformed,
    /// The deployment asks for something this build cannot do: an unknown
    /// store kind, a platform without a backend, a feature left out.
    Unsupported,
    /// A resource link that does not exist, or is of another kind.
    Link,
}

impl ConfigError {
    pub(crate) fn new(kind: ConfigErrorKind, message: impl Into<String>) -> Self {
        ConfigError { kind, message: message.into() }
    }

    pub(crate) fn malformed(source: &str, what: impl fmt::Display) -> Self {
        ConfigError::new(ConfigErrorKind::Malformed, format!("the configuration in {source} cannot be read: {what}"))
    }

    pub(crate) fn unsupported(message: impl Into<String>) -> Self {
        ConfigError::new(ConfigErrorKind::Unsupported, message)
    }

    pub(crate) fn link(message: impl Into<String>) -> Self {
        ConfigError::new(ConfigErrorKind::Link, message)
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ConfigErrorKind {
        self.kind
    }

    /// The message: what failed, naming its source.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ConfigError({:?}: {})", self.kind, self.message)
    }
}

impl std::error::Error for ConfigError {}
