//! An in-memory bucket, standing in for the blueprint's in tests.

use std::sync::Arc;

use bytes::Bytes;

use crate::resources::bucket::memory::Memory;
use crate::resources::bucket::{Backend, Bucket, Engine};

/// An in-memory bucket for tests: it answers every operation of
/// [`Bucket`] by the rules the S3 and folder buckets follow (ranges,
/// `NotFound`, listing order and cursors, key and metadata limits), with
/// no server. What it holds can be read back, and it can be set
/// unreachable. It signs no URLs: with no server behind it, a URL would
/// grant nothing, so it answers
/// [`Unsupported`](crate::resources::ResourceErrorKind::Unsupported).
///
/// ```
/// use celerity::config::Configuration;
/// use celerity::resources::bucket::Bucket;
/// use celerity::testing::{TestBucket, TestRequest};
///
/// async fn upload(uploads: Bucket, body: String) -> celerity::Result<&'static str> {
///     uploads.put("notes/latest.txt", body).await?;
///     Ok("stored")
/// }
///
/// # celerity::testing::block_on(async {
/// let uploads = TestBucket::new("uploads");
/// let config = Configuration::builder().resource("uploads", uploads.bucket()).build();
/// let app = celerity::App::new()
///     .without_compiled_handlers()
///     .with_configuration(config)
///     .http("POST::/notes", upload)
///     .into_test();
/// let response = app.call("POST::/notes", TestRequest::post("/notes").body("hello")).await.expect_http();
/// assert_eq!(response.text(), "stored");
/// assert_eq!(uploads.keys(), ["notes/latest.txt"]);
/// assert_eq!(uploads.content("notes/latest.txt").as_deref(), Some(&b"hello"[..]));
/// # });
/// ```
#[derive(Clone)]
pub struct TestBucket {
    bucket: Bucket,
    engine: Arc<Engine<Memory>>,
}

impl TestBucket {
    /// An empty stand-in for the blueprint's bucket `name`.
    pub fn new(name: &str) -> Self {
        let engine = Arc::new(Engine::new(Memory::default()));
        let bucket = Bucket::with_backend(name, Arc::clone(&engine) as Arc<dyn Backend>);
        TestBucket { bucket, engine }
    }

    /// The handle handlers take: give it to
    /// [`ConfigurationBuilder::resource`](crate::config::ConfigurationBuilder::resource).
    pub fn bucket(&self) -> Bucket {
        self.bucket.clone()
    }

    /// Every key the bucket holds, in order.
    pub fn keys(&self) -> Vec<String> {
        self.engine.store.all_keys()
    }

    /// The content stored at `key`.
    pub fn content(&self, key: &str) -> Option<Bytes> {
        self.engine.store.content(key)
    }

    /// While `unreachable`, every operation fails as a bucket that cannot
    /// be reached would
    /// ([`ResourceErrorKind::Unreachable`](crate::resources::ResourceErrorKind::Unreachable)).
    pub fn set_unreachable(&self, unreachable: bool) {
        self.engine.store.set_unreachable(unreachable);
    }
}

impl std::fmt::Debug for TestBucket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestBucket").field("name", &self.bucket.name()).finish_non_exhaustive()
    }
}
