//! A limit_req zone: one leaky bucket per key digest, in preallocated memory.
//!
//! The lookup and the commit are split as in nginx, so that a request that
//! several zones limit is charged nowhere when any of them refuses it: a
//! lookup pins the state (nginx's `count`), the commit charges it.
//! When the zone is full, an idle state is evicted: one that would decide
//! its key's next request as a fresh state would, so that its stored excess
//! and its last request's own share have drained (an excess of 0 is not
//! enough: a rule without burst still refuses that key for `1000 / rate`
//! ms). Which idle state goes changes no decision, so the zone takes the
//! first one core's [`BoundedTable::evict_first`] offers (nginx takes the
//! least recently used one); when no state is idle the request is refused
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

use super::arith::{drained, elapsed_ms, excess_after, idle_at};
use super::error::ConfigError;
use super::key::KeyTemplate;
use super::rate::Rate;
use super::size::{ZoneSize, REQ_STATE_BYTES};
use super::zone_states::{zone_accessors, Locked, ZoneStates};
use ratelimit_core::{BoundedTable, HashKey, KeyDigest};

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

    /// The excess a request at `now` finds, and the ms since the last charge.
    fn excess_at(&self, now: u64, rate: u64) -> (u64, u64) {
        let ms = elapsed_ms(now, self.last);
        let excess = if self.fresh {
            0
        } else {
            excess_after(self.excess, rate, ms)
        };
        (excess, ms)
    }

    /// Charges a request at `now` that left `excess`.
    fn charge(&mut self, now: u64, ms: u64, excess: u64) {
        self.excess = excess;
        if self.fresh || ms != 0 {
            self.last = now;
        }
        self.fresh = false;
    }
}

// The bound holds by construction: a state and its share of the table fit in 128 bytes.
const _: () = assert!(BoundedTable::<ReqState>::entry_bytes() <= REQ_STATE_BYTES as usize);

/// `(checked_at, until)`: a look at every state at `checked_at` found none
/// idle, and none can become idle before `until`.
type NoIdle = Option<(u64, u64)>;

/// What a lookup found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// Charged at once (the last zone of a request): the excess it left.
    Committed(u64),
    /// Pinned until [`LimitReqZone::commit`] or [`LimitReqZone::unpin`].
    Pinned(u64),
    /// Over the burst: the excess the request would have left.
    Busy(u64),
    /// No free state and none idle.
    Exhausted,
}

/// A limit_req zone.
pub struct LimitReqZone {
    states: ZoneStates<ReqState, NoIdle>,
    rate: Rate,
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
        let states = ZoneStates::new(name, key, size, hash_key, REQ_STATE_BYTES, None)?;
        Ok(Self { states, rate })
    }

    /// The drain rate.
    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// The excess of `key` in 1/1000 requests, as last charged; `None` when not stored.
    pub fn stored_excess(&self, key: &[u8]) -> Option<u64> {
        let digest = self.states.digest(key);
        let locked = self.states.lock();
        let state = locked.table.get(&digest)?;
        Some(if state.fresh { 0 } else { state.excess })
    }

    pub(crate) fn states(&self) -> &ZoneStates<ReqState, NoIdle> {
        &self.states
    }

    /// nginx's `ngx_http_limit_req_lookup`: `account` charges at once.
    pub(crate) fn lookup(&self, digest: &KeyDigest, now: u64, burst: u64, account: bool) -> Lookup {
        let rate = self.rate.milli_per_second();
        let mut locked = self.states.lock();
        if let Some(state) = locked.table.get_mut(digest) {
            let (excess, ms) = state.excess_at(now, rate);
            if excess > burst {
                return Lookup::Busy(excess);
            }
            if account {
                state.charge(now, ms, excess);
                return Lookup::Committed(excess);
            }
            state.count += 1;
            return Lookup::Pinned(excess);
        }
        if locked.table.is_full() && !evict_idle(&mut locked, now, rate) {
            return Lookup::Exhausted;
        }
        let state = ReqState {
            last: now,
            excess: 0,
            count: u32::from(!account),
            fresh: !account,
        };
        match locked.table.insert(*digest, state) {
            Some(_) if account => Lookup::Committed(0),
            Some(_) => Lookup::Pinned(0),
            None => Lookup::Exhausted,
        }
    }

    /// nginx's `ngx_http_limit_req_account` for one pinned state: charges
    /// the request at `now`, unpins, and returns the excess it left.
    pub(crate) fn commit(&self, digest: &KeyDigest, now: u64) -> u64 {
        let rate = self.rate.milli_per_second();
        let mut locked = self.states.lock();
        locked.extra = None;
        let Some(state) = locked.table.get_mut(digest) else {
            return 0;
        };
        let (excess, ms) = state.excess_at(now, rate);
        state.charge(now, ms, excess);
        state.count = state.count.saturating_sub(1);
        excess
    }

    /// nginx's `ngx_http_limit_req_unlock` for one state: unpins without charging.
    pub(crate) fn unpin(&self, digest: &KeyDigest) {
        let mut locked = self.states.lock();
        locked.extra = None;
        if let Some(state) = locked.table.get_mut(digest) {
            state.count = state.count.saturating_sub(1);
        }
    }
}

zone_accessors!(LimitReqZone, "128");

/// Evicts an idle state; false when none is idle (the answer kept in
/// `locked.extra` until a state can have become idle).
fn evict_idle(locked: &mut Locked<ReqState, NoIdle>, now: u64, rate: u64) -> bool {
    if let Some((checked_at, until)) = locked.extra {
        if now >= checked_at && now < until {
            return false;
        }
    }
    let mut until = u64::MAX;
    let mut hint_valid = true;
    let evicted = locked.table.evict_first(|s| {
        if s.count > 0 {
            hint_valid = false;
            false
        } else if s.fresh || drained(s.owed(), rate, elapsed_ms(now, s.last)) == 0 {
            true
        } else if s.last > now {
            // The clock went back: no safe bound on when it drains.
            hint_valid = false;
            false
        } else {
            until = until.min(idle_at(s.owed(), rate, s.last));
            false
        }
    });
    locked.extra = match evicted {
        Some(_) => None,
        None => hint_valid.then_some((now, until)),
    };
    evicted.is_some()
}

impl fmt::Debug for LimitReqZone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.states
            .debug(f, "LimitReqZone")
            .field("rate", &self.rate)
            .finish()
    }
}
