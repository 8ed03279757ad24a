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

mod handle;
mod kind;
pub(crate) mod links;
mod reference;

#[allow(unused_imports)]
pub(crate) use handle::default_handle_argument;
pub use handle::{Named, ResourceHandle, from_context};
pub use kind::ResourceKind;
pub use links::{LINKS_FILE, Link, Links, SCOPE_FILE};
pub use reference::{ResourceRef, Resources};
