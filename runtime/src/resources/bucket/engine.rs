//! The rules of a bucket the SDK keeps itself (in a folder, or in memory):
//! listing order and cursors, copies, deletes of many, written once for
//! both, over a [`Store`] that only keeps objects.

use std::any::Any;
use std::collections::HashMap;
use std::time::Duration;

use super::backend::{Backend, CopyRequest, Fetched};
use super::body::Body;
use super::deletion::Removal;
use super::signing::Access;
use super::{ByteRange, CopyResult, Cursor, ListOptions, ObjectInfo, Page, PutOptions, PutResult};
use crate::future::BoxFuture;
use crate::resources::ResourceErrorKind;
use crate::resources::error::Fault;

/// Where a bucket's objects are kept, each with what is known about it.
pub(crate) trait Store: Send + Sync + 'static {
    /// What the store is, for messages: `a bucket kept in a folder`.
    fn describe(&self) -> &'static str;

    /// The object at `key`, the `range` of it (resolved by
    /// [`ByteRange::resolve`]), with what is known about it read from the
    /// same write; `None` where the key holds nothing.
    fn read<'a>(&'a self, key: &'a str, range: Option<ByteRange>) -> BoxFuture<'a, Result<Option<Fetched>, Fault>>;

    /// What is known about the object at `key`.
    fn head<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<ObjectInfo>, Fault>>;

    /// Stores `body` at `key`, whole or not at all: a reader sees the old
    /// object or the new one. What is known about the new one comes back.
    /// `if_absent`, only where the key holds nothing, checked as the new
    /// object is put in place ([`condition_failed`] otherwise).
    fn write<'a>(&'a self, key: &'a str, body: Body, written: Written) -> BoxFuture<'a, Result<ObjectInfo, Fault>>;

    /// Removes the object at `key`, if any.
    fn remove<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), Fault>>;

    /// Every key under `prefix`, in any order.
    fn keys<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, Result<Vec<String>, Fault>>;
}

/// What a write records beside the content, and its condition.
pub(crate) struct Written {
    pub(crate) content_type: Option<String>,
    pub(crate) metadata: HashMap<String, String>,
    pub(crate) if_absent: bool,
}

/// A bucket over a [`Store`].
pub(crate) struct Engine<S> {
    pub(crate) store: S,
}

impl<S: Store> Engine<S> {
    pub(crate) fn new(store: S) -> Self {
        Engine { store }
    }
}

/// A write only to make an object, to a key that holds one.
pub(crate) fn condition_failed(key: &str) -> Fault {
    Fault::new(
        ResourceErrorKind::ConditionFailed,
        Some("PreconditionFailed"),
        format!("the bucket holds an object at `{key}`, and the write was only to make one"),
    )
}

pub(crate) fn not_found(key: &str) -> Fault {
    Fault::new(ResourceErrorKind::NotFound, Some("NoSuchKey"), format!("the bucket holds no object at `{key}`"))
}

impl<S: Store> Backend for Engine<S> {
    fn get<'a>(&'a self, key: &'a str, range: Option<ByteRange>) -> BoxFuture<'a, Result<Fetched, Fault>> {
        Box::pin(async move { self.store.read(key, range).await?.ok_or_else(|| not_found(key)) })
    }

    fn put<'a>(&'a self, key: &'a str, body: Body, options: &'a PutOptions) -> BoxFuture<'a, Result<PutResult, Fault>> {
        Box::pin(async move {
            let written = Written {
                content_type: options.content_type.clone(),
                metadata: options.metadata.clone(),
                if_absent: options.if_absent,
            };
            let info = self.store.write(key, body, written).await?;
            Ok(PutResult { etag: info.etag, version: None })
        })
    }

    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), Fault>> {
        self.store.remove(key)
    }

    fn delete_batch<'a>(&'a self, keys: &'a [String]) -> BoxFuture<'a, Vec<Removal>> {
        Box::pin(async move {
            let mut removals = Vec::with_capacity(keys.len());
            for key in keys {
                removals.push(match self.store.remove(key).await {
                    Ok(()) => Removal::Deleted(key.clone()),
                    Err(fault) if fault.kind == ResourceErrorKind::Unreachable => Removal::Unsent(key.clone(), fault),
                    Err(fault) => Removal::Failed {
                        key: key.clone(),
                        code: fault.code.unwrap_or_else(|| "InternalError".to_string()),
                        message: fault.message,
                    },
                });
            }
            removals
        })
    }

    fn info<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<ObjectInfo>, Fault>> {
        self.store.head(key)
    }

    fn list<'a>(&'a self, prefix: &'a str, options: &'a ListOptions) -> BoxFuture<'a, Result<Page, Fault>> {
        let (limit, cursor) = (options.page_size(), options.cursor.as_ref());
        Box::pin(async move {
            let after = cursor.map(Cursor::key_after).transpose()?;
            let mut keys = self.store.keys(prefix).await?;
            // S3 lists in the order of the keys' UTF-8 bytes, which is how
            // `str` compares.
            keys.sort_unstable();
            let start = after.as_deref().map_or(0, |after| keys.partition_point(|key| key.as_str() <= after));
            let mut objects = Vec::with_capacity(limit.min(keys.len() - start));
            let mut next = start;
            while objects.len() < limit && next < keys.len() {
                // A key removed since it was listed is passed over.
                if let Some(mut info) = self.store.head(&keys[next]).await? {
                    info.content_type = None;
                    info.metadata.clear();
                    objects.push(info);
                }
                next += 1;
            }
            let cursor = match objects.last() {
                Some(last) if next < keys.len() => Some(Cursor::after(&last.key)),
                _ => None,
            };
            Ok(Page { objects, cursor })
        })
    }

    fn copy<'a>(&'a self, request: CopyRequest<'a>) -> BoxFuture<'a, Result<CopyResult, Fault>> {
        let CopyRequest { key, to, to_key, options } = request;
        Box::pin(async move {
            let destination = to.as_any().downcast_ref::<Engine<S>>().ok_or_else(|| {
                Fault::unsupported(format!(
                    "the destination bucket is not {}, as this one is: a copy is made by the backend that holds \
                     both buckets",
                    self.store.describe()
                ))
            })?;
            let source = self.store.read(key, None).await?.ok_or_else(|| not_found(key))?;
            let (content_type, metadata) = match &options.replace {
                Some(replace) => (replace.content_type.clone(), replace.metadata.clone()),
                None => (source.info.content_type.clone(), source.info.metadata.clone()),
            };
            // Streamed through, so a copy holds no more of the object in
            // memory than a read does.
            let info = destination
                .store
                .write(to_key, Body::Faults(source.body), Written { content_type, metadata, if_absent: false })
                .await?;
            Ok(CopyResult { etag: info.etag, version: None })
        })
    }

    fn sign<'a>(
        &'a self,
        _key: &'a str,
        _access: &'a Access,
        _expiry: Duration,
    ) -> BoxFuture<'a, Result<String, Fault>> {
        Box::pin(std::future::ready(Err(Fault::unsupported(format!(
            "{} has no server to answer a signed URL (a `file://` URL would grant nothing a browser can use): \
             signed URLs need S3 or an S3-compatible server such as a local session's MinIO \
             (CELERITY_AWS_S3_ENDPOINT)",
            self.store.describe()
        )))))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
