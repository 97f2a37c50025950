//! A [`SubjectState`] as a list of 64-bit numbers and back: the algorithm's
//! fields in a fixed order, for the versioned byte encoding of a stored
//! state (`store/state/bytes.rs`). No arithmetic: the numbers are the
//! state's own fields.
//!
//! | algorithm | numbers after the penalty's end |
//! | --- | --- |
//! | fixed window | window start, count |
//! | sliding window | window start, current, previous |
//! | token bucket | spent, last update, end (full again) |
//! | leaky bucket | level, last update, end (empty again) |
//! | distinct | period start, then the 16 words of the 1024-bit map |

use super::{Algorithm, Inner, SubjectState};
use crate::algorithm::{distinct, fixed_window, leaky_bucket, sliding_window, token_bucket};

impl SubjectState {
    /// How many numbers follow the penalty's end for `algorithm`.
    pub(crate) const fn word_count(algorithm: Algorithm) -> usize {
        match algorithm {
            Algorithm::FixedWindow => 2,
            Algorithm::SlidingWindow | Algorithm::TokenBucket | Algorithm::LeakyBucket => 3,
            Algorithm::Distinct => 17,
        }
    }

    /// Appends the penalty's end, then the algorithm's fields (see the
    /// module docs), to `out`.
    pub(crate) fn to_words(&self, out: &mut Vec<u64>) {
        out.push(self.blocked_until);
        match &self.inner {
            Inner::Fixed(s) => out.extend([s.window_start, s.count]),
            Inner::Sliding(s) => out.extend([s.window_start, s.current, s.previous]),
            Inner::Token(s) => out.extend([s.spent, s.updated_ms, s.full_ms]),
            Inner::Leaky(s) => out.extend([s.level, s.updated_ms, s.empty_ms]),
            Inner::Distinct(s) => {
                out.push(s.period_start);
                out.extend(s.bits);
            }
        }
    }

    /// The state of `algorithm` whose numbers are `words` (the penalty's
    /// end, then [`SubjectState::word_count`] of the algorithm): `None` when the count is
    /// not that.
    pub(crate) fn from_words(algorithm: Algorithm, words: &[u64]) -> Option<Self> {
        let (&blocked_until, w) = words.split_first()?;
        if w.len() != Self::word_count(algorithm) {
            return None;
        }
        let inner = match algorithm {
            Algorithm::FixedWindow => Inner::Fixed(fixed_window::State {
                window_start: w[0],
                count: w[1],
            }),
            Algorithm::SlidingWindow => Inner::Sliding(sliding_window::State {
                window_start: w[0],
                current: w[1],
                previous: w[2],
            }),
            Algorithm::TokenBucket => Inner::Token(token_bucket::State {
                spent: w[0],
                updated_ms: w[1],
                full_ms: w[2],
            }),
            Algorithm::LeakyBucket => Inner::Leaky(leaky_bucket::State {
                level: w[0],
                updated_ms: w[1],
                empty_ms: w[2],
            }),
            Algorithm::Distinct => {
                let mut bits = [0u64; 16];
                bits.copy_from_slice(&w[1..]);
                Inner::Distinct(Box::new(distinct::State {
                    period_start: w[0],
                    bits,
                }))
            }
        };
        Some(Self {
            blocked_until,
            inner,
        })
    }
}
