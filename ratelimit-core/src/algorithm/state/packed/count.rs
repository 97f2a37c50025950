//! Counting (or charging) one request on a packed word in place: the
//! in-memory store's count path for the common case, with the algorithm's
//! state in registers rather than unpacked into a
//! [`SubjectState`](super::SubjectState) and packed again.
//!
//! It decides exactly as `SubjectState::check` (or `charge`) of the
//! unpacked state would, and leaves the word that [`Packed::pack`] would leave, or does
//! nothing and says so: the caller then takes the general path from the
//! same word. It covers a fresh state (of any algorithm: a check under
//! another algorithm starts fresh anyway) and a live state of the check's
//! own algorithm (such words carry no penalty), when the result is not a
//! penalty's start and packs again.

use super::{word, Layout, Packed, FRESH, KIND_MASK};
use crate::algorithm::CheckMode;
use crate::algorithm::{
    fixed_window, leaky_bucket, sliding_window, token_bucket, Algorithm, CheckQuota, Decision,
};

/// A counting algorithm's state with its layout in a word.
trait Counts: Layout + Default + PartialEq + std::fmt::Debug {
    fn check(&mut self, now: u64, q: &CheckQuota) -> Decision;
    fn charge(&mut self, now: u64, q: &CheckQuota) -> Decision;
    fn expires_at(&self, q: &CheckQuota) -> u64;
}

macro_rules! counts {
    ($m:ident) => {
        impl Counts for $m::State {
            #[inline(always)]
            fn check(&mut self, now: u64, q: &CheckQuota) -> Decision {
                $m::check(self, now, q)
            }

            #[inline(always)]
            fn charge(&mut self, now: u64, q: &CheckQuota) -> Decision {
                $m::charge(self, now, q)
            }

            #[inline(always)]
            fn expires_at(&self, q: &CheckQuota) -> u64 {
                $m::expires_at(self, q)
            }
        }
    };
}

counts!(fixed_window);
counts!(sliding_window);
counts!(token_bucket);
counts!(leaky_bucket);

impl Packed {
    /// Counts one request of `q.cost` at `now` in `mode` on this word and
    /// the idle time stored beside it, as `SubjectState::check`
    /// ([`CheckMode::Count`]) or `SubjectState::charge`
    /// ([`CheckMode::Charge`]) would on the unpacked state, updating both;
    /// `None` (both untouched) for a probe, and when the
    /// general path must decide: the word holds another algorithm's live
    /// state, a penalty or a state kept whole, the check starts a penalty,
    /// or the result does not pack (or would be idle after `idle_max`).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn count(
        &mut self,
        idle: &mut u64,
        idle_max: u64,
        algorithm: Algorithm,
        mode: CheckMode,
        now: u64,
        q: &CheckQuota,
        penalty_ms: Option<u64>,
    ) -> Option<Decision> {
        match algorithm {
            Algorithm::FixedWindow => {
                self.count_as::<fixed_window::State>(idle, idle_max, mode, now, q, penalty_ms)
            }
            Algorithm::SlidingWindow => {
                self.count_as::<sliding_window::State>(idle, idle_max, mode, now, q, penalty_ms)
            }
            Algorithm::TokenBucket => {
                self.count_as::<token_bucket::State>(idle, idle_max, mode, now, q, penalty_ms)
            }
            Algorithm::LeakyBucket => {
                self.count_as::<leaky_bucket::State>(idle, idle_max, mode, now, q, penalty_ms)
            }
            Algorithm::Distinct => None,
        }
    }

    #[inline(always)]
    fn count_as<S: Counts>(
        &mut self,
        idle: &mut u64,
        idle_max: u64,
        mode: CheckMode,
        now: u64,
        q: &CheckQuota,
        penalty_ms: Option<u64>,
    ) -> Option<Decision> {
        let w = self.0.get();
        let kind = w & KIND_MASK;
        let mut s = if kind == S::KIND {
            S::unpack(w, *idle)
        } else if kind == FRESH {
            S::default()
        } else {
            return None;
        };
        let d = match mode {
            CheckMode::Count => s.check(now, q),
            CheckMode::Charge => s.charge(now, q),
            CheckMode::Probe => return None,
        };
        if !d.allowed && penalty_ms.is_some_and(|p| p > 0) {
            return None;
        }
        let new_idle = s.expires_at(q);
        if new_idle > idle_max {
            return None;
        }
        let packed = s.pack(new_idle)?;
        debug_assert_eq!(S::unpack(packed, new_idle), s);
        *self = word(packed);
        *idle = new_idle;
        Some(d)
    }
}

#[cfg(test)]
mod tests;
