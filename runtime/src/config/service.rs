//! The application's configuration: its namespaces, its resource links,
//! and the typed values bound from them.

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;

use serde::de::DeserializeOwned;

use crate::future::BoxFuture;

use super::backend::{Backend, EnvBackend, MapBackend};
use super::discover::{self, RESOURCES_NAMESPACE};
use super::environment::Environment;
use super::namespace::{Namespace, NamespaceSpec};
use super::platform::Deployment;
use super::typed::TypedSlot;
use super::{ConfigError, ConfigErrorKind, Values, bind};
use crate::resources::links::{self, Loaded};
use crate::resources::{Link, Links, ResourceHandle, Resources};

/// The namespace of the `CELERITY_APP_*` environment variables.
pub const APP_ENV_NAMESPACE: &str = "app";
/// The namespace of the `CELERITY_SECRET_*` environment variables.
pub const SECRETS_ENV_NAMESPACE: &str = "secrets";
/// The namespace of the `CELERITY_VARIABLE_*` environment variables (the
/// blueprint's variables).
pub const VARIABLES_ENV_NAMESPACE: &str = "variables";

/// How long a store may take to answer before reading it fails, when
/// `CELERITY_CONFIG_TIMEOUT_MS` does not say.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The application's configuration and secrets, and its resources: what
/// the deployment describes, in one place. Cloning is cheap; clones share
/// what is held.
///
/// [`Configuration::from_env`] discovers the stores from the environment
/// (see [`crate::config`]); nothing is read until a value is asked for.
/// Besides the stores, three namespaces read the environment:
/// [`APP_ENV_NAMESPACE`] (`CELERITY_APP_*`), [`SECRETS_ENV_NAMESPACE`]
/// (`CELERITY_SECRET_*`) and [`VARIABLES_ENV_NAMESPACE`]
/// (`CELERITY_VARIABLE_*`), each with its prefix taken off; a store the
/// deployment describes under one of those names takes its place.
///
/// ```
/// use celerity::config::{Configuration, Values};
///
/// # celerity::testing::block_on(async {
/// let config = Configuration::builder()
///     .values("default", Values::from_pairs([("REGION", "eu-west-2"), ("RETRIES", "3")]))
///     .build();
/// assert_eq!(config.get("REGION").await?.as_deref(), Some("eu-west-2"));
/// assert_eq!(config.require("RETRIES").await?, "3");
/// assert_eq!(config.all().await?.len(), 2);
///
/// #[derive(serde::Deserialize)]
/// struct Settings {
///     #[serde(rename = "RETRIES")]
///     retries: u32,
/// }
/// assert_eq!(config.bind::<Settings>().await?.retries, 3);
/// # Ok::<_, celerity::config::ConfigError>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Configuration {
    inner: Arc<Inner>,
}

struct Inner {
    namespaces: BTreeMap<String, Namespace>,
    deployment: Deployment,
    links: Loaded,
    typed: RwLock<HashMap<(TypeId, Option<&'static str>), TypedSlot>>,
    handles: Mutex<HashMap<(TypeId, String), Box<dyn Any + Send + Sync>>>,
    /// What the handles opened that must be closed when the application
    /// ends: a SQL database's pools.
    closing: Mutex<Vec<BoxFuture<'static, ()>>>,
}

/// How long closing what the handles opened may take when the application
/// ends: the handlers have finished by then, so only a server that stopped
/// answering takes longer.
const CLOSE_LIMIT: Duration = Duration::from_secs(5);

impl Configuration {
    /// The configuration the process's environment describes: its stores,
    /// its links and its platform. Reads the links file, and nothing else;
    /// fails only when a variable it reads is malformed.
    pub fn from_env() -> Result<Configuration, ConfigError> {
        Configuration::from_environment(&Environment::process())
    }

    /// The configuration `vars` describe, as though they were the process's
    /// environment.
    pub fn from_vars<K: Into<String>, V: Into<String>>(
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Configuration, ConfigError> {
        Configuration::from_environment(&Environment::from_pairs(vars))
    }

    pub(crate) fn from_environment(env: &Environment) -> Result<Configuration, ConfigError> {
        let deployment = Deployment::from_environment(env);
        let refresh = discover::refresh_interval(env)?;
        let timeout = timeout(env)?;
        let mut namespaces = environment_namespaces(env);
        for store in discover::stores(env) {
            let backend = super::select::select(deployment.platform, store.kind.as_deref(), env);
            let namespace = Namespace::new(NamespaceSpec {
                name: store.namespace.clone(),
                store_id: store.store_id,
                prefix: store.prefix,
                backend,
                refresh,
                timeout,
            });
            namespaces.insert(store.namespace, namespace);
        }
        Ok(Configuration::assemble(namespaces, deployment, links::load(env)))
    }

    /// A configuration built in code: for tests, and for applications with
    /// stores of their own.
    pub fn builder() -> ConfigurationBuilder {
        ConfigurationBuilder::default()
    }

    /// No store, no links, and an empty environment.
    pub fn empty() -> Configuration {
        Configuration::builder().build()
    }

    fn assemble(namespaces: BTreeMap<String, Namespace>, deployment: Deployment, links: Loaded) -> Configuration {
        Configuration {
            inner: Arc::new(Inner {
                namespaces,
                deployment,
                links,
                typed: RwLock::default(),
                handles: Mutex::default(),
                closing: Mutex::default(),
            }),
        }
    }

    /// The namespace `name`.
    pub fn namespace(&self, name: &str) -> Result<Namespace, ConfigError> {
        self.inner.namespaces.get(name).cloned().ok_or_else(|| {
            ConfigError::new(
                ConfigErrorKind::MissingNamespace,
                format!(
                    "there is no config namespace `{name}`; the application has: {}",
                    self.namespace_names().collect::<Vec<_>>().join(", ")
                ),
            )
        })
    }

    /// Every namespace's name, in order.
    pub fn namespace_names(&self) -> impl Iterator<Item = &str> {
        self.inner.namespaces.keys().map(String::as_str)
    }

    /// The application's own namespace, which [`get`](Self::get) and the
    /// others read: the one store the deployment describes for it (the
    /// `resources` store and the environment's namespaces aside), or the
    /// `CELERITY_APP_*` variables where it describes none. Several stores
    /// are an error naming them: a value has to say which it comes from.
    pub fn default_namespace(&self) -> Result<Namespace, ConfigError> {
        let own: Vec<&Namespace> = self
            .inner
            .namespaces
            .iter()
            .filter(|(name, _)| !is_reserved(name))
            .map(|(_, namespace)| namespace)
            .collect();
        match own.as_slice() {
            [] => self.namespace(APP_ENV_NAMESPACE),
            [only] => Ok((*only).clone()),
            several => Err(ConfigError::new(
                ConfigErrorKind::AmbiguousNamespace,
                format!(
                    "the application has {} config namespaces, so a value has to name one (Configuration::namespace): {}",
                    several.len(),
                    several.iter().map(|namespace| namespace.name()).collect::<Vec<_>>().join(", ")
                ),
            )),
        }
    }

    /// The value of `key` in the application's namespace, if it has one.
    pub async fn get(&self, key: &str) -> Result<Option<String>, ConfigError> {
        self.default_namespace()?.get(key).await
    }

    /// The value of `key` in the application's namespace, or an error
    /// naming the key and the namespace.
    pub async fn require(&self, key: &str) -> Result<String, ConfigError> {
        self.default_namespace()?.require(key).await
    }

    /// Every value of the application's namespace.
    pub async fn all(&self) -> Result<Values, ConfigError> {
        self.default_namespace()?.all().await
    }

    /// The application's namespace bound into `T` with serde: a field is a
    /// key (`#[serde(rename)]` and `rename_all` say which), a field that is
    /// a struct is a level of keys below its own, joined by `_` or `/`; an
    /// absent key is `None`, a `#[serde(default)]`, or an error naming it; a
    /// value that does not fit names the key and the type expected, never
    /// the value. See [`crate::config`].
    pub async fn bind<T: DeserializeOwned>(&self) -> Result<T, ConfigError> {
        self.default_namespace()?.bind().await
    }

    /// The resources the links describe, resolved through the `resources`
    /// namespace.
    pub fn resources(&self) -> Resources {
        Resources::new(self.clone())
    }

    /// How the application is deployed.
    pub fn deployment(&self) -> &Deployment {
        &self.inner.deployment
    }

    /// What the configuration holds, for the startup log: each namespace
    /// and where it is read from, and the links.
    pub fn describe(&self) -> String {
        let namespaces: Vec<String> = self
            .inner
            .namespaces
            .values()
            .filter(|namespace| !is_environment(namespace.name()))
            .map(|namespace| format!("{} (store {:?}, {})", namespace.name(), namespace.store_id(), namespace.source()))
            .collect();
        let namespaces = if namespaces.is_empty() { "no config store".to_string() } else { namespaces.join("; ") };
        format!("{namespaces}; {}", self.inner.links)
    }

    pub(crate) fn links(&self) -> Result<&Links, ConfigError> {
        self.inner.links.get()
    }

    pub(crate) fn handles(&self) -> MutexGuard<'_, HashMap<(TypeId, String), Box<dyn Any + Send + Sync>>> {
        self.inner.handles.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Closes `close` when the application ends, after its handlers.
    #[cfg(sql)]
    pub(crate) fn on_close(&self, close: BoxFuture<'static, ()>) {
        self.inner.closing.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(close);
    }

    /// Closes what the handles opened (a SQL database's pools), each at
    /// once, within a few seconds in all: called once the application has
    /// drained.
    pub(crate) async fn close(&self) {
        let closing = std::mem::take(&mut *self.inner.closing.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        if closing.is_empty() {
            return;
        }
        if tokio::time::timeout(CLOSE_LIMIT, futures_util::future::join_all(closing)).await.is_err() {
            tracing::warn!(
                "resource connections were still closing after {} s at shutdown, and were left",
                CLOSE_LIMIT.as_secs()
            );
        }
    }

    fn typed_namespace(&self, namespace: Option<&str>) -> Result<Namespace, ConfigError> {
        match namespace {
            Some(name) => self.namespace(name),
            None => self.default_namespace(),
        }
    }

    /// Reads the namespace and binds `T` from it, for the application's
    /// start: an error here stops it.
    pub(crate) async fn prime_typed<T: DeserializeOwned + Send + Sync + 'static>(
        &self,
        namespace: Option<&'static str>,
    ) -> Result<(), ConfigError> {
        self.typed_namespace(namespace)?.values().await?;
        self.typed::<T>(namespace).map(drop)
    }

    /// `T` bound from what the namespace holds now: bound again when its
    /// values changed since, with the last good value kept (and a warning)
    /// when they no longer fit. Starts a background re-read of stale values.
    pub(crate) fn typed<T: DeserializeOwned + Send + Sync + 'static>(
        &self,
        namespace: Option<&'static str>,
    ) -> Result<Arc<T>, ConfigError> {
        let ns = self.typed_namespace(namespace)?;
        ns.refresh_in_background();
        let key = (TypeId::of::<T>(), namespace);
        let Some((values, generation)) = ns.held() else {
            return Err(ConfigError::new(
                ConfigErrorKind::Store,
                format!(
                    "the config namespace `{}` has not been read: {} is bound when the application starts",
                    ns.name(),
                    std::any::type_name::<T>()
                ),
            ));
        };
        if let Some(slot) = self.inner.typed.read().unwrap_or_else(|p| p.into_inner()).get(&key)
            && (slot.generation == generation || slot.refused == Some(generation))
            && let Ok(value) = Arc::clone(&slot.value).downcast::<T>()
        {
            return Ok(value);
        }
        let mut typed = self.inner.typed.write().unwrap_or_else(|p| p.into_inner());
        match bind::bind::<T>(&values, ns.name()) {
            Ok(value) => {
                let value = Arc::new(value);
                typed.insert(key, TypedSlot { generation, value: value.clone(), refused: None });
                Ok(value)
            }
            Err(error) => match typed.get_mut(&key) {
                Some(slot) => {
                    if slot.refused != Some(generation) {
                        tracing::warn!(
                            namespace = %ns.name(),
                            "the configuration changed into values {} cannot hold, so the last ones that bound are \
                             served: {error}",
                            std::any::type_name::<T>()
                        );
                        slot.refused = Some(generation);
                    }
                    Arc::clone(&slot.value).downcast::<T>().map_err(|_| error)
                }
                None => Err(error),
            },
        }
    }
}

impl fmt::Debug for Configuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Configuration")
            .field("namespaces", &self.inner.namespaces.values().collect::<Vec<_>>())
            .field("deployment", &self.inner.deployment)
            .finish_non_exhaustive()
    }
}

/// Not the application's own: the deployment's and the environment's.
fn is_reserved(name: &str) -> bool {
    name == RESOURCES_NAMESPACE || is_environment(name)
}

fn is_environment(name: &str) -> bool {
    matches!(name, APP_ENV_NAMESPACE | SECRETS_ENV_NAMESPACE | VARIABLES_ENV_NAMESPACE)
}

fn environment_namespaces(env: &Environment) -> BTreeMap<String, Namespace> {
    [
        (APP_ENV_NAMESPACE, "CELERITY_APP_"),
        (SECRETS_ENV_NAMESPACE, "CELERITY_SECRET_"),
        (VARIABLES_ENV_NAMESPACE, "CELERITY_VARIABLE_"),
    ]
    .into_iter()
    .map(|(name, prefix)| {
        let backend: Arc<dyn Backend> = Arc::new(EnvBackend::new(prefix, env));
        let namespace = Namespace::new(NamespaceSpec {
            name: name.to_string(),
            store_id: format!("{prefix}*"),
            prefix: None,
            backend: Ok(backend),
            refresh: None,
            timeout: DEFAULT_TIMEOUT,
        });
        (name.to_string(), namespace)
    })
    .collect()
}

fn timeout(env: &Environment) -> Result<Duration, ConfigError> {
    const VAR: &str = "CELERITY_CONFIG_TIMEOUT_MS";
    match env.get(VAR) {
        None => Ok(DEFAULT_TIMEOUT),
        Some(raw) => match raw.trim().parse::<u64>() {
            Ok(ms) if ms > 0 => Ok(Duration::from_millis(ms)),
            _ => Err(ConfigError::new(
                ConfigErrorKind::Malformed,
                format!("{VAR} must be a whole number of milliseconds above 0"),
            )),
        },
    }
}

/// Builds a [`Configuration`] in code. Namespaces given here are read
/// through their backends as discovered ones are; the default environment
/// is empty, so a test sees only what it gives.
///
/// ```
/// use std::time::Duration;
/// use celerity::config::{Configuration, MapBackend, Values};
///
/// let stores = MapBackend::new().with("orders-config", Values::from_pairs([("TIMEOUT_MS", "250")]));
/// let config = Configuration::builder()
///     .store("orders", "orders-config", stores.clone())
///     .values("resources", Values::from_pairs([("ordersQueue", "orders")]))
///     .refresh(Duration::from_millis(50))
///     .build();
/// assert_eq!(config.namespace_names().collect::<Vec<_>>(), ["app", "orders", "resources", "secrets", "variables"]);
/// ```
#[derive(Default)]
pub struct ConfigurationBuilder {
    stores: Vec<(String, String, Arc<dyn Backend>)>,
    links: Option<Links>,
    refresh: Option<Duration>,
    env: Vec<(String, String)>,
    deployment: Option<Deployment>,
    handles: Vec<(Link, TypeId, Box<dyn Any + Send + Sync>)>,
}

impl ConfigurationBuilder {
    /// The namespace `namespace`, read from the store `store_id` of `backend`.
    pub fn store(mut self, namespace: &str, store_id: &str, backend: impl Backend) -> Self {
        self.stores.push((namespace.to_string(), store_id.to_string(), Arc::new(backend)));
        self
    }

    /// The namespace `namespace`, holding `values`.
    pub fn values(self, namespace: &str, values: Values) -> Self {
        let backend = MapBackend::new().with(namespace, values);
        self.store(namespace, namespace, backend)
    }

    /// The resource links.
    pub fn links(mut self, links: Links) -> Self {
        self.links = Some(links);
        self
    }

    /// Re-reads stores whose values are older than `interval` (never, by
    /// default).
    pub fn refresh(mut self, interval: Duration) -> Self {
        self.refresh = Some(interval);
        self
    }

    /// An environment variable the environment's namespaces read, such as
    /// `CELERITY_APP_REGION`.
    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.to_string(), value.to_string()));
        self
    }

    /// Serves the resource `name` with `handle`, such as an in-memory
    /// stand-in from [`celerity::testing`](crate::testing): handlers taking
    /// it (by name, or as the default of its kind) get a clone of `handle`.
    /// The resource is linked, as of `handle`'s kind, if the links given do
    /// not have it.
    pub fn resource<H: ResourceHandle>(mut self, name: &str, handle: H) -> Self {
        let link = Link { name: name.to_string(), kind: H::kind(), config_key: name.to_string() };
        self.handles.push((link, TypeId::of::<H>(), Box::new(handle)));
        self
    }

    /// How the application is deployed (not deployed anywhere, by default).
    pub fn deployment(mut self, deployment: Deployment) -> Self {
        self.deployment = Some(deployment);
        self
    }

    /// The configuration.
    pub fn build(self) -> Configuration {
        let env = Environment::from_pairs(self.env);
        let mut namespaces = environment_namespaces(&env);
        for (name, store_id, backend) in self.stores {
            let namespace = Namespace::new(NamespaceSpec {
                name: name.clone(),
                store_id,
                prefix: None,
                backend: Ok(backend),
                refresh: self.refresh,
                timeout: DEFAULT_TIMEOUT,
            });
            namespaces.insert(name, namespace);
        }
        let links = match (self.links, self.handles.is_empty()) {
            (Some(links), _) => Loaded::Links(links.with(self.handles.iter().map(|(link, _, _)| link.clone()))),
            (None, false) => Loaded::Links(Links::from_links(self.handles.iter().map(|(link, _, _)| link.clone()))),
            (None, true) => Loaded::Absent(Vec::new()),
        };
        let deployment = self.deployment.unwrap_or_else(|| Deployment::from_environment(&env));
        let configuration = Configuration::assemble(namespaces, deployment, links);
        configuration
            .handles()
            .extend(self.handles.into_iter().map(|(link, type_id, handle)| ((type_id, link.name), handle)));
        configuration
    }
}

impl fmt::Debug for ConfigurationBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConfigurationBuilder")
            .field("namespaces", &self.stores.iter().map(|(name, _, _)| name).collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[tokio::test]
    async fn the_one_store_of_the_application_is_its_default_and_several_must_be_named() {
        let one = Configuration::builder()
            .values("orders", Values::from_pairs([("a", "1")]))
            .values("resources", Values::from_pairs([("q", "u")]))
            .build();
        assert_eq!(one.require("a").await.unwrap(), "1");

        let two =
            Configuration::builder().values("orders", Values::default()).values("billing", Values::default()).build();
        let error = two.get("a").await.unwrap_err();
        assert_eq!(error.kind(), ConfigErrorKind::AmbiguousNamespace);
        assert!(error.message().contains("billing, orders"), "{error}");

        let error = two.namespace("payments").unwrap_err();
        assert_eq!(error.kind(), ConfigErrorKind::MissingNamespace);
        assert_eq!(
            error.to_string(),
            "there is no config namespace `payments`; the application has: app, billing, orders, secrets, variables"
        );
    }

    #[tokio::test]
    async fn with_no_store_the_default_is_the_app_environment() {
        let config =
            Configuration::builder().env("CELERITY_APP_GREETING", "hello").env("CELERITY_SECRET_KEY", "k").build();
        assert_eq!(config.require("GREETING").await.unwrap(), "hello");
        assert_eq!(config.get("KEY").await.unwrap(), None, "secrets are a namespace of their own");
        assert_eq!(config.namespace("secrets").unwrap().require("KEY").await.unwrap(), "k");
    }

    #[tokio::test]
    async fn discovery_builds_namespaces_that_fail_on_use_where_no_backend_fits() {
        let config = Configuration::from_vars([
            ("CELERITY_CONFIG_STORE_ID", "app"),
            ("CELERITY_CONFIG_STORE_KIND", "vault"),
            ("CELERITY_PLATFORM", "gcp"),
        ])
        .unwrap();
        let error = config.get("x").await.unwrap_err();
        assert_eq!(error.kind(), ConfigErrorKind::Unsupported);
        assert!(
            error.message().starts_with("the config namespace `default` (store \"app\") cannot be read"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn typed_values_are_bound_again_when_the_store_changes_and_kept_when_they_no_longer_fit() {
        #[derive(Deserialize)]
        struct Limits {
            max: u32,
        }
        let stores = MapBackend::new().with("s", Values::from_pairs([("max", "5")]));
        let config = Configuration::builder().store("default", "s", stores.clone()).build();
        config.prime_typed::<Limits>(None).await.unwrap();
        assert_eq!(config.typed::<Limits>(None).unwrap().max, 5);

        stores.set("s", Values::from_pairs([("max", "7")]));
        config.namespace("default").unwrap().reload().await.unwrap();
        assert_eq!(config.typed::<Limits>(None).unwrap().max, 7);

        stores.set("s", Values::from_pairs([("max", "lots")]));
        config.namespace("default").unwrap().reload().await.unwrap();
        assert_eq!(config.typed::<Limits>(None).unwrap().max, 7, "the last good value stays");

        stores.set("s", Values::from_pairs([("max", "lots")]));
        let fresh = Configuration::builder().store("default", "s", stores).build();
        let error = fresh.prime_typed::<Limits>(None).await.unwrap_err();
        assert_eq!(error.kind(), ConfigErrorKind::Bind);
    }
}
