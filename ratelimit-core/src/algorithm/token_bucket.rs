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
// Always inlined into the in-memory store's count path (`Packed::count`):
// out of line (a hint alone did not inline it), its state and decision
// went through memory, 59 instructions a request (`layer_calls`).
#[inline(always)]
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
mod tests;
