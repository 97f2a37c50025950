//! One subject's state under any algorithm, with its penalty.

use super::{distinct, fixed_window, leaky_bucket, penalty, sliding_window, token_bucket};
use super::{Algorithm, CheckQuota, Decision};

/// A probe's answer from `counted`, the decision of a count of its cost
/// on a copy: whether it fits and its Retry-After. When admitted, the
/// remaining budget and the reset are `found`'s, a count of cost 0: the
/// probe counted nothing, so its `RateLimit` header (`r` and `t`) is the
/// state the request found. A refused count already answers that state.
#[inline]
pub(crate) fn probe_answer(counted: Decision, found: impl FnOnce() -> Decision) -> Decision {
    if !counted.allowed {
        return counted;
    }
    let found = found();
    Decision {
        remaining: found.remaining,
        reset_ms: found.reset_ms,
        ..counted
    }
}

mod packed;
mod words;
pub(crate) use packed::Packed;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Inner {
    Fixed(fixed_window::State),
    Sliding(sliding_window::State),
    Token(token_bucket::State),
    Leaky(leaky_bucket::State),
    Distinct(Box<distinct::State>),
}

impl Inner {
    fn new(algorithm: Algorithm) -> Self {
        match algorithm {
            Algorithm::FixedWindow => Inner::Fixed(Default::default()),
            Algorithm::SlidingWindow => Inner::Sliding(Default::default()),
            Algorithm::TokenBucket => Inner::Token(Default::default()),
            Algorithm::LeakyBucket => Inner::Leaky(Default::default()),
            Algorithm::Distinct => Inner::Distinct(Default::default()),
        }
    }

    fn algorithm(&self) -> Algorithm {
        match self {
            Inner::Fixed(_) => Algorithm::FixedWindow,
            Inner::Sliding(_) => Algorithm::SlidingWindow,
            Inner::Token(_) => Algorithm::TokenBucket,
            Inner::Leaky(_) => Algorithm::LeakyBucket,
            Inner::Distinct(_) => Algorithm::Distinct,
        }
    }
}

/// The state of one subject of one rule: the algorithm's state and the end
/// of a penalty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SubjectState {
    /// End of the current penalty (Unix ms), 0 for none.
    pub(crate) blocked_until: u64,
    inner: Inner,
}

impl SubjectState {
    /// A subject never seen before.
    pub(crate) fn new(algorithm: Algorithm) -> Self {
        Self {
            blocked_until: 0,
            inner: Inner::new(algorithm),
        }
    }

    /// The algorithm whose state this is.
    pub(crate) fn algorithm(&self) -> Algorithm {
        self.inner.algorithm()
    }

    /// Checks one request. `bit` is the distinct value's bit (distinct only;
    /// a distinct check without one is admitted and not counted).
    #[inline(always)]
    pub(crate) fn check(
        &mut self,
        algorithm: Algorithm,
        now: u64,
        q: &CheckQuota,
        penalty_ms: Option<u64>,
        bit: Option<u16>,
    ) -> Decision {
        self.under_penalty(algorithm, now, penalty_ms, |inner| match inner {
            Inner::Fixed(s) => fixed_window::check(s, now, q),
            Inner::Sliding(s) => sliding_window::check(s, now, q),
            Inner::Token(s) => token_bucket::check(s, now, q),
            Inner::Leaky(s) => leaky_bucket::check(s, now, q),
            Inner::Distinct(s) => match bit {
                Some(b) => distinct::check(s, now, q, b),
                None => Decision::allow(q.limit, 0),
            },
        })
    }

    /// Runs `f` on the algorithm's state under the penalty (see
    /// `penalty::check`): a state of another algorithm starts fresh, and so
    /// does counting after a block starts.
    #[inline(always)]
    fn under_penalty(
        &mut self,
        algorithm: Algorithm,
        now: u64,
        penalty_ms: Option<u64>,
        f: impl FnOnce(&mut Inner) -> Decision,
    ) -> Decision {
        if self.inner.algorithm() != algorithm {
            *self = Self::new(algorithm);
        }
        let Self {
            blocked_until,
            inner,
        } = self;
        let d = penalty::check(blocked_until, now, penalty_ms, || f(inner));
        if d.blocked_until_ms.is_some() {
            // Counting starts fresh after the block.
            *inner = Inner::new(algorithm);
        }
        d
    }

    /// Decides as [`SubjectState::check`] would for `q.cost`, on a copy: counts
    /// nothing and starts no penalty; a running penalty still refuses. An
    /// admitted probe answers the budget as the request found it (see
    /// [`probe_answer`]).
    pub(crate) fn probe(&self, algorithm: Algorithm, now: u64, q: &CheckQuota) -> Decision {
        let counted = self.clone().check(algorithm, now, q, None, None);
        probe_answer(counted, || {
            self.clone()
                .check(algorithm, now, &q.with_cost(0), None, None)
        })
    }

    /// Charges `q.cost` whether or not it fits (see [`CheckMode::Charge`](crate::backend::CheckMode::Charge)).
    /// A charge over the limit starts the penalty when there is one (and,
    /// as a refused check does, clears the algorithm's state: counting
    /// starts fresh after the block); under a running penalty nothing is
    /// added and the answer is the penalty's. `distinct` is not charged
    /// (answered as admitted, not counted: backends refuse the mode before,
    /// see [`Algorithm::answers`]).
    pub(crate) fn charge(
        &mut self,
        algorithm: Algorithm,
        now: u64,
        q: &CheckQuota,
        penalty_ms: Option<u64>,
    ) -> Decision {
        self.under_penalty(algorithm, now, penalty_ms, |inner| match inner {
            Inner::Fixed(s) => fixed_window::charge(s, now, q),
            Inner::Sliding(s) => sliding_window::charge(s, now, q),
            Inner::Token(s) => token_bucket::charge(s, now, q),
            Inner::Leaky(s) => leaky_bucket::charge(s, now, q),
            Inner::Distinct(_) => Decision::allow(q.limit, 0),
        })
    }

    /// Reads the state at `now` without counting: what a request of cost 0
    /// would see. A subject under a penalty is refused with its end.
    pub(crate) fn peek(&self, algorithm: Algorithm, now: u64, q: &CheckQuota) -> Decision {
        let mut probe = self.clone();
        if let Inner::Distinct(s) = &self.inner {
            if self.blocked_until <= now && self.inner.algorithm() == algorithm {
                return distinct::peek(s, now, q);
            }
        }
        probe.check(algorithm, now, &q.with_cost(0), None, None)
    }

    /// When the state stops mattering (Unix ms): it can then be dropped.
    #[inline(always)]
    pub(crate) fn expires_at(&self, q: &CheckQuota) -> u64 {
        let algo = match &self.inner {
            Inner::Fixed(s) => fixed_window::expires_at(s, q),
            Inner::Sliding(s) => sliding_window::expires_at(s, q),
            Inner::Token(s) => token_bucket::expires_at(s, q),
            Inner::Leaky(s) => leaky_bucket::expires_at(s, q),
            Inner::Distinct(s) => distinct::expires_at(s, q),
        };
        algo.max(self.blocked_until)
    }
}

#[cfg(test)]
mod tests;
