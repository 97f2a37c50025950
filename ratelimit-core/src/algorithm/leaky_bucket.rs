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
//! admits (the token bucket runs this arithmetic on what its bucket
//! lacks). Retry-After is the time until one request fits.

use super::{ceil_div, div_rem, narrow, CheckQuota, Decision, MAX_CHARGED_UNITS};

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
    /// A level of `spent` units at `updated_ms`, under `limit` units a ms.
    #[inline(always)]
    fn at(spent: u128, updated_ms: u64, limit: u128) -> Self {
        Self {
            level: narrow(spent),
            updated_ms,
            empty_ms: updated_ms.saturating_add(narrow(ceil_div(spent, limit))),
        }
    }
}

/// The quota in units of `1 / period` of a request, and the level of
/// `state` once drained up to `now`: what a check and a charge start from.
struct Drained {
    /// One request, in units (the period in ms).
    p: u128,
    /// Units drained per ms.
    limit: u128,
    /// The bucket's size, in units.
    capacity: u128,
    /// The level at `now`, in units.
    spent: u128,
}

impl Drained {
    #[inline(always)]
    fn at(state: &State, now: u64, q: &CheckQuota) -> Self {
        let p = q.period_ms.max(1) as u128;
        let limit = q.limit.max(1) as u128;
        let elapsed = now.saturating_sub(state.updated_ms) as u128;
        // An ended state holds nothing (see `State`).
        let spent = if now >= state.empty_ms {
            0
        } else {
            (state.level as u128).saturating_sub(elapsed.saturating_mul(limit))
        };
        Self {
            p,
            limit,
            capacity: q.burst as u128 * p,
            spent,
        }
    }
}

/// Checks one request at `now` (Unix ms) and updates `state` when it is
/// admitted: the level drained since the last update, plus `cost`
/// requests, fits in `burst`. A refusal leaves the level and its time as
/// they were: they drain to the same level at any later time as the
/// drained state would, and the last update stays that of the last
/// admitted request, from which a publish's new rate counts (as the
/// Valkey script, which writes nothing on a refusal under an unchanged
/// limit). Only the end of a live state moves, to where the current rate
/// puts it (after a publish that changed the limit).
// Inlinable into the in-memory store's count path (`Packed::count`).
#[inline]
pub(crate) fn check(state: &mut State, now: u64, q: &CheckQuota) -> Decision {
    let Drained {
        p,
        limit,
        capacity,
        spent,
    } = Drained::at(state, now, q);
    let need = spent + q.cost as u128 * p;
    if need <= capacity {
        let remaining = narrow(div_rem(capacity - need, p).0);
        *state = State::at(need, now.max(state.updated_ms), limit);
        return Decision::allow(remaining, narrow(ceil_div(need, limit)));
    }
    if now < state.empty_ms {
        *state = State::at(state.level as u128, state.updated_ms, limit);
    }
    let remaining = narrow(div_rem(capacity - spent.min(capacity), p).0);
    let retry = if q.cost > q.burst {
        q.period_ms
    } else {
        narrow(ceil_div(need - capacity, limit))
    };
    Decision::deny(retry, remaining, narrow(ceil_div(spent, limit)))
}

/// Charges `q.cost` at `now` whether or not it fits: the level may pass the
/// bucket's size (saturating at [`MAX_CHARGED_UNITS`] units), drained at
/// the usual rate. Admitted while the bucket does not overflow; else
/// Retry-After is when a request of cost 1 fits again.
pub(crate) fn charge(state: &mut State, now: u64, q: &CheckQuota) -> Decision {
    let Drained {
        p,
        limit,
        capacity,
        spent,
    } = Drained::at(state, now, q);
    let mut charged = spent + q.cost as u128 * p;
    if charged > MAX_CHARGED_UNITS {
        charged = spent.max(MAX_CHARGED_UNITS);
    }
    *state = State::at(charged, now.max(state.updated_ms), limit);
    let spent = state.level as u128;
    let reset = narrow(ceil_div(spent, limit));
    if spent <= capacity {
        return Decision::allow(narrow(div_rem(capacity - spent, p).0), reset);
    }
    // As a refused check of cost 1 would say.
    let retry = if q.burst == 0 {
        q.period_ms
    } else {
        narrow(ceil_div(spent + p - capacity, limit))
    };
    Decision::deny(retry, 0, reset)
}

/// When the bucket is empty again (Unix ms), so the state can be dropped:
/// at the rate of its last update (see [`State`]).
pub(crate) fn expires_at(state: &State, _q: &CheckQuota) -> u64 {
    state.empty_ms
}

#[cfg(test)]
mod tests;
