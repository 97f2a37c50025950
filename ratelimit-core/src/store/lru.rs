//! A bounded map with sampled least-recently-used eviction, laid out for
//! the cache: one open-addressing table (linear probing) whose slots hold
//! the 16-byte key digest, one word with the idle time and a recency stamp,
//! and the value itself, beside one tag byte per slot (free, or 7 bits of
//! the key) that the probe walks. No separate index, no per-entry
//! allocation: a lookup reads the tags (64 slots to a cache line) and then
//! one slot (within one line when aligned: [`HalfLine`] for the in-memory
//! store's 32-byte slots of packed states, [`CacheLine`] for 64-byte ones);
//! the table grows by doubling up to the size its capacity needs, never
//! past it.
//!
//! Recency is a 20-bit stamp per entry; eviction walks a run of a few
//! entries from a random slot (as Redis samples) and takes an idle one,
//! else the least recently used of the run. Each entry carries the time
//! (Unix ms) after which it is idle: an idle entry holds nothing worth
//! keeping and is the first to go when the map is full. What happens when
//! no sampled entry is idle is the caller's [`WhenFull`] policy.

use crate::KeyDigest;

mod bounded;
mod entry;
pub(crate) use entry::{Entry, Inserted, WhenFull};

/// Bits of the recency stamp, the low bits of a slot's `meta` word.
const STAMP_BITS: u32 = 20;
const STAMP_MASK: u64 = (1 << STAMP_BITS) - 1;
/// The latest idle time a slot can hold (Unix ms, about the year 2527):
/// later ones are stored as this one, which is never idle in practice.
pub(crate) const IDLE_MAX: u64 = u64::MAX >> STAMP_BITS;
/// Slots of a table's first allocation.
const FIRST_SLOTS: usize = 16;

/// A zero-sized marker that aligns each slot of a map to a 64-byte cache
/// line: `Lru<V, CacheLine>`. Worth it when a slot is 64 bytes (a 40-byte
/// value), so that no slot straddles two lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(align(64))]
pub(crate) struct CacheLine;

/// A zero-sized marker that aligns each slot to 32 bytes, half a cache
/// line: `Lru<V, HalfLine>`, for a 32-byte slot (an 8-byte value, such as
/// the in-memory store's packed states), so that no slot straddles two
/// lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(align(32))]
pub(crate) struct HalfLine;

#[derive(Debug)]
struct Slot<V, L> {
    _align: [L; 0],
    key: KeyDigest,
    /// The idle time (high 44 bits) and the recency stamp (low 20 bits).
    meta: u64,
    /// `None` for a free slot.
    value: Option<V>,
}

impl<V, L> Slot<V, L> {
    const fn free() -> Self {
        Self {
            _align: [],
            key: KeyDigest([0; 16]),
            meta: 0,
            value: None,
        }
    }
}

fn pack(idle_at: u64, stamp: u64) -> u64 {
    (idle_at.min(IDLE_MAX) << STAMP_BITS) | (stamp & STAMP_MASK)
}

fn idle_of(meta: u64) -> u64 {
    meta >> STAMP_BITS
}

/// The tag of `key` (never 0, the tag of a free slot): a byte the slot's
/// position does not depend on.
fn tag(key: &KeyDigest) -> u8 {
    key.0[7].max(1)
}

/// The slot where `key` starts probing in a table of `n` slots: its last
/// 8 bytes scaled to `n` (the shards use the first 8).
fn home(key: &KeyDigest, n: usize) -> usize {
    let b = &key.0;
    let h = u64::from_le_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]);
    ((u128::from(h) * n as u128) >> 64) as usize
}

/// A bounded map from [`KeyDigest`] to `V` with approximate LRU eviction.
/// `L` aligns the slots ([`CacheLine`]); `()` leaves them packed.
///
/// When full, an idle entry makes room; a live one is refused or evicted
/// as the caller's [`WhenFull`] says (see `lru_tests.rs`).
#[derive(Debug)]
pub(crate) struct Lru<V, L = ()> {
    slots: Vec<Slot<V, L>>,
    /// One byte per slot: 0 when free, else the key's [`tag`].
    tags: Vec<u8>,
    len: usize,
    capacity: usize,
    tick: u32,
    rng: u64,
}

impl<V, L> Lru<V, L> {
    /// A map that holds at most `capacity` entries. Nothing is allocated
    /// before the first insert.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            slots: Vec::new(),
            tags: Vec::new(),
            len: 0,
            capacity: capacity.max(1),
            tick: 0,
            rng: 0x9e37_79b9_7f4a_7c15,
        }
    }

    /// Entries it may hold.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Entries held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Drops every entry and frees the table (the capacity stays).
    pub(crate) fn clear(&mut self) {
        self.slots = Vec::new();
        self.tags = Vec::new();
        self.len = 0;
    }

    /// Whether nothing is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Slots the table has allocated (entries plus free room).
    pub(crate) fn slots(&self) -> usize {
        self.slots.len()
    }

    /// The most slots the table grows to: the load stays under 7/8.
    fn max_slots(&self) -> usize {
        self.capacity + self.capacity / 7 + 1
    }

    #[inline]
    fn stamp(&mut self) -> u64 {
        self.tick = self.tick.wrapping_add(1);
        u64::from(self.tick)
    }

    #[inline]
    fn find(&self, key: &KeyDigest) -> Option<usize> {
        let n = self.slots.len();
        if n == 0 {
            return None;
        }
        let t = tag(key);
        let mut i = home(key, n);
        for _ in 0..n {
            let g = self.tags[i];
            if g == 0 {
                return None;
            }
            if g == t && self.slots[i].key == *key {
                return Some(i);
            }
            i += 1;
            if i == n {
                i = 0;
            }
        }
        None
    }

    /// The value of `key`, marked as just used.
    pub(crate) fn get_mut(&mut self, key: &KeyDigest) -> Option<&mut V> {
        let t = self.stamp();
        let i = self.find(key)?;
        let slot = &mut self.slots[i];
        slot.meta = (slot.meta & !STAMP_MASK) | (t & STAMP_MASK);
        slot.value.as_mut()
    }

    /// The value of `key` without touching its recency.
    pub(crate) fn peek(&self, key: &KeyDigest) -> Option<&V> {
        self.find(key).and_then(|i| self.slots[i].value.as_ref())
    }

    /// The value of `key` and when it becomes idle, without touching its
    /// recency.
    pub(crate) fn peek_idle(&self, key: &KeyDigest) -> Option<(&V, u64)> {
        let slot = &self.slots[self.find(key)?];
        Some((slot.value.as_ref()?, idle_of(slot.meta)))
    }

    /// Removes `key`.
    pub(crate) fn remove(&mut self, key: &KeyDigest) -> Option<V> {
        let i = self.find(key)?;
        self.remove_at(i)
    }

    /// Empties slot `i` and shifts the entries probing past it back, so
    /// that every lookup still finds its key before a free slot.
    fn remove_at(&mut self, i: usize) -> Option<V> {
        let value = self.slots[i].value.take()?;
        self.tags[i] = 0;
        self.len -= 1;
        let n = self.slots.len();
        let (mut hole, mut j) = (i, i);
        loop {
            j = if j + 1 == n { 0 } else { j + 1 };
            if j == i || self.tags[j] == 0 {
                break;
            }
            let h = home(&self.slots[j].key, n);
            // The entry at j may fill the hole when the hole lies between
            // its home and j (cyclically).
            if (j + n - h) % n >= (j + n - hole) % n {
                self.slots.swap(hole, j);
                self.tags.swap(hole, j);
                hole = j;
            }
        }
        Some(value)
    }

    /// Places `key` (absent) in the first free slot of its probe run.
    fn place(&mut self, key: KeyDigest, value: V, meta: u64) -> usize {
        let n = self.slots.len();
        let mut i = home(&key, n);
        while self.tags[i] != 0 {
            i = if i + 1 == n { 0 } else { i + 1 };
        }
        self.tags[i] = tag(&key);
        self.slots[i] = Slot {
            _align: [],
            key,
            meta,
            value: Some(value),
        };
        self.len += 1;
        i
    }

    /// Makes room for one more entry below the load limit, growing the
    /// table (by doubling, up to its largest size) when needed.
    fn reserve_one(&mut self) {
        let n = self.slots.len();
        let max = self.max_slots();
        if n >= max || (self.len + 1) * 8 <= n * 7 {
            return;
        }
        let new_n = (n * 2).clamp(FIRST_SLOTS.min(max), max);
        let old = std::mem::replace(&mut self.slots, (0..new_n).map(|_| Slot::free()).collect());
        self.tags = vec![0; new_n];
        self.len = 0;
        for s in old {
            if let Some(v) = s.value {
                self.place(s.key, v, s.meta);
            }
        }
    }

    /// Records when the entry of `key` becomes idle.
    pub(crate) fn set_idle_at(&mut self, key: &KeyDigest, idle_at: u64) {
        if let Some(i) = self.find(key) {
            let m = &mut self.slots[i].meta;
            *m = pack(idle_at, *m);
        }
    }
}

#[cfg(test)]
mod tests;
