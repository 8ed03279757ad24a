//! A bucket in memory, for [`TestBucket`](crate::testing::TestBucket).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use bytes::{Bytes, BytesMut};
use futures_util::stream::StreamExt;

use super::backend::Fetched;
use super::body::Body;
use super::digest::Digest;
use super::engine::{Store, Written, condition_failed};
use super::{ByteRange, ObjectInfo};
use crate::future::BoxFuture;
use crate::resources::error::Fault;

/// Objects by key, each with what is known about it.
#[derive(Default)]
pub(crate) struct Memory {
    objects: Mutex<BTreeMap<String, Stored>>,
    unreachable: AtomicBool,
}

#[derive(Clone)]
struct Stored {
    info: ObjectInfo,
    content: Bytes,
}

impl Memory {
    /// While `unreachable`, every operation fails as a server out of reach
    /// would.
    pub(crate) fn set_unreachable(&self, unreachable: bool) {
        self.unreachable.store(unreachable, Ordering::Relaxed);
    }

    /// Every key held, in order.
    pub(crate) fn all_keys(&self) -> Vec<String> {
        self.held().keys().cloned().collect()
    }

    /// The content at `key`.
    pub(crate) fn content(&self, key: &str) -> Option<Bytes> {
        self.held().get(key).map(|stored| stored.content.clone())
    }

    fn held(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Stored>> {
        // A panic while the lock was held left whole objects behind: each
        // is inserted in one step.
        self.objects.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn reachable(&self) -> Result<(), Fault> {
        if self.unreachable.load(Ordering::Relaxed) {
            return Err(Fault::unreachable("the stand-in is set unreachable"));
        }
        Ok(())
    }
}

impl Store for Memory {
    fn describe(&self) -> &'static str {
        "a bucket kept in memory"
    }

    fn read<'a>(&'a self, key: &'a str, range: Option<ByteRange>) -> BoxFuture<'a, Result<Option<Fetched>, Fault>> {
        Box::pin(async move {
            self.reachable()?;
            let Some(stored) = self.held().get(key).cloned() else { return Ok(None) };
            let size = stored.content.len() as u64;
            let served = range.map(|range| range.resolve(size)).transpose()?.flatten();
            let (start, end) = served.unwrap_or((0, size));
            let content = stored.content.slice(start as usize..end as usize);
            Ok(Some(Fetched {
                info: stored.info,
                range: served,
                content_length: end - start,
                body: futures_util::stream::iter([Ok(content)]).boxed(),
            }))
        })
    }

    fn head<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<ObjectInfo>, Fault>> {
        Box::pin(async move {
            self.reachable()?;
            Ok(self.held().get(key).map(|stored| stored.info.clone()))
        })
    }

    fn write<'a>(&'a self, key: &'a str, mut body: Body, written: Written) -> BoxFuture<'a, Result<ObjectInfo, Fault>> {
        Box::pin(async move {
            self.reachable()?;
            let mut digest = Digest::new();
            let mut content = BytesMut::new();
            while let Some(chunk) = body.next_chunk().await {
                let chunk = chunk?;
                digest.update(&chunk);
                content.extend_from_slice(&chunk);
            }
            let content = content.freeze();
            let mut info = ObjectInfo::new(key, content.len() as u64);
            info.content_type = written.content_type;
            info.metadata = written.metadata;
            info.etag = Some(digest.etag());
            info.last_modified = Some(SystemTime::now());
            let mut held = self.held();
            if written.if_absent && held.contains_key(key) {
                return Err(condition_failed(key));
            }
            held.insert(key.to_string(), Stored { info: info.clone(), content });
            Ok(info)
        })
    }

    fn remove<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), Fault>> {
        Box::pin(async move {
            self.reachable()?;
            self.held().remove(key);
            Ok(())
        })
    }

    fn keys<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, Result<Vec<String>, Fault>> {
        Box::pin(async move {
            self.reachable()?;
            let held = self.held();
            Ok(held
                .range(prefix.to_string()..)
                .map(|(key, _)| key)
                .take_while(|key| key.starts_with(prefix))
                .cloned()
                .collect())
        })
    }
}
