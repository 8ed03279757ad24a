//! Typed configuration a handler takes as an argument: bound when the
//! application starts, bound again when the values change.

use std::any::{Any, TypeId};
use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;
use std::sync::Arc;

use serde::de::DeserializeOwned;

use super::backend::BoxFuture;
use super::{ConfigError, Configuration};
use crate::context::Context;
use crate::pipeline::{FromEvent, Kind, Needs};

/// Names the namespace a [`Config<T, N>`] is bound from; declare one with
/// [`config_namespace!`](crate::config_namespace).
pub trait ConfigNamespace: 'static {
    /// The namespace's name, or `None` for the application's own (see
    /// [`Configuration::get`]).
    const NAME: Option<&'static str>;
}

/// The application's own namespace: the one it declares, or `default`.
#[derive(Debug, Clone, Copy)]
pub struct DefaultNamespace;

impl ConfigNamespace for DefaultNamespace {
    const NAME: Option<&'static str> = None;
}

/// Declares a [`ConfigNamespace`] by name, for `Config<T, Name>`.
///
/// ```
/// celerity::config_namespace!(
///     /// The `payments` store.
///     pub Payments = "payments"
/// );
///
/// #[derive(serde::Deserialize)]
/// struct PaymentSettings {
///     provider: String,
/// }
///
/// async fn pay(settings: celerity::config::Config<PaymentSettings, Payments>) -> String {
///     settings.provider.clone()
/// }
/// # let _ = celerity::App::new().http("POST::/pay", pay);
/// ```
#[macro_export]
macro_rules! config_namespace {
    ($(#[$meta:meta])* $vis:vis $name:ident = $namespace:literal $(;)?) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy)]
        $vis struct $name;

        impl $crate::config::ConfigNamespace for $name {
            const NAME: ::std::option::Option<&'static str> = ::std::option::Option::Some($namespace);
        }
    };
}

/// Configuration of type `T`, bound from the namespace `N` (the
/// application's own by default): take it as an argument of any handler,
/// the way [`State<T>`](crate::State) is taken.
///
/// `T` is bound when the application starts, which fails to start, naming
/// the key, when the values do not fit. When the namespace's values are
/// older than the refresh interval, an event that takes `Config<T>` starts
/// a re-read in the background and is served what is held; the next event
/// after the values change gets them bound anew. Values that change into
/// something `T` cannot hold keep the last `T` that bound, with a warning.
///
/// ```
/// use celerity::config::Config;
///
/// #[derive(serde::Deserialize)]
/// struct Pricing {
///     #[serde(rename = "CURRENCY")]
///     currency: String,
///     discount_percent: Option<u8>,
/// }
///
/// async fn quote(pricing: Config<Pricing>) -> String {
///     format!("{} off, in {}", pricing.discount_percent.unwrap_or(0), pricing.currency)
/// }
/// # let _ = celerity::App::new().http("GET::/quote", quote);
/// ```
pub struct Config<T, N: ConfigNamespace = DefaultNamespace> {
    value: Arc<T>,
    namespace: PhantomData<fn() -> N>,
}

impl<T, N: ConfigNamespace> Config<T, N> {
    /// The bound value, shared.
    pub fn into_inner(self) -> Arc<T> {
        self.value
    }
}

impl<T, N: ConfigNamespace> Deref for Config<T, N> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T, N: ConfigNamespace> Clone for Config<T, N> {
    fn clone(&self) -> Self {
        Config { value: Arc::clone(&self.value), namespace: PhantomData }
    }
}

impl<T: fmt::Debug, N: ConfigNamespace> fmt::Debug for Config<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value.fmt(f)
    }
}

/// Typed configuration a handler needs, primed when the application starts.
#[derive(Clone)]
pub(crate) struct ConfigNeed {
    pub(crate) key: (TypeId, Option<&'static str>),
    pub(crate) type_name: &'static str,
    pub(crate) namespace: Option<&'static str>,
    pub(crate) prime: for<'a> fn(&'a Configuration) -> BoxFuture<'a, Result<(), ConfigError>>,
}

impl fmt::Debug for ConfigNeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConfigNeed").field("type", &self.type_name).field("namespace", &self.namespace).finish()
    }
}

fn prime<T: DeserializeOwned + Send + Sync + 'static, N: ConfigNamespace>(
    config: &Configuration,
) -> BoxFuture<'_, Result<(), ConfigError>> {
    Box::pin(async move { config.prime_typed::<T>(N::NAME).await })
}

impl<K: Kind, T: DeserializeOwned + Send + Sync + 'static, N: ConfigNamespace> FromEvent<K> for Config<T, N> {
    fn from_event(_event: &mut K::Event, cx: &Context) -> Result<Self, K::Rejection> {
        let value = match cx.state::<Configuration>() {
            Some(config) => config.typed::<T>(N::NAME),
            None => Err(ConfigError::unsupported(
                "the handler takes Config<T>, but it runs outside an application: give the call a Configuration",
            )),
        };
        value
            .map(|value| Config { value, namespace: PhantomData })
            .map_err(|error| K::Rejection::from(crate::error::Error::typed("ConfigError", error)))
    }

    fn needs(needs: &mut Needs) {
        needs.config(ConfigNeed {
            key: (TypeId::of::<T>(), N::NAME),
            type_name: std::any::type_name::<T>(),
            namespace: N::NAME,
            prime: prime::<T, N>,
        });
    }
}

/// The whole configuration, for every kind: `get`, `require`, a namespace
/// by name, the resources.
impl<K: Kind> FromEvent<K> for Configuration {
    fn from_event(_event: &mut K::Event, cx: &Context) -> Result<Self, K::Rejection> {
        Ok(cx.state::<Configuration>().map(|config| (*config).clone()).unwrap_or_else(Configuration::empty))
    }
}

/// A bound value, and the generation of the values it was bound from.
pub(crate) struct TypedSlot {
    pub(crate) generation: u64,
    pub(crate) value: Arc<dyn Any + Send + Sync>,
    /// The generation whose values did not bind, once warned about.
    pub(crate) refused: Option<u64>,
}
