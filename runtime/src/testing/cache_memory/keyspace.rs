//! Strings and the keyspace: GET and SET, counters, expiry, RENAME, SCAN.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use redis::Value;

use super::long_double::add_floats;
use super::numbers::parse_int;
use super::{Entry, Refusal, Reply, Slot, State, bulk, bulk_array, count};

/// GET key
pub(super) fn get(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key] = args else { return Err(Refusal::syntax()) };
    Ok(db.string(key)?.map_or(Value::Nil, |value| bulk(value)))
}

/// SET key value [PX ms] [NX|XX] [GET] [KEEPTTL]
pub(super) fn set(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, value, options @ ..] = args else { return Err(Refusal::syntax()) };
    let (mut nx, mut xx, mut get, mut keep_ttl) = (false, false, false, false);
    let mut ttl = None;
    let mut options = options.iter();
    while let Some(option) = options.next() {
        match option.to_ascii_lowercase().as_slice() {
            b"nx" if !xx => nx = true,
            b"xx" if !nx => xx = true,
            b"get" => get = true,
            b"keepttl" if ttl.is_none() => keep_ttl = true,
            // Redis lets a later PX replace an earlier one.
            b"px" if !keep_ttl => ttl = Some(*options.next().ok_or_else(Refusal::syntax)?),
            _ => return Err(Refusal::syntax()),
        }
    }
    let expires_at = match ttl {
        Some(ms) => {
            let ms = parse_int(ms).ok_or_else(Refusal::not_integer)?;
            if ms <= 0 {
                return Err(invalid_expire("set"));
            }
            Some(deadline(db.now, ms, "set")?)
        }
        None => None,
    };
    // GET answers the old value even when NX or XX then stops the write.
    let old = if get { db.string(key)?.map(|old| bulk(old)) } else { None };
    let exists = db.slot(key).is_some();
    if (nx && exists) || (xx && !exists) {
        return Ok(old.unwrap_or(Value::Nil));
    }
    let expires_at = if keep_ttl { db.slot(key).and_then(|slot| slot.expires_at) } else { expires_at };
    db.insert(key, Entry::String(value.to_vec()), expires_at);
    Ok(if get { old.unwrap_or(Value::Nil) } else { Value::Okay })
}

/// Redis's refusal of an expiry it cannot keep.
fn invalid_expire(command: &str) -> Refusal {
    Refusal::err(format!("invalid expire time in '{command}' command"))
}

/// The instant `ms` (positive) after `now`. Redis keeps expiries as Unix
/// milliseconds in 64 bits and refuses one past their end.
fn deadline(now: Instant, ms: i64, command: &str) -> Result<Instant, Refusal> {
    let unix_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(0));
    if ms > i64::MAX - unix_ms {
        return Err(invalid_expire(command));
    }
    now.checked_add(Duration::from_millis(ms.unsigned_abs())).ok_or_else(|| invalid_expire(command))
}

/// DEL key [key ...]
pub(super) fn del(db: &mut State, keys: &[&[u8]]) -> Reply {
    let mut deleted = 0;
    for key in keys {
        if db.slot(key).is_some() {
            db.slots.remove(*key);
            deleted += 1;
        }
    }
    Ok(count(deleted))
}

/// APPEND key value: the new length.
pub(super) fn append(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, value] = args else { return Err(Refusal::syntax()) };
    let current = db.entry_or_insert(key, || Entry::String(Vec::new())).string()?;
    current.extend_from_slice(value);
    Ok(count(current.len()))
}

/// MGET key [key ...]: Nil for a missing key and for one that holds no string.
pub(super) fn mget(db: &mut State, keys: &[&[u8]]) -> Reply {
    let values = keys.iter().map(|key| match db.entry(key) {
        Some(Entry::String(value)) => bulk(value),
        _ => Value::Nil,
    });
    Ok(Value::Array(values.collect()))
}

/// MSET key value [key value ...]: each as SET without options.
pub(super) fn mset(db: &mut State, pairs: &[&[u8]]) -> Reply {
    if !pairs.len().is_multiple_of(2) {
        return Err(Refusal::arity("mset"));
    }
    for pair in pairs.chunks_exact(2) {
        db.insert(pair[0], Entry::String(pair[1].to_vec()), None);
    }
    Ok(Value::Okay)
}

/// INCRBY key n
pub(super) fn incrby(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, by] = args else { return Err(Refusal::syntax()) };
    let by = parse_int(by).ok_or_else(Refusal::not_integer)?;
    add_to_integer(db, key, by)
}

/// DECRBY key n
pub(super) fn decrby(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, by] = args else { return Err(Refusal::syntax()) };
    let by = parse_int(by).ok_or_else(Refusal::not_integer)?;
    let by = by.checked_neg().ok_or_else(|| Refusal::err("decrement would overflow"))?;
    add_to_integer(db, key, by)
}

/// Adds `by` to the integer at `key` (0 when missing), keeping its expiry.
fn add_to_integer(db: &mut State, key: &[u8], by: i64) -> Reply {
    let current = match db.string(key)? {
        Some(value) => parse_int(value).ok_or_else(Refusal::not_integer)?,
        None => 0,
    };
    let sum = current.checked_add(by).ok_or_else(Refusal::overflow)?;
    write_string(db, key, sum.to_string().into_bytes());
    Ok(Value::Int(sum))
}

/// INCRBYFLOAT key f: the new value, as Redis writes it.
pub(super) fn incrbyfloat(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, by] = args else { return Err(Refusal::syntax()) };
    let current = db.string(key)?.map_or_else(|| b"0".to_vec(), |value| value.clone());
    let sum = add_floats(&current, by)?;
    write_string(db, key, sum.clone().into_bytes());
    Ok(Value::BulkString(sum.into_bytes()))
}

/// Replaces the string at `key` (already checked to be one, or missing),
/// keeping its expiry: only SET and MSET clear one.
fn write_string(db: &mut State, key: &[u8], value: Vec<u8>) {
    *db.entry_or_insert(key, || Entry::String(Vec::new())) = Entry::String(value);
}

/// EXISTS key [key ...]: how many of them exist, a repeated key counted each time.
pub(super) fn exists(db: &mut State, keys: &[&[u8]]) -> Reply {
    Ok(count(keys.iter().filter(|key| db.slot(key).is_some()).count()))
}

/// PTTL key: milliseconds left, -1 without expiry, -2 without the key.
pub(super) fn pttl(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key] = args else { return Err(Refusal::syntax()) };
    let now = db.now;
    Ok(Value::Int(match db.slot(key) {
        None => -2,
        Some(Slot { expires_at: None, .. }) => -1,
        // Rounded up: a key that is still there has at least 1 ms left.
        Some(Slot { expires_at: Some(at), .. }) => {
            let left = at.saturating_duration_since(now).as_nanos().div_ceil(1_000_000);
            i64::try_from(left).unwrap_or(i64::MAX)
        }
    }))
}

/// PEXPIRE key ms: 1 if the key exists; a time not after now deletes it.
pub(super) fn pexpire(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, ms] = args else { return Err(Refusal::syntax()) };
    let ms = parse_int(ms).ok_or_else(Refusal::not_integer)?;
    let expires_at = if ms > 0 { Some(deadline(db.now, ms, "pexpire")?) } else { None };
    let Some(slot) = db.slot(key) else { return Ok(Value::Int(0)) };
    match expires_at {
        Some(at) => slot.expires_at = Some(at),
        None => {
            db.slots.remove(*key);
        }
    }
    Ok(Value::Int(1))
}

/// PERSIST key: 1 if an expiry was removed.
pub(super) fn persist(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key] = args else { return Err(Refusal::syntax()) };
    let removed = db.slot(key).and_then(|slot| slot.expires_at.take()).is_some();
    Ok(Value::Int(removed.into()))
}

/// TYPE key: a status string.
pub(super) fn type_of(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key] = args else { return Err(Refusal::syntax()) };
    Ok(Value::SimpleString(db.entry(key).map_or("none", |entry| entry.kind()).into()))
}

/// RENAME key newkey: the value and its expiry move, replacing the target.
pub(super) fn rename(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, target] = args else { return Err(Refusal::syntax()) };
    if db.slot(key).is_none() {
        return Err(Refusal::err("no such key"));
    }
    if let Some(slot) = db.slots.remove(*key) {
        db.slots.insert(target.to_vec(), slot);
    }
    Ok(Value::Okay)
}

/// SCAN cursor [MATCH pattern] [COUNT n] [TYPE type]: every matching key
/// in one page, sorted, with cursor 0 to say the iteration is complete.
pub(super) fn scan(db: &mut State, args: &[&[u8]]) -> Reply {
    let [cursor, options @ ..] = args else { return Err(Refusal::syntax()) };
    // Redis reads the cursor with `strtoul`, which takes a negative one too.
    let cursor_is_valid =
        std::str::from_utf8(cursor).is_ok_and(|text| text.parse::<u64>().is_ok() || text.parse::<i64>().is_ok());
    if !cursor_is_valid {
        return Err(Refusal::err("invalid cursor"));
    }
    let (mut pattern, mut kind) = (None, None);
    let mut options = options.iter();
    while let Some(option) = options.next() {
        let value = *options.next().ok_or_else(Refusal::syntax)?;
        match option.to_ascii_lowercase().as_slice() {
            b"match" => pattern = Some(glob_tokens(value)),
            b"count" if parse_int(value).ok_or_else(Refusal::not_integer)? >= 1 => {}
            b"type" => kind = Some(value),
            _ => return Err(Refusal::syntax()),
        }
    }
    let now = db.now;
    db.slots.retain(|_, slot| !slot.expired(now));
    let mut keys: Vec<&Vec<u8>> = db
        .slots
        .iter()
        .filter(|(key, slot)| {
            pattern.as_ref().is_none_or(|tokens| glob_match(tokens, key))
                && kind.is_none_or(|kind| kind.eq_ignore_ascii_case(slot.entry.kind().as_bytes()))
        })
        .map(|(key, _)| key)
        .collect();
    keys.sort();
    Ok(Value::Array(vec![bulk(b"0"), bulk_array(keys)]))
}

/// One element of a glob pattern.
#[derive(Debug)]
enum Token {
    /// `*`: any run of bytes.
    Star,
    /// `?`: any one byte.
    Any,
    /// A byte, itself or escaped with `\`.
    Byte(u8),
    /// `[...]`: one byte in (or, negated with `^`, out of) these inclusive ranges.
    Class { negated: bool, ranges: Vec<(u8, u8)> },
}

impl Token {
    /// Whether this single-byte token takes `byte`.
    fn takes(&self, byte: u8) -> bool {
        match self {
            Token::Star | Token::Any => true,
            Token::Byte(b) => *b == byte,
            Token::Class { negated, ranges } => ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&byte)) != *negated,
        }
    }
}

/// Reads a pattern as Redis's `stringmatchlen` does, quirks included: an
/// unclosed `[` runs to the end of the pattern, a range's ends may come in
/// either order, and a `\` with nothing after it is itself.
fn glob_tokens(pattern: &[u8]) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut i = 0;
    while let Some(&byte) = pattern.get(i) {
        tokens.push(match byte {
            b'*' => Token::Star,
            b'?' => Token::Any,
            b'\\' if i + 1 < pattern.len() => {
                i += 1;
                Token::Byte(pattern[i])
            }
            b'[' => {
                i += 1;
                let negated = pattern.get(i) == Some(&b'^');
                if negated {
                    i += 1;
                }
                let mut ranges = Vec::new();
                while let Some(&byte) = pattern.get(i).filter(|byte| **byte != b']') {
                    if byte == b'\\' && i + 1 < pattern.len() {
                        i += 1;
                        ranges.push((pattern[i], pattern[i]));
                    } else if i + 2 < pattern.len() && pattern[i + 1] == b'-' {
                        let end = pattern[i + 2];
                        ranges.push((byte.min(end), byte.max(end)));
                        i += 2;
                    } else {
                        ranges.push((byte, byte));
                    }
                    i += 1;
                }
                Token::Class { negated, ranges }
            }
            byte => Token::Byte(byte),
        });
        i += 1;
    }
    tokens
}

/// Whether `key` matches the pattern: the single-byte tokens in turn, each
/// `*` taking as few bytes as it can, and one more whenever what follows fails.
fn glob_match(tokens: &[Token], key: &[u8]) -> bool {
    let (mut t, mut k) = (0, 0);
    // Where to resume after the last `*`: the token after it, and the key byte it would take next.
    let mut resume = None;
    while k < key.len() {
        match tokens.get(t) {
            Some(Token::Star) => {
                t += 1;
                resume = Some((t, k));
                continue;
            }
            Some(token) if token.takes(key[k]) => {
                t += 1;
                k += 1;
                continue;
            }
            _ => {}
        }
        let Some((after_star, taken)) = resume else { return false };
        t = after_star;
        k = taken + 1;
        resume = Some((after_star, k));
    }
    tokens.iter().skip(t).all(|token| matches!(token, Token::Star))
}

#[cfg(test)]
mod tests {
    use super::{glob_match, glob_tokens};

    #[test]
    fn glob_matches_as_redis_does() {
        let cases: &[(&str, &str, bool)] = &[
            ("*", "", true),
            ("*", "anything", true),
            ("user:*", "user:1", true),
            ("user:*", "users:1", false),
            ("h?llo", "hello", true),
            ("h?llo", "hllo", false),
            ("h[ae]llo", "hallo", true),
            ("h[ae]llo", "hillo", false),
            ("h[^e]llo", "hallo", true),
            ("h[^e]llo", "hello", false),
            ("h[a-b]llo", "hbllo", true),
            ("h[b-a]llo", "hbllo", true),
            ("h[a-b]llo", "hcllo", false),
            (r"h\*llo", "h*llo", true),
            (r"h\*llo", "hello", false),
            (r"[\]]", "]", true),
            ("*a*b", "xaxxb", true),
            ("*a*b", "xaxxbc", false),
            ("a*b*c", "abbbcbc", true),
            ("[abc", "b", true),
            ("ab\\", "ab\\", true),
            ("**x", "x", true),
        ];
        for (pattern, key, expected) in cases {
            assert_eq!(glob_match(&glob_tokens(pattern.as_bytes()), key.as_bytes()), *expected, "{pattern} ~ {key}");
        }
    }
}
