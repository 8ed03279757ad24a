//! The configuration stores the deployment describes in the environment.
//!
//! - `CELERITY_CONFIG_STORE_ID` and `CELERITY_CONFIG_STORE_KIND`: the
//!   application's unnamed store, registered as the namespace `default`.
//! - `CELERITY_CONFIG_<KEY>_STORE_ID`, `_STORE_KIND`, `_STORE_PREFIX` and
//!   `_NAMESPACE`: a named store. Its namespace is `_NAMESPACE`, else
//!   `_STORE_PREFIX`, else the key in lower case (`CELERITY_CONFIG_STORE_ID`
//!   itself is the unnamed store, not one called `STORE`). The deployment
//!   always describes one named `resources`.
//! - `CELERITY_CONFIG_REFRESH_INTERVAL_MS`: how long values are held before
//!   they are read again; 30 000 by default, 0 for the life of the process.

use std::time::Duration;

use super::environment::Environment;
use super::{ConfigError, ConfigErrorKind};

/// The namespace of the store described without a name.
pub const DEFAULT_NAMESPACE: &str = "default";
/// The namespace the deployment keeps resource identifiers and connection
/// settings in.
pub const RESOURCES_NAMESPACE: &str = "resources";
/// How long values are held when the deployment does not say.
pub const DEFAULT_REFRESH: Duration = Duration::from_secs(30);

const PREFIX: &str = "CELERITY_CONFIG_";
const STORE_ID: &str = "_STORE_ID";

/// One store the deployment described.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoreSpec {
    /// The namespace a handler asks for.
    pub(crate) namespace: String,
    /// What the backend calls the store: a secret's name or ARN, a path, a
    /// Valkey key.
    pub(crate) store_id: String,
    /// `secrets-manager`, `parameter-store`, ...; `None` for the platform's
    /// default.
    pub(crate) kind: Option<String>,
    /// Only the keys under `prefix/` are served, without it.
    pub(crate) prefix: Option<String>,
}

/// Every store the environment describes, sorted by namespace so that the
/// same environment always builds the same configuration.
pub(crate) fn stores(env: &Environment) -> Vec<StoreSpec> {
    let mut stores = Vec::new();
    if let Some(store_id) = env.get("CELERITY_CONFIG_STORE_ID") {
        stores.push(StoreSpec {
            namespace: DEFAULT_NAMESPACE.to_string(),
            store_id: store_id.to_string(),
            kind: env.get("CELERITY_CONFIG_STORE_KIND").map(str::to_string),
            prefix: None,
        });
    }
    for (rest, store_id) in env.with_prefix(PREFIX) {
        let Some(key) = rest.strip_suffix(STORE_ID) else { continue };
        if key.is_empty() || key == "STORE" || store_id.is_empty() {
            continue;
        }
        let var = |suffix: &str| env.get(&format!("{PREFIX}{key}{suffix}")).map(str::to_string);
        let prefix = var("_STORE_PREFIX");
        let namespace = var("_NAMESPACE").or_else(|| prefix.clone()).unwrap_or_else(|| key.to_ascii_lowercase());
        stores.push(StoreSpec { namespace, store_id: store_id.to_string(), kind: var("_STORE_KIND"), prefix });
    }
    stores.sort_by(|a, b| a.namespace.cmp(&b.namespace));
    // Two descriptions of one namespace: the first (in name order) stands,
    // as a handler can only ever mean one.
    stores.dedup_by(|later, first| later.namespace == first.namespace);
    stores
}

/// How long values are held before they are read again: `None` for the
/// life of the process.
pub(crate) fn refresh_interval(env: &Environment) -> Result<Option<Duration>, ConfigError> {
    const VAR: &str = "CELERITY_CONFIG_REFRESH_INTERVAL_MS";
    let Some(raw) = env.get(VAR) else { return Ok(Some(DEFAULT_REFRESH)) };
    match raw.trim().parse::<u64>() {
        Ok(0) => Ok(None),
        Ok(ms) => Ok(Some(Duration::from_millis(ms))),
        Err(_) => Err(ConfigError::new(
            ConfigErrorKind::Malformed,
            format!("{VAR} must be a whole number of milliseconds (0 holds values for the life of the process)"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(namespace: &str, store_id: &str, kind: Option<&str>, prefix: Option<&str>) -> StoreSpec {
        StoreSpec {
            namespace: namespace.into(),
            store_id: store_id.into(),
            kind: kind.map(Into::into),
            prefix: prefix.map(Into::into),
        }
    }

    #[test]
    fn the_unnamed_store_and_named_ones_are_read_together() {
        let env = Environment::from_pairs([
            ("CELERITY_CONFIG_STORE_ID", "app-secret"),
            ("CELERITY_CONFIG_STORE_KIND", "secrets-manager"),
            ("CELERITY_CONFIG_RESOURCES_STORE_ID", "res-secret"),
            ("CELERITY_CONFIG_ORDERS_STORE_ID", "/shared/params"),
            ("CELERITY_CONFIG_ORDERS_STORE_KIND", "parameter-store"),
            ("CELERITY_CONFIG_ORDERS_STORE_PREFIX", "orders"),
            ("CELERITY_CONFIG_BILLING_STORE_ID", "billing-secret"),
            ("CELERITY_CONFIG_BILLING_STORE_PREFIX", "bill"),
            ("CELERITY_CONFIG_BILLING_NAMESPACE", "payments"),
            ("CELERITY_CONFIG_EMPTY_STORE_ID", ""),
            ("CELERITY_CONFIG_REFRESH_INTERVAL_MS", "5"),
        ]);
        assert_eq!(
            stores(&env),
            [
                spec("default", "app-secret", Some("secrets-manager"), None),
                spec("orders", "/shared/params", Some("parameter-store"), Some("orders")),
                spec("payments", "billing-secret", None, Some("bill")),
                spec("resources", "res-secret", None, None),
            ]
        );
    }

    #[test]
    fn the_unnamed_store_is_not_a_store_called_store() {
        let env = Environment::from_pairs([("CELERITY_CONFIG_STORE_ID", "s")]);
        assert_eq!(stores(&env), [spec("default", "s", None, None)]);
    }

    #[test]
    fn refresh_defaults_to_30_seconds_and_zero_holds_forever() {
        let of = |value: Option<&str>| {
            let env = Environment::from_pairs(value.map(|v| ("CELERITY_CONFIG_REFRESH_INTERVAL_MS", v)));
            refresh_interval(&env)
        };
        assert_eq!(of(None), Ok(Some(Duration::from_secs(30))));
        assert_eq!(of(Some("0")), Ok(None));
        assert_eq!(of(Some("250")), Ok(Some(Duration::from_millis(250))));
        let error = of(Some("30s")).unwrap_err();
        assert!(error.message().contains("CELERITY_CONFIG_REFRESH_INTERVAL_MS"), "{error}");
    }
}
