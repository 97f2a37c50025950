//! [`BoundedTable`]: the core's bounded map, with its memory reserved when
//! it is made, for a table that must never hold more than it was given
//! (`ratelimit-nginx`'s zones, sized in bytes as nginx sizes them).

use std::collections::TryReserveError;

use super::lru::{Lru, WhenFull};
use crate::KeyDigest;

/// A map from [`KeyDigest`] to `V` of at most a fixed number of entries,
/// allocated whole when it is made and never grown: the table the core's
/// in-memory stores use (open addressing, one tag byte a slot), with the
/// choice of what to evict left to the caller.
///
/// A full table takes no new key: the caller makes room with
/// [`evict_first`](Self::evict_first), naming which values may go (for
/// nginx's `limit_req`, the states that would decide their key's next
/// request as a fresh state would), or refuses the key.
///
/// # Examples
///
/// ```
/// use ratelimit_core::{BoundedTable, HashKey};
///
/// let key = |s: &str| HashKey::DEFAULT.digest(s.as_bytes());
/// let mut table: BoundedTable<u32> = BoundedTable::with_capacity(2)?;
/// let bytes = table.memory_bytes();
/// *table.insert(key("a"), 1).unwrap() += 1;
/// table.insert(key("b"), 0).unwrap();
/// assert!(table.is_full());
/// assert_eq!(table.insert(key("c"), 0), None);
/// // Room for "c": evict a value of 0 ("b"; "a" holds 2).
/// assert_eq!(table.evict_first(|v| *v == 0), Some((key("b"), 0)));
/// assert!(table.insert(key("c"), 5).is_some());
/// assert_eq!((table.get(&key("a")), table.get(&key("b"))), (Some(&2), None));
/// assert_eq!(table.memory_bytes(), bytes, "never grows");
/// # Ok::<(), std::collections::TryReserveError>(())
/// ```
#[derive(Debug)]
pub struct BoundedTable<V> {
    map: Lru<V>,
}

impl<V> BoundedTable<V> {
    /// A table of at most `capacity` entries (at least 1), its memory
    /// allocated now.
    ///
    /// # Errors
    ///
    /// The allocation failed (the memory is not there).
    pub fn with_capacity(capacity: usize) -> Result<Self, TryReserveError> {
        Ok(Self {
            map: Lru::reserved(capacity)?,
        })
    }

    /// The most entries it holds.
    pub fn capacity(&self) -> usize {
        self.map.capacity()
    }

    /// The entries it holds.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Whether a new key needs room made first.
    pub fn is_full(&self) -> bool {
        self.map.len() >= self.map.capacity()
    }

    /// The bytes the table holds, its header included; the same from the
    /// moment it is made.
    pub fn memory_bytes(&self) -> usize {
        self.map.memory_bytes()
    }

    /// The most bytes one entry of a full table takes (its slot, tag and
    /// share of the free room): a table of `n` entries holds at most
    /// `n * entry_bytes()` bytes, plus one slot and the header.
    pub const fn entry_bytes() -> usize {
        Lru::<V>::entry_bytes()
    }

    /// The value of `key`.
    pub fn get(&self, key: &KeyDigest) -> Option<&V> {
        self.map.peek(key)
    }

    /// The value of `key`, mutably.
    pub fn get_mut(&mut self, key: &KeyDigest) -> Option<&mut V> {
        self.map.get_mut(key)
    }

    /// Stores `value` under `key` (replacing the value there); `None`, and
    /// nothing stored, when `key` is new and the table is full.
    pub fn insert(&mut self, key: KeyDigest, value: V) -> Option<&mut V> {
        if self.map.peek(&key).is_some() {
            let old = self.map.get_mut(&key)?;
            *old = value;
            return Some(old);
        }
        if self.is_full() {
            return None;
        }
        // Below the capacity a new entry takes free room: no eviction.
        let entry = self.map.insert_absent(key, 0, WhenFull::Refuse, || value)?;
        Some(entry.value)
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &KeyDigest) -> Option<V> {
        self.map.remove(key)
    }

    /// Removes an entry whose value `evict` accepts, and returns it with
    /// its key; `None` when it accepts none. Every entry is offered (from
    /// a random one on), so `None` means that no value is accepted.
    pub fn evict_first(&mut self, evict: impl FnMut(&V) -> bool) -> Option<(KeyDigest, V)> {
        self.map.evict_first(evict)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HashKey;

    fn d(n: u32) -> KeyDigest {
        HashKey::DEFAULT.digest(&n.to_le_bytes())
    }

    #[test]
    fn a_full_table_refuses_new_keys_and_never_grows() {
        let mut t: BoundedTable<u32> = BoundedTable::with_capacity(3).expect("reserve");
        let bytes = t.memory_bytes();
        for n in 0..3 {
            assert!(t.insert(d(n), n).is_some());
        }
        assert_eq!(t.insert(d(3), 3), None);
        assert_eq!(
            t.insert(d(1), 10).copied(),
            Some(10),
            "a stored key is replaced"
        );
        assert_eq!((t.len(), t.memory_bytes()), (3, bytes));
        assert!(bytes <= 3 * BoundedTable::<u32>::entry_bytes() + 32 + 64);
    }

    #[test]
    fn eviction_offers_every_entry_and_removes_only_an_accepted_one() {
        let mut t: BoundedTable<u32> = BoundedTable::with_capacity(64).expect("reserve");
        for n in 0..64 {
            t.insert(d(n), n);
        }
        for _ in 0..10 {
            assert_eq!(t.evict_first(|_| false), None);
            let mut offered = 0;
            let _ = t.evict_first(|_| {
                offered += 1;
                false
            });
            assert_eq!(offered, 64);
        }
        assert_eq!(t.evict_first(|v| *v == 41), Some((d(41), 41)));
        assert_eq!(t.len(), 63);
        for n in (0..64).filter(|n| *n != 41) {
            assert_eq!(t.get(&d(n)), Some(&n), "{n} still found after the shift");
        }
        assert!(t.insert(d(100), 100).is_some());
        assert_eq!(t.remove(&d(100)), Some(100));
    }
}
