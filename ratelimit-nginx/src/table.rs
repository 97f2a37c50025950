//! A fixed-capacity slab of states, indexed by key digest, in LRU order.
//!
//! The memory is reserved once when a zone is created and never grows:
//! `capacity` slots (a `Vec` that is only pushed to while its length is
//! below the capacity it was reserved with) and a power-of-two array of
//! bucket heads, at most twice the capacity. Slots chain within a bucket
//! and are linked in a doubly linked recency list; indices are `u32`.

use std::collections::TryReserveError;
use std::mem::size_of;

use ratelimit_core::KeyDigest;

/// The index that means "none".
pub(crate) const NIL: u32 = u32::MAX;

#[derive(Debug, Clone)]
pub(crate) struct Slot<V> {
    digest: KeyDigest,
    /// Next slot in the bucket chain, or in the free list.
    chain: u32,
    /// Towards the most recently used end.
    newer: u32,
    /// Towards the least recently used end.
    older: u32,
    /// False once removed (the slot is then on the free list).
    live: bool,
    pub(crate) value: V,
}

/// The slab, its index and its recency list.
#[derive(Debug)]
pub(crate) struct Table<V> {
    slots: Vec<Slot<V>>,
    buckets: Vec<u32>,
    capacity: u32,
    free: u32,
    newest: u32,
    oldest: u32,
    used: u32,
}

impl<V> Table<V> {
    /// Reserves `capacity` slots and the index, or fails without aborting.
    pub(crate) fn with_capacity(capacity: u32) -> Result<Self, TryReserveError> {
        let capacity = capacity.min(NIL - 1);
        let mut slots = Vec::new();
        slots.try_reserve_exact(capacity as usize)?;
        let bucket_count = (capacity as usize).next_power_of_two();
        let mut buckets = Vec::new();
        buckets.try_reserve_exact(bucket_count)?;
        buckets.resize(bucket_count, NIL);
        Ok(Self {
            slots,
            buckets,
            capacity,
            free: NIL,
            newest: NIL,
            oldest: NIL,
            used: 0,
        })
    }

    /// The number of states the table holds at most.
    pub(crate) fn capacity(&self) -> u32 {
        self.capacity
    }

    /// The number of states in use.
    pub(crate) fn len(&self) -> u32 {
        self.used
    }

    /// Bytes reserved by the table: the slab, the index and the header.
    pub(crate) fn memory_bytes(&self) -> usize {
        size_of::<Self>()
            + self.slots.capacity() * size_of::<Slot<V>>()
            + self.buckets.capacity() * size_of::<u32>()
    }

    /// The size of one slot plus its share of the index (at most two heads).
    pub(crate) const fn bytes_per_state() -> usize {
        size_of::<Slot<V>>() + 2 * size_of::<u32>()
    }

    fn bucket(&self, digest: &KeyDigest) -> usize {
        (digest.low64() as usize) & (self.buckets.len() - 1)
    }

    /// The slot holding `digest`.
    pub(crate) fn find(&self, digest: &KeyDigest) -> Option<u32> {
        let mut i = *self.buckets.get(self.bucket(digest))?;
        while let Some(slot) = self.slots.get(i as usize) {
            if slot.digest == *digest {
                return Some(i);
            }
            i = slot.chain;
        }
        None
    }

    /// The value in live slot `i`.
    pub(crate) fn get(&self, i: u32) -> Option<&V> {
        self.slots
            .get(i as usize)
            .filter(|s| s.live)
            .map(|s| &s.value)
    }

    /// The value in live slot `i`, mutably.
    pub(crate) fn get_mut(&mut self, i: u32) -> Option<&mut V> {
        self.slots
            .get_mut(i as usize)
            .filter(|s| s.live)
            .map(|s| &mut s.value)
    }

    /// The digest in live slot `i`.
    pub(crate) fn digest(&self, i: u32) -> Option<KeyDigest> {
        self.slots
            .get(i as usize)
            .filter(|s| s.live)
            .map(|s| s.digest)
    }

    /// Inserts a new state as the most recently used; `None` when full.
    pub(crate) fn insert(&mut self, digest: KeyDigest, value: V) -> Option<u32> {
        let b = self.bucket(&digest);
        let head = self.buckets[b];
        let slot = Slot {
            digest,
            chain: head,
            newer: NIL,
            older: NIL,
            live: true,
            value,
        };
        let i = if self.free != NIL {
            let i = self.free;
            let s = self.slots.get_mut(i as usize)?;
            self.free = s.chain;
            *s = slot;
            i
        } else if (self.slots.len() as u32) < self.capacity {
            // Below the reserved capacity: this push never reallocates.
            self.slots.push(slot);
            self.slots.len() as u32 - 1
        } else {
            return None;
        };
        self.buckets[b] = i;
        self.link_newest(i);
        self.used += 1;
        Some(i)
    }

    /// Removes the state in live slot `i` and frees the slot.
    pub(crate) fn remove(&mut self, i: u32) {
        let Some(digest) = self.digest(i) else { return };
        let b = self.bucket(&digest);
        let next = self.slots[i as usize].chain;
        if self.buckets[b] == i {
            self.buckets[b] = next;
        } else {
            let mut p = self.buckets[b];
            while let Some(s) = self.slots.get_mut(p as usize) {
                if s.chain == i {
                    s.chain = next;
                    break;
                }
                p = s.chain;
            }
        }
        self.unlink(i);
        self.slots[i as usize].live = false;
        self.slots[i as usize].chain = self.free;
        self.free = i;
        self.used -= 1;
    }

    /// Marks slot `i` as the most recently used.
    pub(crate) fn touch(&mut self, i: u32) {
        if self.newest != i {
            self.unlink(i);
            self.link_newest(i);
        }
    }

    /// The least recently used slot.
    pub(crate) fn oldest(&self) -> u32 {
        self.oldest
    }

    /// The slot used just after `i`, towards the most recent.
    pub(crate) fn newer(&self, i: u32) -> u32 {
        self.slots.get(i as usize).map_or(NIL, |s| s.newer)
    }

    fn link_newest(&mut self, i: u32) {
        let old_newest = self.newest;
        if let Some(s) = self.slots.get_mut(i as usize) {
            s.newer = NIL;
            s.older = old_newest;
        }
        match self.slots.get_mut(old_newest as usize) {
            Some(s) => s.newer = i,
            None => self.oldest = i,
        }
        self.newest = i;
    }

    fn unlink(&mut self, i: u32) {
        let (newer, older) = match self.slots.get(i as usize) {
            Some(s) => (s.newer, s.older),
            None => return,
        };
        match self.slots.get_mut(newer as usize) {
            Some(s) => s.older = older,
            None => self.newest = older,
        }
        match self.slots.get_mut(older as usize) {
            Some(s) => s.newer = newer,
            None => self.oldest = newer,
        }
    }
}

#[cfg(test)]
mod tests;
