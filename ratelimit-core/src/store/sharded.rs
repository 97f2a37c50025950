//! A [`Lru`] split into mutex-guarded shards, safe under concurrent use.

use std::sync::{Mutex, MutexGuard};

use super::Lru;
use crate::KeyDigest;

/// Shards of a bounded LRU map, chosen by the key's digest (its first 8
/// bytes; a shard's table places keys by their last 8).
#[derive(Debug)]
pub(crate) struct Sharded<V, L = ()> {
    shards: Box<[Mutex<Lru<V, L>>]>,
    /// `shards.len() - 1` when that is a power of two (the shard is then
    /// picked with a mask, not a division: the division was on every
    /// decision's critical path), else 0.
    mask: u64,
}

impl<V, L> Sharded<V, L> {
    /// At most `capacity` entries in all (at least 1), over up to `shards`
    /// shards; the shards' capacities add up to exactly `capacity`.
    pub(crate) fn new(capacity: usize, shards: usize) -> Self {
        let capacity = capacity.max(1);
        let n = shards.clamp(1, capacity);
        let (per, extra) = (capacity / n, capacity % n);
        let shards = (0..n)
            .map(|i| Mutex::new(Lru::new(per + usize::from(i < extra))))
            .collect();
        let mask = if n.is_power_of_two() { n as u64 - 1 } else { 0 };
        Self { shards, mask }
    }

    /// The shard holding `key`, locked. A poisoned lock is recovered: the
    /// map's invariants hold between operations.
    pub(crate) fn shard(&self, key: &KeyDigest) -> MutexGuard<'_, Lru<V, L>> {
        let h = key.low64();
        let i = if self.mask != 0 || self.shards.len() == 1 {
            h & self.mask
        } else {
            h % self.shards.len() as u64
        } as usize;
        self.shards[i].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Entries held, over every shard.
    pub(crate) fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).len())
            .sum()
    }

    /// Whether nothing is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
