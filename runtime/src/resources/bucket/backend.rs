//! What serves a bucket's operations: S3 (or an S3-compatible server), a
//! folder on disk, or memory.

use std::any::Any;
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::BoxStream;

use super::body::Body;
use super::deletion::Removal;
use super::signing::Access;
use super::{ByteRange, CopyOptions, CopyResult, ListOptions, ObjectInfo, Page, PutOptions, PutResult};
use crate::future::BoxFuture;
use crate::resources::error::Fault;

/// A copy as a backend receives it: `key` of this backend to `to_key` of
/// `to`, which is this backend or another bucket's.
#[derive(Clone, Copy)]
pub(crate) struct CopyRequest<'a> {
    pub(crate) key: &'a str,
    pub(crate) to: &'a dyn Backend,
    pub(crate) to_key: &'a str,
    pub(crate) options: &'a CopyOptions,
}

/// An object as a backend reads it.
pub(crate) struct Fetched {
    pub(crate) info: ObjectInfo,
    pub(crate) range: Option<(u64, u64)>,
    pub(crate) content_length: u64,
    pub(crate) body: BoxStream<'static, Result<Bytes, Fault>>,
}

/// A bucket's backend. Keys, ranges, metadata and expiries are checked
/// before they reach it.
pub(crate) trait Backend: Send + Sync + 'static {
    /// The object at `key` (the `range` of it), or a fault, `NotFound`
    /// where the key holds nothing.
    fn get<'a>(&'a self, key: &'a str, range: Option<ByteRange>) -> BoxFuture<'a, Result<Fetched, Fault>>;

    /// Stores `body` at `key`.
    fn put<'a>(&'a self, key: &'a str, body: Body, options: &'a PutOptions) -> BoxFuture<'a, Result<PutResult, Fault>>;

    /// Deletes `key`; a key that holds nothing is not a failure.
    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), Fault>>;

    /// Deletes the `keys` (at most a batch's worth), answering for each.
    fn delete_batch<'a>(&'a self, keys: &'a [String]) -> BoxFuture<'a, Vec<Removal>>;

    /// What the bucket knows about `key`, `None` where it holds nothing.
    fn info<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<ObjectInfo>, Fault>>;

    /// A page of the objects under `prefix`, as `options` say.
    fn list<'a>(&'a self, prefix: &'a str, options: &'a ListOptions) -> BoxFuture<'a, Result<Page, Fault>>;

    /// Makes the copy the request describes.
    fn copy<'a>(&'a self, request: CopyRequest<'a>) -> BoxFuture<'a, Result<CopyResult, Fault>>;

    /// A URL granting `access` to `key` for `expiry`.
    fn sign<'a>(&'a self, key: &'a str, access: &'a Access, expiry: Duration) -> BoxFuture<'a, Result<String, Fault>>;

    /// The backend, for a copy to find its destination's kind.
    fn as_any(&self) -> &dyn Any;
}
