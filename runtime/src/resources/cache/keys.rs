//! Keys themselves, rather than their values: whether they are there, how
//! long they last, what they hold, and walking them all.

use std::time::Duration;

use futures_util::Stream;
use redis::Value;

use super::{Cache, read};
use crate::resources::error::{Fault, ResourceError};

/// How long a key lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// It has no expiry.
    Never,
    /// It expires after this long.
    In(Duration),
}

/// What a key holds.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyType {
    /// A string (or a counter).
    String,
    /// A hash.
    Hash,
    /// A list.
    List,
    /// A set.
    Set,
    /// A sorted set.
    SortedSet,
    /// A stream.
    Stream,
    /// Something else, by the name the cache gives it.
    Other(String),
}

impl KeyType {
    fn from_name(name: &str) -> KeyType {
        match name {
            "string" => KeyType::String,
            "hash" => KeyType::Hash,
            "list" => KeyType::List,
            "set" => KeyType::Set,
            "zset" => KeyType::SortedSet,
            "stream" => KeyType::Stream,
            other => KeyType::Other(other.to_string()),
        }
    }

    fn name(&self) -> &str {
        match self {
            KeyType::String => "string",
            KeyType::Hash => "hash",
            KeyType::List => "list",
            KeyType::Set => "set",
            KeyType::SortedSet => "zset",
            KeyType::Stream => "stream",
            KeyType::Other(name) => name,
        }
    }
}

/// Which keys [`Cache::scan`] walks.
///
/// ```
/// use celerity::resources::cache::{KeyType, ScanOptions};
///
/// let carts = ScanOptions::new().matching("cart:*").of_type(KeyType::Hash);
/// # let _ = carts;
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanOptions {
    pattern: Option<String>,
    key_type: Option<KeyType>,
    page_size: Option<u32>,
}

impl ScanOptions {
    /// Every key under the handle's prefixes.
    pub fn new() -> Self {
        ScanOptions::default()
    }

    /// Only keys matching the glob `pattern` (`*`, `?`, `[abc]`), after the
    /// handle's prefixes.
    pub fn matching(mut self, pattern: &str) -> Self {
        self.pattern = Some(pattern.to_string());
        self
    }

    /// Only keys holding a `key_type`.
    pub fn of_type(mut self, key_type: KeyType) -> Self {
        self.key_type = Some(key_type);
        self
    }

    /// About how many keys the cache looks at per request (its `COUNT`, 10
    /// unless said).
    pub fn page_size(mut self, keys: u32) -> Self {
        self.page_size = Some(keys);
        self
    }
}

/// The keys a [`Cache::scan`] walks, one at a time. A
/// [`Stream`](futures_util::Stream) too, for the stream combinators.
pub struct Scan {
    keys: std::pin::Pin<Box<dyn Stream<Item = Result<String, ResourceError>> + Send>>,
}

impl Scan {
    /// The next key; `None` at the end.
    pub async fn next(&mut self) -> Option<Result<String, ResourceError>> {
        futures_util::StreamExt::next(&mut self.keys).await
    }

    /// Every key left, or the first failure.
    pub async fn collect(mut self) -> Result<Vec<String>, ResourceError> {
        let mut keys = Vec::new();
        while let Some(key) = self.next().await {
            keys.push(key?);
        }
        Ok(keys)
    }
}

impl Stream for Scan {
    type Item = Result<String, ResourceError>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.keys.as_mut().poll_next(cx)
    }
}

impl std::fmt::Debug for Scan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scan").finish_non_exhaustive()
    }
}

/// Where a scan is.
enum Walk {
    /// About to ask node `node` (the one server, or a cluster's primary) for
    /// the page at `cursor`.
    At {
        node: usize,
        cursor: u64,
        nodes: Option<Vec<(String, u16)>>,
    },
    Done,
}

impl Cache {
    /// Whether `key` holds anything.
    pub async fn exists(&self, key: &str) -> Result<bool, ResourceError> {
        let found: i64 =
            self.query("`exists` on", &[], |names| redis::cmd("EXISTS").arg(names.key(key)).take()).await?;
        Ok(found > 0)
    }

    /// How long `key` lasts; `None` where it holds nothing.
    pub async fn ttl(&self, key: &str) -> Result<Option<Expiry>, ResourceError> {
        let left: i64 = self.query("`ttl` on", &[], |names| redis::cmd("PTTL").arg(names.key(key)).take()).await?;
        Ok(match left {
            -1 => Some(Expiry::Never),
            left if left >= 0 => Some(Expiry::In(Duration::from_millis(left.unsigned_abs()))),
            _ => None,
        })
    }

    /// Gives `key` a lifetime of `ttl` (at least a millisecond): whether it
    /// held anything to expire.
    pub async fn expire(&self, key: &str, ttl: Duration) -> Result<bool, ResourceError> {
        let operation = "`expire` on";
        let ttl = super::strings::milliseconds(ttl).map_err(|fault| self.error(operation, fault))?;
        let set: i64 =
            self.query(operation, &[], |names| redis::cmd("PEXPIRE").arg(names.key(key)).arg(ttl).take()).await?;
        Ok(set > 0)
    }

    /// Takes `key`'s lifetime away: whether it had one.
    pub async fn persist(&self, key: &str) -> Result<bool, ResourceError> {
        let removed: i64 =
            self.query("`persist` on", &[], |names| redis::cmd("PERSIST").arg(names.key(key)).take()).await?;
        Ok(removed > 0)
    }

    /// What `key` holds; `None` where it holds nothing.
    pub async fn key_type(&self, key: &str) -> Result<Option<KeyType>, ResourceError> {
        let name: String =
            self.query("`key_type` on", &[], |names| redis::cmd("TYPE").arg(names.key(key)).take()).await?;
        Ok((name != "none").then(|| KeyType::from_name(&name)))
    }

    /// Moves the value at `key` to `new_key`, replacing what that held, and
    /// its lifetime with it: whether `key` held anything to move. On a
    /// cluster both keys must be on one shard.
    pub async fn rename(&self, key: &str, new_key: &str) -> Result<bool, ResourceError> {
        let operation = "`rename` on";
        let moved: Result<Value, ResourceError> = self
            .query(operation, &[key, new_key], |names| {
                redis::cmd("RENAME").arg(names.key(key)).arg(names.key(new_key)).take()
            })
            .await;
        match moved {
            Ok(_) => Ok(true),
            // Redis's only word for a source holding nothing.
            Err(error) if error.code() == Some("ERR") && error.message().contains("no such key") => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// Walks the keys under the handle's prefixes that `options` pick, a
    /// page at a time, yielding each without the prefixes; a failure ends
    /// the walk. The cache is written to meanwhile, so a key may be missed
    /// or seen twice; on a cluster every primary is walked in turn.
    ///
    /// ```
    /// use celerity::resources::cache::{Cache, ScanOptions};
    ///
    /// async fn abandoned_carts(cache: &Cache) -> Result<u64, celerity::resources::ResourceError> {
    ///     let mut carts = cache.scan(ScanOptions::new().matching("cart:*"));
    ///     let mut removed = 0;
    ///     while let Some(cart) = carts.next().await {
    ///         if cache.hash_get(&cart?, "checked_out").await?.is_none() {
    ///             removed += 1;
    ///         }
    ///     }
    ///     Ok(removed)
    /// }
    /// # let _ = abandoned_carts;
    /// ```
    pub fn scan(&self, options: ScanOptions) -> Scan {
        let cache = self.clone();
        let pages = futures_util::stream::try_unfold(Walk::At { node: 0, cursor: 0, nodes: None }, move |walk| {
            let cache = cache.clone();
            let options = options.clone();
            async move {
                let mut walk = walk;
                // Pages can be empty: go on until one has keys or the walk ends.
                loop {
                    let Walk::At { node, cursor, nodes } = walk else {
                        return Ok(None);
                    };
                    let (keys, next) = cache.scan_page(&options, node, cursor, nodes).await?;
                    walk = next;
                    if !keys.is_empty() {
                        return Ok(Some((futures_util::stream::iter(keys.into_iter().map(Ok)), walk)));
                    }
                }
            }
        });
        Scan { keys: Box::pin(futures_util::TryStreamExt::try_flatten(pages)) }
    }

    /// One page of a scan: its keys, and where the walk goes next.
    async fn scan_page(
        &self,
        options: &ScanOptions,
        node: usize,
        cursor: u64,
        nodes: Option<Vec<(String, u16)>>,
    ) -> Result<(Vec<String>, Walk), ResourceError> {
        let page = async {
            let connected = self.connected().await?;
            let names = self.names(connected);
            let nodes = match nodes {
                Some(nodes) => nodes,
                None => connected.backend.primaries().await?,
            };
            let mut command = redis::cmd("SCAN");
            command.arg(cursor).arg("MATCH").arg(names.pattern(options.pattern.as_deref().unwrap_or("*")));
            if let Some(page_size) = options.page_size {
                command.arg("COUNT").arg(page_size);
            }
            if let Some(key_type) = &options.key_type {
                command.arg("TYPE").arg(key_type.name());
            }
            let answer = match nodes.get(node) {
                Some(address) => connected.backend.run_on(address, &command).await?,
                None => connected.backend.run(&command).await?,
            };
            let (next, sent): (u64, Vec<Vec<u8>>) = read(answer)?;
            let keys = sent.iter().filter_map(|key| names.strip(key)).collect();
            let walk = if next != 0 {
                Walk::At { node, cursor: next, nodes: Some(nodes) }
            } else if node + 1 < nodes.len() {
                Walk::At { node: node + 1, cursor: 0, nodes: Some(nodes) }
            } else {
                Walk::Done
            };
            Ok::<_, Fault>((keys, walk))
        };
        page.await.map_err(|fault| self.error("`scan` on", fault))
    }
}
