//! The cache, against a real Redis on loopback and against the in-memory
//! stand-in, with the same assertions, so that the stand-in cannot drift
//! from what a server answers; then what only a server shows: the recorded
//! settings, prefixes as stored, a cluster, the raw connection and a cache
//! that is not there.

use std::collections::HashMap;
use std::time::Duration;

use celerity::config::{Configuration, Values};
use celerity::resources::cache::redis::AsyncCommands;
use celerity::resources::cache::{Cache, End, Expiry, KeyType, Limit, Order, ScanOptions, SetOptions};
use celerity::resources::{Links, ResourceErrorKind};
use celerity::testing::TestCache;
use celerity_testkit::servers;

/// A cache on the Redis at `port`, under the deployment prefix `prefix`,
/// as a deployment records it.
fn recorded(port: u16, prefix: &str, extra: &[(&str, &str)]) -> Cache {
    let links =
        Links::from_json(br#"{"sessions": {"type": "cache", "configKey": "sessionsCache"}}"#, "the test's links")
            .unwrap();
    let port = port.to_string();
    let mut values = vec![
        ("sessionsCache_host", "127.0.0.1"),
        ("sessionsCache_port", port.as_str()),
        ("sessionsCache_tls", "false"),
        ("sessionsCache_keyPrefix", prefix),
    ];
    values.extend_from_slice(extra);
    let config = Configuration::builder()
        .links(links)
        .values("resources", Values::from_pairs(values))
        .env("CELERITY_PLATFORM", "aws")
        .build();
    config.resources().handle::<Cache>(None).unwrap()
}

fn on_redis(test: &str) -> Cache {
    recorded(servers::redis().port(), &format!("{test}:"), &[])
}

fn in_memory() -> Cache {
    TestCache::new("sessions").cache()
}

/// Runs a behaviour against a real Redis and against the stand-in.
macro_rules! on_both {
    ($($behaviour:ident),* $(,)?) => {
        $(
            mod $behaviour {
                #[tokio::test]
                async fn on_redis() {
                    super::$behaviour(super::on_redis(stringify!($behaviour))).await;
                }

                #[tokio::test]
                async fn in_memory() {
                    super::$behaviour(super::in_memory()).await;
                }
            }
        )*
    };
}

on_both!(
    strings,
    conditional_sets,
    counters,
    batches,
    keys,
    hashes,
    lists,
    sets,
    sorted_sets,
    transactions,
    scans,
    wrong_types
);

async fn strings(cache: Cache) {
    assert_eq!(cache.get("greeting").await.unwrap(), None);
    cache.set("greeting", "hello").await.unwrap();
    assert_eq!(cache.get("greeting").await.unwrap().as_deref(), Some("hello"));
    assert_eq!(cache.append("greeting", ", world").await.unwrap(), 12);
    assert_eq!(cache.get_set("greeting", "bye").await.unwrap().as_deref(), Some("hello, world"));
    assert_eq!(cache.get_set("absent", "first").await.unwrap(), None);
    assert_eq!(cache.get("greeting").await.unwrap().as_deref(), Some("bye"));
    assert!(cache.delete("greeting").await.unwrap());
    assert!(!cache.delete("greeting").await.unwrap());
    cache.set("empty", "").await.unwrap();
    assert_eq!(cache.get("empty").await.unwrap().as_deref(), Some(""), "an empty value is a value");
}

async fn conditional_sets(cache: Cache) {
    let absent = SetOptions::new().if_absent();
    assert!(cache.set_with("lock", "a", absent).await.unwrap());
    assert!(!cache.set_with("lock", "b", absent).await.unwrap(), "the lock is held");
    assert_eq!(cache.get("lock").await.unwrap().as_deref(), Some("a"));
    assert!(!cache.set_with("nobody", "x", SetOptions::new().if_present()).await.unwrap());
    assert_eq!(cache.get("nobody").await.unwrap(), None);
    assert!(cache.set_with("lock", "c", SetOptions::new().if_present()).await.unwrap());

    let ttl = SetOptions::new().ttl(Duration::from_secs(60));
    assert!(cache.set_with("short", "x", ttl).await.unwrap());
    match cache.ttl("short").await.unwrap() {
        Some(Expiry::In(left)) => {
            assert!(left > Duration::from_secs(55) && left <= Duration::from_secs(60), "{left:?}")
        }
        other => panic!("a TTL was set: {other:?}"),
    }
    cache.set("short", "y").await.unwrap();
    assert_eq!(cache.ttl("short").await.unwrap(), Some(Expiry::Never), "a plain set clears the TTL");

    let error = cache.set_with("k", "v", SetOptions::new().ttl(Duration::from_micros(10))).await.unwrap_err();
    assert_eq!((error.kind(), error.code()), (ResourceErrorKind::Invalid, Some("InvalidTtl")));
    assert_eq!(cache.get("k").await.unwrap(), None, "nothing was stored");
}

async fn counters(cache: Cache) {
    assert_eq!(cache.increment("visits", 1).await.unwrap(), 1);
    assert_eq!(cache.increment("visits", 41).await.unwrap(), 42);
    assert_eq!(cache.decrement("visits", 2).await.unwrap(), 40);
    assert_eq!(cache.increment("visits", -50).await.unwrap(), -10);
    assert_eq!(cache.increment_float("ratio", 1.5).await.unwrap(), 1.5);
    assert_eq!(cache.increment_float("ratio", -0.25).await.unwrap(), 1.25);
    cache.set("word", "seven").await.unwrap();
    let error = cache.increment("word", 1).await.unwrap_err();
    assert_eq!((error.kind(), error.code()), (ResourceErrorKind::Refused, Some("ERR")));
    assert!(error.to_string().starts_with("`increment` on the cache `sessions`: "), "{error}");
}

async fn batches(cache: Cache) {
    cache.set_many(&[("a", "1"), ("b", "2"), ("c", "")]).await.unwrap();
    let found = cache.get_many(&["a", "b", "c", "missing"]).await.unwrap();
    let expected: HashMap<String, String> =
        [("a", "1"), ("b", "2"), ("c", "")].into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    assert_eq!(found, expected);
    assert_eq!(cache.delete_many(&["a", "b", "missing"]).await.unwrap(), 2);
    assert!(cache.get_many(&[]).await.unwrap().is_empty());
    assert_eq!(cache.delete_many(&[]).await.unwrap(), 0);
    cache.set_many(&[]).await.unwrap();
}

async fn keys(cache: Cache) {
    assert!(!cache.exists("k").await.unwrap());
    assert_eq!(cache.ttl("k").await.unwrap(), None);
    assert_eq!(cache.key_type("k").await.unwrap(), None);
    assert!(!cache.expire("k", Duration::from_secs(10)).await.unwrap());
    cache.set("k", "v").await.unwrap();
    assert!(cache.exists("k").await.unwrap());
    assert_eq!(cache.key_type("k").await.unwrap(), Some(KeyType::String));
    assert!(!cache.persist("k").await.unwrap(), "nothing to take away");
    assert!(cache.expire("k", Duration::from_secs(100)).await.unwrap());
    assert!(matches!(cache.ttl("k").await.unwrap(), Some(Expiry::In(_))));
    assert!(cache.rename("k", "moved").await.unwrap());
    assert!(matches!(cache.ttl("moved").await.unwrap(), Some(Expiry::In(_))), "the TTL moves with the value");
    assert!(!cache.exists("k").await.unwrap());
    assert!(!cache.rename("k", "elsewhere").await.unwrap(), "nothing to move");
    assert!(cache.persist("moved").await.unwrap());
    assert_eq!(cache.ttl("moved").await.unwrap(), Some(Expiry::Never));
    cache.hash_set("h", &[("f", "v")]).await.unwrap();
    cache.list_push("l", &["x"], End::Back).await.unwrap();
    cache.set_add("s", &["x"]).await.unwrap();
    cache.sorted_set_add("z", &[("x", 1.0)]).await.unwrap();
    for (key, kind) in [("h", KeyType::Hash), ("l", KeyType::List), ("s", KeyType::Set), ("z", KeyType::SortedSet)] {
        assert_eq!(cache.key_type(key).await.unwrap(), Some(kind));
    }
}

async fn hashes(cache: Cache) {
    assert_eq!(cache.hash_set("cart", &[("apples", "3"), ("pears", "1")]).await.unwrap(), 2);
    assert_eq!(cache.hash_set("cart", &[("apples", "4"), ("plums", "2")]).await.unwrap(), 1);
    assert_eq!(cache.hash_get("cart", "apples").await.unwrap().as_deref(), Some("4"));
    assert_eq!(cache.hash_get("cart", "kiwis").await.unwrap(), None);
    assert!(cache.hash_exists("cart", "pears").await.unwrap());
    assert_eq!(cache.hash_increment("cart", "pears", 5).await.unwrap(), 6);
    assert_eq!(cache.hash_len("cart").await.unwrap(), 3);
    let mut fields = cache.hash_keys("cart").await.unwrap();
    fields.sort();
    assert_eq!(fields, ["apples", "pears", "plums"]);
    let all = cache.hash_get_all("cart").await.unwrap();
    assert_eq!(all.get("pears").map(String::as_str), Some("6"));
    assert_eq!(cache.hash_delete("cart", &["apples", "kiwis"]).await.unwrap(), 1);
    assert_eq!(cache.hash_delete("cart", &["pears", "plums"]).await.unwrap(), 2);
    assert!(!cache.exists("cart").await.unwrap(), "a hash with no fields is gone");
    assert!(cache.hash_get_all("cart").await.unwrap().is_empty());
    assert_eq!(cache.hash_len("cart").await.unwrap(), 0);
}

async fn lists(cache: Cache) {
    assert_eq!(cache.list_push("feed", &["b", "c"], End::Back).await.unwrap(), 2);
    assert_eq!(cache.list_push("feed", &["a0", "a"], End::Front).await.unwrap(), 4);
    assert_eq!(cache.list_range("feed", 0, -1).await.unwrap(), ["a", "a0", "b", "c"]);
    assert_eq!(cache.list_index("feed", -1).await.unwrap().as_deref(), Some("c"));
    assert_eq!(cache.list_index("feed", 9).await.unwrap(), None);
    assert_eq!(cache.list_len("feed").await.unwrap(), 4);
    cache.list_trim("feed", 0, 2).await.unwrap();
    assert_eq!(cache.list_range("feed", 0, -1).await.unwrap(), ["a", "a0", "b"]);
    assert_eq!(cache.list_pop("feed", 2, End::Front).await.unwrap(), ["a", "a0"]);
    assert_eq!(cache.list_pop("feed", 5, End::Back).await.unwrap(), ["b"]);
    assert!(cache.list_pop("feed", 1, End::Back).await.unwrap().is_empty(), "a pop of nothing is no failure");
    assert_eq!(cache.list_len("feed").await.unwrap(), 0);
}

async fn sets(cache: Cache) {
    assert_eq!(cache.set_add("{f}:ada", &["alan", "grace", "edsger"]).await.unwrap(), 3);
    assert_eq!(cache.set_add("{f}:ada", &["alan"]).await.unwrap(), 0);
    cache.set_add("{f}:alan", &["grace", "barbara"]).await.unwrap();
    assert!(cache.set_is_member("{f}:ada", "grace").await.unwrap());
    assert!(!cache.set_is_member("{f}:ada", "barbara").await.unwrap());
    assert_eq!(cache.set_len("{f}:ada").await.unwrap(), 3);
    let sorted = |mut members: Vec<String>| {
        members.sort();
        members
    };
    assert_eq!(sorted(cache.set_members("{f}:alan").await.unwrap()), ["barbara", "grace"]);
    assert_eq!(sorted(cache.set_intersect(&["{f}:ada", "{f}:alan"]).await.unwrap()), ["grace"]);
    assert_eq!(sorted(cache.set_union(&["{f}:ada", "{f}:alan"]).await.unwrap()).len(), 4);
    assert_eq!(sorted(cache.set_diff(&["{f}:ada", "{f}:alan"]).await.unwrap()), ["alan", "edsger"]);
    assert_eq!(cache.set_remove("{f}:alan", &["grace", "barbara", "nobody"]).await.unwrap(), 2);
    assert!(cache.set_members("{f}:alan").await.unwrap().is_empty());
}

async fn sorted_sets(cache: Cache) {
    let scores = [("ada", 31.0), ("grace", 42.0), ("alan", 27.5), ("edsger", 42.0)];
    assert_eq!(cache.sorted_set_add("board", &scores).await.unwrap(), 4);
    assert_eq!(cache.sorted_set_add("board", &[("ada", 35.0)]).await.unwrap(), 0, "a score moved");
    assert_eq!(cache.sorted_set_score("board", "ada").await.unwrap(), Some(35.0));
    assert_eq!(cache.sorted_set_score("board", "nobody").await.unwrap(), None);
    assert_eq!(cache.sorted_set_rank("board", "alan", Order::Ascending).await.unwrap(), Some(0));
    assert_eq!(cache.sorted_set_rank("board", "alan", Order::Descending).await.unwrap(), Some(3));
    assert_eq!(cache.sorted_set_rank("board", "nobody", Order::Ascending).await.unwrap(), None);
    let top = cache.sorted_set_range("board", 0, 1, Order::Descending).await.unwrap();
    assert_eq!(top, [("grace".to_string(), 42.0), ("edsger".to_string(), 42.0)], "ties in member order, reversed");
    let middle = cache.sorted_set_range_by_score("board", 30.0..42.0, Order::Ascending, None).await.unwrap();
    assert_eq!(middle, [("ada".to_string(), 35.0)], "42 is excluded");
    let paged = cache
        .sorted_set_range_by_score("board", .., Order::Descending, Some(Limit { offset: 1, count: 2 }))
        .await
        .unwrap();
    assert_eq!(paged, [("edsger".to_string(), 42.0), ("ada".to_string(), 35.0)]);
    assert_eq!(cache.sorted_set_count("board", 35.0..=42.0).await.unwrap(), 3);
    assert_eq!(cache.sorted_set_increment("board", "alan", 20.0).await.unwrap(), 47.5);
    assert_eq!(cache.sorted_set_len("board").await.unwrap(), 4);
    assert_eq!(cache.sorted_set_remove_by_rank("board", 0, 0).await.unwrap(), 1, "ada, lowest");
    assert_eq!(cache.sorted_set_remove_by_score("board", 42.0..=42.0).await.unwrap(), 2);
    assert_eq!(cache.sorted_set_remove("board", &["alan", "nobody"]).await.unwrap(), 1);
    assert_eq!(cache.sorted_set_len("board").await.unwrap(), 0);
}

async fn transactions(cache: Cache) {
    cache.set("{stock}:warehouse", "10").await.unwrap();
    let answers = cache
        .transaction(|tx| {
            tx.increment("{stock}:warehouse", -3);
            tx.increment("{stock}:shop", 3);
            tx.get("{stock}:warehouse");
        })
        .await
        .unwrap();
    let read = |value| celerity::resources::cache::redis::from_redis_value::<String>(value).unwrap();
    let answers: Vec<String> = answers.into_iter().map(read).collect();
    assert_eq!(answers, ["7", "3", "7"]);

    cache.set("{stock}:name", "widgets").await.unwrap();
    let error = cache
        .transaction(|tx| {
            tx.increment("{stock}:name", 1);
            tx.increment("{stock}:shop", 1);
        })
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ResourceErrorKind::Refused);
    assert!(error.message().contains("command 1 of 2 was refused, and the others were applied"), "{error}");
    assert_eq!(cache.get("{stock}:shop").await.unwrap().as_deref(), Some("4"), "as Redis does, no rollback");
    assert!(cache.transaction(|_| {}).await.unwrap().is_empty());
}

async fn scans(cache: Cache) {
    for i in 0..30 {
        cache.set(&format!("cart:{i}"), "x").await.unwrap();
    }
    cache.hash_set("cart:h", &[("f", "v")]).await.unwrap();
    cache.set("other", "x").await.unwrap();
    let mut carts = cache.scan(ScanOptions::new().matching("cart:*").page_size(7)).collect().await.unwrap();
    carts.sort();
    carts.dedup();
    assert_eq!(carts.len(), 31);
    assert!(carts.iter().all(|key| key.starts_with("cart:")), "{carts:?}");
    let hashes = cache.scan(ScanOptions::new().of_type(KeyType::Hash)).collect().await.unwrap();
    assert_eq!(hashes, ["cart:h"]);
    let mut everything = cache.scan(ScanOptions::new());
    let mut seen = 0;
    while let Some(key) = everything.next().await {
        key.unwrap();
        seen += 1;
    }
    assert!(seen >= 32, "{seen}");
}

async fn wrong_types(cache: Cache) {
    cache.list_push("queue", &["x"], End::Back).await.unwrap();
    let error = cache.get("queue").await.unwrap_err();
    assert_eq!((error.kind(), error.code()), (ResourceErrorKind::Refused, Some("WRONGTYPE")));
    assert_eq!(error.resource(), "sessions");
    assert!(error.to_string().starts_with("`get` on the cache `sessions`: the cache refused it: WRONGTYPE"), "{error}");
    let error = cache.hash_set("queue", &[("f", "v")]).await.unwrap_err();
    assert_eq!(error.code(), Some("WRONGTYPE"));
    assert_eq!(cache.list_len("queue").await.unwrap(), 1, "the list is untouched");
}

#[tokio::test]
async fn keys_are_stored_under_the_deployment_prefix_then_the_handles() {
    let cache = on_redis("prefixes");
    let sessions = cache.with_prefix("sessions:");
    sessions.set("u7", "active").await.unwrap();
    assert_eq!(servers::redis().command(&["GET", "prefixes:sessions:u7"]), "$6\r\nactive\r\n");
    assert_eq!(cache.get("sessions:u7").await.unwrap().as_deref(), Some("active"));
    assert_eq!(sessions.scan(ScanOptions::new()).collect().await.unwrap(), ["u7"]);
    // A prefix with glob characters is matched as written.
    let odd = recorded(servers::redis().port(), "odd[1]*:", &[]);
    odd.set("a", "1").await.unwrap();
    servers::redis().command(&["SET", "odd1x:a", "not ours"]);
    assert_eq!(odd.scan(ScanOptions::new()).collect().await.unwrap(), ["a"]);
}

#[tokio::test]
async fn the_settings_are_what_the_deployment_recorded() {
    let cache = recorded(servers::redis().port(), "settings:", &[("sessionsCache_user", "default")]);
    let settings = cache.settings().await.unwrap().unwrap();
    assert_eq!((settings.host.as_str(), settings.port), ("127.0.0.1", servers::redis().port()));
    assert!(!settings.tls && !settings.cluster_mode);
    assert_eq!(settings.user.as_deref(), Some("default"));
    assert_eq!(settings.key_prefix, "settings:");
    assert!(TestCache::new("m").cache().settings().await.unwrap().is_none());
}

#[tokio::test]
async fn a_local_cache_without_a_host_is_the_sessions_redis() {
    let links = Links::from_json(br#"{"sessions": {"type": "cache", "configKey": "sessionsCache"}}"#, "links").unwrap();
    let config = Configuration::builder()
        .links(links)
        .values("resources", Values::from_pairs([("sessionsCache_keyPrefix", "local-session:")]))
        .env("CELERITY_PLATFORM", "local")
        .env("CELERITY_REDIS_ENDPOINT", &servers::redis().url())
        .build();
    let cache = config.resources().handle::<Cache>(None).unwrap();
    cache.set("k", "v").await.unwrap();
    assert_eq!(servers::redis().command(&["GET", "local-session:k"]), "$1\r\nv\r\n");
    assert!(!cache.settings().await.unwrap().unwrap().tls);
}

#[tokio::test]
async fn the_raw_connection_reaches_what_the_handle_does_not_wrap() {
    let cache = on_redis("raw");
    let mut connection = cache.connection().await.unwrap();
    let _: () = connection.set("raw:k", "v").await.unwrap();
    let length: i64 = connection.strlen("raw:k").await.unwrap();
    assert_eq!(length, 1);
    let error = TestCache::new("m").cache().connection().await.unwrap_err();
    assert_eq!(error.kind(), ResourceErrorKind::Unsupported);
}

#[tokio::test]
async fn a_cache_that_is_not_there_is_unreachable_and_tried_again() {
    let cache = recorded(servers::free_port(), "gone:", &[]);
    let error = cache.get("k").await.unwrap_err();
    assert_eq!(error.kind(), ResourceErrorKind::Unreachable);
    assert!(error.to_string().starts_with("`get` on the cache `sessions`: the cache at 127.0.0.1:"), "{error}");
    let again = cache.set("k", "v").await.unwrap_err();
    assert_eq!(again.kind(), ResourceErrorKind::Unreachable);

    let memory = TestCache::new("m");
    memory.set_unreachable(true);
    assert_eq!(memory.cache().get("k").await.unwrap_err().kind(), ResourceErrorKind::Unreachable);
    memory.set_unreachable(false);
    assert_eq!(memory.cache().get("k").await.unwrap(), None);
}

#[tokio::test]
async fn settings_the_deployment_left_out_or_wrote_wrong_are_named() {
    let links = Links::from_json(br#"{"sessions": {"type": "cache", "configKey": "sessionsCache"}}"#, "links").unwrap();
    let aws = |values: Vec<(&str, &str)>| {
        Configuration::builder()
            .links(links.clone())
            .values("resources", Values::from_pairs(values))
            .env("CELERITY_PLATFORM", "aws")
            .build()
            .resources()
            .handle::<Cache>(None)
            .unwrap()
    };
    let error = aws(vec![]).get("k").await.unwrap_err();
    assert_eq!(error.kind(), ResourceErrorKind::Config);
    assert!(error.message().contains("`_host`"), "{error}");
    let error = aws(vec![("sessionsCache_host", "h"), ("sessionsCache_port", "many")]).get("k").await.unwrap_err();
    assert!(error.message().contains("`_port`"), "{error}");
    let error =
        aws(vec![("sessionsCache_host", "h"), ("sessionsCache_authMode", "kerberos")]).get("k").await.unwrap_err();
    assert!(error.message().contains("\"kerberos\""), "{error}");
    #[cfg(not(feature = "cache-aws"))]
    {
        let error =
            aws(vec![("sessionsCache_host", "h"), ("sessionsCache_authMode", "iam"), ("sessionsCache_user", "u")])
                .get("k")
                .await
                .unwrap_err();
        assert_eq!(error.kind(), ResourceErrorKind::Unsupported);
        assert!(error.message().contains("`cache-aws`"), "{error}");
    }
    #[cfg(feature = "cache-aws")]
    {
        let error =
            aws(vec![("sessionsCache_host", "h"), ("sessionsCache_authMode", "iam")]).get("k").await.unwrap_err();
        assert!(error.message().contains("`_user`"), "{error}");
    }
}

mod cluster {
    use super::*;

    fn clustered(test: &str) -> Cache {
        recorded(servers::redis_cluster().port(), &format!("{test}:"), &[("sessionsCache_clusterMode", "true")])
    }

    #[tokio::test]
    async fn single_keys_and_batches_are_routed_and_split_by_shard() {
        let cache = clustered("routed");
        cache.set("a", "1").await.unwrap();
        assert_eq!(cache.get("a").await.unwrap().as_deref(), Some("1"));
        // Keys on many slots: one MGET per slot, merged.
        let keys: Vec<String> = (0..20).map(|i| format!("k{i}")).collect();
        let pairs: Vec<(&str, &str)> = keys.iter().map(|key| (key.as_str(), "v")).collect();
        cache.set_many(&pairs).await.unwrap();
        let names: Vec<&str> = keys.iter().map(String::as_str).collect();
        assert_eq!(cache.get_many(&names).await.unwrap().len(), 20);
        assert_eq!(cache.delete_many(&names).await.unwrap(), 20);
        assert!(cache.settings().await.unwrap().unwrap().cluster_mode);
    }

    #[tokio::test]
    async fn keys_on_different_shards_are_refused_before_anything_is_sent() {
        let cache = clustered("apart");
        cache.set("foo", "1").await.unwrap();
        let error = cache.rename("foo", "bar").await.unwrap_err();
        assert_eq!((error.kind(), error.code()), (ResourceErrorKind::Invalid, Some("CrossSlot")));
        assert!(error.message().starts_with("`foo` and `bar` are on different shards"), "{error}");
        assert_eq!(cache.get("foo").await.unwrap().as_deref(), Some("1"), "nothing was moved");
        let error = cache.set_union(&["foo", "bar"]).await.unwrap_err();
        assert_eq!(error.code(), Some("CrossSlot"));
        let error = cache
            .transaction(|tx| {
                tx.set("foo", "2");
                tx.set("bar", "2");
            })
            .await
            .unwrap_err();
        assert_eq!(error.code(), Some("CrossSlot"));
        assert_eq!(cache.get("foo").await.unwrap().as_deref(), Some("1"));
        // With one hash tag they are together.
        cache.set("{u}a", "1").await.unwrap();
        assert!(cache.rename("{u}a", "{u}b").await.unwrap());
        cache
            .transaction(|tx| {
                tx.set("{u}a", "x");
                tx.set("{u}b", "y");
            })
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn a_scan_walks_every_primary() {
        let cache = clustered("walk");
        for i in 0..12 {
            cache.set(&format!("item:{i}"), "x").await.unwrap();
        }
        let mut found = cache.scan(ScanOptions::new().matching("item:*")).collect().await.unwrap();
        found.sort();
        found.dedup();
        assert_eq!(found.len(), 12);
    }
}
