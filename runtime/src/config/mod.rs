//! Configuration and secrets: what the deployment describes, in one typed
//! API, the same locally, under the Celerity runtime and on AWS Lambda.
//!
//! A [`Configuration`] holds the application's namespaces, one per
//! configuration store the deployment describes in the environment (see
//! below), and its [resource links](crate::resources). Nothing is read
//! until a value is asked for; values are then held, and read again once
//! they are older than the refresh interval. A handler takes
//! [`Config<T>`] (typed, bound when the application starts) or the whole
//! [`Configuration`] as an argument, as it takes [`State<T>`](crate::State);
//! `main` reads it before serving through
//! [`App::configuration`](crate::App::configuration).
//!
//! ```no_run
//! use celerity::config::{Config, Secret};
//! use celerity::prelude::*;
//!
//! #[derive(serde::Deserialize)]
//! struct Payments {
//!     #[serde(rename = "PAYMENTS_URL")]
//!     url: String,
//!     #[serde(rename = "PAYMENTS_KEY")]
//!     key: Secret<String>,
//! }
//!
//! #[http_handler("POST::/payments")]
//! async fn pay(payments: Config<Payments>) -> String {
//!     format!("paying through {} with a key of {} bytes", payments.url, payments.key.expose().len())
//! }
//!
//! #[celerity::main]
//! async fn main() -> celerity::Result<App> {
//!     let app = App::new();
//!     // Read before anything is served: a missing value stops the start.
//!     let region = app.configuration()?.require("REGION").await?;
//!     println!("serving in {region}");
//!     Ok(app)
//! }
//! ```
//!
//! # Where values come from
//!
//! - The application's own store: `CELERITY_CONFIG_STORE_ID` and
//!   `CELERITY_CONFIG_STORE_KIND`, the namespace `default`.
//! - Named stores: `CELERITY_CONFIG_<KEY>_STORE_ID`, `_STORE_KIND`,
//!   `_STORE_PREFIX`, `_NAMESPACE`; the namespace is `_NAMESPACE`, else
//!   `_STORE_PREFIX`, else the key in lower case. The deployment always
//!   describes `resources`, holding resource identifiers.
//! - The store's backend follows `CELERITY_PLATFORM` and the store kind:
//!   - `aws` (feature `aws`): `secrets-manager` (the default: one JSON
//!     object secret; read through the Lambda Parameters and Secrets
//!     extension when `PARAMETERS_SECRETS_EXTENSION_HTTP_PORT` is set,
//!     which caches, so the SDK does not refresh on top of it) or
//!     `parameter-store` (every parameter under the path, recursive,
//!     decrypted, page by page);
//!   - `local` (feature `redis`): the Valkey key named by the store id, at
//!     `CELERITY_CONFIG_VALKEY_HOST`:`CELERITY_CONFIG_VALKEY_PORT`;
//!   - any platform: kind `file`, a JSON object in the file the store id
//!     names.
//! - The environment, always: the namespaces `app` (`CELERITY_APP_*`),
//!   `secrets` (`CELERITY_SECRET_*`) and `variables` (`CELERITY_VARIABLE_*`),
//!   prefixes taken off. Where the deployment describes no store of the
//!   application's own, `app` is its namespace.
//! - `CELERITY_CONFIG_REFRESH_INTERVAL_MS` (30 000 by default, 0 never)
//!   and `CELERITY_CONFIG_TIMEOUT_MS` (10 000: how long a store may take).
//!
//! # Errors
//!
//! A [`ConfigError`] names its source: the namespace and store, the key,
//! the file or variable. No message, log line or `Debug` output carries a
//! value, since any value may be a secret; [`Secret<T>`] keeps one out of
//! the `Debug` output of the application's own types too.

mod backend;
mod bind;
mod discover;
pub(crate) mod environment;
mod error;
#[cfg(feature = "redis")]
mod local;
mod namespace;
mod platform;
pub(crate) mod resource_kind;
mod secret;
mod select;
mod service;
mod typed;
mod values;

#[cfg(feature = "aws")]
mod aws;

pub use backend::{Backend, BoxFuture, MapBackend};
pub use discover::{DEFAULT_NAMESPACE, DEFAULT_REFRESH, RESOURCES_NAMESPACE};
pub use error::{ConfigError, ConfigErrorKind};
pub use namespace::Namespace;
pub use platform::{Deployment, Endpoints, Platform};
pub use secret::Secret;
pub use service::{
    APP_ENV_NAMESPACE, Configuration, ConfigurationBuilder, DEFAULT_TIMEOUT, SECRETS_ENV_NAMESPACE,
    VARIABLES_ENV_NAMESPACE,
};
pub(crate) use typed::ConfigNeed;
pub use typed::{Config, ConfigNamespace, DefaultNamespace};
pub use values::Values;
