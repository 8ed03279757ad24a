use std::thread::sleep;
use std::time::Duration;

use redis::{Cmd, Value};

use super::long_double::add_floats;
use super::numbers::format_score;
use super::{MemoryCache, Refusal};

/// A command from its words.
fn cmd(words: &[&str]) -> Cmd {
    let mut cmd = Cmd::new();
    for word in words {
        cmd.arg(*word);
    }
    cmd
}

/// Runs one command.
fn run(cache: &MemoryCache, words: &[&str]) -> Result<Value, Refusal> {
    cache.run(&[&cmd(words)]).remove(0)
}

/// Runs one command that must succeed.
fn ok(cache: &MemoryCache, words: &[&str]) -> Value {
    run(cache, words).unwrap_or_else(|refusal| panic!("{words:?} refused: {refusal}"))
}

/// Runs one command that must be refused: its whole message.
fn refused(cache: &MemoryCache, words: &[&str]) -> String {
    match run(cache, words) {
        Ok(value) => panic!("{words:?} answered {value:?}"),
        Err(refusal) => refusal.to_string(),
    }
}

fn bulk(text: &str) -> Value {
    Value::BulkString(text.as_bytes().to_vec())
}

fn array(items: &[&str]) -> Value {
    Value::Array(items.iter().map(|item| bulk(item)).collect())
}

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

#[test]
fn strings_and_counters() {
    let c = MemoryCache::new();
    assert_eq!(ok(&c, &["GET", "k"]), Value::Nil);
    assert_eq!(ok(&c, &["set", "k", "v"]), Value::Okay);
    assert_eq!(ok(&c, &["GET", "k"]), bulk("v"));
    assert_eq!(ok(&c, &["APPEND", "k", "w"]), Value::Int(2));
    assert_eq!(ok(&c, &["APPEND", "new", "abc"]), Value::Int(3));
    assert_eq!(ok(&c, &["MSET", "a", "1", "b", "2"]), Value::Okay);
    ok(&c, &["HSET", "h", "f", "v"]);
    assert_eq!(
        ok(&c, &["MGET", "a", "nope", "h", "k"]),
        Value::Array(vec![bulk("1"), Value::Nil, Value::Nil, bulk("vw")])
    );
    assert_eq!(ok(&c, &["INCRBY", "n", "5"]), Value::Int(5));
    assert_eq!(ok(&c, &["DECRBY", "n", "7"]), Value::Int(-2));
    assert_eq!(ok(&c, &["GET", "n"]), bulk("-2"));
    assert_eq!(ok(&c, &["DEL", "a", "b", "a", "nope"]), Value::Int(2));
    assert_eq!(ok(&c, &["EXISTS", "k", "k", "a"]), Value::Int(2));

    for bad in ["x", "01", "+1", "-0", " 1", "1.0", "9223372036854775808"] {
        assert_eq!(refused(&c, &["INCRBY", "n", bad]), "ERR value is not an integer or out of range", "{bad}");
    }
    assert_eq!(refused(&c, &["INCRBY", "k", "1"]), "ERR value is not an integer or out of range");
    ok(&c, &["SET", "max", "9223372036854775807"]);
    assert_eq!(refused(&c, &["INCRBY", "max", "1"]), "ERR increment or decrement would overflow");
    assert_eq!(refused(&c, &["DECRBY", "n", "-9223372036854775808"]), "ERR decrement would overflow");
    assert_eq!(refused(&c, &["INCRBY", "h", "1"]), WRONGTYPE);
}

#[test]
fn incrbyfloat_writes_numbers_as_redis_does() {
    let c = MemoryCache::new();
    assert_eq!(ok(&c, &["INCRBYFLOAT", "f", "1.1"]), bulk("1.1"));
    assert_eq!(ok(&c, &["INCRBYFLOAT", "f", "2.2"]), bulk("3.3"));
    ok(&c, &["SET", "g", "10.50"]);
    assert_eq!(ok(&c, &["INCRBYFLOAT", "g", "0.1"]), bulk("10.6"));
    assert_eq!(ok(&c, &["INCRBYFLOAT", "g", "-5"]), bulk("5.6"));
    ok(&c, &["SET", "g", "5.0e3"]);
    assert_eq!(ok(&c, &["INCRBYFLOAT", "g", "2.0e2"]), bulk("5200"));
    assert_eq!(ok(&c, &["INCRBYFLOAT", "g", "-5200"]), bulk("0"));
    assert_eq!(refused(&c, &["INCRBYFLOAT", "g", "x"]), "ERR value is not a valid float");
    assert_eq!(refused(&c, &["INCRBYFLOAT", "g", "inf"]), "ERR increment would produce NaN or Infinity");
    // Redis adds in x87 extended precision and writes 17 decimals: exact
    // for small decimals, its own binary digits for larger ones.
    assert_eq!(add_floats(b"0.1", b"0.2"), Ok("0.3".into()));
    assert_eq!(add_floats(b"100000", b"1.1"), Ok("100001.10000000000000142".into()));
    assert_eq!(add_floats(b"1e20", b"2"), Ok("100000000000000000000".into()));
    assert_eq!(add_floats(b"-1.5", b"1.5"), Ok("0".into()));
    assert_eq!(add_floats(b"1e30", b"0"), Ok("1000000000000000000024696061952".into()));
    assert_eq!(add_floats(b"1e-30", b"0"), Ok("0".into()));
}

#[test]
fn set_options() {
    let c = MemoryCache::new();
    assert_eq!(ok(&c, &["SET", "k", "v", "XX"]), Value::Nil);
    assert_eq!(ok(&c, &["SET", "k", "v", "NX"]), Value::Okay);
    assert_eq!(ok(&c, &["SET", "k", "w", "NX"]), Value::Nil);
    assert_eq!(ok(&c, &["SET", "k", "w", "NX", "GET"]), bulk("v"));
    assert_eq!(ok(&c, &["GET", "k"]), bulk("v"));
    assert_eq!(ok(&c, &["SET", "k", "w", "XX", "GET"]), bulk("v"));
    assert_eq!(ok(&c, &["SET", "other", "x", "GET"]), Value::Nil);
    assert_eq!(ok(&c, &["GET", "k"]), bulk("w"));
    ok(&c, &["LPUSH", "l", "a"]);
    assert_eq!(refused(&c, &["SET", "l", "v", "GET"]), WRONGTYPE);
    assert_eq!(refused(&c, &["SET", "l", "v", "NX", "GET"]), WRONGTYPE);
    assert_eq!(ok(&c, &["SET", "l", "v"]), Value::Okay, "a plain SET replaces any type");
    assert_eq!(refused(&c, &["SET", "k", "v", "NX", "XX"]), "ERR syntax error");
    assert_eq!(refused(&c, &["SET", "k", "v", "PX"]), "ERR syntax error");
    assert_eq!(refused(&c, &["SET", "k", "v", "EXTRA"]), "ERR syntax error");
    assert_eq!(refused(&c, &["SET", "k", "v", "PX", "0"]), "ERR invalid expire time in 'set' command");
    assert_eq!(refused(&c, &["SET", "k", "v", "PX", "-5"]), "ERR invalid expire time in 'set' command");
    assert_eq!(refused(&c, &["SET", "k", "v", "PX", "abc"]), "ERR value is not an integer or out of range");
    assert_eq!(
        refused(&c, &["SET", "k", "v", "PX", "9223372036854775807"]),
        "ERR invalid expire time in 'set' command"
    );
}

#[test]
fn expiry() {
    let c = MemoryCache::new();
    assert_eq!(ok(&c, &["PTTL", "k"]), Value::Int(-2));
    ok(&c, &["SET", "k", "v"]);
    assert_eq!(ok(&c, &["PTTL", "k"]), Value::Int(-1));
    ok(&c, &["SET", "k", "v", "PX", "10000"]);
    let Value::Int(left) = ok(&c, &["PTTL", "k"]) else { panic!() };
    assert!((9_000..=10_000).contains(&left), "{left}");
    ok(&c, &["APPEND", "k", "w"]);
    assert!(matches!(ok(&c, &["PTTL", "k"]), Value::Int(n) if n > 0), "other writes keep the expiry");
    ok(&c, &["SET", "k", "v", "KEEPTTL"]);
    assert!(matches!(ok(&c, &["PTTL", "k"]), Value::Int(n) if n > 0), "KEEPTTL keeps it");
    ok(&c, &["SET", "k", "v"]);
    assert_eq!(ok(&c, &["PTTL", "k"]), Value::Int(-1), "SET clears the expiry");

    assert_eq!(ok(&c, &["PEXPIRE", "k", "5000"]), Value::Int(1));
    assert_eq!(ok(&c, &["PERSIST", "k"]), Value::Int(1));
    assert_eq!(ok(&c, &["PERSIST", "k"]), Value::Int(0));
    assert_eq!(ok(&c, &["PEXPIRE", "nope", "5000"]), Value::Int(0));
    assert_eq!(ok(&c, &["PEXPIRE", "k", "0"]), Value::Int(1));
    assert_eq!(ok(&c, &["EXISTS", "k"]), Value::Int(0), "PEXPIRE 0 deletes");
    assert_eq!(refused(&c, &["PEXPIRE", "k", "x"]), "ERR value is not an integer or out of range");
    assert_eq!(refused(&c, &["PEXPIRE", "k", "9223372036854775807"]), "ERR invalid expire time in 'pexpire' command");

    // RENAME carries the expiry and replaces the target, expiry and all.
    ok(&c, &["SET", "src", "v", "PX", "5000"]);
    ok(&c, &["SET", "dst", "old"]);
    assert_eq!(ok(&c, &["RENAME", "src", "dst"]), Value::Okay);
    assert_eq!(ok(&c, &["GET", "dst"]), bulk("v"));
    assert!(matches!(ok(&c, &["PTTL", "dst"]), Value::Int(n) if n > 0));
    assert_eq!(ok(&c, &["RENAME", "dst", "dst"]), Value::Okay);
    assert_eq!(refused(&c, &["RENAME", "src", "x"]), "ERR no such key");

    // A key past its time is gone for every command, and from `keys`.
    ok(&c, &["SET", "brief", "v", "PX", "1"]);
    ok(&c, &["HSET", "h", "f", "v"]);
    ok(&c, &["PEXPIRE", "h", "1"]);
    sleep(Duration::from_millis(5));
    assert_eq!(ok(&c, &["GET", "brief"]), Value::Nil);
    assert_eq!(ok(&c, &["HLEN", "h"]), Value::Int(0));
    assert_eq!(ok(&c, &["TYPE", "h"]), Value::SimpleString("none".into()));
    assert_eq!(c.keys(), ["dst"]);
}

#[test]
fn hashes() {
    let c = MemoryCache::new();
    assert_eq!(ok(&c, &["HSET", "h", "b", "1", "a", "2"]), Value::Int(2));
    assert_eq!(ok(&c, &["HSET", "h", "b", "3", "c", "4"]), Value::Int(1));
    assert_eq!(ok(&c, &["HGET", "h", "b"]), bulk("3"));
    assert_eq!(ok(&c, &["HGET", "h", "z"]), Value::Nil);
    assert_eq!(ok(&c, &["HGETALL", "h"]), array(&["b", "3", "a", "2", "c", "4"]));
    assert_eq!(ok(&c, &["HKEYS", "h"]), array(&["b", "a", "c"]));
    assert_eq!(ok(&c, &["HEXISTS", "h", "a"]), Value::Int(1));
    assert_eq!(ok(&c, &["HLEN", "h"]), Value::Int(3));
    assert_eq!(ok(&c, &["HINCRBY", "h", "a", "5"]), Value::Int(7));
    assert_eq!(ok(&c, &["HINCRBY", "h", "n", "-1"]), Value::Int(-1));
    ok(&c, &["HSET", "h", "s", "x", "m", "9223372036854775807"]);
    assert_eq!(refused(&c, &["HINCRBY", "h", "s", "1"]), "ERR hash value is not an integer");
    assert_eq!(refused(&c, &["HINCRBY", "h", "m", "1"]), "ERR increment or decrement would overflow");
    assert_eq!(refused(&c, &["HINCRBY", "h", "a", "x"]), "ERR value is not an integer or out of range");
    assert_eq!(refused(&c, &["HSET", "h", "a", "1", "b"]), "ERR wrong number of arguments for 'hset' command");
    assert_eq!(ok(&c, &["HDEL", "h", "a", "b", "c", "n", "s", "zz"]), Value::Int(5));
    assert_eq!(ok(&c, &["HDEL", "h", "m"]), Value::Int(1));
    assert_eq!(ok(&c, &["EXISTS", "h"]), Value::Int(0), "an empty hash is deleted");
    assert_eq!(ok(&c, &["HGETALL", "h"]), Value::Array(vec![]));
}

#[test]
fn lists() {
    let c = MemoryCache::new();
    assert_eq!(ok(&c, &["LPUSH", "l", "a", "b", "c"]), Value::Int(3));
    assert_eq!(ok(&c, &["RPUSH", "l", "d", "e"]), Value::Int(5));
    assert_eq!(ok(&c, &["LRANGE", "l", "0", "-1"]), array(&["c", "b", "a", "d", "e"]));
    assert_eq!(ok(&c, &["LRANGE", "l", "-2", "100"]), array(&["d", "e"]));
    assert_eq!(ok(&c, &["LRANGE", "l", "3", "1"]), array(&[]));
    assert_eq!(ok(&c, &["LRANGE", "l", "-100", "0"]), array(&["c"]));
    assert_eq!(ok(&c, &["LINDEX", "l", "-1"]), bulk("e"));
    assert_eq!(ok(&c, &["LINDEX", "l", "5"]), Value::Nil);
    assert_eq!(ok(&c, &["LINDEX", "l", "-6"]), Value::Nil);
    assert_eq!(ok(&c, &["LTRIM", "l", "1", "-2"]), Value::Okay);
    assert_eq!(ok(&c, &["LRANGE", "l", "0", "-1"]), array(&["b", "a", "d"]));
    assert_eq!(ok(&c, &["LLEN", "l"]), Value::Int(3));
    assert_eq!(ok(&c, &["LPOP", "l", "2"]), array(&["b", "a"]));
    assert_eq!(ok(&c, &["LPOP", "l", "0"]), array(&[]));
    assert_eq!(ok(&c, &["RPOP", "l", "5"]), array(&["d"]));
    assert_eq!(ok(&c, &["EXISTS", "l"]), Value::Int(0), "an empty list is deleted");
    assert_eq!(ok(&c, &["LPOP", "l", "2"]), Value::Nil);
    assert_eq!(ok(&c, &["RPOP", "l"]), Value::Nil);
    ok(&c, &["RPUSH", "l", "x", "y"]);
    assert_eq!(ok(&c, &["RPOP", "l"]), bulk("y"));
    assert_eq!(refused(&c, &["LPOP", "l", "-1"]), "ERR value is out of range, must be positive");
    assert_eq!(refused(&c, &["LPOP", "l", "1", "2"]), "ERR wrong number of arguments for 'lpop' command");
    assert_eq!(refused(&c, &["LRANGE", "l", "a", "1"]), "ERR value is not an integer or out of range");
    assert_eq!(ok(&c, &["LTRIM", "l", "5", "10"]), Value::Okay);
    assert_eq!(ok(&c, &["EXISTS", "l"]), Value::Int(0));
}

#[test]
fn sets() {
    let c = MemoryCache::new();
    assert_eq!(ok(&c, &["SADD", "s", "c", "a", "b", "a"]), Value::Int(3));
    assert_eq!(ok(&c, &["SADD", "t", "b", "d"]), Value::Int(2));
    assert_eq!(ok(&c, &["SMEMBERS", "s"]), array(&["a", "b", "c"]));
    assert_eq!(ok(&c, &["SISMEMBER", "s", "a"]), Value::Int(1));
    assert_eq!(ok(&c, &["SCARD", "s"]), Value::Int(3));
    assert_eq!(ok(&c, &["SUNION", "s", "t", "nope"]), array(&["a", "b", "c", "d"]));
    assert_eq!(ok(&c, &["SINTER", "s", "t"]), array(&["b"]));
    assert_eq!(ok(&c, &["SINTER", "s", "nope"]), array(&[]));
    assert_eq!(ok(&c, &["SDIFF", "s", "t"]), array(&["a", "c"]));
    assert_eq!(ok(&c, &["SDIFF", "nope", "t"]), array(&[]));
    ok(&c, &["SET", "str", "v"]);
    assert_eq!(refused(&c, &["SINTER", "nope", "str"]), WRONGTYPE);
    assert_eq!(refused(&c, &["SUNION", "s", "str"]), WRONGTYPE);
    assert_eq!(ok(&c, &["SREM", "t", "b", "d", "x"]), Value::Int(2));
    assert_eq!(ok(&c, &["EXISTS", "t"]), Value::Int(0), "an empty set is deleted");
}

#[test]
fn sorted_sets() {
    let c = MemoryCache::new();
    assert_eq!(ok(&c, &["ZADD", "z", "2", "b", "1", "a", "2", "a2", "1.5", "c"]), Value::Int(4));
    assert_eq!(ok(&c, &["ZADD", "z", "3", "b", "4", "d"]), Value::Int(1));
    assert_eq!(ok(&c, &["ZSCORE", "z", "c"]), bulk("1.5"));
    assert_eq!(ok(&c, &["ZSCORE", "z", "nope"]), Value::Nil);
    assert_eq!(ok(&c, &["ZRANK", "z", "a2"]), Value::Int(2));
    assert_eq!(ok(&c, &["ZREVRANK", "z", "a2"]), Value::Int(2));
    assert_eq!(ok(&c, &["ZRANK", "z", "d"]), Value::Int(4));
    assert_eq!(ok(&c, &["ZREVRANK", "z", "d"]), Value::Int(0));
    assert_eq!(ok(&c, &["ZRANK", "z", "nope"]), Value::Nil);
    assert_eq!(ok(&c, &["ZRANGE", "z", "0", "-1"]), array(&["a", "c", "a2", "b", "d"]));
    assert_eq!(ok(&c, &["ZRANGE", "z", "0", "1", "WITHSCORES"]), array(&["a", "1", "c", "1.5"]));
    assert_eq!(ok(&c, &["ZRANGE", "z", "0", "1", "REV", "WITHSCORES"]), array(&["d", "4", "b", "3"]));
    assert_eq!(ok(&c, &["ZRANGE", "z", "-2", "-1"]), array(&["b", "d"]));
    assert_eq!(ok(&c, &["ZRANGE", "z", "(1", "3", "BYSCORE"]), array(&["c", "a2", "b"]));
    assert_eq!(
        ok(&c, &["ZRANGE", "z", "-inf", "(3", "BYSCORE", "WITHSCORES"]),
        array(&["a", "1", "c", "1.5", "a2", "2"])
    );
    assert_eq!(
        ok(&c, &["ZRANGE", "z", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", "1", "2", "WITHSCORES"]),
        array(&["b", "3", "a2", "2"])
    );
    assert_eq!(ok(&c, &["ZRANGE", "z", "(4", "(1.5", "BYSCORE", "REV"]), array(&["b", "a2"]));
    assert_eq!(ok(&c, &["ZRANGE", "z", "-inf", "inf", "BYSCORE", "LIMIT", "3", "-1"]), array(&["b", "d"]));
    assert_eq!(ok(&c, &["ZRANGE", "z", "-inf", "inf", "BYSCORE", "LIMIT", "-1", "2"]), array(&[]));
    assert_eq!(ok(&c, &["ZRANGE", "nope", "0", "-1"]), array(&[]));
    assert_eq!(ok(&c, &["ZCOUNT", "z", "(1", "2"]), Value::Int(2));
    assert_eq!(ok(&c, &["ZCARD", "z"]), Value::Int(5));
    assert_eq!(ok(&c, &["ZINCRBY", "z", "2.25", "a"]), bulk("3.25"));
    assert_eq!(ok(&c, &["ZINCRBY", "new", "1.1", "m"]), bulk("1.1"));
    assert_eq!(ok(&c, &["ZINCRBY", "new", "2.2", "m"]), bulk("3.3000000000000003"));
    assert_eq!(ok(&c, &["ZADD", "new", "inf", "m"]), Value::Int(0));
    assert_eq!(refused(&c, &["ZINCRBY", "new", "-inf", "m"]), "ERR resulting score is not a number (NaN)");
    assert_eq!(ok(&c, &["ZSCORE", "new", "m"]), bulk("inf"));
    assert_eq!(refused(&c, &["ZINCRBY", "new", "NX", "m"]), "ERR syntax error", "read as ZADD new NX m");

    assert_eq!(refused(&c, &["ZADD", "z", "x", "m"]), "ERR value is not a valid float");
    assert_eq!(refused(&c, &["ZADD", "z", "nan", "m"]), "ERR value is not a valid float");
    assert_eq!(refused(&c, &["ZADD", "z", "1", "m", "2"]), "ERR syntax error");
    assert_eq!(ok(&c, &["ZSCORE", "z", "m"]), Value::Nil, "a refused ZADD adds nothing");
    assert_eq!(refused(&c, &["ZRANGE", "z", "x", "1", "BYSCORE"]), "ERR min or max is not a float");
    assert_eq!(refused(&c, &["ZCOUNT", "z", "1", "(x"]), "ERR min or max is not a float");
    assert_eq!(refused(&c, &["ZRANGE", "z", "0", "1", "LIMIT", "0", "1"]).split(',').next(), Some("ERR syntax error"));
    assert_eq!(refused(&c, &["ZRANGE", "z", "0", "1", "BYSCORE", "LIMIT", "0"]), "ERR syntax error");
    assert_eq!(refused(&c, &["ZRANGE", "z", "a", "1"]), "ERR value is not an integer or out of range");

    // z: c 1.5, a2 2, b 3, a 3.25, d 4
    assert_eq!(ok(&c, &["ZREMRANGEBYRANK", "z", "-2", "-1"]), Value::Int(2));
    assert_eq!(ok(&c, &["ZRANGE", "z", "0", "-1"]), array(&["c", "a2", "b"]));
    assert_eq!(ok(&c, &["ZREMRANGEBYSCORE", "z", "(1.5", "+inf"]), Value::Int(2));
    assert_eq!(ok(&c, &["ZREM", "z", "c", "nope"]), Value::Int(1));
    assert_eq!(ok(&c, &["EXISTS", "z"]), Value::Int(0), "an empty sorted set is deleted");
    assert_eq!(ok(&c, &["ZREMRANGEBYRANK", "z", "0", "-1"]), Value::Int(0));
}

#[test]
fn scores_are_written_as_redis_7_writes_them() {
    let cases: &[(f64, &str)] = &[
        (1.5, "1.5"),
        (3.0, "3"),
        (-2.0, "-2"),
        (0.1 + 0.2, "0.30000000000000004"),
        (0.1, "0.1"),
        (1e-5, "0.00001"),
        (2.5e-7, "2.5e-7"),
        (12_345_678.0, "12345678"),
        (1e20, "1e+20"),
        (1.5e300, "1.5e+300"),
        (f64::INFINITY, "inf"),
        (f64::NEG_INFINITY, "-inf"),
        (0.0, "0"),
    ];
    for (value, expected) in cases {
        assert_eq!(format_score(*value), *expected);
    }
}

#[test]
fn scan_matches_and_filters_by_type() {
    let c = MemoryCache::new();
    ok(&c, &["MSET", "user:1", "a", "user:2", "b", "order:1", "c"]);
    ok(&c, &["HSET", "user:h", "f", "v"]);
    let page = |keys: &[&str]| Value::Array(vec![bulk("0"), array(keys)]);
    assert_eq!(ok(&c, &["SCAN", "0"]), page(&["order:1", "user:1", "user:2", "user:h"]));
    assert_eq!(ok(&c, &["SCAN", "0", "MATCH", "user:*", "COUNT", "100"]), page(&["user:1", "user:2", "user:h"]));
    assert_eq!(ok(&c, &["SCAN", "0", "MATCH", "user:[0-9]"]), page(&["user:1", "user:2"]));
    assert_eq!(ok(&c, &["SCAN", "0", "MATCH", "*", "TYPE", "hash"]), page(&["user:h"]));
    assert_eq!(ok(&c, &["SCAN", "0", "TYPE", "zset"]), page(&[]));
    assert_eq!(refused(&c, &["SCAN", "x"]), "ERR invalid cursor");
    assert_eq!(refused(&c, &["SCAN", "0", "COUNT", "0"]), "ERR syntax error");
    assert_eq!(refused(&c, &["SCAN", "0", "MATCH"]), "ERR syntax error");
}

#[test]
fn every_command_checks_the_type() {
    let c = MemoryCache::new();
    ok(&c, &["SET", "str", "v"]);
    ok(&c, &["LPUSH", "list", "v"]);
    let on_string: &[&[&str]] = &[
        &["HGET", "str", "f"],
        &["HSET", "str", "f", "v"],
        &["HINCRBY", "str", "f", "1"],
        &["HGETALL", "str"],
        &["LPUSH", "str", "v"],
        &["LPOP", "str", "1"],
        &["LRANGE", "str", "0", "1"],
        &["SADD", "str", "m"],
        &["SMEMBERS", "str"],
        &["ZADD", "str", "1", "m"],
        &["ZRANGE", "str", "0", "1"],
        &["ZSCORE", "str", "m"],
        &["ZINCRBY", "str", "1", "m"],
    ];
    for words in on_string {
        assert_eq!(refused(&c, words), WRONGTYPE, "{words:?}");
    }
    for words in [&["GET", "list"][..], &["APPEND", "list", "v"], &["INCRBYFLOAT", "list", "1"], &["HLEN", "list"]] {
        assert_eq!(refused(&c, words), WRONGTYPE, "{words:?}");
    }
    assert_eq!(ok(&c, &["TYPE", "list"]), Value::SimpleString("list".into()));
    assert_eq!(ok(&c, &["TYPE", "str"]), Value::SimpleString("string".into()));
    assert_eq!(c.keys(), ["list", "str"], "refused commands create nothing");
}

#[test]
fn arity_syntax_and_unknown_commands() {
    let c = MemoryCache::new();
    assert_eq!(refused(&c, &["GET"]), "ERR wrong number of arguments for 'get' command");
    assert_eq!(refused(&c, &["get", "a", "b"]), "ERR wrong number of arguments for 'get' command");
    assert_eq!(refused(&c, &["MSET", "a", "1", "b"]), "ERR wrong number of arguments for 'mset' command");
    assert_eq!(refused(&c, &["ZADD", "z", "1"]), "ERR wrong number of arguments for 'zadd' command");
    assert_eq!(refused(&c, &["FLUSHALL"]), "ERR unknown command 'FLUSHALL', with args beginning with: ");
    assert_eq!(refused(&c, &["foo", "a", "b"]), "ERR unknown command 'foo', with args beginning with: 'a' 'b' ");
    let refusal = run(&c, &["nope"]).unwrap_err();
    assert_eq!((refusal.code, refusal.message.as_str()), ("ERR", "unknown command 'nope', with args beginning with: "));
    assert!(matches!(c.run(&[&Cmd::new()]).as_slice(), [Err(_)]));
}

#[test]
fn a_batch_runs_in_order_and_a_refusal_undoes_nothing() {
    let c = MemoryCache::new();
    let answers = c.run(&[
        &cmd(&["SET", "a", "1"]),
        &cmd(&["LPUSH", "a", "x"]),
        &cmd(&["INCRBY", "a", "2"]),
        &cmd(&["GET", "a"]),
    ]);
    assert_eq!(answers[0], Ok(Value::Okay));
    assert_eq!(answers[1].as_ref().map_err(|r| r.code), Err("WRONGTYPE"));
    assert_eq!(answers[2], Ok(Value::Int(3)));
    assert_eq!(answers[3], Ok(bulk("3")));
}

#[test]
fn no_input_panics() {
    // Every command, on keys of each type and a missing one, with argument
    // lists drawn from awkward words.
    let words = ["", "0", "-1", "1", "x", "(", "(x", "inf", "-inf", "nan", "1e400", "NX", "GET", "PX", "LIMIT", "REV"];
    let c = MemoryCache::new();
    for (name, ..) in super::COMMANDS {
        for key in ["str", "hash", "list", "set", "zset", "missing"] {
            for len in 0..6 {
                for offset in 0..words.len() {
                    c.run(&[
                        &cmd(&["SET", "str", "1"]),
                        &cmd(&["HSET", "hash", "f", "1"]),
                        &cmd(&["RPUSH", "list", "a", "b"]),
                        &cmd(&["SADD", "set", "a"]),
                        &cmd(&["ZADD", "zset", "1", "a"]),
                    ]);
                    let mut call = vec![*name, key];
                    call.extend((0..len).map(|i| words[(offset + i * 7) % words.len()]));
                    c.run(&[&cmd(&call)]);
                }
            }
        }
    }
}
