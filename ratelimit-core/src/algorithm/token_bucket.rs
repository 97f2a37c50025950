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
mod tests;
