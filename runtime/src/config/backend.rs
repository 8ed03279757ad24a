//! Where a store's values come from: one trait, and the backends that need
//! no feature of their own.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use super::environment::Environment;
use super::{ConfigError, ConfigErrorKind, Values};

pub use crate::future::BoxFuture;

/// What reads the values of configuration stores of one kind: Secrets
/// Manager, Parameter Store, a local Valkey, a file, a map in a test.
///
/// One call reads a whole store, since the services charge by request, not
/// by value. A store that does not exist is an error; one that exists and
/// holds nothing is empty [`Values`].
///
/// ```
/// use celerity::config::{Backend, BoxFuture, ConfigError, Values};
///
/// /// Every store holds the same one value.
/// struct Fixed;
///
/// impl Backend for Fixed {
///     fn describe(&self) -> String {
///         "a fixed value".to_string()
///     }
///
///     fn fetch<'a>(&'a self, _store_id: &'a str) -> BoxFuture<'a, Result<Values, ConfigError>> {
///         Box::pin(async { Ok(Values::from_pairs([("GREETING", "hello")])) })
///     }
/// }
/// ```
pub trait Backend: Send + Sync + 'static {
    /// What the backend is, for messages: "Secrets Manager", "the local
    /// Valkey at 127.0.0.1:6379".
    fn describe(&self) -> String;

    /// Every value the store `store_id` holds.
    fn fetch<'a>(&'a self, store_id: &'a str) -> BoxFuture<'a, Result<Values, ConfigError>>;

    /// Whether the backend holds values between reads itself (the Lambda
    /// Parameters and Secrets extension does), so that re-reading on top of
    /// it would only re-read its cache.
    fn caches(&self) -> bool {
        false
    }
}

/// Stores held in memory, by store id: for tests, and for values an
/// application computes. Clones share the stores, so a test can change a
/// store's values ([`MapBackend::set`]) and see a refresh pick them up.
///
/// ```
/// use celerity::config::{MapBackend, Values};
///
/// let backend = MapBackend::new().with("app-config", Values::from_pairs([("REGION", "eu-west-2")]));
/// backend.set("app-config", Values::from_pairs([("REGION", "us-east-1")]));
/// ```
#[derive(Clone, Default)]
pub struct MapBackend {
    stores: Arc<RwLock<HashMap<String, Values>>>,
}

impl MapBackend {
    /// No store.
    pub fn new() -> Self {
        MapBackend::default()
    }

    /// Adds the store `store_id` holding `values`.
    pub fn with(self, store_id: impl Into<String>, values: Values) -> Self {
        self.set(store_id, values);
        self
    }

    /// Replaces what the store `store_id` holds (or adds it).
    pub fn set(&self, store_id: impl Into<String>, values: Values) {
        self.stores.write().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(store_id.into(), values);
    }

    /// Takes the store `store_id` away: reading it fails from then on.
    pub fn remove(&self, store_id: &str) {
        self.stores.write().unwrap_or_else(|poisoned| poisoned.into_inner()).remove(store_id);
    }
}

impl Backend for MapBackend {
    fn describe(&self) -> String {
        "values held in memory".to_string()
    }

    fn fetch<'a>(&'a self, store_id: &'a str) -> BoxFuture<'a, Result<Values, ConfigError>> {
        let found = self.stores.read().unwrap_or_else(|poisoned| poisoned.into_inner()).get(store_id).cloned();
        Box::pin(async move {
            found.ok_or_else(|| {
                ConfigError::new(ConfigErrorKind::Store, format!("there is no config store {store_id:?}"))
            })
        })
    }
}

impl std::fmt::Debug for MapBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let stores = self.stores.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut ids: Vec<&String> = stores.keys().collect();
        ids.sort();
        f.debug_struct("MapBackend").field("stores", &ids).finish()
    }
}

/// A store held as one JSON object in a file, the store id being its path:
/// what `celerity-dev run` writes when no Valkey serves the session, and a
/// way to run the binary by hand with configuration of one's own
/// (`CELERITY_CONFIG_STORE_KIND=file`).
pub(crate) struct FileBackend;

impl Backend for FileBackend {
    fn describe(&self) -> String {
        "a JSON file".to_string()
    }

    fn fetch<'a>(&'a self, store_id: &'a str) -> BoxFuture<'a, Result<Values, ConfigError>> {
        Box::pin(async move {
            let path = PathBuf::from(store_id);
            // A small file, read once an interval: not worth a blocking-pool hop.
            let raw = std::fs::read(&path).map_err(|error| {
                ConfigError::new(
                    ConfigErrorKind::Store,
                    format!("the config store file {} cannot be read: {error}", path.display()),
                )
            })?;
            Values::from_json_object(&raw, &format!("the file {}", path.display()))
        })
    }
}

/// Values the deployment gave as environment variables with one prefix
/// (`CELERITY_APP_`, `CELERITY_SECRET_`, `CELERITY_VARIABLE_`), with the
/// prefix taken off. Read once: a process's environment does not change.
pub(crate) struct EnvBackend {
    pub(crate) prefix: &'static str,
    values: Values,
}

impl EnvBackend {
    pub(crate) fn new(prefix: &'static str, env: &Environment) -> Self {
        EnvBackend { prefix, values: env.with_prefix(prefix).filter(|(key, _)| !key.is_empty()).collect() }
    }
}

impl Backend for EnvBackend {
    fn describe(&self) -> String {
        format!("the {}* environment variables", self.prefix)
    }

    fn fetch<'a>(&'a self, _store_id: &'a str) -> BoxFuture<'a, Result<Values, ConfigError>> {
        let values = self.values.clone();
        Box::pin(async move { Ok(values) })
    }

    fn caches(&self) -> bool {
        true
    }
}

/// The store kinds: `secrets-manager` (the AWS default), `parameter-store`,
/// and `file`; a local session reads every other kind from its Valkey.
pub(crate) mod kinds {
    pub(crate) const SECRETS_MANAGER: &str = "secrets-manager";
    pub(crate) const PARAMETER_STORE: &str = "parameter-store";
    pub(crate) const FILE: &str = "file";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_map_backend_serves_its_stores_and_refuses_others() {
        let backend = MapBackend::new().with("s", Values::from_pairs([("k", "v")]));
        assert_eq!(backend.fetch("s").await.unwrap().get("k"), Some("v"));
        let error = backend.fetch("t").await.unwrap_err();
        assert_eq!(error.kind(), ConfigErrorKind::Store);
        backend.set("s", Values::from_pairs([("k", "w")]));
        assert_eq!(backend.fetch("s").await.unwrap().get("k"), Some("w"));
    }

    #[tokio::test]
    async fn environment_values_lose_their_prefix_and_no_other_is_read() {
        let env = Environment::from_pairs([
            ("CELERITY_APP_HOST", "0.0.0.0"),
            ("CELERITY_APP_", "nameless"),
            ("CELERITY_SECRET_KEY", "s3cret"),
            ("CELERITY_VARIABLE_region", "eu-west-1"),
        ]);
        let app = EnvBackend::new("CELERITY_APP_", &env).fetch("").await.unwrap();
        assert_eq!(app.keys().collect::<Vec<_>>(), ["HOST"]);
        let secrets = EnvBackend::new("CELERITY_SECRET_", &env).fetch("").await.unwrap();
        assert_eq!(secrets.get("KEY"), Some("s3cret"));
        let variables = EnvBackend::new("CELERITY_VARIABLE_", &env).fetch("").await.unwrap();
        assert_eq!(variables.get("region"), Some("eu-west-1"));
    }

    #[tokio::test]
    async fn a_file_store_is_one_json_object_and_a_missing_file_says_so() {
        let dir = std::env::temp_dir().join(format!("celerity-config-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("store.json");
        std::fs::write(&path, br#"{"TIMEOUT": 5}"#).unwrap();
        let values = FileBackend.fetch(path.to_str().unwrap()).await.unwrap();
        assert_eq!(values.get("TIMEOUT"), Some("5"));
        std::fs::write(&path, b"TIMEOUT=5").unwrap();
        let error = FileBackend.fetch(path.to_str().unwrap()).await.unwrap_err();
        assert_eq!(error.kind(), ConfigErrorKind::Malformed);
        assert!(error.message().contains("store.json"), "{error}");
        let missing = dir.join("missing.json");
        let error = FileBackend.fetch(missing.to_str().unwrap()).await.unwrap_err();
        assert!(error.message().contains("missing.json"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
