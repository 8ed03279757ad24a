//! Sorted sets.

use std::collections::HashMap;

use redis::Value;

use super::numbers::{format_score, parse_bound, parse_float, parse_int};
use super::{Bytes, Entry, Refusal, Reply, State, bulk, count, index_range};

/// Members in rank order: by score, then by member bytes.
fn ranked(members: &HashMap<Bytes, f64>) -> Vec<(&Bytes, f64)> {
    let mut ranked: Vec<_> = members.iter().map(|(member, score)| (member, *score)).collect();
    ranked.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(b.0)));
    ranked
}

/// Members, each followed by its score if asked.
fn answer<'a>(members: impl IntoIterator<Item = (&'a Bytes, f64)>, with_scores: bool) -> Value {
    let mut items = Vec::new();
    for (member, score) in members {
        items.push(bulk(member));
        if with_scores {
            items.push(Value::BulkString(format_score(score).into_bytes()));
        }
    }
    Value::Array(items)
}

/// A score argument.
fn score(bytes: &[u8]) -> Result<f64, Refusal> {
    // Adding 0 turns -0 into 0, the one zero a score keeps.
    parse_float(bytes).map(|score| score + 0.0).ok_or_else(Refusal::not_float)
}

/// An index argument.
fn int(bytes: &[u8]) -> Result<i64, Refusal> {
    parse_int(bytes).ok_or_else(Refusal::not_integer)
}

/// Score bounds: `-inf`, `+inf`, `x` inclusive, `(x` exclusive.
struct ScoreRange {
    min: (f64, bool),
    max: (f64, bool),
}

impl ScoreRange {
    /// Reads `min` and `max`.
    fn parse(min: &[u8], max: &[u8]) -> Result<Self, Refusal> {
        let bound = |bytes: &[u8]| match bytes.strip_prefix(b"(") {
            Some(rest) => parse_bound(rest).map(|value| (value, true)),
            None => parse_bound(bytes).map(|value| (value, false)),
        };
        match (bound(min), bound(max)) {
            (Some(min), Some(max)) => Ok(Self { min, max }),
            _ => Err(Refusal::err("min or max is not a float")),
        }
    }

    /// Whether `score` lies within the bounds.
    fn contains(&self, score: f64) -> bool {
        let ((min, min_open), (max, max_open)) = (self.min, self.max);
        (if min_open { score > min } else { score >= min }) && (if max_open { score < max } else { score <= max })
    }
}

/// ZADD key score member [score member ...]: how many members are new.
pub(super) fn zadd(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, pairs @ ..] = args else { return Err(Refusal::syntax()) };
    if !pairs.len().is_multiple_of(2) {
        return Err(Refusal::syntax());
    }
    // Every score is read before anything is added: one bad score adds nothing.
    let scored = pairs.chunks_exact(2).map(|pair| Ok((score(pair[0])?, pair[1]))).collect::<Result<Vec<_>, _>>()?;
    let members = db.entry_or_insert(key, || Entry::SortedSet(HashMap::new())).sorted_set()?;
    Ok(count(scored.into_iter().filter(|(score, member)| members.insert(member.to_vec(), *score).is_none()).count()))
}

/// ZREM key member [member ...]: how many were removed.
pub(super) fn zrem(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, names @ ..] = args else { return Err(Refusal::syntax()) };
    let Some(members) = db.sorted_set(key)? else { return Ok(Value::Int(0)) };
    let removed = names.iter().filter(|name| members.remove(**name).is_some()).count();
    db.prune(key);
    Ok(count(removed))
}

/// ZSCORE key member
pub(super) fn zscore(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, member] = args else { return Err(Refusal::syntax()) };
    let score = db.sorted_set(key)?.and_then(|members| members.get(*member).copied());
    Ok(score.map_or(Value::Nil, |score| Value::BulkString(format_score(score).into_bytes())))
}

/// ZRANK key member: from the lowest score, 0 first.
pub(super) fn zrank(db: &mut State, args: &[&[u8]]) -> Reply {
    rank(db, args, false)
}

/// ZREVRANK key member: from the highest score.
pub(super) fn zrevrank(db: &mut State, args: &[&[u8]]) -> Reply {
    rank(db, args, true)
}

/// A member's rank, or Nil.
fn rank(db: &mut State, args: &[&[u8]], reverse: bool) -> Reply {
    let [key, member] = args else { return Err(Refusal::syntax()) };
    let Some(members) = db.sorted_set(key)? else { return Ok(Value::Nil) };
    let ranked = ranked(members);
    let position = ranked.iter().position(|(m, _)| m.as_slice() == *member);
    Ok(position.map_or(Value::Nil, |i| count(if reverse { ranked.len() - 1 - i } else { i })))
}

/// ZRANGE key start stop [REV] [WITHSCORES], by rank, or
/// ZRANGE key min max BYSCORE [REV] [LIMIT offset count] [WITHSCORES]
/// (with REV the first bound given is the maximum).
pub(super) fn zrange(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, start, stop, options @ ..] = args else { return Err(Refusal::syntax()) };
    let (mut by_score, mut reverse, mut with_scores, mut limit) = (false, false, false, None);
    let mut options = options.iter();
    while let Some(option) = options.next() {
        match option.to_ascii_lowercase().as_slice() {
            b"withscores" => with_scores = true,
            // Redis refuses BYSCORE or REV given twice, not WITHSCORES.
            b"byscore" if !by_score => by_score = true,
            b"rev" if !reverse => reverse = true,
            b"limit" => {
                let (Some(offset), Some(count)) = (options.next(), options.next()) else {
                    return Err(Refusal::syntax());
                };
                limit = Some((int(offset)?, int(count)?));
            }
            _ => return Err(Refusal::syntax()),
        }
    }
    if !by_score {
        if limit.is_some() {
            return Err(Refusal::err(
                "syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
            ));
        }
        let (start, stop) = (int(start)?, int(stop)?);
        let Some(members) = db.sorted_set(key)? else { return Ok(Value::Array(Vec::new())) };
        let mut ranked = ranked(members);
        if reverse {
            ranked.reverse();
        }
        let range = index_range(start, stop, ranked.len());
        return Ok(answer(ranked.into_iter().skip(range.start).take(range.len()), with_scores));
    }
    let range = if reverse { ScoreRange::parse(stop, start)? } else { ScoreRange::parse(start, stop)? };
    let Some(members) = db.sorted_set(key)? else { return Ok(Value::Array(Vec::new())) };
    let mut hits: Vec<_> = ranked(members).into_iter().filter(|(_, score)| range.contains(*score)).collect();
    if reverse {
        hits.reverse();
    }
    // A negative offset selects nothing; a negative count, everything after the offset.
    let (offset, count) = limit.unwrap_or((0, -1));
    let Ok(offset) = usize::try_from(offset) else { return Ok(Value::Array(Vec::new())) };
    let count = usize::try_from(count).unwrap_or(usize::MAX);
    Ok(answer(hits.into_iter().skip(offset).take(count), with_scores))
}

/// ZINCRBY key delta member: the new score; a missing member starts from 0.
pub(super) fn zincrby(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, delta, member] = args else { return Err(Refusal::syntax()) };
    // Redis reads ZINCRBY as ZADD ... INCR: a ZADD flag where the delta
    // belongs leaves no whole score-member pair.
    const ZADD_FLAGS: [&[u8]; 6] = [b"nx", b"xx", b"gt", b"lt", b"ch", b"incr"];
    if ZADD_FLAGS.contains(&delta.to_ascii_lowercase().as_slice()) {
        return Err(Refusal::syntax());
    }
    let delta = score(delta)?;
    let members = db.entry_or_insert(key, || Entry::SortedSet(HashMap::new())).sorted_set()?;
    let new = members.get(*member).map_or(delta, |old| old + delta) + 0.0;
    if new.is_nan() {
        return Err(Refusal::err("resulting score is not a number (NaN)"));
    }
    members.insert(member.to_vec(), new);
    Ok(Value::BulkString(format_score(new).into_bytes()))
}

/// ZCARD key
pub(super) fn zcard(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key] = args else { return Err(Refusal::syntax()) };
    Ok(count(db.sorted_set(key)?.map_or(0, |members| members.len())))
}

/// ZCOUNT key min max
pub(super) fn zcount(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, min, max] = args else { return Err(Refusal::syntax()) };
    let range = ScoreRange::parse(min, max)?;
    let members = db.sorted_set(key)?;
    Ok(count(members.map_or(0, |members| members.values().filter(|score| range.contains(**score)).count())))
}

/// ZREMRANGEBYRANK key start stop: how many were removed.
pub(super) fn zremrangebyrank(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, start, stop] = args else { return Err(Refusal::syntax()) };
    let (start, stop) = (int(start)?, int(stop)?);
    let Some(members) = db.sorted_set(key)? else { return Ok(Value::Int(0)) };
    let ranked = ranked(members);
    let range = index_range(start, stop, ranked.len());
    let doomed: Vec<Bytes> = ranked[range].iter().map(|(member, _)| member.to_vec()).collect();
    for member in &doomed {
        members.remove(member);
    }
    db.prune(key);
    Ok(count(doomed.len()))
}

/// ZREMRANGEBYSCORE key min max: how many were removed.
pub(super) fn zremrangebyscore(db: &mut State, args: &[&[u8]]) -> Reply {
    let [key, min, max] = args else { return Err(Refusal::syntax()) };
    let range = ScoreRange::parse(min, max)?;
    let Some(members) = db.sorted_set(key)? else { return Ok(Value::Int(0)) };
    let before = members.len();
    members.retain(|_, score| !range.contains(*score));
    let removed = before - members.len();
    db.prune(key);
    Ok(count(removed))
}
