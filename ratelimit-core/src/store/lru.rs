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
pub enum WhenFull {
    /// Evict the least recently used entry of the sample anyway.
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

/// How many entries are sampled for an idle (or the oldest) one.
const SAMPLE: usize = 8;

#[derive(Debug)]
struct Slot<V> {
    value: V,
    idle_at: u64,
    used: u32,
    /// Where the key sits in `keys`.
    pos: u32,
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

type Map<V> = HashMap<KeyDigest, Slot<V>, BuildHasherDefault<DigestHasher>>;

/// An entry of the map, as [`Lru::entry`] found or made it.
#[derive(Debug)]
pub struct Handle<'a, V> {
    /// The value.
    pub value: &'a mut V,
    /// When the entry becomes idle (Unix ms); set it after an update.
    pub idle_at: &'a mut u64,
    /// Whether it was there, new, or took a live entry's place.
    pub how: Inserted,
}

/// A bounded map from [`KeyDigest`] to `V` with approximate LRU eviction.
///
/// The values live inline in the hash table (one memory access per
/// lookup); a dense list of the keys serves the eviction samples.
#[derive(Debug)]
pub struct Lru<V> {
    map: Map<V>,
    keys: Vec<KeyDigest>,
    capacity: usize,
    tick: u32,
    rng: u64,
}

impl<V> Lru<V> {
    /// A map that holds at most `capacity` entries.
    pub fn new(capacity: usize) -> Self {
        Self {
            map: Map::default(),
            keys: Vec::new(),
            capacity: capacity.max(1),
            tick: 0,
            rng: 0x9e37_79b9_7f4a_7c15,
        }
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    fn stamp(&mut self) -> u32 {
        self.tick = self.tick.wrapping_add(1);
        self.tick
    }

    /// The value of `key`, marked as just used.
    pub fn get_mut(&mut self, key: &KeyDigest) -> Option<&mut V> {
        let t = self.stamp();
        let slot = self.map.get_mut(key)?;
        slot.used = t;
        Some(&mut slot.value)
    }

    /// The value of `key` without touching its recency.
    pub fn peek(&self, key: &KeyDigest) -> Option<&V> {
        self.map.get(key).map(|s| &s.value)
    }

    /// Removes `key`.
    pub fn remove(&mut self, key: &KeyDigest) -> Option<V> {
        let slot = self.map.remove(key)?;
        self.forget_pos(slot.pos as usize);
        Some(slot.value)
    }

    /// Drops position `pos` of the key list, moving the last key there.
    fn forget_pos(&mut self, pos: usize) {
        self.keys.swap_remove(pos);
        if let Some(moved) = self.keys.get(pos) {
            if let Some(s) = self.map.get_mut(moved) {
                s.pos = pos as u32;
            }
        }
    }

    /// The entry for `key`: found, or created with `make()`. `None` when
    /// the map is full, no sampled entry is idle at `now`, and the policy
    /// refuses.
    pub fn entry(
        &mut self,
        key: KeyDigest,
        now: u64,
        policy: WhenFull,
        make: impl FnOnce() -> V,
    ) -> Option<Handle<'_, V>> {
        let t = self.stamp();
        let mut how = Inserted::New;
        if self.map.len() >= self.capacity && !self.map.contains_key(&key) {
            let (victim, idle) = self.sample(now)?;
            if !idle && policy == WhenFull::Refuse {
                return None;
            }
            if !idle {
                how = Inserted::EvictedLive;
            }
            let victim_key = self.keys[victim];
            self.map.remove(&victim_key);
            self.forget_pos(victim);
        }
        let pos = self.keys.len() as u32;
        let slot = match self.map.entry(key) {
            std::collections::hash_map::Entry::Occupied(o) => {
                how = Inserted::Found;
                o.into_mut()
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                self.keys.push(key);
                v.insert(Slot {
                    value: make(),
                    idle_at: 0,
                    used: t,
                    pos,
                })
            }
        };
        slot.used = t;
        Some(Handle {
            value: &mut slot.value,
            idle_at: &mut slot.idle_at,
            how,
        })
    }

    /// A sampled victim's position in the key list: the first idle entry,
    /// else the least recently used of the sample (and whether it is idle).
    fn sample(&mut self, now: u64) -> Option<(usize, bool)> {
        let n = self.keys.len();
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
            let Some(slot) = self.map.get(&self.keys[i]) else {
                continue;
            };
            if slot.idle_at <= now {
                return Some((i, true));
            }
            let age = self.tick.wrapping_sub(slot.used);
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
        for (n, idle_at) in [(1, 50), (2, 500)] {
            *m.entry(k(n), 0, WhenFull::Refuse, || n as u32)
                .unwrap()
                .idle_at = idle_at;
        }
        assert!(
            m.entry(k(3), 10, WhenFull::Refuse, || 3).is_none(),
            "nothing idle at 10"
        );
        let how = m.entry(k(3), 60, WhenFull::Refuse, || 3).unwrap().how;
        assert_eq!(how, Inserted::New);
        assert!(m.peek(&k(1)).is_none() && m.peek(&k(2)).is_some());
    }

    #[test]
    fn evict_lru_takes_the_least_recently_used() {
        let mut m: Lru<u32> = Lru::new(2);
        for n in [1, 2] {
            *m.entry(k(n), 0, WhenFull::EvictLru, || n as u32)
                .unwrap()
                .idle_at = u64::MAX;
        }
        m.get_mut(&k(1));
        let how = m.entry(k(3), 0, WhenFull::EvictLru, || 3).unwrap().how;
        assert_eq!(how, Inserted::EvictedLive);
        assert!(m.peek(&k(2)).is_none() && m.peek(&k(1)).is_some());
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn remove_keeps_the_key_list_consistent() {
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
