//! A limit_req zone: one leaky bucket per key digest, in preallocated memory.
//!
//! The lookup and the commit are split as in nginx, so that a request that
//! several zones limit is charged nowhere when any of them refuses it: a
//! lookup pins the state (nginx's `count`), the commit charges it.
//! When the zone is full, the least recently used idle state is evicted:
//! one that would decide its key's next request as a fresh state would, so
//! that its stored excess and its last request's own share have drained
//! (an excess of 0 is not enough: a rule without burst still refuses that
//! key for `1000 / rate` ms). When no state is idle the request is refused
//! as `zone_exhausted`.
//!
//! # Examples
//!
//! ```
//! use ratelimit_nginx::{LimitReqZone, Rate, ZoneSize, KeyTemplate};
//! use ratelimit_core::HashKey;
//!
//! let zone = LimitReqZone::new(
//!     "one",
//!     KeyTemplate::parse("$client_ip").unwrap(),
//!     ZoneSize::mebibytes(10),
//!     Rate::parse("1r/s").unwrap(),
//!     HashKey::DEFAULT,
//! )
//! .unwrap();
//! assert_eq!(zone.capacity(), 81_920);
//! assert!(zone.memory_bytes() <= 10 * 1024 * 1024);
//! ```

use std::fmt;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::arith::{drained, elapsed_ms, excess_after, idle_at};
use super::error::ConfigError;
use super::key::KeyTemplate;
use super::rate::Rate;
use super::size::{ZoneSize, REQ_STATE_BYTES};
use super::table::{Table, NIL};
use super::zone_head::ZoneHead;
use ratelimit_core::{HashKey, KeyDigest};

/// One bucket: nginx's `ngx_http_limit_req_node_t` without the key text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReqState {
    /// When the excess was last charged, in ms.
    last: u64,
    /// The excess in 1/1000 requests.
    excess: u64,
    /// Requests between their lookup and their commit (pinned).
    count: u32,
    /// Created by a lookup and not charged yet: it counts as empty.
    fresh: bool,
}

impl ReqState {
    /// What the key still owes: the stored excess plus its last request's
    /// own 1000 (nginx adds it before the drain). The state is idle (a fresh
    /// one would decide the key's next request the same way) once this has
    /// drained: an excess of 0 still refuses a burst-less rule's next
    /// request for `1000 / rate` s.
    fn owed(&self) -> u64 {
        self.excess.saturating_add(1000)
    }
}

// The bound holds by construction: a state and its index share fit in 128 bytes.
const _: () = assert!(Table::<ReqState>::bytes_per_state() <= REQ_STATE_BYTES as usize);

#[derive(Debug)]
struct Inner {
    table: Table<ReqState>,
    /// `(checked_at, until)`: a full scan at `checked_at` found no idle
    /// state, and none can become idle before `until`.
    no_idle: Option<(u64, u64)>,
}

/// What a lookup found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// Charged at once (the last zone of a request): the excess it left.
    Committed(u64),
    /// Pinned until [`LimitReqZone::commit`] or [`LimitReqZone::unpin`].
    Pinned { slot: u32, excess: u64 },
    /// Over the burst: the excess the request would have left.
    Busy(u64),
    /// No free state and none idle.
    Exhausted,
}

/// A limit_req zone.
pub struct LimitReqZone {
    head: ZoneHead,
    rate: Rate,
    inner: Mutex<Inner>,
}

impl LimitReqZone {
    /// A zone of `size` bytes, holding `size / 128` states.
    ///
    /// # Errors
    ///
    /// [`ConfigErrorKind::ZoneSize`](crate::ConfigErrorKind::ZoneSize) when the size holds no state or is too
    /// large; [`ConfigErrorKind::Allocation`](crate::ConfigErrorKind::Allocation) when the memory is not there.
    pub fn new(
        name: &str,
        key: KeyTemplate,
        size: ZoneSize,
        rate: Rate,
        hash_key: HashKey,
    ) -> Result<Self, ConfigError> {
        let head = ZoneHead::new(name, key, size, hash_key);
        let table = head.table(REQ_STATE_BYTES)?;
        Ok(Self {
            head,
            rate,
            inner: Mutex::new(Inner {
                table,
                no_idle: None,
            }),
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

    /// The drain rate.
    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// The number of states the zone holds at most (`size / 128`).
    pub fn capacity(&self) -> u32 {
        self.lock().table.capacity()
    }

    /// The number of states in use.
    pub fn len(&self) -> u32 {
        self.lock().table.len()
    }

    /// True when no state is in use.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes reserved for the states: the slab, its index and the zone header.
    ///
    /// Like nginx's shared zone, this excludes the configuration (name and key text).
    pub fn memory_bytes(&self) -> usize {
        let inner = self.lock();
        std::mem::size_of::<Self>() - std::mem::size_of::<Table<ReqState>>()
            + inner.table.memory_bytes()
    }

    /// The excess of `key` in 1/1000 requests, as last charged; `None` when not stored.
    pub fn stored_excess(&self, key: &[u8]) -> Option<u64> {
        let digest = self.head.digest(key);
        let inner = self.lock();
        let state = inner.table.get(inner.table.find(&digest)?)?;
        Some(if state.fresh { 0 } else { state.excess })
    }

    pub(crate) fn head(&self) -> &ZoneHead {
        &self.head
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// nginx's `ngx_http_limit_req_lookup`: `account` charges at once.
    pub(crate) fn lookup(&self, digest: &KeyDigest, now: u64, burst: u64, account: bool) -> Lookup {
        let rate = self.rate.milli_per_second();
        let mut inner = self.lock();
        if let Some(slot) = inner.table.find(digest) {
            inner.table.touch(slot);
            let Some(state) = inner.table.get_mut(slot) else {
                return Lookup::Exhausted;
            };
            let ms = elapsed_ms(now, state.last);
            let excess = if state.fresh {
                0
            } else {
                excess_after(state.excess, rate, ms)
            };
            if excess > burst {
                return Lookup::Busy(excess);
            }
            if account {
                charge(state, now, ms, excess);
                return Lookup::Committed(excess);
            }
            state.count += 1;
            return Lookup::Pinned { slot, excess };
        }
        if inner.table.len() >= inner.table.capacity() && !inner.evict_idle(now, rate) {
            return Lookup::Exhausted;
        }
        let state = ReqState {
            last: now,
            excess: 0,
            count: u32::from(!account),
            fresh: !account,
        };
        match inner.table.insert(*digest, state) {
            Some(_) if account => Lookup::Committed(0),
            Some(slot) => Lookup::Pinned { slot, excess: 0 },
            None => Lookup::Exhausted,
        }
    }

    /// nginx's `ngx_http_limit_req_account` for one pinned state: charges
    /// the request at `now`, unpins, and returns the excess it left.
    pub(crate) fn commit(&self, slot: u32, now: u64) -> u64 {
        let rate = self.rate.milli_per_second();
        let mut inner = self.lock();
        inner.no_idle = None;
        let Some(state) = inner.table.get_mut(slot) else {
            return 0;
        };
        let ms = elapsed_ms(now, state.last);
        let excess = if state.fresh {
            0
        } else {
            excess_after(state.excess, rate, ms)
        };
        charge(state, now, ms, excess);
        state.count = state.count.saturating_sub(1);
        excess
    }

    /// nginx's `ngx_http_limit_req_unlock` for one state: unpins without charging.
    pub(crate) fn unpin(&self, slot: u32) {
        let mut inner = self.lock();
        inner.no_idle = None;
        if let Some(state) = inner.table.get_mut(slot) {
            state.count = state.count.saturating_sub(1);
        }
    }
}

fn charge(state: &mut ReqState, now: u64, ms: u64, excess: u64) {
    state.excess = excess;
    if state.fresh || ms != 0 {
        state.last = now;
    }
    state.fresh = false;
}

impl Inner {
    /// Evicts the least recently used idle state; false when none is idle.
    fn evict_idle(&mut self, now: u64, rate: u64) -> bool {
        if let Some((checked_at, until)) = self.no_idle {
            if now >= checked_at && now < until {
                return false;
            }
        }
        let mut slot = self.table.oldest();
        let mut until = u64::MAX;
        let mut hint_valid = true;
        while slot != NIL {
            let newer = self.table.newer(slot);
            if let Some(s) = self.table.get(slot) {
                if s.count > 0 {
                    hint_valid = false;
                } else if s.fresh || drained(s.owed(), rate, elapsed_ms(now, s.last)) == 0 {
                    self.table.remove(slot);
                    self.no_idle = None;
                    return true;
                } else if s.last > now {
                    // The clock went back: no safe bound on when it drains.
                    hint_valid = false;
                } else {
                    until = until.min(idle_at(s.owed(), rate, s.last));
                }
            }
            slot = newer;
        }
        self.no_idle = hint_valid.then_some((now, until));
        false
    }
}

impl fmt::Debug for LimitReqZone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LimitReqZone")
            .field("name", &self.head.name)
            .field("key", &self.head.key.as_str())
            .field("size", &self.head.size)
            .field("rate", &self.rate)
            .field("len", &self.len())
            .finish()
    }
}
