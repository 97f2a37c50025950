//! The store seam's pure half: one subject's [`State`], and [`State::step`], the
//! function every in-process store runs to answer a [`Check`] on it (the
//! five algorithms, their three modes and the penalty).
//!
//! A store keeps states by key ([`Check::state_key`]) and hands them to
//! [`State::step`] under its lock; it never looks inside one. See
//! [`StateStore`](super::StateStore) for the other half.

use crate::algorithm::{Algorithm, CheckMode, Decision, SubjectState};
use crate::backend::Check;

mod bytes;
pub use bytes::StateDecodeError;

/// One subject's state under one rule, as a store keeps it: the
/// algorithm's numbers (a window's count, a bucket's level, a distinct
/// sketch), the end of a penalty, and when the whole stops mattering.
///
/// Made by [`State::step`] only; a store keeps the one it returns, as it is, and
/// hands it back on the subject's next check. A state past its
/// [`expires_at_ms`](State::expires_at_ms) answers as no state at all:
/// the store may drop it then (a TTL, or an eviction that loses nothing).
///
/// # Examples
///
/// ```
/// use ratelimit_core::backend::{Check, State};
/// use ratelimit_core::rules::RuleBuilder;
/// use ratelimit_core::HashKey;
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// let rule = RuleBuilder::new("login")
///     .fixed_window(5, Duration::from_secs(60))
///     .key(["ip"])
///     .penalty(Duration::from_secs(300))
///     .build()
///     .unwrap();
/// let (ns, quota, penalty) = (Check::namespace_of(&rule).into(), rule.quota(1), rule.penalty_ms);
/// let subject = HashKey::DEFAULT.digest(b"203.0.113.7");
/// let check = Check::new(Arc::new(rule), ns, subject, quota, penalty, None);
///
/// let now = 1_767_225_600_000;
/// let (d, state) = State::step(&check, now, None);
/// let state = state.expect("a count keeps a state");
/// assert_eq!((d.allowed, d.remaining), (true, 4));
/// assert_eq!(state.blocked_until_ms(), None);
/// assert_eq!(state.expires_at_ms(), now + 60_000);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    subject: SubjectState,
    expires_at_ms: u64,
}

impl State {
    /// A state as a store of packed words keeps it: `subject` and its idle
    /// time.
    pub(crate) fn from_parts(subject: SubjectState, expires_at_ms: u64) -> Self {
        Self {
            subject,
            expires_at_ms,
        }
    }

    /// The algorithm's state and its idle time.
    pub(crate) fn into_parts(self) -> (SubjectState, u64) {
        (self.subject, self.expires_at_ms)
    }

    /// The algorithm whose state this is (a check under another algorithm
    /// starts fresh).
    pub fn algorithm(&self) -> Algorithm {
        self.subject.algorithm()
    }

    /// When a penalty blocks the subject: the time (Unix ms) it ends.
    pub fn blocked_until_ms(&self) -> Option<u64> {
        Some(self.subject.blocked_until).filter(|&b| b != 0)
    }

    /// When the state stops mattering (Unix ms): from then on it answers
    /// as no state, and the store may drop it.
    pub fn expires_at_ms(&self) -> u64 {
        self.expires_at_ms
    }
}

impl State {
    /// Answers `check` at `now_ms` on the subject's `state` (`None`: never
    /// seen, or dropped): the [`Decision`] and the state to keep, `None` when
    /// nothing changed (a [`CheckMode::Probe`]).
    ///
    /// The same code the in-memory backend runs: the rule's
    /// [`algorithm`](Check::algorithm) on its [`quota`](Check::quota), in the
    /// check's [`mode`](Check::mode), under its
    /// [`penalty_ms`](Check::penalty_ms) (over the limit, the subject is
    /// blocked for the penalty, and counting starts fresh after it). A state
    /// of another algorithm starts fresh. A `distinct` check counts its
    /// [`bit`](Check::bit) (without one it is admitted, nothing counted); it
    /// has no probe or charge ([`Algorithm::answers`]): a backend refuses those
    /// before, as [`StoreBackend`](super::StoreBackend) does.
    ///
    /// See [`State`] for an example.
    pub fn step(check: &Check, now_ms: u64, state: Option<&State>) -> (Decision, Option<State>) {
        let (algorithm, q) = (check.algorithm, &check.quota);
        if check.mode == CheckMode::Probe {
            let d = match state {
                Some(s) => s.subject.probe(algorithm, now_ms, q),
                None => SubjectState::new(algorithm).probe(algorithm, now_ms, q),
            };
            return (d, None);
        }
        let mut s = match state {
            Some(s) => s.subject.clone(),
            None => SubjectState::new(algorithm),
        };
        let d = match check.mode {
            CheckMode::Charge => s.charge(algorithm, now_ms, q, check.penalty_ms),
            _ => s.check(algorithm, now_ms, q, check.penalty_ms, check.bit),
        };
        let expires_at_ms = s.expires_at(q);
        (d, Some(State::from_parts(s, expires_at_ms)))
    }
}

/// What `check`'s subject looks like at `now_ms`, counting nothing: the
/// remaining budget, the reset, and the end of a penalty (a blocked
/// subject is refused). What [`Backend::peek`](crate::backend::Backend::peek)
/// answers.
pub(crate) fn peek(check: &Check, now_ms: u64, state: Option<&State>) -> Decision {
    let (algorithm, q) = (check.algorithm, &check.quota);
    match state {
        Some(s) => s.subject.peek(algorithm, now_ms, q),
        None => SubjectState::new(algorithm).peek(algorithm, now_ms, q),
    }
}

#[cfg(test)]
mod tests;
