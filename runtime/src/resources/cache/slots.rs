//! Which shard of a clustered cache a key lives on, by the cluster
//! protocol's own arithmetic: known before a command is sent, to group a
//! batch by shard and to refuse a command whose keys are on different ones.

/// How many slots a cluster's keyspace is cut into: fixed by the protocol.
const SLOTS: u16 = 16384;

/// The slot of `key`.
pub(crate) fn slot(key: &[u8]) -> u16 {
    crc16(hash_tag(key)) % SLOTS
}

/// The part of a key its slot is computed from: what is between the first
/// `{` and the next `}`, where that is not empty, so that keys sharing a
/// tag (`{user:7}:name`, `{user:7}:prefs`) share a shard; else the whole key.
fn hash_tag(key: &[u8]) -> &[u8] {
    let Some(open) = key.iter().position(|&byte| byte == b'{') else {
        return key;
    };
    match key[open + 1..].iter().position(|&byte| byte == b'}') {
        Some(length) if length > 0 => &key[open + 1..open + 1 + length],
        _ => key,
    }
}

/// CRC-16/XMODEM, the function the cluster specification names, bit by bit
/// so that it reads against the polynomial: a slot is computed a few times
/// per command, not per byte of traffic.
fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &byte in data {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
        }
    }
    crc
}

/// The first two of `keys` that are on different slots, if any.
pub(crate) fn first_apart<'k>(keys: &[&'k [u8]]) -> Option<(&'k [u8], &'k [u8])> {
    let (first, rest) = keys.split_first()?;
    let home = slot(first);
    rest.iter().find(|key| slot(key) != home).map(|other| (*first, *other))
}

/// The positions of `keys`, grouped by slot in the order each slot is
/// first seen, keeping the keys' order within a group.
pub(crate) fn by_slot(keys: &[&[u8]]) -> Vec<Vec<usize>> {
    let mut groups: Vec<(u16, Vec<usize>)> = Vec::new();
    for (index, key) in keys.iter().enumerate() {
        let slot = slot(key);
        match groups.iter_mut().find(|(seen, _)| *seen == slot) {
            Some((_, group)) => group.push(index),
            None => groups.push((slot, vec![index])),
        }
    }
    groups.into_iter().map(|(_, group)| group).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_match_the_cluster_specification() {
        // The specification's check value for CRC-16/XMODEM, and slots
        // `CLUSTER KEYSLOT` answers.
        assert_eq!(crc16(b"123456789"), 0x31c3);
        assert_eq!(slot(b"foo"), 12182);
        assert_eq!(slot(b"bar"), 5061);
        assert_eq!(slot(b""), 0);
    }

    #[test]
    fn a_hash_tag_puts_keys_on_one_slot() {
        assert_eq!(slot(b"{user:7}:name"), slot(b"{user:7}:prefs"));
        assert_eq!(slot(b"{user:7}:name"), slot(b"user:7"));
        // An empty or unclosed tag is no tag.
        assert_eq!(slot(b"{}:a"), crc16(b"{}:a") % SLOTS);
        assert_eq!(slot(b"{open"), crc16(b"{open") % SLOTS);
        // Only the first pair counts.
        assert_eq!(slot(b"a{b}{c}"), slot(b"b"));
    }

    #[test]
    fn keys_apart_are_named_and_groups_keep_order() {
        assert_eq!(first_apart(&[b"foo", b"{foo}x"]), None);
        assert_eq!(first_apart(&[b"foo", b"{foo}x", b"bar"]), Some((&b"foo"[..], &b"bar"[..])));
        assert_eq!(first_apart(&[]), None);
        assert_eq!(by_slot(&[b"foo", b"bar", b"{foo}2", b"{bar}2"]), vec![vec![0, 2], vec![1, 3]]);
    }
}
