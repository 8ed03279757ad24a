//! Buckets: the object stores a blueprint links to the application. Behind
//! the `bucket` feature.
//!
//! A handler takes a [`Bucket`] as an argument: the application's one
//! bucket as the type itself, or a bucket by name through
//! [`resource!`](crate::resource). The handle resolves on first use: the
//! bucket's name is what the deployment recorded in the `resources`
//! namespace, and where the application runs picks the backend
//! (`CELERITY_PLATFORM`):
//!
//! - **`aws`**: S3, through the official AWS SDK, with
//!   `CELERITY_AWS_S3_ENDPOINT` (or `AWS_ENDPOINT_URL`) for an emulator.
//! - **`local`** (`celerity dev`, `celerity-dev run`): the session's
//!   S3-compatible server at `CELERITY_AWS_S3_ENDPOINT` (MinIO), as
//!   `CELERITY_LOCAL_BUCKET_ACCESS_KEY` / `_SECRET_KEY` where given; else,
//!   where `CELERITY_LOCAL_BUCKET_DIR` is set, a folder on disk, one
//!   sub-folder per bucket; else MinIO at its defaults
//!   ([`DEFAULT_LOCAL_ENDPOINT`], with [`DEFAULT_LOCAL_ACCESS_KEY`] as
//!   both keys where none are given).
//! - **[`celerity::testing::TestBucket`](crate::testing::TestBucket)**: in
//!   memory, for tests.
//!
//! What it does: [`get`](Bucket::get) (streamed, [`ObjectBody`]), a
//! [range](Bucket::get_range) of an object, [`read`](Bucket::read) a
//! whole one; [`put`](Bucket::put) bytes or a [stream](Bucket::put_stream)
//! with a content type and metadata ([`PutOptions`]); [`delete`](Bucket::delete)
//! and [`delete_many`](Bucket::delete_many); [`info`](Bucket::info) and
//! [`exists`](Bucket::exists); [`list`](Bucket::list) a page by prefix, or
//! every object as a [stream](Bucket::objects); [`copy`](Bucket::copy)
//! within the bucket or [to another](Bucket::copy_to); and signed URLs to
//! [read](Bucket::read_url) or [write](Bucket::write_url) an object.
//!
//! Every backend holds a request to S3's rules before sending it: a key of
//! at most [`MAX_KEY_BYTES`] bytes, metadata of at most
//! [`MAX_METADATA_BYTES`], a signed URL's expiry of at most
//! [`MAX_EXPIRY`]. Every failure is a [`ResourceError`] naming the bucket,
//! the operation and, where there is one (every operation but a listing),
//! the key: a key that holds nothing is
//! [`NotFound`](ResourceErrorKind::NotFound), a range past the end of an
//! object is [`Refused`](ResourceErrorKind::Refused) with S3's
//! `InvalidRange`, and a read cut off mid-object ends its stream with an
//! [`Unreachable`](ResourceErrorKind::Unreachable) error, never with a
//! shorter object.
//!
//! A write larger than [`PART_SIZE`] is sent to S3 as a multipart upload,
//! a part at a time, so that it holds at most two parts in memory whatever
//! the object's size; a write that fails aborts its upload. The folder
//! bucket writes a temporary file and renames it into place, so a reader
//! sees the old object or the new one, never half of one. It cannot sign
//! URLs: no server stands behind a folder to answer one, so it answers
//! [`Unsupported`](ResourceErrorKind::Unsupported), as the in-memory bucket
//! does.
//!
//! ```
//! use celerity::http::{HttpError, Path, StatusCode};
//! use celerity::resources::ResourceErrorKind;
//! use celerity::resources::bucket::{Bucket, CopyOptions, PutOptions};
//!
//! celerity::resource! {
//!     /// The blueprint's `archiveBucket`, taken by name.
//!     pub Archive: Bucket = "archiveBucket"
//! }
//!
//! async fn upload(uploads: Bucket, Path(name): Path<String>, body: String) -> Result<StatusCode, HttpError> {
//!     let options = PutOptions::new().content_type("text/plain").metadata("source", "api");
//!     uploads.put_with(&name, body, options).await.map_err(|error| HttpError::internal(error.to_string()))?;
//!     Ok(StatusCode::CREATED)
//! }
//!
//! async fn download(uploads: Bucket, Path(name): Path<String>) -> Result<String, HttpError> {
//!     match uploads.read(&name).await {
//!         Ok(content) => Ok(String::from_utf8_lossy(&content).into_owned()),
//!         Err(error) if error.kind() == ResourceErrorKind::NotFound => Err(HttpError::not_found("no such upload")),
//!         Err(error) => Err(HttpError::internal(error.to_string())),
//!     }
//! }
//!
//! async fn archive(uploads: Bucket, archive: Archive, Path(name): Path<String>) -> Result<StatusCode, HttpError> {
//!     let options = CopyOptions::new();
//!     uploads.copy_to(&name, &archive, &name, options).await.map_err(|error| HttpError::internal(error.to_string()))?;
//!     Ok(StatusCode::NO_CONTENT)
//! }
//! # let _ = celerity::App::new()
//! #     .http("PUT::/uploads/{name}", upload)
//! #     .http("GET::/uploads/{name}", download)
//! #     .http("POST::/uploads/{name}/archive", archive);
//! ```

mod backend;
mod body;
mod deletion;
mod digest;
mod engine;
mod folder;
mod keys;
mod listing;
pub(crate) mod memory;
mod object;
mod range;
mod s3;
mod signing;

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::first_use::FirstUse;
use bytes::Bytes;
use futures_util::stream::{Stream, StreamExt, TryStreamExt};

pub(crate) use backend::Backend;
use backend::CopyRequest;
use body::{Body, BoxError};
pub use body::{Object, ObjectBody};
use deletion::Removal;
pub use deletion::{DeleteFailure, DeleteManyResult, DeleteUnsent, MAX_DELETE_BATCH};
pub(crate) use engine::Engine;
pub use keys::MAX_KEY_BYTES;
pub use listing::{Cursor, ListOptions, MAX_PAGE, Page};
pub use object::{CopyOptions, CopyResult, MAX_METADATA_BYTES, ObjectInfo, PutOptions, PutResult};
pub use range::ByteRange;
pub use s3::PART_SIZE;
use signing::{Access, check_expiry};
pub use signing::{MAX_EXPIRY, SignedUrl};

use super::error::{Fault, ResourceError, ResourceErrorKind};
use super::{ResourceHandle, ResourceKind, ResourceRef};
use crate::config::Platform;

/// The S3 endpoint of a local session with neither
/// `CELERITY_AWS_S3_ENDPOINT` nor `CELERITY_LOCAL_BUCKET_DIR`: MinIO's
/// default address.
pub const DEFAULT_LOCAL_ENDPOINT: &str = "http://localhost:9000";

/// The access key and secret key of [`DEFAULT_LOCAL_ENDPOINT`] where the
/// session gives none: MinIO's default root user and password.
pub const DEFAULT_LOCAL_ACCESS_KEY: &str = "minioadmin";

/// A handle on one bucket of the blueprint. Cheap to clone; clones share
/// the client, made on the first operation. See the [module](self) docs.
#[derive(Clone)]
pub struct Bucket {
    shared: Arc<FirstUse<Arc<dyn Backend>>>,
}

impl Bucket {
    /// A bucket named `name` served by `backend`, such as an in-memory one.
    pub(crate) fn with_backend(name: &str, backend: Arc<dyn Backend>) -> Self {
        Bucket { shared: Arc::new(FirstUse::ready(name, backend)) }
    }

    /// The blueprint resource's name.
    pub fn name(&self) -> &str {
        self.shared.name()
    }

    /// The object at `key`, its content streamed.
    /// [`NotFound`](ResourceErrorKind::NotFound) where the key holds
    /// nothing.
    ///
    /// ```
    /// use celerity::resources::ResourceError;
    /// use celerity::resources::bucket::Bucket;
    ///
    /// async fn size_of(bucket: &Bucket, key: &str) -> Result<u64, ResourceError> {
    ///     let mut object = bucket.get(key).await?;
    ///     let mut counted = 0;
    ///     while let Some(chunk) = object.body.chunk().await {
    ///         counted += chunk?.len() as u64;
    ///     }
    ///     Ok(counted)
    /// }
    /// # let _ = size_of;
    /// ```
    pub async fn get(&self, key: &str) -> Result<Object, ResourceError> {
        self.fetch(key, None).await
    }

    /// The `range` of the object at `key`, its content streamed. `info.size`
    /// is the whole object's; `content_length` is the part's.
    pub async fn get_range(&self, key: &str, range: ByteRange) -> Result<Object, ResourceError> {
        self.fetch(key, Some(range)).await
    }

    /// The whole object at `key`, read into one buffer.
    pub async fn read(&self, key: &str) -> Result<Bytes, ResourceError> {
        self.get(key).await?.bytes().await
    }

    async fn fetch(&self, key: &str, range: Option<ByteRange>) -> Result<Object, ResourceError> {
        const OPERATION: &str = "reading from";
        let fetched = async {
            keys::check(key)?;
            if let Some(range) = range {
                range.check()?;
            }
            self.backend().await?.get(key, range).await
        };
        let fetched = fetched.await.map_err(|fault| self.error(OPERATION, fault).with_key(key))?;
        let (bucket, owned_key) = (self.clone(), key.to_string());
        let name = move |fault| bucket.error(OPERATION, fault).with_key(owned_key.as_str());
        Ok(Object {
            info: fetched.info,
            range: fetched.range,
            content_length: fetched.content_length,
            body: ObjectBody::new(fetched.body, fetched.content_length, name),
        })
    }

    /// Stores `content` at `key`, replacing what was there.
    pub async fn put(&self, key: &str, content: impl Into<Bytes>) -> Result<PutResult, ResourceError> {
        self.put_with(key, content, PutOptions::new()).await
    }

    /// Stores `content` at `key` as `options` say.
    pub async fn put_with(
        &self,
        key: &str,
        content: impl Into<Bytes>,
        options: PutOptions,
    ) -> Result<PutResult, ResourceError> {
        self.store(key, Body::Whole(Some(content.into())), &options).await
    }

    /// Stores the content `stream` yields at `key`, as `options` say, a
    /// part at a time: memory holds at most two parts ([`PART_SIZE`]) of
    /// it, whatever its size. An error of the stream stops the write, and
    /// nothing is stored ([`Invalid`](ResourceErrorKind::Invalid), code
    /// `BodyStreamFailed`).
    ///
    /// ```
    /// use celerity::resources::bucket::{Bucket, PutOptions};
    ///
    /// /// Copies an object into another bucket through the handler, a chunk at
    /// /// a time, under a content type of its own.
    /// async fn publish(drafts: &Bucket, site: &Bucket, key: &str) -> celerity::Result<()> {
    ///     let draft = drafts.get(key).await?;
    ///     site.put_stream(key, draft.body, PutOptions::new().content_type("text/html")).await?;
    ///     Ok(())
    /// }
    /// # let _ = publish;
    /// ```
    pub async fn put_stream<S, E>(&self, key: &str, stream: S, options: PutOptions) -> Result<PutResult, ResourceError>
    where
        S: Stream<Item = Result<Bytes, E>> + Send + 'static,
        E: Into<BoxError> + 'static,
    {
        self.store(key, Body::Stream(stream.map_err(Into::into).boxed()), &options).await
    }

    async fn store(&self, key: &str, body: Body, options: &PutOptions) -> Result<PutResult, ResourceError> {
        let stored = async {
            keys::check(key)?;
            options.check()?;
            self.backend().await?.put(key, body, options).await
        };
        stored.await.map_err(|fault| self.error("writing to", fault).with_key(key))
    }

    /// Deletes the object at `key`. A key that holds nothing is not a
    /// failure, as S3 has it.
    pub async fn delete(&self, key: &str) -> Result<(), ResourceError> {
        let deleted = async {
            keys::check(key)?;
            self.backend().await?.delete(key).await
        };
        deleted.await.map_err(|fault| self.error("deleting from", fault).with_key(key))
    }

    /// Deletes the objects at `keys`, in as few requests as the bucket
    /// takes ([`MAX_DELETE_BATCH`] keys a request on S3), answering for
    /// each key. Fails only where the bucket cannot be resolved.
    ///
    /// ```
    /// use celerity::resources::bucket::Bucket;
    ///
    /// async fn clear(bucket: &Bucket, keys: &[&str]) -> celerity::Result<Vec<String>> {
    ///     let result = bucket.delete_many(keys.iter().copied()).await?;
    ///     // What is left, to try again or report.
    ///     let mut left: Vec<String> = result.failed.into_iter().map(|failure| failure.key).collect();
    ///     left.extend(result.unsent.into_iter().map(|unsent| unsent.key));
    ///     Ok(left)
    /// }
    /// # let _ = clear;
    /// ```
    pub async fn delete_many<K: Into<String>>(
        &self,
        keys: impl IntoIterator<Item = K>,
    ) -> Result<DeleteManyResult, ResourceError> {
        const OPERATION: &str = "deleting many from";
        let mut result = DeleteManyResult::default();
        let mut valid = Vec::new();
        for key in keys {
            let key = key.into();
            match keys::check(&key) {
                Ok(()) => valid.push(key),
                Err(fault) => result.failed.push(DeleteFailure {
                    key,
                    code: fault.code.unwrap_or_default(),
                    message: fault.message,
                }),
            }
        }
        if valid.is_empty() {
            return Ok(result);
        }
        let backend = self.backend().await.map_err(|fault| self.error(OPERATION, fault))?;
        for batch in valid.chunks(MAX_DELETE_BATCH) {
            for removal in backend.delete_batch(batch).await {
                match removal {
                    Removal::Deleted(key) => result.deleted.push(key),
                    Removal::Failed { key, code, message } => result.failed.push(DeleteFailure { key, code, message }),
                    Removal::Unsent(key, fault) => {
                        let error = self.error(OPERATION, fault).with_key(key.as_str());
                        result.unsent.push(DeleteUnsent { key, error });
                    }
                }
            }
        }
        Ok(result)
    }

    /// What the bucket knows about the object at `key`, without its
    /// content; `None` where the key holds nothing.
    pub async fn info(&self, key: &str) -> Result<Option<ObjectInfo>, ResourceError> {
        let info = async {
            keys::check(key)?;
            self.backend().await?.info(key).await
        };
        info.await.map_err(|fault| self.error("reading object info from", fault).with_key(key))
    }

    /// Whether the bucket holds an object at `key`.
    pub async fn exists(&self, key: &str) -> Result<bool, ResourceError> {
        Ok(self.info(key).await?.is_some())
    }

    /// One page of the objects whose keys start with `prefix`, in the
    /// order of the keys' bytes, and the cursor of the next page.
    ///
    /// ```
    /// use celerity::resources::bucket::{Bucket, Cursor, ListOptions};
    ///
    /// /// A page of a user's photos for a caller, who hands the cursor back.
    /// async fn photos(bucket: &Bucket, user: &str, cursor: Option<String>) -> celerity::Result<(Vec<String>, Option<String>)> {
    ///     let mut options = ListOptions::new().limit(50);
    ///     if let Some(cursor) = cursor {
    ///         options = options.after(Cursor::from_text(cursor));
    ///     }
    ///     let page = bucket.list(&format!("photos/{user}/"), options).await?;
    ///     let keys = page.objects.into_iter().map(|object| object.key).collect();
    ///     Ok((keys, page.cursor.map(|cursor| cursor.as_str().to_string())))
    /// }
    /// # let _ = photos;
    /// ```
    pub async fn list(&self, prefix: &str, options: ListOptions) -> Result<Page, ResourceError> {
        let page = async {
            let backend = self.backend().await?;
            backend.list(prefix, &options).await
        };
        page.await.map_err(|fault| self.error("listing", fault))
    }

    /// Every object whose key starts with `prefix`, in order, read a page
    /// at a time as the stream is read. A failure ends the stream with its
    /// error.
    pub fn objects(&self, prefix: &str) -> impl Stream<Item = Result<ObjectInfo, ResourceError>> + Send + 'static {
        let state = Listing { bucket: self.clone(), prefix: prefix.to_string(), next: Some(None), page: Vec::new() };
        futures_util::stream::unfold(state, |mut state| async move {
            loop {
                if let Some(object) = state.page.pop() {
                    return Some((Ok(object), state));
                }
                let cursor = state.next.take()?;
                let options = ListOptions { limit: None, cursor };
                match state.bucket.list(&state.prefix, options).await {
                    Ok(page) => {
                        state.next = page.cursor.map(Some);
                        state.page = page.objects;
                        state.page.reverse();
                    }
                    Err(error) => return Some((Err(error), state)),
                }
            }
        })
    }

    /// Copies the object at `key` to `to_key` of this bucket. The bucket
    /// copies it: the content does not pass through the handler.
    pub async fn copy(&self, key: &str, to_key: &str, options: CopyOptions) -> Result<CopyResult, ResourceError> {
        self.copy_to(key, self, to_key, options).await
    }

    /// Copies the object at `key` to `to_key` of the bucket `to`, which must
    /// be served as this one is (both on S3, both in folders, both in
    /// memory): the backend copies it. S3 copies an object of at most 5 GB
    /// in one request, and refuses a larger one
    /// ([`Refused`](ResourceErrorKind::Refused)): read it and
    /// [`put_stream`](Self::put_stream) it instead.
    pub async fn copy_to(
        &self,
        key: &str,
        to: &Bucket,
        to_key: &str,
        options: CopyOptions,
    ) -> Result<CopyResult, ResourceError> {
        let copied = async {
            keys::check(key)?;
            keys::check(to_key)?;
            if let Some(replace) = &options.replace {
                replace.check()?;
            }
            let source = self.backend().await?;
            let destination = to.backend().await?;
            source.copy(CopyRequest { key, to: destination.as_ref(), to_key, options: &options }).await
        };
        copied.await.map_err(|fault| self.error("copying from", fault).with_key(key))
    }

    /// A URL that reads the object at `key` for `expiry` (more than zero,
    /// at most [`MAX_EXPIRY`]), signed with the process's credentials.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use celerity::resources::bucket::Bucket;
    ///
    /// async fn share(bucket: &Bucket, key: &str) -> celerity::Result<String> {
    ///     Ok(bucket.read_url(key, Duration::from_secs(15 * 60)).await?.url)
    /// }
    /// # let _ = share;
    /// ```
    pub async fn read_url(&self, key: &str, expiry: Duration) -> Result<SignedUrl, ResourceError> {
        self.sign(key, Access::Read, expiry).await
    }

    /// A URL that uploads an object to `key` in one `PUT` for `expiry`;
    /// where `content_type` is given, the upload must declare it.
    pub async fn write_url(
        &self,
        key: &str,
        expiry: Duration,
        content_type: Option<&str>,
    ) -> Result<SignedUrl, ResourceError> {
        self.sign(key, Access::Write(content_type.map(str::to_string)), expiry).await
    }

    async fn sign(&self, key: &str, access: Access, expiry: Duration) -> Result<SignedUrl, ResourceError> {
        let signed = async {
            keys::check(key)?;
            check_expiry(expiry)?;
            let expires_at = SystemTime::now() + expiry;
            let url = self.backend().await?.sign(key, &access, expiry).await?;
            Ok(SignedUrl { url, expires_at })
        };
        signed.await.map_err(|fault| self.error("signing a URL for", fault).with_key(key))
    }

    /// The backend, resolved on the first call. A failure is tried again on
    /// the next call.
    async fn backend(&self) -> Result<&Arc<dyn Backend>, Fault> {
        self.shared.get(resolve).await
    }

    fn error(&self, operation: &'static str, fault: Fault) -> ResourceError {
        ResourceError::new(self.shared.name(), ResourceKind::Bucket, operation, fault)
    }
}

/// Where [`Bucket::objects`] is.
struct Listing {
    bucket: Bucket,
    prefix: String,
    /// The cursor of the next page (`Some(None)` for the first), `None` at
    /// the end.
    next: Option<Option<Cursor>>,
    /// What is left of the page read, last first.
    page: Vec<ObjectInfo>,
}

/// The backend of the bucket `resource` names, for where the application
/// runs.
async fn resolve(resource: &ResourceRef) -> Result<Arc<dyn Backend>, Fault> {
    let deployment = resource.deployment();
    let endpoints = &deployment.endpoints;
    match deployment.platform {
        Platform::Aws => {
            let name = resource.identifier().await?;
            let reach = s3::Reach { endpoint: endpoints.s3.as_deref(), credentials: None };
            Ok(Arc::new(s3::S3::new(name, reach).await))
        }
        Platform::Local => {
            let name = resource.identifier().await?;
            let given = endpoints.bucket_access_key.clone().zip(endpoints.bucket_secret_key.clone());
            if let Some(endpoint) = endpoints.s3.as_deref() {
                let reach = s3::Reach { endpoint: Some(endpoint), credentials: given };
                return Ok(Arc::new(s3::S3::new(name, reach).await));
            }
            if let Some(folder) = endpoints.bucket_dir.as_deref() {
                return Ok(Arc::new(Engine::new(folder::Folder::new(bucket_folder(folder, &name)?))));
            }
            let credentials =
                given.or_else(|| Some((DEFAULT_LOCAL_ACCESS_KEY.to_string(), DEFAULT_LOCAL_ACCESS_KEY.to_string())));
            let reach = s3::Reach { endpoint: Some(DEFAULT_LOCAL_ENDPOINT), credentials };
            Ok(Arc::new(s3::S3::new(name, reach).await))
        }
        platform => Err(Fault::unsupported(format!(
            "buckets are served on `aws` and in a `local` session, and the deployment's platform is `{platform}` \
             (CELERITY_PLATFORM)"
        ))),
    }
}

/// The folder of the bucket `name` under `root`: one component, so that a
/// recorded name cannot reach outside the buckets' folder.
fn bucket_folder(root: &str, name: &str) -> Result<std::path::PathBuf, Fault> {
    let plain = !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\']);
    if !plain {
        return Err(Fault::new(
            ResourceErrorKind::Config,
            None,
            format!("the bucket name `{name}` the deployment recorded cannot name a folder"),
        ));
    }
    Ok(Path::new(root).join(name))
}

impl ResourceHandle for Bucket {
    fn kind() -> ResourceKind {
        ResourceKind::Bucket
    }

    fn from_resource(resource: ResourceRef) -> Self {
        Bucket { shared: Arc::new(FirstUse::lazy(resource)) }
    }
}

super::default_handle_argument!(Bucket);

impl fmt::Debug for Bucket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bucket").field("name", &self.name()).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_folder_is_one_plain_name_under_the_root() {
        assert_eq!(bucket_folder("/tmp/b", "uploads").unwrap(), Path::new("/tmp/b/uploads"));
        for bad in ["", "..", ".", "a/b", "a\\b"] {
            assert_eq!(bucket_folder("/tmp/b", bad).unwrap_err().kind, ResourceErrorKind::Config, "{bad}");
        }
    }
}
