//! One store's values, read on first use, held, and read again once they
//! are older than the refresh interval.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::time::Instant;

use serde::de::DeserializeOwned;

use super::backend::Backend;
use super::{ConfigError, ConfigErrorKind, Values, bind};

/// The values of one configuration store, under the name handlers ask for.
/// Cloning is cheap; clones share what is held.
///
/// The store is not read until a value is asked for. Its values are then
/// held, and read again by the first call that finds them older than the
/// refresh interval (`CELERITY_CONFIG_REFRESH_INTERVAL_MS`, 30 s by
/// default), which waits for the re-read. A re-read that fails keeps the
/// values held and logs once, until a read succeeds again; it is tried
/// again one interval later.
///
/// ```
/// use celerity::config::{Configuration, MapBackend, Values};
///
/// # celerity::testing::block_on(async {
/// let backend = MapBackend::new().with("orders-config", Values::from_pairs([("TIMEOUT_MS", "250")]));
/// let config = Configuration::builder().store("orders", "orders-config", backend).build();
/// let orders = config.namespace("orders")?;
/// assert_eq!(orders.require("TIMEOUT_MS").await?, "250");
/// assert_eq!(orders.get("RETRIES").await?, None);
/// let error = orders.require("RETRIES").await.unwrap_err();
/// assert_eq!(error.to_string(), "the config namespace `orders` holds no value for `RETRIES`");
/// # Ok::<_, celerity::config::ConfigError>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Namespace {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    store_id: String,
    prefix: Option<String>,
    backend: Result<Arc<dyn Backend>, ConfigError>,
    refresh: Option<Duration>,
    timeout: Duration,
    held: RwLock<Option<Held>>,
    /// Held while the store is read, so that callers who find the values
    /// stale at once wait for one read rather than each making their own.
    reading: tokio::sync::Mutex<()>,
    /// Whether the last re-read failed and was logged.
    warned: AtomicBool,
    /// Whether a background re-read is under way.
    refreshing: AtomicBool,
}

#[derive(Clone)]
struct Held {
    values: Values,
    /// Counts the reads that changed the values, for typed configuration
    /// to know when to bind again.
    generation: u64,
    /// When the store was last read, successfully or not; on tokio's
    /// clock, which tests can pause.
    checked_at: Instant,
}

/// How a namespace is read: where from, and how often.
pub(crate) struct NamespaceSpec {
    pub(crate) name: String,
    pub(crate) store_id: String,
    pub(crate) prefix: Option<String>,
    pub(crate) backend: Result<Arc<dyn Backend>, ConfigError>,
    pub(crate) refresh: Option<Duration>,
    pub(crate) timeout: Duration,
}

impl Namespace {
    pub(crate) fn new(spec: NamespaceSpec) -> Self {
        // A backend that holds values itself is not re-read on top of.
        let refresh = match &spec.backend {
            Ok(backend) if backend.caches() => None,
            _ => spec.refresh,
        };
        Namespace {
            inner: Arc::new(Inner {
                name: spec.name,
                store_id: spec.store_id,
                prefix: spec.prefix,
                backend: spec.backend,
                refresh,
                timeout: spec.timeout,
                held: RwLock::new(None),
                reading: tokio::sync::Mutex::new(()),
                warned: AtomicBool::new(false),
                refreshing: AtomicBool::new(false),
            }),
        }
    }

    /// The name handlers ask for, such as `default` or `resources`.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// What the backend calls the store: a secret's name, a parameter path,
    /// a Valkey key.
    pub fn store_id(&self) -> &str {
        &self.inner.store_id
    }

    /// What reads the store, for messages: "Secrets Manager", "the local
    /// Valkey at 127.0.0.1:6379"; or why nothing can.
    pub fn source(&self) -> String {
        match &self.inner.backend {
            Ok(backend) => backend.describe(),
            Err(error) => format!("nothing ({error})"),
        }
    }

    /// The value of `key`, if the store holds one.
    pub async fn get(&self, key: &str) -> Result<Option<String>, ConfigError> {
        Ok(self.values().await?.get(key).map(str::to_string))
    }

    /// The value of `key`, or an error naming the key and the namespace.
    pub async fn require(&self, key: &str) -> Result<String, ConfigError> {
        let values = self.values().await?;
        values.get(key).map(str::to_string).ok_or_else(|| values.missing_key(&self.inner.name, key))
    }

    /// Every value the store holds.
    pub async fn all(&self) -> Result<Values, ConfigError> {
        self.values().await
    }

    /// The store's values bound into `T` (see
    /// [`Configuration::bind`](super::Configuration::bind) for how keys
    /// are matched).
    pub async fn bind<T: DeserializeOwned>(&self) -> Result<T, ConfigError> {
        let values = self.values().await?;
        bind::bind(&values, &self.inner.name)
    }

    /// Reads the store now, whatever its values' age, and says whether it
    /// could: the store's error when it could not, while the values held
    /// before stay and go on being served.
    pub async fn reload(&self) -> Result<(), ConfigError> {
        let _reading = self.inner.reading.lock().await;
        self.read_store().await.map(drop).map_err(|unread| unread.error)
    }

    /// The values, read when none are held or they are stale.
    pub(crate) async fn values(&self) -> Result<Values, ConfigError> {
        if let Some(held) = self.fresh() {
            return Ok(held.values);
        }
        let _reading = self.inner.reading.lock().await;
        // Another caller may have read the store while this one waited.
        if let Some(held) = self.fresh() {
            return Ok(held.values);
        }
        // Stale values are worth more than none.
        self.read_store().await.or_else(|unread| unread.held.ok_or(unread.error))
    }

    /// What is held now and its generation, without reading anything.
    pub(crate) fn held(&self) -> Option<(Values, u64)> {
        self.lock_held().as_ref().map(|held| (held.values.clone(), held.generation))
    }

    /// Starts a re-read on the current tokio runtime when the values held
    /// are stale and none is under way; the caller goes on with what is held.
    pub(crate) fn refresh_in_background(&self) {
        let stale = match &*self.lock_held() {
            Some(held) => self.is_stale(held),
            None => true,
        };
        if !stale || self.inner.refreshing.swap(true, Ordering::AcqRel) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.inner.refreshing.store(false, Ordering::Release);
            return;
        };
        let namespace = self.clone();
        runtime.spawn(async move {
            // A failure is logged by the read itself.
            let _ = namespace.values().await;
            namespace.inner.refreshing.store(false, Ordering::Release);
        });
    }

    fn fresh(&self) -> Option<Held> {
        self.lock_held().as_ref().filter(|held| !self.is_stale(held)).cloned()
    }

    fn is_stale(&self, held: &Held) -> bool {
        self.inner.refresh.is_some_and(|interval| held.checked_at.elapsed() >= interval)
    }

    fn lock_held(&self) -> std::sync::RwLockReadGuard<'_, Option<Held>> {
        self.inner.held.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Reads the store; the caller holds `reading`. When it cannot, the
    /// values held before are kept, and given back with the error.
    async fn read_store(&self) -> Result<Values, Unread> {
        let inner = &self.inner;
        let result = match &inner.backend {
            Ok(backend) => match tokio::time::timeout(inner.timeout, backend.fetch(&inner.store_id)).await {
                Ok(Ok(values)) => Ok(match &inner.prefix {
                    Some(prefix) => values.under_prefix(prefix),
                    None => values,
                }),
                Ok(Err(error)) => Err(self.failed(error, backend.as_ref())),
                Err(_) => Err(ConfigError::new(
                    ConfigErrorKind::Timeout,
                    format!(
                        "the config namespace `{}` (store {:?}, {}) did not answer within {} ms",
                        inner.name,
                        inner.store_id,
                        backend.describe(),
                        inner.timeout.as_millis()
                    ),
                )),
            },
            Err(error) => Err(ConfigError::new(
                error.kind(),
                format!("the config namespace `{}` (store {:?}) cannot be read: {error}", inner.name, inner.store_id),
            )),
        };
        let mut held = inner.held.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        match (result, held.as_mut()) {
            (Ok(values), Some(previous)) => {
                if previous.values != values {
                    previous.generation += 1;
                    previous.values = values.clone();
                    tracing::info!(namespace = %inner.name, "configuration re-read: its values changed");
                }
                previous.checked_at = Instant::now();
                if inner.warned.swap(false, Ordering::AcqRel) {
                    tracing::info!(namespace = %inner.name, "configuration read again after failing");
                }
                Ok(values)
            }
            (Ok(values), None) => {
                *held = Some(Held { values: values.clone(), generation: 0, checked_at: Instant::now() });
                Ok(values)
            }
            (Err(error), Some(previous)) => {
                // Tried again one interval later.
                previous.checked_at = Instant::now();
                if !inner.warned.swap(true, Ordering::AcqRel) {
                    tracing::warn!(
                        namespace = %inner.name,
                        "could not read the configuration again, serving the values already held: {error}"
                    );
                }
                Err(Unread { error, held: Some(previous.values.clone()) })
            }
            (Err(error), None) => Err(Unread { error, held: None }),
        }
    }

    fn failed(&self, error: ConfigError, backend: &dyn Backend) -> ConfigError {
        ConfigError::new(
            error.kind(),
            format!(
                "the config namespace `{}` (store {:?}, {}) cannot be read: {error}",
                self.inner.name,
                self.inner.store_id,
                backend.describe()
            ),
        )
    }
}

impl fmt::Debug for Namespace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Namespace")
            .field("name", &self.inner.name)
            .field("store_id", &self.inner.store_id)
            .field("source", &self.source())
            .field("refresh", &self.inner.refresh)
            .finish_non_exhaustive()
    }
}

/// A read of a store that failed: why, and the values held before, which
/// go on being served.
struct Unread {
    error: ConfigError,
    held: Option<Values>,
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;
    use crate::config::backend::{BoxFuture, MapBackend};

    fn namespace(backend: impl Backend, refresh: Option<Duration>) -> Namespace {
        Namespace::new(NamespaceSpec {
            name: "default".into(),
            store_id: "s".into(),
            prefix: None,
            backend: Ok(Arc::new(backend)),
            refresh,
            timeout: Duration::from_secs(5),
        })
    }

    /// Counts its reads, and fails them while told to.
    #[derive(Clone, Default)]
    struct Flaky {
        map: MapBackend,
        reads: Arc<AtomicUsize>,
        failing: Arc<AtomicBool>,
    }

    impl Backend for Flaky {
        fn describe(&self) -> String {
            "a flaky store".into()
        }
        fn fetch<'a>(&'a self, store_id: &'a str) -> BoxFuture<'a, Result<Values, ConfigError>> {
            self.reads.fetch_add(1, Ordering::SeqCst);
            if self.failing.load(Ordering::SeqCst) {
                return Box::pin(async { Err(ConfigError::new(ConfigErrorKind::Store, "AccessDeniedException")) });
            }
            self.map.fetch(store_id)
        }
    }

    #[tokio::test]
    async fn the_store_is_read_on_first_use_and_then_held() {
        let flaky = Flaky::default();
        flaky.map.set("s", Values::from_pairs([("k", "1")]));
        let ns = namespace(flaky.clone(), None);
        assert_eq!(flaky.reads.load(Ordering::SeqCst), 0, "nothing is read before a value is asked for");
        assert_eq!(ns.get("k").await.unwrap().as_deref(), Some("1"));
        flaky.map.set("s", Values::from_pairs([("k", "2")]));
        assert_eq!(ns.get("k").await.unwrap().as_deref(), Some("1"), "held for the life of the process");
        assert_eq!(flaky.reads.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn stale_values_are_read_again_and_a_failed_read_keeps_them() {
        let flaky = Flaky::default();
        flaky.map.set("s", Values::from_pairs([("k", "1")]));
        let ns = namespace(flaky.clone(), Some(Duration::from_millis(100)));
        assert_eq!(ns.require("k").await.unwrap(), "1");
        assert_eq!(ns.held().unwrap().1, 0);

        // Rotated: picked up once the interval has passed.
        flaky.map.set("s", Values::from_pairs([("k", "2")]));
        tokio::time::advance(Duration::from_millis(120)).await;
        assert_eq!(ns.require("k").await.unwrap(), "2");
        assert_eq!(ns.held().unwrap().1, 1, "a change counts a generation");

        // The store starts refusing: the values held are served.
        flaky.failing.store(true, Ordering::SeqCst);
        tokio::time::advance(Duration::from_millis(120)).await;
        assert_eq!(ns.require("k").await.unwrap(), "2");
        let reads = flaky.reads.load(Ordering::SeqCst);
        assert_eq!(ns.require("k").await.unwrap(), "2");
        assert_eq!(flaky.reads.load(Ordering::SeqCst), reads, "a refusing store is tried once an interval");

        // A reload asked for says that it failed, and keeps what is held.
        let error = ns.reload().await.unwrap_err();
        assert!(error.message().contains("AccessDeniedException"), "{error}");
        assert_eq!(ns.require("k").await.unwrap(), "2");
        flaky.failing.store(false, Ordering::SeqCst);
        ns.reload().await.unwrap();
    }

    #[tokio::test]
    async fn a_first_read_that_fails_is_an_error_naming_the_namespace_and_store() {
        let flaky = Flaky::default();
        flaky.failing.store(true, Ordering::SeqCst);
        let error = namespace(flaky, None).get("k").await.unwrap_err();
        assert_eq!(error.kind(), ConfigErrorKind::Store);
        assert_eq!(
            error.to_string(),
            r#"the config namespace `default` (store "s", a flaky store) cannot be read: AccessDeniedException"#
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_store_that_never_answers_times_out() {
        struct Silent;
        impl Backend for Silent {
            fn describe(&self) -> String {
                "a silent store".into()
            }
            fn fetch<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Values, ConfigError>> {
                Box::pin(std::future::pending())
            }
        }
        let error = namespace(Silent, None).get("k").await.unwrap_err();
        assert_eq!(error.kind(), ConfigErrorKind::Timeout);
        assert!(error.message().contains("within 5000 ms"), "{error}");
    }

    #[tokio::test]
    async fn a_missing_key_points_at_one_that_differs_in_case() {
        let ns = namespace(MapBackend::new().with("s", Values::from_pairs([("REGION", "x")])), None);
        let error = ns.require("region").await.unwrap_err();
        assert_eq!(error.kind(), ConfigErrorKind::MissingKey);
        assert_eq!(error.to_string(), "the config namespace `default` holds no value for `region` (it has `REGION`)");
    }

    #[test]
    fn debug_output_names_the_store_and_no_value() {
        let ns = namespace(MapBackend::new().with("s", Values::from_pairs([("PASSWORD", "hunter2")])), None);
        let text = format!("{ns:?}");
        assert!(text.contains("\"s\"") && !text.contains("hunter2"), "{text}");
    }
}
