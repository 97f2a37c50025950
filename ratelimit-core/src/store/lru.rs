//! A bounded map with approximate least-recently-used eviction: a dense
//! slab of entries and a hash index into it. No per-entry allocation, O(1)
//! get, touch and evict.
//!
//! Recency is a stamp per entry; eviction samples a few entries (as Redis
//! does) and takes an idle one, else the least recently used of the sample.
//! Each entry carries the time (Unix ms) after which it is idle: an idle
//! entry holds nothing worth keeping and is the first to go when the map is
//! full. What happens when no sampled entry is idle is the caller's
//! [`WhenFull`] policy.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::KeyDigest;

/// What to do with a new key when the map is full and nothing sampled is
/// idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WhenFull {
    /// Evict the least recently used entry of the sample anyway.
    EvictLru,
    /// Do not store the new key.
    Refuse,
}

/// What [`Lru::entry`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Inserted {
    /// The key was there already.
    Found,
    /// A new entry, into free room or in place of an idle one.
    New,
    /// A new entry in place of a live one (`EvictLru`).
    EvictedLive,
}

/// How many entries are sampled for an idle (or the oldest) one.
const SAMPLE: usize = 8;

#[derive(Debug)]
struct Node<V> {
    key: KeyDigest,
    idle_at: u64,
    used: u32,
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

/// A bounded map from [`KeyDigest`] to `V` with approximate LRU eviction.
#[derive(Debug)]
pub(crate) struct Lru<V> {
    index: Index,
    nodes: Vec<Node<V>>,
    capacity: usize,
    tick: u32,
    rng: u64,
}

impl<V> Lru<V> {
    /// A map that holds at most `capacity` entries.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            index: Index::default(),
            nodes: Vec::new(),
            capacity: capacity.max(1),
            tick: 0,
            rng: 0x9e37_79b9_7f4a_7c15,
        }
    }

    /// Entries held.
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether nothing is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    fn stamp(&mut self) -> u32 {
        self.tick = self.tick.wrapping_add(1);
        self.tick
    }

    /// The value of `key`, marked as just used.
    pub(crate) fn get_mut(&mut self, key: &KeyDigest) -> Option<&mut V> {
        let i = *self.index.get(key)? as usize;
        let t = self.stamp();
        let node = &mut self.nodes[i];
        node.used = t;
        Some(&mut node.value)
    }

    /// The value of `key` without touching its recency.
    pub(crate) fn peek(&self, key: &KeyDigest) -> Option<&V> {
        self.index.get(key).map(|&i| &self.nodes[i as usize].value)
    }

    /// Removes `key`.
    pub(crate) fn remove(&mut self, key: &KeyDigest) -> Option<V> {
        let i = self.index.remove(key)? as usize;
        let node = self.nodes.swap_remove(i);
        if let Some(moved) = self.nodes.get(i) {
            self.index.insert(moved.key, i as u32);
        }
        Some(node.value)
    }

    /// The entry for `key`: found, or created with `make()`. `None` when
    /// the map is full, no sampled entry is idle at `now`, and the policy
    /// refuses.
    pub(crate) fn entry(
        &mut self,
        key: KeyDigest,
        now: u64,
        policy: WhenFull,
        make: impl FnOnce() -> V,
    ) -> Option<(&mut V, Inserted)> {
        let t = self.stamp();
        if let Some(&i) = self.index.get(&key) {
            let node = &mut self.nodes[i as usize];
            node.used = t;
            return Some((&mut node.value, Inserted::Found));
        }
        let node = Node {
            key,
            idle_at: 0,
            used: t,
            value: make(),
        };
        if self.nodes.len() < self.capacity {
            self.nodes.push(node);
            let i = self.nodes.len() - 1;
            self.index.insert(key, i as u32);
            return Some((&mut self.nodes[i].value, Inserted::New));
        }
        let (victim, idle) = self.sample(now)?;
        if !idle && policy == WhenFull::Refuse {
            return None;
        }
        let old = std::mem::replace(&mut self.nodes[victim], node);
        self.index.remove(&old.key);
        self.index.insert(key, victim as u32);
        let how = if idle {
            Inserted::New
        } else {
            Inserted::EvictedLive
        };
        Some((&mut self.nodes[victim].value, how))
    }

    /// Records when the entry of `key` becomes idle.
    pub(crate) fn set_idle_at(&mut self, key: &KeyDigest, idle_at: u64) {
        if let Some(&i) = self.index.get(key) {
            self.nodes[i as usize].idle_at = idle_at;
        }
    }

    /// A sampled victim: the first idle entry, else the least recently used
    /// of the sample (and whether it is idle).
    fn sample(&mut self, now: u64) -> Option<(usize, bool)> {
        let n = self.nodes.len();
        if n == 0 {
            return None;
        }
        let mut oldest: Option<(usize, u32)> = None;
        for _ in 0..SAMPLE.min(n) {
            // xorshift64: cheap, good enough to spread the samples.
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            let i = (self.rng % n as u64) as usize;
            let node = &self.nodes[i];
            if node.idle_at <= now {
                return Some((i, true));
            }
            let age = self.tick.wrapping_sub(node.used);
            if oldest.is_none_or(|(_, a)| age > a) {
                oldest = Some((i, age));
            }
        }
        oldest.map(|(i, _)| (i, false))
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
        // With 2 entries the 8 samples see both: the outcome is certain.
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
