//! The resources a blueprint links to the application: how a handler finds
//! them.
//!
//! Two pieces of the deployment join a blueprint resource to what exists:
//! the [resource links](Links) (which resource is of what kind, and the key
//! that holds its identifier), written when the application is built; and
//! the `resources` configuration namespace, which holds at that key the
//! deployed identifier (a table name, a bucket name, a queue URL, a topic
//! ARN) and, as `<key>_<field>`, connection settings (`_host`, `_port`, ...).
//! [`Resources`] reads both, and a [`ResourceRef`] is one resource found
//! through them.
//!
//! A lookup is checked by kind: a queue asked for as a bucket is an error
//! naming both, a missing name lists the names of its kind, and where the
//! application has exactly one resource of a kind it is the default one.
//!
//! ```
//! use celerity::config::{Configuration, Values};
//! use celerity::resources::{Links, ResourceKind};
//!
//! # celerity::testing::block_on(async {
//! let links = Links::from_json(br#"{"ordersQueue": {"type": "queue", "configKey": "ordersQueue"}}"#, "a test")?;
//! let config = Configuration::builder()
//!     .links(links)
//!     .values("resources", Values::from_pairs([("ordersQueue", "https://sqs.eu-west-2.amazonaws.com/1/orders")]))
//!     .build();
//! let queue = config.resources().default_of(ResourceKind::Queue)?;
//! assert_eq!(queue.name(), "ordersQueue");
//! assert_eq!(queue.identifier().await?, "https://sqs.eu-west-2.amazonaws.com/1/orders");
//! # Ok::<_, celerity::config::ConfigError>(())
//! # }).unwrap();
//! ```

#[cfg(any(feature = "cache", sql))]
mod auth_mode;
#[cfg(any(feature = "cache-aws", feature = "sql-aws"))]
pub(crate) mod aws_auth;
#[cfg(any(feature = "queue-aws", feature = "topic-aws", feature = "bucket", feature = "datastore"))]
pub(crate) mod aws_fault;
#[cfg(any(feature = "queue-aws", feature = "topic-aws"))]
mod aws_messaging;
#[cfg(messaging)]
pub(crate) mod batch;
#[cfg(feature = "bucket")]
pub mod bucket;
#[cfg(feature = "cache")]
pub mod cache;
#[cfg(feature = "datastore")]
pub mod datastore;
#[cfg(resource_operations)]
mod error;
#[cfg(resource_operations)]
mod first_use;
mod handle;
pub(crate) mod links;
#[cfg(messaging)]
pub(crate) mod message_rules;
#[cfg(feature = "queue")]
pub mod queue;
mod reference;
#[cfg(messaging)]
pub(crate) mod sending;
#[cfg(session_redis)]
mod session_redis;
#[cfg(resource_operations)]
pub(crate) mod shown;
#[cfg(sql)]
pub mod sql;
#[cfg(feature = "topic")]
pub mod topic;

pub use crate::config::resource_kind::ResourceKind;
#[cfg(any(feature = "cache", sql))]
pub use auth_mode::AuthMode;
#[cfg(messaging)]
pub use batch::{BatchEntry, BatchResult, MAX_BATCH_ENTRIES, Refused, Sent, Unsent};
#[cfg(resource_operations)]
#[allow(unused_imports)]
pub(crate) use error::Fault;
#[cfg(resource_operations)]
pub use error::{ResourceError, ResourceErrorKind};
#[allow(unused_imports)]
pub(crate) use handle::default_handle_argument;
pub use handle::{Named, ResourceHandle, from_context};
pub use links::{LINKS_FILE, Link, Links, SCOPE_FILE};
#[cfg(messaging)]
pub use message_rules::{MAX_ATTRIBUTES, MAX_MESSAGE_BYTES};
pub use reference::{ResourceRef, Resources};
#[cfg(session_redis)]
pub use session_redis::DEFAULT_ENDPOINT as DEFAULT_REDIS_ENDPOINT;
