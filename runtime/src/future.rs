//! The boxed future of the SDK's object-safe traits: a store's backend, a
//! resource's backend.

use std::future::Future;
use std::pin::Pin;

/// A boxed future, `Send`, borrowing for `'a`: what an object-safe trait's
/// async method returns, such as [`Backend::fetch`](crate::config::Backend::fetch).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
