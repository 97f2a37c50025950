//! Fixed window: counts requests per calendar window of `period`.
//!
//! The count resets when the next window starts. Retry-After is the time to
//! the window end. Across a window edge it admits up to `2 x limit` in a
//! short time (the edge burst).

use super::{CheckQuota, Decision};

/// The stored state of one subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct State {
    /// Start (Unix ms) of the window the count belongs to.
    pub(crate) window_start: u64,
    /// Requests counted in that window.
    pub(crate) count: u64,
}

/// Checks one request at `now` (Unix ms) and updates `state`.
// Inlinable into the in-memory store's count path (`Packed::count`).
#[inline]
pub(crate) fn check(state: &mut State, now: u64, q: &CheckQuota) -> Decision {
    let period = q.period_ms.max(1);
    let start = now - now % period;
    if state.window_start != start {
        *state = State {
            window_start: start,
            count: 0,
        };
    }
    let to_end = start + period - now;
    if state.count.saturating_add(q.cost) <= q.limit {
        state.count += q.cost;
        Decision::allow(q.limit - state.count, to_end)
    } else if q.cost > q.limit {
        // Can never fit: say so with a whole period.
        Decision::deny(period, q.limit.saturating_sub(state.count), to_end)
    } else {
        Decision::deny(to_end, q.limit.saturating_sub(state.count), to_end)
    }
}

/// Charges `q.cost` at `now` whether or not it fits: the count may pass
/// the limit. Admitted while the count is still within the limit; else
/// Retry-After is when a request of cost 1 fits again (the window's end).
pub(crate) fn charge(state: &mut State, now: u64, q: &CheckQuota) -> Decision {
    let period = q.period_ms.max(1);
    let start = now - now % period;
    if state.window_start != start {
        *state = State {
            window_start: start,
            count: 0,
        };
    }
    state.count = state.count.saturating_add(q.cost);
    let to_end = start + period - now;
    if state.count <= q.limit {
        return Decision::allow(q.limit - state.count, to_end);
    }
    // As a refused check of cost 1 would say.
    let retry = if q.limit == 0 { period } else { to_end };
    Decision::deny(retry, 0, to_end)
}

/// When the state stops mattering (Unix ms): the end of its window.
pub(crate) fn expires_at(state: &State, q: &CheckQuota) -> u64 {
    state.window_start.saturating_add(q.period_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = 1_767_225_600_000;

    /// Seed table: limit 5 per 1m; 5 late in one window, 5 right after.
    #[test]
    fn seed_scenario_edge_burst_then_retry_after_60() {
        let q = CheckQuota::per_minute(5);
        let mut s = State::default();
        for i in 0..5 {
            let now = T0 + 59_000 + i * 100;
            assert!(check(&mut s, now, &q).allowed, "0:59.{i}");
        }
        for i in 0..5 {
            let now = T0 + 60_000 + i * 100;
            assert!(check(&mut s, now, &q).allowed, "1:00.{i}");
        }
        let d = check(&mut s, T0 + 60_500, &q);
        assert!(!d.allowed);
        assert_eq!(d.retry_after_ms, 59_500);
        assert_eq!(d.retry_after_ms.div_ceil(1000), 60);
    }

    #[test]
    fn remaining_and_reset_follow_the_window() {
        let q = CheckQuota::per_minute(3);
        let mut s = State::default();
        let d = check(&mut s, T0 + 10_000, &q);
        assert_eq!((d.remaining, d.reset_ms), (2, 50_000));
    }

    #[test]
    fn cost_above_limit_never_fits() {
        let q = CheckQuota::per_minute(3).with_cost(4);
        let mut s = State::default();
        let d = check(&mut s, T0, &q);
        assert!(!d.allowed);
        assert_eq!(s.count, 0);
    }

    /// 100 tokens per minute: a charge of 150 at 0:10 passes the limit; a
    /// request of cost 1 fits again at the window's end, 50 s later.
    #[test]
    fn a_charge_passes_the_limit_until_the_window_ends() {
        let q = CheckQuota::per_minute(100);
        let mut s = State::default();
        let d = charge(&mut s, T0 + 10_000, &q.with_cost(30));
        assert_eq!(d, Decision::allow(70, 50_000));
        let d = charge(&mut s, T0 + 10_000, &q.with_cost(120));
        assert_eq!(d, Decision::deny(50_000, 0, 50_000));
        assert_eq!(s.count, 150);
        assert!(!check(&mut s.clone(), T0 + 59_999, &q).allowed);
        let d = check(&mut s, T0 + 60_000, &q);
        assert_eq!((d.allowed, d.remaining), (true, 99));
    }
}
