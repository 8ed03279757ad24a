//! Celerity handler tags, in one place for every part of the SDK that reads
//! them: the attribute macros check a tag at compile time with [`parse_tag`],
//! the `celerity` crate checks the tags given to its explicit API at run
//! time with the same function (and so the same sentences), and the test
//! kit, the dev runtime and `celerity::testing` match HTTP requests to
//! routes with [`route`].
//!
//! | kind | form |
//! | --- | --- |
//! | HTTP | `METHOD::/route`, such as `GET::/orders/{id}` |
//! | WebSocket | `routeKey::route`, such as `event::$connect` |
//! | consumer, schedule | `source::{sourceId}::{handlerName}` |
//! | custom | `custom::{handlerName}` |
//!
//! ```
//! use celerity_tags::{TagKind, parse_tag};
//!
//! let tag = parse_tag(TagKind::Http, "GET::/files/{path+}").unwrap();
//! assert_eq!(tag.tag, "GET::/files/{*path}");
//! let error = parse_tag(TagKind::Http, "get::/orders").unwrap_err();
//! assert_eq!(error.suggestion.as_deref(), Some("GET::/orders"));
//! ```

#![warn(missing_docs)]

pub mod route;
mod tag;

pub use tag::{
    HTTP_METHODS, NormalisedTag, TagError, TagErrorCode, TagKind, WEBSOCKET_SPECIAL_ROUTES, is_http_method, parse_tag,
};
