//! A limit_conn zone: requests in progress per key digest, in preallocated memory.
//!
//! A state exists only while its count is above 0: it is freed when the
//! last request of its key ends, as in nginx. So the zone has no idle state
//! to evict, and a new key finds no room only when every state is in use;
//! that request is refused as `zone_exhausted`.
//!
//! # Examples
//!
//! ```
//! use ratelimit_nginx::{KeyTemplate, LimitConnZone, ZoneSize};
//! use ratelimit_core::HashKey;
//!
//! let key = KeyTemplate::parse("$client_ip").unwrap();
//! let zone = LimitConnZone::new("addr", key, ZoneSize::mebibytes(10), HashKey::DEFAULT).unwrap();
//! assert_eq!(zone.capacity(), 163_840);
//! assert_eq!(zone.in_progress(b"192.0.2.1"), 0);
//! ```

use std::fmt;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::error::ConfigError;
use super::key::KeyTemplate;
use super::size::{ZoneSize, CONN_STATE_BYTES};
use super::table::Table;
use super::zone_head::ZoneHead;
use ratelimit_core::{HashKey, KeyDigest};

// The bound holds by construction: a state and its index share fit in 64 bytes.
const _: () = assert!(Table::<u32>::bytes_per_state() <= CONN_STATE_BYTES as usize);

/// What an acquire found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Acquire {
    /// Counted in this slot.
    Counted(u32),
    /// The key already has `max` requests in progress.
    Busy,
    /// No free state.
    Exhausted,
}

/// A limit_conn zone.
pub struct LimitConnZone {
    head: ZoneHead,
    inner: Mutex<Table<u32>>,
}

impl LimitConnZone {
    /// A zone of `size` bytes, holding `size / 64` states.
    ///
    /// # Errors
    ///
    /// [`ConfigErrorKind::ZoneSize`](crate::ConfigErrorKind::ZoneSize) when the size holds no state or is too
    /// large; [`ConfigErrorKind::Allocation`](crate::ConfigErrorKind::Allocation) when the memory is not there.
    pub fn new(
        name: &str,
        key: KeyTemplate,
        size: ZoneSize,
        hash_key: HashKey,
    ) -> Result<Self, ConfigError> {
        let head = ZoneHead::new(name, key, size, hash_key);
        let table = head.table(CONN_STATE_BYTES)?;
        Ok(Self {
            head,
            inner: Mutex::new(table),
        })
    }

    /// The zone name.
    pub fn name(&self) -> &str {
        &self.head.name
    }

    /// The key of the zone.
    pub fn key(&self) -> &KeyTemplate {
        &self.head.key
    }

    /// The configured size.
    pub fn size(&self) -> ZoneSize {
        self.head.size
    }

    /// The number of states the zone holds at most (`size / 64`).
    pub fn capacity(&self) -> u32 {
        self.lock().capacity()
    }

    /// The number of keys with requests in progress.
    pub fn len(&self) -> u32 {
        self.lock().len()
    }

    /// True when no request is in progress.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes reserved for the states: the slab, its index and the zone header.
    pub fn memory_bytes(&self) -> usize {
        let table = self.lock();
        std::mem::size_of::<Self>() - std::mem::size_of::<Table<u32>>() + table.memory_bytes()
    }

    /// The requests of `key` in progress.
    pub fn in_progress(&self, key: &[u8]) -> u32 {
        let digest = self.head.digest(key);
        let table = self.lock();
        table
            .find(&digest)
            .and_then(|i| table.get(i))
            .copied()
            .unwrap_or(0)
    }

    pub(crate) fn head(&self) -> &ZoneHead {
        &self.head
    }

    fn lock(&self) -> MutexGuard<'_, Table<u32>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts one more request of `digest` unless it has `max` in progress.
    pub(crate) fn acquire(&self, digest: &KeyDigest, max: u32) -> Acquire {
        let mut table = self.lock();
        if let Some(slot) = table.find(digest) {
            return match table.get_mut(slot) {
                Some(count) if *count < max => {
                    *count += 1;
                    Acquire::Counted(slot)
                }
                _ => Acquire::Busy,
            };
        }
        match table.insert(*digest, 1) {
            Some(slot) => Acquire::Counted(slot),
            None => Acquire::Exhausted,
        }
    }

    /// Ends one request of `digest` in `slot`; the state is freed at 0.
    pub(crate) fn release(&self, slot: u32, digest: &KeyDigest) {
        let mut table = self.lock();
        if table.digest(slot) != Some(*digest) {
            return;
        }
        let left = match table.get_mut(slot) {
            Some(count) => {
                *count = count.saturating_sub(1);
                *count
            }
            None => return,
        };
        if left == 0 {
            table.remove(slot);
        }
    }
}

impl fmt::Debug for LimitConnZone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LimitConnZone")
            .field("name", &self.head.name)
            .field("key", &self.head.key.as_str())
            .field("size", &self.head.size)
            .field("len", &self.len())
            .finish()
    }
}
