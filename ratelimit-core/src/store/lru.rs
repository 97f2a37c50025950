//! A bounded map with least-recently-used order, as a slab of nodes linked
//! by index: one allocation up front, no per-entry allocation, O(1) get,
//! touch and evict.
//!
//! Each entry carries the time (Unix ms) after which it is idle: an idle
//! entry holds nothing worth keeping and is the first to go when the map is
//! full. What happens when no idle entry is found is the caller's
//! [`WhenFull`] policy.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::KeyDigest;

const NIL: u32 = u32::MAX;
/// How many entries from the cold end are looked at for an idle one.
const IDLE_PROBE: usize = 8;

/// What to do with a new key when the map is full and nothing is idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenFull {
    /// Evict the least recently used entry anyway.
    EvictLru,
    /// Do not store the new key.
    Refuse,
}

/// What [`Lru::entry`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    /// The key was there already.
    Found,
    /// A new entry, into free room or in place of an idle one.
    New,
    /// A new entry in place of a live one (`EvictLru`).
    EvictedLive,
}

#[derive(Debug)]
struct Node<V> {
    key: KeyDigest,
    idle_at: u64,
    prev: u32,
    next: u32,
    value: V,
}

/// Digests are already uniformly random: hash them by their first 8 bytes.
#[derive(Default)]
pub(crate) struct DigestHasher(u64);

impl Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8).take(1) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.0 ^= u64::from_le_bytes(b);
        }
    }
}

type Index = HashMap<KeyDigest, u32, BuildHasherDefault<DigestHasher>>;

/// A bounded LRU map from [`KeyDigest`] to `V`.
#[derive(Debug)]
pub struct Lru<V> {
    index: Index,
    nodes: Vec<Node<V>>,
    head: u32,
    tail: u32,
    capacity: usize,
}

impl<V> Lru<V> {
    /// A map that holds at most `capacity` entries.
    pub fn new(capacity: usize) -> Self {
        Self {
            index: Index::with_capacity_and_hasher(capacity.min(1 << 16), Default::default()),
            nodes: Vec::with_capacity(capacity.min(1 << 16)),
            head: NIL,
            tail: NIL,
            capacity,
        }
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The value of `key`, marked as just used.
    pub fn get_mut(&mut self, key: &KeyDigest) -> Option<&mut V> {
        let i = *self.index.get(key)?;
        self.touch(i);
        Some(&mut self.nodes[i as usize].value)
    }

    /// The value of `key` without touching the order.
    pub fn peek(&self, key: &KeyDigest) -> Option<&V> {
        self.index.get(key).map(|&i| &self.nodes[i as usize].value)
    }

    /// Removes `key`.
    pub fn remove(&mut self, key: &KeyDigest) -> Option<V> {
        let i = self.index.remove(key)?;
        self.unlink(i);
        let last = self.nodes.len() as u32 - 1;
        if i != last {
            self.move_node(last, i);
        }
        self.nodes.pop().map(|n| n.value)
    }

    /// The entry for `key`: found, or created with `make()`. `None` when
    /// the map is full, nothing is idle at `now`, and the policy refuses.
    pub fn entry(
        &mut self,
        key: KeyDigest,
        now: u64,
        policy: WhenFull,
        make: impl FnOnce() -> V,
    ) -> Option<(&mut V, Inserted)> {
        if let Some(&i) = self.index.get(&key) {
            self.touch(i);
            return Some((&mut self.nodes[i as usize].value, Inserted::Found));
        }
        let mut how = Inserted::New;
        let slot = if self.nodes.len() < self.capacity {
            self.nodes.push(Node {
                key,
                idle_at: 0,
                prev: NIL,
                next: NIL,
                value: make(),
            });
            self.nodes.len() as u32 - 1
        } else if let Some(i) = self.find_idle(now) {
            self.reuse(i, key, make())
        } else if policy == WhenFull::EvictLru && self.tail != NIL {
            how = Inserted::EvictedLive;
            self.reuse(self.tail, key, make())
        } else {
            return None;
        };
        self.index.insert(key, slot);
        self.link_front(slot);
        Some((&mut self.nodes[slot as usize].value, how))
    }

    /// Records when the entry of `key` becomes idle.
    pub fn set_idle_at(&mut self, key: &KeyDigest, idle_at: u64) {
        if let Some(&i) = self.index.get(key) {
            self.nodes[i as usize].idle_at = idle_at;
        }
    }

    fn find_idle(&self, now: u64) -> Option<u32> {
        let mut i = self.tail;
        for _ in 0..IDLE_PROBE {
            if i == NIL {
                return None;
            }
            if self.nodes[i as usize].idle_at <= now {
                return Some(i);
            }
            i = self.nodes[i as usize].prev;
        }
        None
    }

    fn reuse(&mut self, i: u32, key: KeyDigest, value: V) -> u32 {
        self.unlink(i);
        let node = &mut self.nodes[i as usize];
        self.index.remove(&node.key);
        *node = Node {
            key,
            idle_at: 0,
            prev: NIL,
            next: NIL,
            value,
        };
        i
    }

    fn touch(&mut self, i: u32) {
        if self.head != i {
            self.unlink(i);
            self.link_front(i);
        }
    }

    fn unlink(&mut self, i: u32) {
        let (prev, next) = {
            let n = &self.nodes[i as usize];
            (n.prev, n.next)
        };
        match prev {
            NIL => self.head = next,
            p => self.nodes[p as usize].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.nodes[n as usize].prev = prev,
        }
    }

    fn link_front(&mut self, i: u32) {
        let old = self.head;
        {
            let n = &mut self.nodes[i as usize];
            n.prev = NIL;
            n.next = old;
        }
        if old != NIL {
            self.nodes[old as usize].prev = i;
        }
        self.head = i;
        if self.tail == NIL {
            self.tail = i;
        }
    }

    /// Moves node `from` into slot `to` (which is unlinked and free).
    fn move_node(&mut self, from: u32, to: u32) {
        self.nodes.swap(from as usize, to as usize);
        let (prev, next, key) = {
            let n = &self.nodes[to as usize];
            (n.prev, n.next, n.key)
        };
        match prev {
            NIL => self.head = to,
            p => self.nodes[p as usize].next = to,
        }
        match next {
            NIL => self.tail = to,
            n => self.nodes[n as usize].prev = to,
        }
        self.index.insert(key, to);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(n: u8) -> KeyDigest {
        KeyDigest([n; 16])
    }

    #[test]
    fn evicts_idle_before_refusing() {
        let mut m: Lru<u32> = Lru::new(2);
        m.entry(k(1), 0, WhenFull::Refuse, || 1);
        m.set_idle_at(&k(1), 50);
        m.entry(k(2), 0, WhenFull::Refuse, || 2);
        m.set_idle_at(&k(2), 500);
        assert!(
            m.entry(k(3), 10, WhenFull::Refuse, || 3).is_none(),
            "nothing idle at 10"
        );
        let (_, how) = m.entry(k(3), 60, WhenFull::Refuse, || 3).unwrap();
        assert_eq!(how, Inserted::New);
        assert!(m.peek(&k(1)).is_none() && m.peek(&k(2)).is_some());
    }

    #[test]
    fn evict_lru_takes_the_least_recently_used() {
        let mut m: Lru<u32> = Lru::new(2);
        for n in [1, 2] {
            m.entry(k(n), 0, WhenFull::EvictLru, || n as u32);
            m.set_idle_at(&k(n), u64::MAX);
        }
        m.get_mut(&k(1));
        let (_, how) = m.entry(k(3), 0, WhenFull::EvictLru, || 3).unwrap();
        assert_eq!(how, Inserted::EvictedLive);
        assert!(m.peek(&k(2)).is_none() && m.peek(&k(1)).is_some());
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn remove_keeps_links_consistent() {
        let mut m: Lru<u32> = Lru::new(4);
        for n in 1..=4 {
            m.entry(k(n), 0, WhenFull::Refuse, || n as u32);
        }
        assert_eq!(m.remove(&k(2)), Some(2));
        assert_eq!(m.remove(&k(4)), Some(4));
        for n in 5..=6 {
            m.entry(k(n), 0, WhenFull::Refuse, || n as u32);
        }
        assert_eq!(m.len(), 4);
        for n in [1, 3, 5, 6] {
            assert_eq!(m.get_mut(&k(n)).copied(), Some(n as u32));
        }
    }
}
