//! What a resource operation answers when it fails: which resource, which
//! operation, what kind of failure, and the service's own code for it.

use std::fmt;

use super::ResourceKind;
use crate::config::ConfigError;

/// What kind of failure a [`ResourceError`] is, for a handler to decide
/// what to do about it (retry, answer `400`, fail the event).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResourceErrorKind {
    /// The resource could not be resolved: it is not linked, or the
    /// deployment recorded no identifier or a malformed setting for it.
    Config,
    /// This build or this platform has no backend for the resource: a
    /// feature the application did not enable, or a platform the SDK does
    /// not serve.
    Unsupported,
    /// The service could not be reached, or did not answer in time: a
    /// connection refused or cut, a timeout. Whether the request took
    /// effect is not known.
    Unreachable,
    /// The service answered with a refusal, named by
    /// [`ResourceError::code`].
    Refused,
    /// The request breaks a rule of the resource's kind and was not sent: a
    /// message over the size limit, an empty batch, an attribute the
    /// service does not take, keys a clustered cache holds on different
    /// shards.
    Invalid,
    /// The service answered with something that is not what was asked
    /// for: a cached value that is not UTF-8 text, read as a `String`.
    Malformed,
    /// What the operation names does not exist: an object no bucket key
    /// holds, an item to update that is not there.
    NotFound,
    /// A write's condition did not hold, so nothing was written: the item
    /// exists where it must not, its revision has moved on, an attribute
    /// differs.
    ConditionFailed,
    /// The service refused for now, over its throughput or request rate;
    /// the same request may pass later.
    Throttled,
}

/// A resource operation that failed: the resource and the operation it
/// names, what kind of failure it is, and the service's code where it
/// gave one. Converts into [`crate::Error`] with `?`, as type
/// `ResourceError`.
///
/// ```
/// use celerity::resources::{ResourceError, ResourceErrorKind};
///
/// fn worth_retrying(error: &ResourceError) -> bool {
///     error.kind() == ResourceErrorKind::Unreachable
/// }
/// # let _ = worth_retrying;
/// ```
#[derive(Debug, Clone)]
pub struct ResourceError {
    resource: String,
    resource_kind: ResourceKind,
    operation: &'static str,
    kind: ResourceErrorKind,
    code: Option<String>,
    message: String,
    key: Option<String>,
}

impl ResourceError {
    pub(crate) fn new(resource: &str, resource_kind: ResourceKind, operation: &'static str, fault: Fault) -> Self {
        ResourceError {
            resource: resource.to_string(),
            resource_kind,
            operation,
            kind: fault.kind,
            code: fault.code,
            message: fault.message,
            key: None,
        }
    }

    /// The error about the object or item at `key`.
    #[cfg_attr(not(any(feature = "bucket", feature = "datastore")), allow(dead_code))]
    pub(crate) fn with_key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// The key of the object or item the operation was about, where it was
    /// about one: a bucket's object key, a datastore item's key as text.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// The blueprint resource's name.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The resource's kind.
    pub fn resource_kind(&self) -> &ResourceKind {
        &self.resource_kind
    }

    /// The operation, as the message says it: `sending to`, `publishing a
    /// batch to`.
    pub fn operation(&self) -> &str {
        self.operation
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ResourceErrorKind {
        self.kind
    }

    /// The service's name for the refusal (`AWS.SimpleQueueService.NonExistentQueue`,
    /// `WRONGTYPE`), or the SDK's own for a request it would not send
    /// (`MessageTooLarge`, `InvalidAttribute`).
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// What went wrong, without the resource and operation.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ResourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} the {} `{}`", self.operation, self.resource_kind, self.resource)?;
        if let Some(key) = &self.key {
            write!(f, " at key `{key}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ResourceError {}

/// A failure as a backend sees it, before it is named for its resource and
/// operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fault {
    pub(crate) kind: ResourceErrorKind,
    pub(crate) code: Option<String>,
    pub(crate) message: String,
}

impl Fault {
    pub(crate) fn new(kind: ResourceErrorKind, code: Option<&str>, message: impl Into<String>) -> Self {
        Fault { kind, code: code.map(str::to_string), message: message.into() }
    }

    /// A request the SDK will not send, with its own code for why.
    #[cfg_attr(not(session_redis), allow(dead_code))]
    pub(crate) fn invalid(code: &str, message: impl Into<String>) -> Self {
        Fault::new(ResourceErrorKind::Invalid, Some(code), message)
    }

    pub(crate) fn unsupported(message: impl Into<String>) -> Self {
        Fault::new(ResourceErrorKind::Unsupported, None, message)
    }

    pub(crate) fn unreachable(message: impl Into<String>) -> Self {
        Fault::new(ResourceErrorKind::Unreachable, None, message)
    }
}

impl From<ConfigError> for Fault {
    fn from(error: ConfigError) -> Self {
        Fault::new(ResourceErrorKind::Config, None, error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_operation_the_kind_and_the_resource() {
        let error = ResourceError::new(
            "ordersQueue",
            ResourceKind::Queue,
            "sending to",
            Fault::invalid("MessageTooLarge", "the message is 300000 bytes"),
        );
        assert_eq!(error.to_string(), "sending to the queue `ordersQueue`: the message is 300000 bytes");
        assert_eq!(error.code(), Some("MessageTooLarge"));
        assert_eq!(error.kind(), ResourceErrorKind::Invalid);
        let at = error.clone().with_key("orders/7.json");
        assert_eq!(at.key(), Some("orders/7.json"));
        assert_eq!(
            at.to_string(),
            "sending to the queue `ordersQueue` at key `orders/7.json`: the message is 300000 bytes"
        );
        let converted: crate::error::Error = error.into();
        assert_eq!(converted.type_name(), "ResourceError");
    }
}
