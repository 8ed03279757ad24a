//! WebSocket sends awaiting their `WsSendAck`.
//!
//! Each `WsSend` carries a correlation id; the runtime answers each with a
//! `WsSendAck` of the same id, in any order relative to other sends. A send
//! waits for its acknowledgement for a bounded time, then is given up on:
//! its entry is removed, so an acknowledgement that never comes leaks
//! nothing.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use celerity_proto::v1::WsSendAck;

/// How a WebSocket send ended.
#[derive(Debug, Clone, PartialEq)]
pub enum WsOutcome {
    /// The runtime acknowledged it, with an outcome per message.
    Acked(WsSendAck),
    /// The runtime answered it, but the runtime predates protocol version
    /// negotiation and never reads `wait_for_ack`: its answer says which
    /// messages it wrote to their connections, not that any client
    /// acknowledged one.
    Written(WsSendAck),
    /// No acknowledgement came within the send's timeout.
    TimedOut,
    /// The stream ended, or was never open for sending, before an
    /// acknowledgement came.
    Disconnected,
    /// The `WsSend` would encode larger than the largest frame
    /// (`CELERITY_MAX_MESSAGE_BYTES`), so it was not sent: the transport
    /// would have failed the whole stream on it.
    TooLarge {
        /// Its encoded size.
        bytes: usize,
        /// The largest frame.
        limit: usize,
    },
}

/// The sends awaiting acknowledgement, with their deadlines.
#[derive(Debug, Default)]
pub(crate) struct PendingSends {
    deadlines: super::FastMap<String, i64>,
    /// Deadlines in order. An entry whose send was acknowledged stays until
    /// it comes due or the heap is compacted; it is told apart because the
    /// map no longer holds that deadline for the id.
    heap: BinaryHeap<Reverse<(i64, String)>>,
}

impl PendingSends {
    /// Starts waiting for `correlation_id` until `deadline`. `false` when a
    /// send with that id is already waiting (ids are unique per process, so
    /// only a caller's mistake does that).
    pub(crate) fn insert(&mut self, correlation_id: String, deadline: i64) -> bool {
        if self.deadlines.contains_key(&correlation_id) {
            return false;
        }
        self.deadlines.insert(correlation_id.clone(), deadline);
        self.heap.push(Reverse((deadline, correlation_id)));
        true
    }

    /// Stops waiting for `correlation_id`; `true` when it was waited for.
    pub(crate) fn remove(&mut self, correlation_id: &str) -> bool {
        let removed = self.deadlines.remove(correlation_id).is_some();
        if self.heap.len() > 2 * self.deadlines.len() + 64 {
            let deadlines = &self.deadlines;
            self.heap.retain(|Reverse((at, id))| deadlines.get(id) == Some(at));
        }
        removed
    }

    /// The sends whose deadline has passed at `now`, removed.
    pub(crate) fn expire(&mut self, now: i64) -> Vec<String> {
        let mut expired = Vec::new();
        while let Some(Reverse((at, _))) = self.heap.peek() {
            if *at > now {
                break;
            }
            let Some(Reverse((at, id))) = self.heap.pop() else { break };
            if self.deadlines.get(&id) == Some(&at) {
                self.deadlines.remove(&id);
                expired.push(id);
            }
        }
        expired
    }

    /// The earliest deadline still waited for.
    pub(crate) fn next_deadline(&mut self) -> Option<i64> {
        while let Some(Reverse((at, id))) = self.heap.peek() {
            if self.deadlines.get(id) == Some(at) {
                return Some(*at);
            }
            self.heap.pop();
        }
        None
    }

    /// Every send still waited for, removed, in a stable order.
    pub(crate) fn take_all(&mut self) -> Vec<String> {
        self.heap.clear();
        let mut ids: Vec<String> = self.deadlines.drain().map(|(id, _)| id).collect();
        ids.sort();
        ids
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.deadlines.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.deadlines.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expires_in_deadline_order_and_only_what_is_still_waited_for() {
        let mut pending = PendingSends::default();
        assert!(pending.insert("a".into(), 10));
        assert!(pending.insert("b".into(), 5));
        assert!(!pending.insert("a".into(), 20));
        assert_eq!(pending.next_deadline(), Some(5));
        assert!(pending.remove("b"));
        assert!(!pending.remove("b"));
        assert_eq!(pending.next_deadline(), Some(10));
        assert_eq!(pending.expire(9), Vec::<String>::new());
        assert_eq!(pending.expire(10), ["a"]);
        assert!(pending.is_empty());
        assert_eq!(pending.next_deadline(), None);
    }

    #[test]
    fn the_heap_stays_bounded_by_what_is_waited_for() {
        let mut pending = PendingSends::default();
        for i in 0..10_000 {
            let id = format!("s{i}");
            pending.insert(id.clone(), 1_000_000 + i);
            pending.remove(&id);
        }
        assert!(pending.heap.len() <= 64 + 2, "{}", pending.heap.len());
    }

    #[test]
    fn take_all_empties() {
        let mut pending = PendingSends::default();
        pending.insert("b".into(), 1);
        pending.insert("a".into(), 2);
        assert_eq!(pending.take_all(), ["a", "b"]);
        assert!(pending.is_empty());
        assert_eq!(pending.len(), 0);
    }
}
