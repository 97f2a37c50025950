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
mod tests {
    use super::*;

    const T0: u64 = 1_767_225_600_000;

    /// Seed: same settings as the token bucket, same results.
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
        assert!(!check(&mut s, T0 + 6_000, &q).allowed);
        for i in 0..4 {
            assert!(check(&mut s, T0 + 30_000, &q).allowed, "0:30 #{i}");
        }
        for _ in 0..2 {
            let d = check(&mut s, T0 + 30_000, &q);
            assert_eq!((d.allowed, d.retry_after_ms), (false, 6_000));
        }
    }

    #[test]
    fn huge_limits_do_not_overflow() {
        let q = CheckQuota::new(1_000_000_000, 86_400_000).allow_burst(1_000_000_000);
        let mut s = State::default();
        for i in 0..100 {
            assert!(check(&mut s, T0 + i, &q).allowed);
        }
        // Each request is 0.0864 ms of drain: the last one leaves T0 + 99.0864.
        assert_eq!(expires_at(&s, &q), T0 + 100);
        assert_eq!(s.tat_frac, 86_400_000);
    }

    /// `check` as it was written on the TAT in ticks (128-bit divisions).
    fn check_in_ticks(state: &mut State, now: u64, q: &CheckQuota) -> Decision {
        let limit = q.limit.max(1) as u128;
        let t = q.period_ms.max(1) as u128;
        let tolerance = q.burst as u128 * t;
        let now_t = now as u128 * limit;
        let tat = state.ticks(limit).max(now_t);
        let new_tat = tat + q.cost as u128 * t;
        if new_tat - now_t <= tolerance {
            *state = State::from_ticks(new_tat, limit);
            let remaining = narrow((tolerance - (new_tat - now_t)) / t);
            return Decision::allow(remaining, narrow(ceil_div(new_tat - now_t, limit)));
        }
        let level = tat - now_t;
        let remaining = narrow(tolerance.saturating_sub(level) / t);
        let retry = if q.cost > q.burst {
            q.period_ms
        } else {
            narrow(ceil_div(new_tat - now_t - tolerance, limit))
        };
        Decision::deny(retry, remaining, narrow(ceil_div(level, limit)))
    }

    proptest::proptest! {
        /// Counting the level past `now` decides and moves the TAT exactly
        /// as counting the TAT in ticks does, small numbers or huge.
        #[test]
        fn the_level_is_the_tat_in_ticks(
            limit in proptest::prop_oneof![1..=20u64, 1..=u64::MAX],
            period in proptest::prop_oneof![1..=86_400_000u64, 1..=u64::MAX],
            burst in proptest::prop_oneof![0..=20u64, 0..=u64::MAX],
            cost in proptest::prop_oneof![0..=3u64, 0..=u64::MAX],
            tat_ms in proptest::prop_oneof![T0 - 10_000..T0 + 10_000_000, 0..=u64::MAX],
            tat_frac in 0..=u64::MAX,
            now in proptest::prop_oneof![T0..T0 + 100_000, 0..=u64::MAX],
        ) {
            let q = CheckQuota::new(limit, period).allow_burst(burst).with_cost(cost);
            let s = State { tat_ms, tat_frac: tat_frac % limit };
            // Where the ticks form does not overflow (quotas are far below).
            let (l, t) = (limit as u128, period as u128);
            let tat = s.ticks(l).max(now as u128 * l);
            proptest::prop_assume!(tat.checked_add(cost as u128 * t).is_some());
            let (mut a, mut b) = (s, s);
            proptest::prop_assert_eq!(check(&mut a, now, &q), check_in_ticks(&mut b, now, &q));
            proptest::prop_assert_eq!(a, b);
        }
    }

    /// The token bucket's debt example: 8 charged into a bucket of 5.
    #[test]
    fn a_charge_overflows_the_bucket_and_drains_at_the_rate() {
        let q = CheckQuota::per_minute(10).allow_burst(5);
        let mut s = State::default();
        let d = charge(&mut s, T0, &q.with_cost(8));
        assert_eq!(d, Decision::deny(24_000, 0, 48_000));
        assert_eq!(s.tat_ms, T0 + 48_000);
        assert!(!check(&mut s.clone(), T0 + 23_999, &q).allowed);
        let d = check(&mut s, T0 + 24_000, &q);
        assert_eq!((d.allowed, d.remaining), (true, 0));
        let d = charge(&mut s, T0 + 24_000, &q.with_cost(0));
        assert_eq!(d, Decision::allow(0, 30_000));
    }
}
