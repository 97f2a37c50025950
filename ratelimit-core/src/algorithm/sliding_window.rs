//! Sliding window: the current window's count plus the previous window's
//! count weighted by the share of it still inside the last period.
//!
//! `estimate = current + ceil(previous x (period - elapsed) / period)`,
//! computed exactly in integers. A request is admitted when
//! `estimate + cost <= limit`. Retry-After is the earliest time at which a
//! retry would be admitted if nothing else happened: it may lie past the end
//! of the current window.

use super::{ceil_div, narrow, CheckQuota, Decision};

/// The stored state of one subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct State {
    /// Start (Unix ms) of the current window.
    pub(crate) window_start: u64,
    /// Requests counted in the current window.
    pub(crate) current: u64,
    /// Requests counted in the window before it.
    pub(crate) previous: u64,
}

#[inline(always)]
fn roll(state: &mut State, start: u64, period: u64) {
    if state.window_start == start {
        return;
    }
    let previous = if state.window_start.checked_add(period) == Some(start) {
        state.current
    } else {
        0
    };
    *state = State {
        window_start: start,
        current: 0,
        previous,
    };
}

/// The estimate at `elapsed` ms into the current window.
#[inline(always)]
pub(crate) fn estimate(state: &State, elapsed: u64, period: u64) -> u128 {
    let weighted = state.previous as u128 * (period - elapsed.min(period)) as u128;
    state.current as u128 + ceil_div(weighted, period as u128)
}

/// Checks one request at `now` (Unix ms) and updates `state`.
#[inline(always)]
pub(crate) fn check(state: &mut State, now: u64, q: &CheckQuota) -> Decision {
    let period = q.period_ms.max(1);
    let start = now - now % period;
    roll(state, start, period);
    let elapsed = now - start;
    let est = estimate(state, elapsed, period);
    let limit = q.limit as u128;
    let cost = q.cost as u128;
    if est + cost <= limit {
        state.current += q.cost;
        let remaining = narrow(limit - est - cost);
        return Decision::allow(remaining, reset_ms(state, elapsed, period));
    }
    let remaining = narrow(limit.saturating_sub(est));
    let retry = retry_after(state, elapsed, period, q);
    Decision::deny(retry, remaining, reset_ms(state, elapsed, period))
}

/// The most a charge leaves in a window's count: 2^31 - 1, so that the
/// Valkey scripts compute every estimate and Retry-After exactly. Any count
/// from `limit x period + 1` up refuses the rest of the window and the
/// whole next one alike, so below that the bound changes no decision.
pub(crate) const MAX_CHARGED: u64 = (1 << 31) - 1;

/// Charges `q.cost` at `now` whether or not it fits: the current window's
/// count may pass the limit (up to [`MAX_CHARGED`]). Admitted while the estimate is still within
/// the limit; else Retry-After is when a request of cost 1 fits again
/// (possibly in the next window, once today's count has aged enough).
pub(crate) fn charge(state: &mut State, now: u64, q: &CheckQuota) -> Decision {
    let period = q.period_ms.max(1);
    let start = now - now % period;
    roll(state, start, period);
    let elapsed = now - start;
    let charged = state.current.saturating_add(q.cost);
    if charged > MAX_CHARGED {
        state.current = state.current.max(MAX_CHARGED);
    } else {
        state.current = charged;
    }
    let est = estimate(state, elapsed, period);
    let limit = q.limit as u128;
    let reset = reset_ms(state, elapsed, period);
    if est <= limit {
        return Decision::allow(narrow(limit - est), reset);
    }
    let retry = retry_after(state, elapsed, period, &q.with_cost(1));
    Decision::deny(retry, 0, reset)
}

/// Earliest wait after which `estimate + cost <= limit`, nothing else happening.
fn retry_after(state: &State, elapsed: u64, period: u64, q: &CheckQuota) -> u64 {
    let p = period as u128;
    let (limit, cost) = (q.limit as u128, q.cost as u128);
    if cost > limit {
        return period;
    }
    let to_end = (period - elapsed) as u128;
    // ceil(w * (P - e) / P) <= k  <=>  e >= P - floor(k * P / w)
    let first_fit = |k: u128, w: u128| -> u128 {
        (k * p)
            .checked_div(w)
            .map_or(0, |share| p.saturating_sub(share))
    };
    let current = state.current as u128;
    if current + cost <= limit {
        // Fits in this window once enough of the previous one has aged out.
        let e = first_fit(limit - cost - current, state.previous as u128);
        return narrow(e.saturating_sub(elapsed as u128).max(1));
    }
    // Only in the next window, where today's count becomes the previous one.
    let e = first_fit(limit - cost, current);
    narrow(to_end + e)
}

/// Time until every counted request has aged out of the estimate.
#[inline(always)]
fn reset_ms(state: &State, elapsed: u64, period: u64) -> u64 {
    let to_end = period - elapsed;
    if state.current > 0 {
        to_end + period
    } else if state.previous > 0 {
        to_end
    } else {
        0
    }
}

/// When the state stops mattering (Unix ms).
#[inline(always)]
pub(crate) fn expires_at(state: &State, q: &CheckQuota) -> u64 {
    state.window_start.saturating_add(2 * q.period_ms)
}

#[cfg(test)]
mod tests;
