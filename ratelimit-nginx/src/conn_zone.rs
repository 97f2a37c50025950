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

use super::error::ConfigError;
use super::key::KeyTemplate;
use super::size::{ZoneSize, CONN_STATE_BYTES};
use super::zone_states::{zone_accessors, ZoneStates};
use ratelimit_core::{BoundedTable, HashKey, KeyDigest};

// The bound holds by construction: a state and its share of the table fit in 64 bytes.
const _: () = assert!(BoundedTable::<u32>::entry_bytes() <= CONN_STATE_BYTES as usize);

/// What an acquire found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Acquire {
    /// Counted.
    Counted,
    /// The key already has `max` requests in progress.
    Busy,
    /// No free state.
    Exhausted,
}

/// A limit_conn zone.
pub struct LimitConnZone {
    states: ZoneStates<u32>,
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
        let states = ZoneStates::new(name, key, size, hash_key, CONN_STATE_BYTES, ())?;
        Ok(Self { states })
    }

    /// The requests of `key` in progress.
    pub fn in_progress(&self, key: &[u8]) -> u32 {
        let digest = self.states.digest(key);
        self.states.lock().table.get(&digest).copied().unwrap_or(0)
    }

    pub(crate) fn states(&self) -> &ZoneStates<u32> {
        &self.states
    }

    /// Counts one more request of `digest` unless it has `max` in progress.
    pub(crate) fn acquire(&self, digest: &KeyDigest, max: u32) -> Acquire {
        let mut locked = self.states.lock();
        if let Some(count) = locked.table.get_mut(digest) {
            if *count >= max {
                return Acquire::Busy;
            }
            *count += 1;
            return Acquire::Counted;
        }
        match locked.table.insert(*digest, 1) {
            Some(_) => Acquire::Counted,
            None => Acquire::Exhausted,
        }
    }

    /// Ends one request of `digest`; the state is freed at 0.
    pub(crate) fn release(&self, digest: &KeyDigest) {
        let mut locked = self.states.lock();
        let Some(count) = locked.table.get_mut(digest) else {
            return;
        };
        *count = count.saturating_sub(1);
        if *count == 0 {
            locked.table.remove(digest);
        }
    }
}

zone_accessors!(LimitConnZone, "64");

impl fmt::Debug for LimitConnZone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.states.debug(f, "LimitConnZone").finish()
    }
}
