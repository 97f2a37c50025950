//! The local penalty cache: answers "still blocked" without asking the
//! backend.
//!
//! Bounded (100,000 keys by default). An expired block is dropped to make
//! room; when the cache is full of live blocks a new block is not stored and
//! the drop is counted (`ratelimit_penalty_cache_dropped_total`): this fails
//! open by design.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::algorithm::Decision;
use crate::store::{Sharded, WhenFull};
use crate::KeyDigest;

/// Keys held by default.
pub(crate) const DEFAULT_PENALTY_CAPACITY: usize = 100_000;

/// Blocks by state key (see [`crate::backend::Check::state_key_of`]), each until a time.
#[derive(Debug)]
pub struct PenaltyCache {
    map: Sharded<u64>,
    dropped: AtomicU64,
    /// Blocks offered so far (never decreases): while zero, lookups skip
    /// the shards entirely, the common case of a quiet fleet.
    stored: AtomicU64,
}

impl Default for PenaltyCache {
    fn default() -> Self {
        Self::new(DEFAULT_PENALTY_CAPACITY)
    }
}

impl PenaltyCache {
    /// A cache of at most `capacity` blocks.
    pub fn new(capacity: usize) -> Self {
        Self {
            map: Sharded::new(capacity, 16),
            dropped: AtomicU64::new(0),
            stored: AtomicU64::new(0),
        }
    }

    /// When `key` is blocked at `now`: the end of the block.
    #[inline]
    pub fn blocked_until(&self, key: &KeyDigest, now: u64) -> Option<u64> {
        // Inlined: on a quiet fleet the whole lookup is this one load.
        if self.stored.load(Ordering::SeqCst) == 0 {
            return None;
        }
        self.lookup(key, now)
    }

    /// A block of `key` running at `now`, as the refusal it answers: the
    /// wait until its end (what a peek, a keyed check or a request's rule
    /// answers). Inlined: while nothing is blocked, one load.
    #[inline]
    pub(crate) fn refusal(&self, key: &KeyDigest, now: u64) -> Option<Decision> {
        let until = self.blocked_until(key, now)?;
        let mut d = Decision::deny(until - now, 0, until - now);
        d.blocked_until_ms = Some(until);
        Some(d)
    }

    /// [`PenaltyCache::blocked_until`] in the shards (out of line).
    #[inline(never)]
    fn lookup(&self, key: &KeyDigest, now: u64) -> Option<u64> {
        let mut shard = self.map.shard(key);
        match shard.peek(key).copied() {
            Some(until) if until > now => Some(until),
            Some(_) => {
                shard.remove(key);
                None
            }
            None => None,
        }
    }

    /// Blocks `key` until `until`. Returns false when the cache was full and
    /// the block was dropped (and counted).
    pub fn block(&self, key: KeyDigest, until: u64, now: u64) -> bool {
        // Before the insert, so no lookup can miss a stored block.
        self.stored.fetch_add(1, Ordering::SeqCst);
        let mut shard = self.map.shard(&key);
        match shard.entry(key, now, WhenFull::Refuse, || until) {
            Some(mut e) => {
                *e.value = (*e.value).max(until);
                let until = *e.value;
                e.set_idle_at(until);
                true
            }
            None => {
                drop(shard);
                self.dropped.fetch_add(1, Ordering::Relaxed);
                metrics::counter!("ratelimit_penalty_cache_dropped_total").increment(1);
                false
            }
        }
    }

    /// Lifts the block of `key`.
    pub fn lift(&self, key: &KeyDigest) {
        self.map.shard(key).remove(key);
    }

    /// Forgets every block (the hash key changed: they were kept under
    /// digests no request has any more); returns how many were held.
    pub(crate) fn clear(&self) -> usize {
        self.map.clear()
    }

    /// Blocks dropped because the cache was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Blocks held (live or not yet cleaned up).
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether no block is held.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(n: u8) -> KeyDigest {
        KeyDigest([n; 16])
    }

    #[test]
    fn full_cache_drops_new_blocks_and_counts_them() {
        let c = PenaltyCache::new(2);
        let c = PenaltyCache {
            map: Sharded::new(2, 1),
            ..c
        };
        assert!(c.block(k(1), 1000, 0));
        assert!(c.block(k(2), 1000, 0));
        assert!(!c.block(k(3), 1000, 0));
        assert_eq!(c.dropped(), 1);
        assert_eq!(c.blocked_until(&k(3), 1), None, "fails open");
        assert!(c.block(k(3), 2000, 1000), "expired blocks make room");
        assert_eq!(c.blocked_until(&k(3), 1500), Some(2000));
    }

    #[test]
    fn a_shorter_block_does_not_make_a_longer_one_evictable() {
        let c = PenaltyCache {
            map: Sharded::new(1, 1),
            ..PenaltyCache::new(1)
        };
        assert!(c.block(k(1), 1000, 0));
        assert!(c.block(k(1), 500, 0));
        assert!(!c.block(k(2), 700, 600), "k(1) is blocked until 1000");
        assert_eq!(c.blocked_until(&k(1), 600), Some(1000));
    }

    #[test]
    fn blocks_end_on_time_and_can_be_lifted() {
        let c = PenaltyCache::new(10);
        c.block(k(1), 500, 0);
        assert_eq!(c.blocked_until(&k(1), 499), Some(500));
        assert_eq!(c.blocked_until(&k(1), 500), None);
        c.block(k(2), 500, 0);
        c.lift(&k(2));
        assert_eq!(c.blocked_until(&k(2), 0), None);
    }
}
