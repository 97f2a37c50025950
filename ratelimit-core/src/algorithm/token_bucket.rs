//! Token bucket: holds up to `burst` tokens and starts full; refills at
//! `limit` tokens per `period`, up to `burst`; each request takes `cost`
//! tokens.
//!
//! Tokens are kept exactly in units of `1 / period` of a token, so a refill
//! of `limit / period` tokens per millisecond is `limit` units per ms and no
//! fraction is ever rounded. Retry-After is the time to the next token.
//!
//! What a bucket lacks (the burst less its tokens) drains as a leaky
//! bucket's level does, so the arithmetic is the leaky bucket's, run on
//! that; what is stored is the tokens, so that a publish which lowers the
//! `burst` caps them at the new burst and one which raises it keeps them
//! (the specification's flowchart: "add tokens ... up to burst").

use super::{leaky_bucket, narrow, CheckQuota, Decision};

/// The stored state of one subject: its tokens, when they were counted,
/// and when the bucket is full again at the rate and burst of then.
///
/// The default state (no tokens, counted at 0, ended) is a full bucket:
/// an ended state holds a full bucket, whatever the quota is now (as a
/// Valkey key expires). After a publish that changes the limit, the tokens
/// refill at the new rate from their count on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct State {
    /// Tokens, in units of `1 / period_ms` of a token; below zero after a
    /// charge past the bucket (a debt).
    pub(crate) tokens: i64,
    /// When `tokens` was counted (Unix ms).
    pub(crate) updated_ms: u64,
    /// When the state ends (Unix ms): the bucket full again at the limit
    /// and burst of that count.
    pub(crate) full_ms: u64,
}

/// The bucket's size in units.
#[inline(always)]
fn capacity(q: &CheckQuota) -> i128 {
    q.burst as i128 * q.period_ms.max(1) as i128
}

impl State {
    /// What the bucket lacks, as a leaky bucket's level: the burst less
    /// the tokens, none when they pass the burst (capped at it).
    #[inline(always)]
    fn lacking(self, q: &CheckQuota) -> leaky_bucket::State {
        leaky_bucket::State {
            level: narrow((capacity(q) - self.tokens as i128).max(0) as u128),
            updated_ms: self.updated_ms,
            empty_ms: self.full_ms,
        }
    }

    #[inline(always)]
    fn from_lacking(s: leaky_bucket::State, q: &CheckQuota) -> Self {
        let tokens = capacity(q) - s.level as i128;
        Self {
            tokens: tokens.clamp(i64::MIN as i128, i64::MAX as i128) as i64,
            updated_ms: s.updated_ms,
            full_ms: s.empty_ms,
        }
    }

    #[inline(always)]
    fn with_lacking(
        &mut self,
        q: &CheckQuota,
        f: impl FnOnce(&mut leaky_bucket::State) -> Decision,
    ) -> Decision {
        let mut s = self.lacking(q);
        let before = s;
        let d = f(&mut s);
        if s != before {
            *self = Self::from_lacking(s, q);
        }
        d
    }
}

/// Checks one request at `now` (Unix ms) and updates `state` when it is
/// admitted: the tokens refilled since they were counted, up to `burst`,
/// cover `cost`. A refusal leaves them as they were (only the end of a
/// live state moves, to where the current quota puts it; see
/// [`leaky_bucket::check`]).
// Inlinable into the in-memory store's count path (`Packed::count`).
#[inline]
pub(crate) fn check(state: &mut State, now: u64, q: &CheckQuota) -> Decision {
    state.with_lacking(q, |s| leaky_bucket::check(s, now, q))
}

/// Charges `q.cost` at `now` whether or not it fits: the tokens may fall
/// below zero (a debt, refilled at the usual rate). Admitted while the
/// bucket is not overdrawn; else Retry-After is when a request of cost 1
/// fits again. The debt saturates as the leaky bucket's level does.
pub(crate) fn charge(state: &mut State, now: u64, q: &CheckQuota) -> Decision {
    state.with_lacking(q, |s| leaky_bucket::charge(s, now, q))
}

/// When the bucket is full again (Unix ms), so the state can be dropped:
/// at the quota of its last count (see [`State`]).
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
        assert_eq!(s.tokens, -3 * 60_000);
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

    /// Issue 39, finding 8: a burst lowered caps the tokens at the new
    /// burst (the specification's flowchart); raised, the tokens are kept
    /// and refill up to it.
    #[test]
    fn a_burst_lowered_caps_the_tokens_and_one_raised_keeps_them() {
        let q = CheckQuota::per_minute(60).allow_burst(10);
        let mut s = State::default();
        for _ in 0..2 {
            assert!(check(&mut s, T0, &q).allowed);
        }
        // 8 tokens left; the burst lowered to 5 holds 5.
        let lower = q.allow_burst(5);
        for i in 0..5 {
            assert!(check(&mut s, T0, &lower).allowed, "request {i}");
        }
        let d = check(&mut s, T0, &lower);
        assert_eq!((d.allowed, d.retry_after_ms), (false, 1_000));
        // Raised to 10 with none left: 2 s later 2 tokens, not 7.
        let higher = q.allow_burst(10);
        for i in 0..2 {
            assert!(check(&mut s, T0 + 2_000, &higher).allowed, "request {i}");
        }
        assert!(!check(&mut s, T0 + 2_000, &higher).allowed);
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
