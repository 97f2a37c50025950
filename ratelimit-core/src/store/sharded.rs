//! A [`Lru`] split into mutex-guarded shards, safe under concurrent use.

use parking_lot::{Mutex, MutexGuard};

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

/// The fewest entries a shard is given. Shards fill (and evict) one by
/// one, by the keys' digests: a map of 16 in 16 shards of one entry would
/// evict at its second key as often as not. With at least 64 per shard a
/// map holds all but a few percent of its capacity before it evicts.
const MIN_PER_SHARD: usize = 64;

impl<V, L> Sharded<V, L> {
    /// At most `capacity` entries in all (at least 1), over up to `shards`
    /// shards of at least [`MIN_PER_SHARD`] entries each (one shard below
    /// that, a power of two of them when `shards` is one); the shards'
    /// capacities add up to exactly `capacity`.
    pub(crate) fn new(capacity: usize, shards: usize) -> Self {
        let capacity = capacity.max(1);
        let mut n = shards.clamp(1, (capacity / MIN_PER_SHARD).max(1));
        if shards.is_power_of_two() {
            // The largest power of two not above `n`: shards by mask.
            n = 1 << n.ilog2();
        }
        let (per, extra) = (capacity / n, capacity % n);
        let shards = (0..n)
            .map(|i| Mutex::new(Lru::new(per + usize::from(i < extra))))
            .collect();
        let mask = if n.is_power_of_two() { n as u64 - 1 } else { 0 };
        Self { shards, mask }
    }

    /// The shard holding `key`, locked (a lock without poisoning: the
    /// map's invariants hold between operations).
    pub(crate) fn shard(&self, key: &KeyDigest) -> MutexGuard<'_, Lru<V, L>> {
        let h = key.low64();
        let i = if self.mask != 0 || self.shards.len() == 1 {
            h & self.mask
        } else {
            h % self.shards.len() as u64
        } as usize;
        self.shards[i].lock()
    }

    /// Entries held, over every shard.
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().len()).sum()
    }

    /// Whether nothing is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every entry, shard by shard; returns how many were held.
    pub(crate) fn clear(&self) -> usize {
        let mut n = 0;
        for shard in self.shards.iter() {
            let mut s = shard.lock();
            n += s.len();
            s.clear();
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::lru::WhenFull;
    use crate::HashKey;

    fn shards<V, L>(m: &Sharded<V, L>) -> Vec<usize> {
        m.shards.iter().map(|s| s.lock().capacity()).collect()
    }

    #[test]
    fn small_maps_are_one_shard_and_large_ones_split_by_a_power_of_two() {
        let one: Sharded<u64> = Sharded::new(16, 64);
        assert_eq!(shards(&one), vec![16]);
        let two: Sharded<u64> = Sharded::new(200, 64);
        assert_eq!(shards(&two), vec![100, 100]);
        let many: Sharded<u64> = Sharded::new(1_000_000, 64);
        assert_eq!(many.shards.len(), 64);
        assert_eq!(shards(&many).iter().sum::<usize>(), 1_000_000);
        assert!(shards(&many).iter().all(|&c| c >= MIN_PER_SHARD));
    }

    /// A map of 16 holds 16 keys, whatever their digests.
    #[test]
    fn a_small_map_holds_its_whole_capacity() {
        let m: Sharded<u64> = Sharded::new(16, 64);
        for i in 0..16u64 {
            let k = HashKey::DEFAULT.digest(&i.to_le_bytes());
            assert!(m.shard(&k).entry(k, 0, WhenFull::Refuse, || i).is_some());
        }
        assert_eq!(m.len(), 16);
    }
}
