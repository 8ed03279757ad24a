//! An in-memory cache, standing in for the blueprint's in tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use redis::{Cmd, Value};

use super::cache_memory::{MemoryCache, Refusal};
use crate::resources::Fault;
use crate::resources::ResourceErrorKind;
use crate::resources::cache::{Cache, Runner};

/// An in-memory cache for tests: it answers every operation of
/// [`Cache`] as a Redis server would, refusals (`WRONGTYPE`) and expiry
/// included, with no server. Its keys can be read back, and it can be set
/// unreachable.
///
/// ```
/// use celerity::config::Configuration;
/// use celerity::resources::cache::Cache;
/// use celerity::testing::{TestCache, TestRequest};
///
/// async fn visit(cache: Cache) -> celerity::Result<String> {
///     let visits = cache.increment("visits", 1).await?;
///     Ok(format!("visit {visits}"))
/// }
///
/// # celerity::testing::block_on(async {
/// let sessions = TestCache::new("sessions");
/// let config = Configuration::builder().resource("sessions", sessions.cache()).build();
/// let app = celerity::App::new()
///     .without_compiled_handlers()
///     .with_configuration(config)
///     .http("GET::/visit", visit)
///     .into_test();
/// app.call("GET::/visit", TestRequest::get("/visit")).await.expect_http();
/// let response = app.call("GET::/visit", TestRequest::get("/visit")).await.expect_http();
/// assert_eq!(response.text(), "visit 2");
/// assert_eq!(sessions.cache().get("visits").await.unwrap().as_deref(), Some("2"));
/// # });
/// ```
#[derive(Clone)]
pub struct TestCache {
    cache: Cache,
    stand_in: Arc<StandIn>,
}

struct StandIn {
    memory: MemoryCache,
    unreachable: AtomicBool,
}

impl Runner for StandIn {
    fn run(&self, commands: &[&Cmd]) -> Result<Vec<Result<Value, Fault>>, Fault> {
        if self.unreachable.load(Ordering::Relaxed) {
            return Err(Fault::unreachable("the stand-in is set unreachable"));
        }
        Ok(self.memory.run(commands).into_iter().map(|answer| answer.map_err(refused)).collect())
    }
}

/// A refusal as the cache's own: what a Redis server's would be.
fn refused(refusal: Refusal) -> Fault {
    Fault::new(
        ResourceErrorKind::Refused,
        Some(refusal.code),
        format!("the cache refused it: {} {}", refusal.code, refusal.message),
    )
}

impl TestCache {
    /// An empty stand-in for the blueprint's cache `name`.
    pub fn new(name: &str) -> Self {
        let stand_in = Arc::new(StandIn { memory: MemoryCache::new(), unreachable: AtomicBool::new(false) });
        let cache = Cache::with_runner(name, Arc::clone(&stand_in) as Arc<dyn Runner>);
        TestCache { cache, stand_in }
    }

    /// The handle handlers take: give it to
    /// [`ConfigurationBuilder::resource`](crate::config::ConfigurationBuilder::resource).
    pub fn cache(&self) -> Cache {
        self.cache.clone()
    }

    /// Every key the cache holds, in order, prefixes and all.
    pub fn keys(&self) -> Vec<String> {
        self.stand_in.memory.keys()
    }

    /// While `unreachable`, every operation fails as a cache that cannot
    /// be reached would
    /// ([`ResourceErrorKind::Unreachable`](crate::resources::ResourceErrorKind::Unreachable)).
    pub fn set_unreachable(&self, unreachable: bool) {
        self.stand_in.unreachable.store(unreachable, Ordering::Relaxed);
    }
}

impl std::fmt::Debug for TestCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestCache").field("name", &self.cache.name()).finish_non_exhaustive()
    }
}
