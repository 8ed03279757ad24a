//! Hashes, lists and sets.

use std::collections::{BTreeSet, VecDeque};

use redis::Value;

use super::numbers::parse_int;
use super::{Bytes, Entry, Refusal, Reply, State, bulk, bulk_array, count, index_range};

/// The value of `field` in a hash.
fn field<'a>(fields: &'a [(Bytes, Bytes)], name: &[u8]) -> Option<&'a Bytes> {
    fields.iter().find(|(f, _)| f == name).map(|(_, value)| value)
}

/// Sets `field` in a hash, in place if present; whether it is new.
fn put_field(fields: &mut Vec<(Bytes, Bytes)>, name: &[u8], value: Bytes) -> bool {
    match fields.iter_mut().find(|(f, _)| f == name) {
        Some((_, old)) => {
            *old = value;
            false
        }
        None => {
            fields.push((name.to_vec(), value));
            true
        }
    }
}

/// HGET key field
pub(super) fn hget(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, name] = args else { return Err(Refusal::syntax()) };
    Ok(db.hash(key)?.and_then(|fields| field(fields, name)).map_or(Value::Nil, |value| bulk(value)))
}

/// HSET key field value [field value ...]: how many fields are new.
pub(super) fn hset(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, pairs @ ..] = args else { return Err(Refusal::syntax()) };
    if !pairs.len().is_multiple_of(2) {
        return Err(Refusal::arity("hset"));
    }
    let fields = db.entry_or_insert(key, || Entry::Hash(Vec::new())).hash()?;
    let added = pairs.chunks_exact(2).filter(|pair| put_field(fields, pair[0], pair[1].to_vec())).count();
    Ok(count(added))
}

/// HDEL key field [field ...]: how many were removed.
pub(super) fn hdel(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, names @ ..] = args else { return Err(Refusal::syntax()) };
    let Some(fields) = db.hash(key)? else { return Ok(Value::Int(0)) };
    let before = fields.len();
    fields.retain(|(f, _)| !names.contains(&f.as_slice()));
    let removed = before - fields.len();
    db.prune(key);
    Ok(count(removed))
}

/// HGETALL key: field, value, field, value, ... in insertion order.
pub(super) fn hgetall(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key] = args else { return Err(Refusal::syntax()) };
    let fields = db.hash(key)?.map(|fields| fields.as_slice()).unwrap_or_default();
    Ok(bulk_array(fields.iter().flat_map(|(f, value)| [f, value])))
}

/// HEXISTS key field
pub(super) fn hexists(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, name] = args else { return Err(Refusal::syntax()) };
    Ok(Value::Int(db.hash(key)?.is_some_and(|fields| field(fields, name).is_some()).into()))
}

/// HINCRBY key field n: the new value; a missing field starts from 0.
pub(super) fn hincrby(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, name, by] = args else { return Err(Refusal::syntax()) };
    let by = parse_int(by).ok_or_else(Refusal::not_integer)?;
    let current = match db.hash(key)?.and_then(|fields| field(fields, name)) {
        Some(value) => parse_int(value).ok_or_else(|| Refusal::err("hash value is not an integer"))?,
        None => 0,
    };
    let sum = current.checked_add(by).ok_or_else(Refusal::overflow)?;
    let fields = db.entry_or_insert(key, || Entry::Hash(Vec::new())).hash()?;
    put_field(fields, name, sum.to_string().into_bytes());
    Ok(Value::Int(sum))
}

/// HKEYS key
pub(super) fn hkeys(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key] = args else { return Err(Refusal::syntax()) };
    let fields = db.hash(key)?.map(|fields| fields.as_slice()).unwrap_or_default();
    Ok(bulk_array(fields.iter().map(|(f, _)| f)))
}

/// HLEN key
pub(super) fn hlen(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key] = args else { return Err(Refusal::syntax()) };
    Ok(count(db.hash(key)?.map_or(0, |fields| fields.len())))
}

/// LPUSH key value [value ...]: each value in turn to the head, so the last ends first.
pub(super) fn lpush(db: &mut State, args: &[&[u8]]) -> Reply {
    push(db, args, VecDeque::push_front)
}

/// RPUSH key value [value ...]
pub(super) fn rpush(db: &mut State, args: &[&[u8]]) -> Reply {
    push(db, args, VecDeque::push_back)
}

/// Pushes the values at one end: the list's new length.
fn push(db: &mut State, args: &[&[u8]], at_end: fn(&mut VecDeque<Bytes>, Bytes)) -> Reply {
    let [key, values @ ..] = args else { return Err(Refusal::syntax()) };
    let items = db.entry_or_insert(key, || Entry::List(VecDeque::new())).list()?;
    for value in values {
        at_end(items, value.to_vec());
    }
    Ok(count(items.len()))
}

/// LPOP key [count]
pub(super) fn lpop(db: &mut State, args: &[&[u8]]) -> Reply {
    pop(db, args, "lpop", VecDeque::pop_front)
}

/// RPOP key [count]
pub(super) fn rpop(db: &mut State, args: &[&[u8]]) -> Reply {
    pop(db, args, "rpop", VecDeque::pop_back)
}

/// Pops from one end: one value without a count, an array with one (Nil
/// either way when the key is missing).
fn pop(db: &mut State, args: &[&[u8]], command: &str, take: fn(&mut VecDeque<Bytes>) -> Option<Bytes>) -> Reply {
    let (key, wanted) = match args {
        [key] => (key, None),
        [key, n] => {
            let n = parse_int(n).filter(|n| *n >= 0);
            (key, Some(n.ok_or_else(|| Refusal::err("value is out of range, must be positive"))?))
        }
        _ => return Err(Refusal::arity(command)),
    };
    let Some(items) = db.list(key)? else { return Ok(Value::Nil) };
    let answer = match wanted {
        None => take(items).map_or(Value::Nil, Value::BulkString),
        Some(n) => Value::Array(std::iter::from_fn(|| take(items)).take(n as usize).map(Value::BulkString).collect()),
    };
    db.prune(key);
    Ok(answer)
}

/// LRANGE key start stop
pub(super) fn lrange(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, start, stop] = args else { return Err(Refusal::syntax()) };
    let (start, stop) = (int(start)?, int(stop)?);
    let Some(items) = db.list(key)? else { return Ok(Value::Array(Vec::new())) };
    Ok(bulk_array(items.range(index_range(start, stop, items.len()))))
}

/// LLEN key
pub(super) fn llen(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key] = args else { return Err(Refusal::syntax()) };
    Ok(count(db.list(key)?.map_or(0, |items| items.len())))
}

/// LTRIM key start stop: keeps what LRANGE would answer.
pub(super) fn ltrim(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, start, stop] = args else { return Err(Refusal::syntax()) };
    let (start, stop) = (int(start)?, int(stop)?);
    if let Some(items) = db.list(key)? {
        let kept = index_range(start, stop, items.len());
        items.truncate(kept.end);
        items.drain(..kept.start);
        db.prune(key);
    }
    Ok(Value::Okay)
}

/// LINDEX key index: negative counts from the end; Nil out of range.
pub(super) fn lindex(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, index] = args else { return Err(Refusal::syntax()) };
    // Redis looks the key up before it reads the index.
    let Some(items) = db.list(key)? else { return Ok(Value::Nil) };
    let index = int(index)?;
    let position =
        if index < 0 { items.len().checked_sub(index.unsigned_abs() as usize) } else { Some(index as usize) };
    Ok(position.and_then(|i| items.get(i)).map_or(Value::Nil, |item| bulk(item)))
}

/// An index argument.
fn int(bytes: &[u8]) -> Result<i64, Refusal> {
    parse_int(bytes).ok_or_else(Refusal::not_integer)
}

/// SADD key member [member ...]: how many are new.
pub(super) fn sadd(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, members @ ..] = args else { return Err(Refusal::syntax()) };
    let set = db.entry_or_insert(key, || Entry::Set(BTreeSet::new())).set()?;
    Ok(count(members.iter().filter(|member| set.insert(member.to_vec())).count()))
}

/// SREM key member [member ...]: how many were removed.
pub(super) fn srem(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, members @ ..] = args else { return Err(Refusal::syntax()) };
    let Some(set) = db.set(key)? else { return Ok(Value::Int(0)) };
    let removed = members.iter().filter(|member| set.remove(**member)).count();
    db.prune(key);
    Ok(count(removed))
}

/// SMEMBERS key: sorted (Redis leaves the order unspecified).
pub(super) fn smembers(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key] = args else { return Err(Refusal::syntax()) };
    Ok(bulk_array(db.set(key)?.map(|set| set.iter().collect::<Vec<_>>()).unwrap_or_default()))
}

/// SISMEMBER key member
pub(super) fn sismember(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, member] = args else { return Err(Refusal::syntax()) };
    Ok(Value::Int(db.set(key)?.is_some_and(|set| set.contains(*member)).into()))
}

/// SCARD key
pub(super) fn scard(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key] = args else { return Err(Refusal::syntax()) };
    Ok(count(db.set(key)?.map_or(0, |set| set.len())))
}

/// SUNION key [key ...]
pub(super) fn sunion(db: &mut State, keys: &[&[u8]]) -> Reply {
    let sets = sets(db, keys)?;
    Ok(bulk_array(&sets.into_iter().flatten().flatten().collect::<BTreeSet<_>>()))
}

/// SINTER key [key ...]: a missing key is an empty set.
pub(super) fn sinter(db: &mut State, keys: &[&[u8]]) -> Reply {
    let sets: Option<Vec<_>> = sets(db, keys)?.into_iter().collect();
    let mut sets = sets.unwrap_or_default().into_iter();
    let first = sets.next().unwrap_or_default();
    let common = sets.fold(first, |acc, set| &acc & &set);
    Ok(bulk_array(&common))
}

/// SDIFF key [key ...]: the first set without the others' members.
pub(super) fn sdiff(db: &mut State, keys: &[&[u8]]) -> Reply {
    let mut sets = sets(db, keys)?.into_iter().map(Option::unwrap_or_default);
    let first = sets.next().unwrap_or_default();
    Ok(bulk_array(&sets.fold(first, |acc, set| &acc - &set)))
}

/// The sets at `keys` (None for a missing key). Every key is checked first,
/// as Redis refuses WRONGTYPE wherever it is, even after a missing key.
fn sets(db: &mut State, keys: &[&[u8]]) -> Result<Vec<Option<BTreeSet<Bytes>>>, Refusal> {
    keys.iter().map(|key| Ok(db.set(key)?.cloned())).collect()
}
