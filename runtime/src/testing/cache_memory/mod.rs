//! An in-memory cache that answers the Redis commands `Cache` sends.
//!
//! `TestCache` runs a handler's cache calls against it instead of a server.
//! It interprets exactly the commands the SDK's `Cache` handle sends, with
//! Redis 7's semantics, answers (RESP2 shapes, as the `redis` crate reads
//! them) and error wording, so that a test that passes here passes against a
//! real server. Keys expire lazily, when a command finds them, as in Redis.

mod collections;
mod keyspace;
mod long_double;
mod numbers;
mod sorted_set;
#[cfg(test)]
mod tests;

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::fmt;
use std::ops::Range;
use std::sync::Mutex;
use std::time::Instant;

use redis::{Arg, Cmd, Value};

/// A refusal as Redis words it: its code (the first word: `WRONGTYPE`, `ERR`) and the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) code: &'static str,
    pub(crate) message: String,
}

impl Refusal {
    /// An `ERR` refusal.
    fn err(message: impl Into<String>) -> Self {
        Self { code: "ERR", message: message.into() }
    }

    /// A command meant for another type than the key holds.
    fn wrong_type() -> Self {
        Self { code: "WRONGTYPE", message: "Operation against a key holding the wrong kind of value".into() }
    }

    /// Options Redis cannot read.
    fn syntax() -> Self {
        Self::err("syntax error")
    }

    /// An argument, or a stored value, that is not a 64-bit integer.
    fn not_integer() -> Self {
        Self::err("value is not an integer or out of range")
    }

    /// An argument, or a stored value, that is not a number.
    fn not_float() -> Self {
        Self::err("value is not a valid float")
    }

    /// An integer sum outside 64 bits.
    fn overflow() -> Self {
        Self::err("increment or decrement would overflow")
    }

    /// Too few or too many arguments for `command` (lower case, as Redis names it).
    fn arity(command: &str) -> Self {
        Self::err(format!("wrong number of arguments for '{command}' command"))
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.code, self.message)
    }
}

/// A command's answer, or its refusal.
type Reply = Result<Value, Refusal>;

/// Keys, values, fields and members: Redis strings are bytes.
type Bytes = Vec<u8>;

/// What a key holds.
#[derive(Debug, Clone)]
enum Entry {
    String(Bytes),
    /// Fields in insertion order, the order a small Redis hash answers in.
    Hash(Vec<(Bytes, Bytes)>),
    List(VecDeque<Bytes>),
    Set(BTreeSet<Bytes>),
    /// Member → score; ordered by (score, member) when read by rank.
    SortedSet(HashMap<Bytes, f64>),
}

impl Entry {
    /// The name TYPE answers for it.
    fn kind(&self) -> &'static str {
        match self {
            Entry::String(_) => "string",
            Entry::Hash(_) => "hash",
            Entry::List(_) => "list",
            Entry::Set(_) => "set",
            Entry::SortedSet(_) => "zset",
        }
    }

    /// Whether it is a collection with nothing left: Redis deletes those.
    fn is_empty_collection(&self) -> bool {
        match self {
            Entry::String(_) => false,
            Entry::Hash(fields) => fields.is_empty(),
            Entry::List(items) => items.is_empty(),
            Entry::Set(members) => members.is_empty(),
            Entry::SortedSet(members) => members.is_empty(),
        }
    }

    /// Its string, or WRONGTYPE.
    fn string(&mut self) -> Result<&mut Bytes, Refusal> {
        match self {
            Entry::String(value) => Ok(value),
            _ => Err(Refusal::wrong_type()),
        }
    }

    /// Its hash, or WRONGTYPE.
    fn hash(&mut self) -> Result<&mut Vec<(Bytes, Bytes)>, Refusal> {
        match self {
            Entry::Hash(fields) => Ok(fields),
            _ => Err(Refusal::wrong_type()),
        }
    }

    /// Its list, or WRONGTYPE.
    fn list(&mut self) -> Result<&mut VecDeque<Bytes>, Refusal> {
        match self {
            Entry::List(items) => Ok(items),
            _ => Err(Refusal::wrong_type()),
        }
    }

    /// Its set, or WRONGTYPE.
    fn set(&mut self) -> Result<&mut BTreeSet<Bytes>, Refusal> {
        match self {
            Entry::Set(members) => Ok(members),
            _ => Err(Refusal::wrong_type()),
        }
    }

    /// Its sorted set, or WRONGTYPE.
    fn sorted_set(&mut self) -> Result<&mut HashMap<Bytes, f64>, Refusal> {
        match self {
            Entry::SortedSet(members) => Ok(members),
            _ => Err(Refusal::wrong_type()),
        }
    }
}

/// A key's entry and its expiry.
#[derive(Debug)]
struct Slot {
    entry: Entry,
    expires_at: Option<Instant>,
}

impl Slot {
    /// Whether the key is gone at `now`.
    fn expired(&self, now: Instant) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }
}

/// The keyspace.
#[derive(Debug)]
struct State {
    slots: HashMap<Bytes, Slot>,
    /// The time of the batch being run: one reading for all its commands,
    /// as Redis uses one time across the commands of a MULTI/EXEC.
    now: Instant,
}

impl State {
    /// The live slot at `key`: an expired one is removed first, as Redis
    /// removes a key it finds expired.
    fn slot(&mut self, key: &[u8]) -> Option<&mut Slot> {
        let now = self.now;
        if self.slots.get(key).is_some_and(|slot| slot.expired(now)) {
            self.slots.remove(key);
        }
        self.slots.get_mut(key)
    }

    /// The live entry at `key`.
    fn entry(&mut self, key: &[u8]) -> Option<&mut Entry> {
        self.slot(key).map(|slot| &mut slot.entry)
    }

    /// The live entry at `key`, or a new one without expiry made by `make`.
    fn entry_or_insert(&mut self, key: &[u8], make: impl FnOnce() -> Entry) -> &mut Entry {
        self.slot(key);
        &mut self.slots.entry(key.to_vec()).or_insert_with(|| Slot { entry: make(), expires_at: None }).entry
    }

    /// Replaces what `key` holds, expiry included.
    fn insert(&mut self, key: &[u8], entry: Entry, expires_at: Option<Instant>) {
        self.slots.insert(key.to_vec(), Slot { entry, expires_at });
    }

    /// Deletes `key` if it holds an empty collection, as Redis does as soon as
    /// a collection loses its last element.
    fn prune(&mut self, key: &[u8]) {
        if self.slots.get(key).is_some_and(|slot| slot.entry.is_empty_collection()) {
            self.slots.remove(key);
        }
    }

    /// The string at `key`, if any.
    fn string(&mut self, key: &[u8]) -> Result<Option<&mut Bytes>, Refusal> {
        self.entry(key).map(Entry::string).transpose()
    }

    /// The hash at `key`, if any.
    fn hash(&mut self, key: &[u8]) -> Result<Option<&mut Vec<(Bytes, Bytes)>>, Refusal> {
        self.entry(key).map(Entry::hash).transpose()
    }

    /// The list at `key`, if any.
    fn list(&mut self, key: &[u8]) -> Result<Option<&mut VecDeque<Bytes>>, Refusal> {
        self.entry(key).map(Entry::list).transpose()
    }

    /// The set at `key`, if any.
    fn set(&mut self, key: &[u8]) -> Result<Option<&mut BTreeSet<Bytes>>, Refusal> {
        self.entry(key).map(Entry::set).transpose()
    }

    /// The sorted set at `key`, if any.
    fn sorted_set(&mut self, key: &[u8]) -> Result<Option<&mut HashMap<Bytes, f64>>, Refusal> {
        self.entry(key).map(Entry::sorted_set).transpose()
    }

    /// Runs one command.
    fn execute(&mut self, cmd: &Cmd) -> Reply {
        // A cursor argument stands for a SCAN cursor the connection fills in;
        // the SDK sends none, and 0 is what it would start from.
        let args: Vec<&[u8]> =
            cmd.args_iter().map(|arg| if let Arg::Simple(bytes) = arg { bytes } else { b"0" }).collect();
        let Some((name, args)) = args.split_first() else {
            return Err(unknown_command(b"", &[]));
        };
        let lower = name.to_ascii_lowercase();
        let Some(&(command, arity, handler)) = COMMANDS.iter().find(|(command, ..)| command.as_bytes() == lower) else {
            return Err(unknown_command(name, args));
        };
        let needed = usize::from(arity.unsigned_abs()) - 1;
        let fits = if arity > 0 { args.len() == needed } else { args.len() >= needed };
        if !fits {
            return Err(Refusal::arity(command));
        }
        handler(self, args)
    }
}

/// Redis's refusal of a command it does not have, quoting the name and the
/// first arguments (up to 128 bytes of them), line breaks blanked.
fn unknown_command(name: &[u8], args: &[&[u8]]) -> Refusal {
    let text = |bytes: &[u8], room: usize| String::from_utf8_lossy(&bytes[..bytes.len().min(room)]).into_owned();
    let mut quoted = String::new();
    for arg in args {
        if quoted.len() >= 128 {
            break;
        }
        quoted += &format!("'{}' ", text(arg, 128 - quoted.len()));
    }
    let message = format!("unknown command '{}', with args beginning with: {quoted}", text(name, 128));
    Refusal::err(message.replace(['\r', '\n'], " "))
}

/// A command's handler, given the arguments after the command's name.
type Handler = fn(&mut State, &[&[u8]]) -> Reply;

/// Each command: its name, its arity as Redis counts it (the name included;
/// negative for "at least"), and its handler.
const COMMANDS: &[(&str, i8, Handler)] = &[
    ("get", 2, keyspace::get),
    ("set", -3, keyspace::set),
    ("del", -2, keyspace::del),
    ("append", 3, keyspace::append),
    ("mget", -2, keyspace::mget),
    ("mset", -3, keyspace::mset),
    ("incrby", 3, keyspace::incrby),
    ("decrby", 3, keyspace::decrby),
    ("incrbyfloat", 3, keyspace::incrbyfloat),
    ("exists", -2, keyspace::exists),
    ("pttl", 2, keyspace::pttl),
    ("pexpire", -3, keyspace::pexpire),
    ("persist", 2, keyspace::persist),
    ("type", 2, keyspace::type_of),
    ("rename", 3, keyspace::rename),
    ("scan", -2, keyspace::scan),
    ("hget", 3, collections::hget),
    ("hset", -4, collections::hset),
    ("hdel", -3, collections::hdel),
    ("hgetall", 2, collections::hgetall),
    ("hexists", 3, collections::hexists),
    ("hincrby", 4, collections::hincrby),
    ("hkeys", 2, collections::hkeys),
    ("hlen", 2, collections::hlen),
    ("lpush", -3, collections::lpush),
    ("rpush", -3, collections::rpush),
    ("lpop", -2, collections::lpop),
    ("rpop", -2, collections::rpop),
    ("lrange", 4, collections::lrange),
    ("llen", 2, collections::llen),
    ("ltrim", 4, collections::ltrim),
    ("lindex", 3, collections::lindex),
    ("sadd", -3, collections::sadd),
    ("srem", -3, collections::srem),
    ("smembers", 2, collections::smembers),
    ("sismember", 3, collections::sismember),
    ("scard", 2, collections::scard),
    ("sunion", -2, collections::sunion),
    ("sinter", -2, collections::sinter),
    ("sdiff", -2, collections::sdiff),
    ("zadd", -4, sorted_set::zadd),
    ("zrem", -3, sorted_set::zrem),
    ("zscore", 3, sorted_set::zscore),
    ("zrank", 3, sorted_set::zrank),
    ("zrevrank", 3, sorted_set::zrevrank),
    ("zrange", -4, sorted_set::zrange),
    ("zincrby", 4, sorted_set::zincrby),
    ("zcard", 2, sorted_set::zcard),
    ("zcount", 4, sorted_set::zcount),
    ("zremrangebyrank", 4, sorted_set::zremrangebyrank),
    ("zremrangebyscore", 4, sorted_set::zremrangebyscore),
];

/// The positions `start..=stop` select in a sequence of `len`, as LRANGE,
/// LTRIM and ZRANGE read them: negative ones count from the end, and the
/// range is clamped to the sequence (empty when nothing is left).
fn index_range(start: i64, stop: i64, len: usize) -> Range<usize> {
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let start = if start < 0 { (start + len).max(0) } else { start };
    let stop = if stop < 0 { stop + len } else { stop.min(len - 1) };
    if start > stop || start >= len {
        return 0..0;
    }
    // Both are now within 0..len.
    start as usize..stop as usize + 1
}

/// A byte string answer.
fn bulk(bytes: &[u8]) -> Value {
    Value::BulkString(bytes.to_vec())
}

/// An array of byte strings.
fn bulk_array<'a>(items: impl IntoIterator<Item = &'a Bytes>) -> Value {
    Value::Array(items.into_iter().map(|item| bulk(item)).collect())
}

/// An integer answer from a count.
fn count(n: usize) -> Value {
    Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

/// An in-memory stand-in for a Redis server.
pub(crate) struct MemoryCache {
    state: Mutex<State>,
}

impl Default for MemoryCache {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryCache {
    /// An empty cache.
    pub(crate) fn new() -> Self {
        Self { state: Mutex::new(State { slots: HashMap::new(), now: Instant::now() }) }
    }

    /// Runs `commands` in order with nothing else in between (as MULTI/EXEC
    /// applies them; like Redis, a command that fails does not undo the others):
    /// each one's answer, or its refusal.
    pub(crate) fn run(&self, commands: &[&Cmd]) -> Vec<Result<Value, Refusal>> {
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        state.now = Instant::now();
        commands.iter().map(|cmd| state.execute(cmd)).collect()
    }

    /// Every key, for tests (expired keys excluded), sorted.
    pub(crate) fn keys(&self) -> Vec<String> {
        let state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let now = Instant::now();
        let mut keys: Vec<String> = state
            .slots
            .iter()
            .filter(|(_, slot)| !slot.expired(now))
            .map(|(key, _)| String::from_utf8_lossy(key).into_owned())
            .collect();
        keys.sort();
        keys
    }
}
