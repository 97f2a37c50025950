//! Leaky bucket, meter form (GCRA): holds up to `burst` requests and starts
//! empty; each request adds `cost`; the bucket drains at `limit` per
//! `period`. A request that would overflow is refused, never queued.
//!
//! The state is the theoretical arrival time (TAT) in ticks of
//! `1 / limit` ms, so one request is exactly `period_ms` ticks and nothing is
//! rounded. With equal settings it admits exactly what the token bucket
//! admits. Retry-After is the time until one request fits.

use super::{ceil_div, div_rem, narrow, CheckQuota, Decision, MAX_CHARGED_UNITS};

/// The stored state of one subject: the theoretical arrival time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct State {
    /// Whole milliseconds of the TAT (Unix ms).
    pub(crate) tat_ms: u64,
    /// The fraction of a millisecond, in `1 / limit` ms (`< limit`).
    pub(crate) tat_frac: u64,
}

impl State {
    fn ticks(&self, limit: u128) -> u128 {
        self.tat_ms as u128 * limit + self.tat_frac as u128
    }

    fn from_ticks(t: u128, limit: u128) -> Self {
        Self {
            tat_ms: narrow(t / limit),
            tat_frac: narrow(t % limit),
        }
    }

    /// `from_ticks(now x limit + level)`, in the small numbers: the level
    /// (ticks past `now`) mostly fits in 64 bits, where the TAT in ticks
    /// does not.
    #[inline(always)]
    fn at_level(now: u64, level: u128, limit: u128) -> Self {
        let (ms, frac) = div_rem(level, limit);
        Self {
            tat_ms: narrow(now as u128 + ms),
            tat_frac: narrow(frac),
        }
    }
}

/// The quota and `now` in ticks of `1 / limit` ms: what a check and a
/// charge start from.
struct Ticks {
    /// Ticks per ms.
    limit: u128,
    /// One request, in ticks (the period in ms).
    t: u128,
    /// The bucket's size, in ticks.
    tolerance: u128,
    /// `now` in ticks.
    now_t: u128,
}

impl Ticks {
    #[inline(always)]
    fn at(now: u64, q: &CheckQuota) -> Self {
        let limit = q.limit.max(1) as u128;
        let t = q.period_ms.max(1) as u128;
        Self {
            limit,
            t,
            tolerance: q.burst as u128 * t,
            now_t: now as u128 * limit,
        }
    }
}

/// Checks one request at `now` (Unix ms) and updates `state`.
#[inline(always)]
pub(crate) fn check(state: &mut State, now: u64, q: &CheckQuota) -> Decision {
    let Ticks {
        limit,
        t,
        tolerance,
        now_t,
    } = Ticks::at(now, q);
    // Ticks past `now`: the bucket's level before and after the request.
    let level = state.ticks(limit).max(now_t) - now_t;
    let new_level = level + q.cost as u128 * t;
    if new_level <= tolerance {
        *state = State::at_level(now, new_level, limit);
        let remaining = narrow(div_rem(tolerance - new_level, t).0);
        return Decision::allow(remaining, narrow(ceil_div(new_level, limit)));
    }
    let remaining = narrow(div_rem(tolerance.saturating_sub(level), t).0);
    let retry = if q.cost > q.burst {
        q.period_ms
    } else {
        narrow(ceil_div(new_level - tolerance, limit))
    };
    Decision::deny(retry, remaining, narrow(ceil_div(level, limit)))
}

/// Charges `q.cost` at `now` whether or not it fits: the level may pass the
/// bucket's size (the TAT moves on by the whole cost, the level saturating
/// at [`MAX_CHARGED_UNITS`] ticks). Admitted while the bucket does not
/// overflow; else Retry-After is when a request of cost 1 fits again.
pub(crate) fn charge(state: &mut State, now: u64, q: &CheckQuota) -> Decision {
    let Ticks {
        limit,
        t,
        tolerance,
        now_t,
    } = Ticks::at(now, q);
    let tat = state.ticks(limit).max(now_t);
    let mut level = tat - now_t + q.cost as u128 * t;
    if level > MAX_CHARGED_UNITS {
        level = (tat - now_t).max(MAX_CHARGED_UNITS);
    }
    *state = State::from_ticks(now_t + level, limit);
    let level = state.ticks(limit).max(now_t) - now_t;
    let reset = narrow(ceil_div(level, limit));
    if level <= tolerance {
        return Decision::allow(narrow(div_rem(tolerance - level, t).0), reset);
    }
    // As a refused check of cost 1 would say.
    let retry = if q.burst == 0 {
        q.period_ms
    } else {
        narrow(ceil_div(level + t - tolerance, limit))
    };
    Decision::deny(retry, 0, reset)
}

/// When the bucket is empty again (Unix ms), so the state can be dropped.
#[inline(always)]
pub(crate) fn expires_at(state: &State, _q: &CheckQuota) -> u64 {
    state.tat_ms.saturating_add((state.tat_frac > 0) as u64)
}

#[cfg(test)]
mod tests;
