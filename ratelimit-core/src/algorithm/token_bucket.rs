//! Token bucket: holds up to `burst` tokens and starts full; refills at
//! `limit` tokens per `period`; each request takes `cost` tokens.
//!
//! Tokens are kept exactly in units of `1 / period` of a token, so a refill
//! of `limit / period` tokens per millisecond is `limit` units per ms and no
//! fraction is ever rounded. Retry-After is the time to the next token.

use super::{ceil_div, div_rem, narrow, CheckQuota, Decision, MAX_CHARGED_UNITS};

/// The stored state of one subject: tokens spent (not yet refilled), when,
/// and when the bucket is full again at the rate of that update.
///
/// Storing what is spent rather than what is left makes the default state a
/// full bucket. The state ends at `full_ms` whatever the rate is now (as a
/// Valkey key expires): after a publish that changes the limit, the spent
/// tokens refill at the new rate until then, and the bucket is full from
/// then on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct State {
    /// Spent tokens, in units of `1 / period_ms` of a token.
    pub(crate) spent: u64,
    /// When `spent` was last updated (Unix ms).
    pub(crate) updated_ms: u64,
    /// When the state ends (Unix ms): `updated_ms + ceil(spent / limit)`
    /// under the limit of that update.
    pub(crate) full_ms: u64,
}

impl State {
    /// `spent` units at `updated_ms`, under `limit` units a ms.
    #[inline(always)]
    fn at(spent: u128, updated_ms: u64, limit: u128) -> Self {
        Self {
            spent: narrow(spent),
            updated_ms,
            full_ms: updated_ms.saturating_add(narrow(ceil_div(spent, limit))),
        }
    }
}

/// The quota in units of `1 / period` of a token, and what `state` has
/// spent once drained up to `now`: what a check and a charge start from.
struct Drained {
    /// One token, in units (the period in ms).
    p: u128,
    /// Units refilled per ms.
    limit: u128,
    /// The bucket's size, in units.
    capacity: u128,
    /// Units spent and not yet refilled at `now`.
    spent: u128,
}

impl Drained {
    #[inline(always)]
    fn at(state: &State, now: u64, q: &CheckQuota) -> Self {
        let p = q.period_ms.max(1) as u128;
        let limit = q.limit.max(1) as u128;
        let elapsed = now.saturating_sub(state.updated_ms) as u128;
        // An ended state holds nothing (see `State`).
        let spent = if now >= state.full_ms {
            0
        } else {
            (state.spent as u128).saturating_sub(elapsed.saturating_mul(limit))
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
/// admitted. A refusal leaves the tokens spent and their time as they
/// were: they refill to the same tokens at any later time as the drained
/// state would, and the last update stays that of the last admitted
/// request, from which a publish's new rate counts (as the Valkey script,
/// which writes nothing on a refusal under an unchanged limit). Only the
/// end of a live state moves, to where the current rate puts it (after a
/// publish that changed the limit).
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
    if now < state.full_ms {
        *state = State::at(state.spent as u128, state.updated_ms, limit);
    }
    let remaining = narrow(div_rem(capacity - spent.min(capacity), p).0);
    let retry = if q.cost > q.burst {
        q.period_ms
    } else {
        narrow(ceil_div(need - capacity, limit))
    };
    Decision::deny(retry, remaining, narrow(ceil_div(spent, limit)))
}

/// Charges `q.cost` at `now` whether or not it fits: the tokens spent may
/// pass the bucket's size (a debt, refilled at the usual rate). Admitted
/// while the bucket is not overdrawn; else Retry-After is when a request of
/// cost 1 fits again. The debt saturates at [`MAX_CHARGED_UNITS`].
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
    let spent = state.spent as u128;
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

/// When the bucket is full again (Unix ms), so the state can be dropped:
/// at the rate of its last update (see [`State`]).
pub(crate) fn expires_at(state: &State, _q: &CheckQuota) -> u64 {
    state.full_ms
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = 1_767_225_600_000;

    /// Seed table: limit 10 per 1m, burst 5: one token every 6 s.
    #[test]
    fn seed_scenario_table() {
        let q = CheckQuota::per_minute(10).allow_burst(5);
        let mut s = State::default();
        for i in 0..5 {
            assert!(check(&mut s, T0, &q).allowed, "request {i} at 0:00");
        }
        let d = check(&mut s, T0, &q);
        assert_eq!((d.allowed, d.retry_after_ms), (false, 6_000));
        assert!(check(&mut s, T0 + 6_000, &q).allowed);
        let d = check(&mut s, T0 + 6_000, &q);
        assert_eq!((d.allowed, d.retry_after_ms), (false, 6_000));
        for i in 0..4 {
            assert!(check(&mut s, T0 + 30_000, &q).allowed, "0:30 #{i}");
        }
        for _ in 0..2 {
            let d = check(&mut s, T0 + 30_000, &q);
            assert_eq!((d.allowed, d.retry_after_ms), (false, 6_000));
        }
    }

    #[test]
    fn fractional_refill_is_exact() {
        // 7 per minute: a token every 8571.43 ms; the next fits at 8572 ms.
        let q = CheckQuota::per_minute(7).allow_burst(1);
        let mut s = State::default();
        assert!(check(&mut s, T0, &q).allowed);
        let d = check(&mut s, T0, &q);
        assert_eq!(d.retry_after_ms, 8_572);
        assert!(!check(&mut s, T0 + 8_571, &q).allowed);
        assert!(check(&mut s, T0 + 8_572, &q).allowed);
    }

    #[test]
    fn remaining_counts_whole_tokens() {
        let q = CheckQuota::per_minute(10).allow_burst(5);
        let mut s = State::default();
        let d = check(&mut s, T0, &q);
        assert_eq!((d.remaining, d.reset_ms), (4, 6_000));
    }

    /// 10 per minute, burst 5, 8 charged at once: a debt of 3 tokens; one
    /// more fits after 4 tokens refill, 24 s; whole again after 48 s.
    #[test]
    fn a_charge_leaves_a_debt_refilled_at_the_rate() {
        let q = CheckQuota::per_minute(10).allow_burst(5);
        let mut s = State::default();
        let d = charge(&mut s, T0, &q.with_cost(8));
        assert_eq!(d, Decision::deny(24_000, 0, 48_000));
        assert_eq!(s.spent, 8 * 60_000);
        assert!(!check(&mut s.clone(), T0 + 23_999, &q).allowed);
        let d = check(&mut s, T0 + 24_000, &q);
        assert_eq!((d.allowed, d.remaining), (true, 0));
    }

    /// Issue 39, finding 7: tokens kept across a rate change, refilled at
    /// the new rate. Empty at 60 a minute (burst 5), slowed to 6 a minute
    /// at that instant: 3 s later 0.3 tokens, the next in 7 s.
    #[test]
    fn a_slower_rate_keeps_the_tokens_and_refills_at_the_new_rate() {
        let fast = CheckQuota::per_minute(60).allow_burst(5);
        let slow = CheckQuota::per_minute(6).allow_burst(5);
        let mut s = State::default();
        for _ in 0..5 {
            assert!(check(&mut s, T0, &fast).allowed);
        }
        let d = check(&mut s, T0 + 3_000, &slow);
        assert_eq!((d.allowed, d.retry_after_ms), (false, 7_000), "{d:?}");
        assert!(check(&mut s, T0 + 10_000, &slow).allowed);
    }

    /// Empty at 6 a minute, sped up to 60 a minute: 3 s later 3 tokens.
    #[test]
    fn a_faster_rate_keeps_the_tokens_and_refills_at_the_new_rate() {
        let slow = CheckQuota::per_minute(6).allow_burst(5);
        let fast = CheckQuota::per_minute(60).allow_burst(5);
        let mut s = State::default();
        for _ in 0..5 {
            assert!(check(&mut s, T0, &slow).allowed);
        }
        for i in 0..3 {
            assert!(check(&mut s, T0 + 3_000, &fast).allowed, "request {i}");
        }
        assert!(!check(&mut s, T0 + 3_000, &fast).allowed);
    }

    #[test]
    fn a_charge_within_the_bucket_is_admitted() {
        let q = CheckQuota::per_minute(10).allow_burst(5);
        let mut s = State::default();
        assert_eq!(
            charge(&mut s, T0, &q.with_cost(5)),
            Decision::allow(0, 30_000)
        );
    }
}
