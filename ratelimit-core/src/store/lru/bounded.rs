//! What a table whose memory is fixed up front needs of an [`Lru`]: the
//! whole table reserved at once (never grown, a failed reservation
//! reported instead of aborting), the bytes it holds, and an eviction by
//! the caller's own test of a value, looking at every entry.
//!
//! [`BoundedTable`](crate::store::BoundedTable) is the public face of these.

use std::collections::TryReserveError;
use std::mem::size_of;

use super::{Lru, Slot};
use crate::KeyDigest;

impl<V, L> Lru<V, L> {
    /// A map of at most `capacity` entries whose table is allocated now,
    /// at its largest size, so that it never grows; an allocation that
    /// fails is an error, not an abort.
    pub(crate) fn reserved(capacity: usize) -> Result<Self, TryReserveError> {
        let mut map = Self::new(capacity);
        let n = map.max_slots();
        map.slots.try_reserve_exact(n)?;
        map.tags.try_reserve_exact(n)?;
        map.slots.resize_with(n, Slot::free);
        map.tags.resize(n, 0);
        Ok(map)
    }

    /// The bytes the map holds: its header, its slots and their tags.
    pub(crate) fn memory_bytes(&self) -> usize {
        size_of::<Self>() + self.slots.capacity() * size_of::<Slot<V, L>>() + self.tags.capacity()
    }

    /// The largest share of one entry in the bytes of a full map: its slot
    /// and tag, times the room kept free (an eighth of the table), rounded
    /// up. A map of `capacity` entries holds at most
    /// `capacity * entry_bytes()` bytes plus one slot and its header.
    pub(crate) const fn entry_bytes() -> usize {
        (size_of::<Slot<V, L>>() + 1).div_ceil(7) * 8
    }

    /// Removes an entry whose value `evict` accepts: the first one, in
    /// slot order from a random slot, so that which one goes follows no
    /// key. Every entry is offered before `None`.
    pub(crate) fn evict_first(
        &mut self,
        mut evict: impl FnMut(&V) -> bool,
    ) -> Option<(KeyDigest, V)> {
        let n = self.slots.len();
        if self.len == 0 || n == 0 {
            return None;
        }
        // xorshift64, as the eviction sample draws its start.
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let mut i = (self.rng % n as u64) as usize;
        for _ in 0..n {
            if self.tags[i] != 0 && self.slots[i].value.as_ref().is_some_and(&mut evict) {
                let key = self.slots[i].key;
                return self.remove_at(i).map(|v| (key, v));
            }
            i = if i + 1 == n { 0 } else { i + 1 };
        }
        None
    }
}
