//! Finding and making entries of an [`Lru`]: the hit, the insertion and
//! the room it needs (an idle or, as the caller's [`WhenFull`] says, a
//! live entry sampled for eviction).

use super::{idle_of, pack, Lru, Slot, STAMP_MASK};
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

/// An entry of the map, as [`Lru::entry`] found or made it.
#[derive(Debug)]
pub(crate) struct Entry<'a, V> {
    /// The value.
    pub(crate) value: &'a mut V,
    /// Whether it was there, new, or took a live entry's place.
    pub(crate) how: Inserted,
    /// The entry removed to make room (idle or live), with its key.
    pub(crate) evicted: Option<(KeyDigest, V)>,
    meta: &'a mut u64,
    /// The idle time recorded before (0 for a new entry), and the stamp
    /// just given: kept here so that neither is read back from `meta`
    /// right after it was written.
    idle: u64,
    stamp: u64,
}

impl<V> Entry<'_, V> {
    /// When the entry becomes idle (Unix ms) as last recorded: 0 for a new
    /// entry, at most [`IDLE_MAX`](super::IDLE_MAX).
    pub(crate) fn idle_at(&self) -> u64 {
        self.idle
    }

    /// Records when the entry becomes idle (Unix ms).
    pub(crate) fn set_idle_at(&mut self, idle_at: u64) {
        *self.meta = pack(idle_at, self.stamp);
    }
}

impl<V, L> Lru<V, L> {
    /// The entry for `key`: found, or created with `make()`. `None` when
    /// the map is full, no sampled entry is idle at `now`, and the policy
    /// refuses. A new entry is idle at once until
    /// [`Entry::set_idle_at`] says otherwise.
    // Always inlined: returned through memory, the entry's fields were
    // copied with wide loads right after narrow stores (store-forwarding
    // stalls on the in-memory store's count path).
    #[inline(always)]
    pub(crate) fn entry(
        &mut self,
        key: KeyDigest,
        now: u64,
        policy: WhenFull,
        make: impl FnOnce() -> V,
    ) -> Option<Entry<'_, V>> {
        let t = self.stamp();
        match self.find(&key) {
            Some(i) => self.hit(i, t),
            None => self.add(key, now, policy, make, t),
        }
    }

    /// The entry in slot `i`, marked as used at stamp `t`.
    #[inline(always)]
    fn hit(&mut self, i: usize, t: u64) -> Option<Entry<'_, V>> {
        let Slot { meta, value, .. } = &mut self.slots[i];
        let idle = idle_of(*meta);
        *meta = (*meta & !STAMP_MASK) | (t & STAMP_MASK);
        Some(Entry {
            value: value.as_mut()?,
            how: Inserted::Found,
            evicted: None,
            meta,
            idle,
            stamp: t,
        })
    }

    /// A new entry for `key` (absent), made with `make()` at stamp `t`
    /// once there is room (see [`Lru::make_room`]).
    #[inline(always)]
    fn add(
        &mut self,
        key: KeyDigest,
        now: u64,
        policy: WhenFull,
        make: impl FnOnce() -> V,
        t: u64,
    ) -> Option<Entry<'_, V>> {
        let (how, evicted) = self.make_room(now, policy)?;
        let i = self.place(key, make(), pack(0, t));
        let Slot { meta, value, .. } = &mut self.slots[i];
        Some(Entry {
            value: value.as_mut()?,
            how,
            evicted,
            meta,
            idle: 0,
            stamp: t,
        })
    }

    /// Room for one new entry: free room (the table grown when needed), or
    /// a sampled victim removed, idle or (unless `policy` refuses) live.
    /// `None` when the policy refuses.
    #[inline(always)]
    fn make_room(
        &mut self,
        now: u64,
        policy: WhenFull,
    ) -> Option<(Inserted, Option<(KeyDigest, V)>)> {
        if self.len < self.capacity {
            self.reserve_one();
            return Some((Inserted::New, None));
        }
        let (victim, idle) = self.sample(now)?;
        if !idle && policy == WhenFull::Refuse {
            return None;
        }
        let victim_key = self.slots[victim].key;
        let evicted = self.remove_at(victim).map(|v| (victim_key, v));
        let how = if idle {
            Inserted::New
        } else {
            Inserted::EvictedLive
        };
        Some((how, evicted))
    }

    /// [`Lru::entry`] of `key` known to be absent (a [`Lru::found`] just
    /// missed it): made with `make()`, without probing for it again.
    #[inline(always)]
    pub(crate) fn insert_absent(
        &mut self,
        key: KeyDigest,
        now: u64,
        policy: WhenFull,
        make: impl FnOnce() -> V,
    ) -> Option<Entry<'_, V>> {
        debug_assert!(self.find(&key).is_none(), "insert_absent of a present key");
        let t = self.stamp();
        self.add(key, now, policy, make, t)
    }

    /// The entry of `key` when it is there (marked as just used), else
    /// `None` and nothing changed: [`Lru::entry`]'s hit alone, whose
    /// caller knows that nothing was inserted or evicted.
    #[inline(always)]
    pub(crate) fn found(&mut self, key: &KeyDigest) -> Option<Entry<'_, V>> {
        let i = self.find(key)?;
        let t = self.stamp();
        self.hit(i, t)
    }

    /// A sampled victim: the first idle entry of a run of up to
    /// [`SAMPLE`] entries from a random slot, else the least recently used
    /// of the run (and whether it is idle).
    fn sample(&mut self, now: u64) -> Option<(usize, bool)> {
        let n = self.slots.len();
        if self.len == 0 {
            return None;
        }
        // xorshift64: cheap, good enough to spread the samples.
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let mut i = (self.rng % n as u64) as usize;
        let tick = u64::from(self.tick);
        let mut oldest: Option<(usize, u64)> = None;
        let mut seen = 0;
        for _ in 0..n {
            if self.tags[i] != 0 {
                let s = &self.slots[i];
                if idle_of(s.meta) <= now {
                    return Some((i, true));
                }
                let age = tick.wrapping_sub(s.meta) & STAMP_MASK;
                if oldest.is_none_or(|(_, a)| age > a) {
                    oldest = Some((i, age));
                }
                seen += 1;
                if seen == SAMPLE {
                    break;
                }
            }
            i = if i + 1 == n { 0 } else { i + 1 };
        }
        oldest.map(|(i, _)| (i, false))
    }
}
