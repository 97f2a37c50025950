//! Leaky bucket, meter form (GCRA): holds up to `burst` requests and starts
//! empty; each request adds `cost`; the bucket drains at `limit` per
//! `period`. A request that would overflow is refused, never queued.
//!
//! The state is the bucket's level when it was last updated, in units of
//! `1 / period` of a request (one request is `period_ms` units, and the
//! bucket drains `limit` units per ms), and that time: so nothing is
//! rounded, and a publish that changes the rate keeps the level, which
//! drains at the new rate (a TAT, a time, would rescale the level by the
//! change). With equal settings it admits exactly what the token bucket
//! admits: its level is the token bucket's `spent`, so the arithmetic is
//! the token bucket's. Retry-After is the time until one request fits.

use super::{token_bucket, CheckQuota, Decision};

/// The stored state of one subject: the level and when it was updated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct State {
    /// The level, in units of `1 / period_ms` of a request.
    pub(crate) level: u64,
    /// When `level` was last updated (Unix ms).
    pub(crate) updated_ms: u64,
    /// When the bucket is empty again at the rate of that update (Unix
    /// ms): the state ends then, whatever the rate is now.
    pub(crate) empty_ms: u64,
}

impl State {
    /// The token bucket whose tokens spent are this level.
    #[inline(always)]
    fn as_spent(self) -> token_bucket::State {
        token_bucket::State {
            spent: self.level,
            updated_ms: self.updated_ms,
            full_ms: self.empty_ms,
        }
    }

    #[inline(always)]
    fn from_spent(s: token_bucket::State) -> Self {
        Self {
            level: s.spent,
            updated_ms: s.updated_ms,
            empty_ms: s.full_ms,
        }
    }

    #[inline(always)]
    fn with_spent(&mut self, f: impl FnOnce(&mut token_bucket::State) -> Decision) -> Decision {
        let mut s = self.as_spent();
        let d = f(&mut s);
        *self = Self::from_spent(s);
        d
    }
}

/// Checks one request at `now` (Unix ms) and updates `state`: the level
/// drained since the last update, plus `cost` requests, fits in `burst`.
#[inline(always)]
pub(crate) fn check(state: &mut State, now: u64, q: &CheckQuota) -> Decision {
    state.with_spent(|s| token_bucket::check(s, now, q))
}

/// Charges `q.cost` at `now` whether or not it fits: the level may pass the
/// bucket's size (saturating at [`MAX_CHARGED_UNITS`](super::MAX_CHARGED_UNITS)
/// units), drained at the usual rate. Admitted while the bucket does not
/// overflow; else Retry-After is when a request of cost 1 fits again.
pub(crate) fn charge(state: &mut State, now: u64, q: &CheckQuota) -> Decision {
    state.with_spent(|s| token_bucket::charge(s, now, q))
}

/// When the bucket is empty again (Unix ms), so the state can be dropped.
#[inline(always)]
pub(crate) fn expires_at(state: &State, q: &CheckQuota) -> u64 {
    token_bucket::expires_at(&state.as_spent(), q)
}

#[cfg(test)]
mod tests;
