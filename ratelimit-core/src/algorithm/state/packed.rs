//! A [`SubjectState`] packed into one 64-bit word, beside the time at which
//! the state goes idle (its `expires_at`, which the in-memory store keeps
//! anyway): the store's slot is then 32 bytes instead of 64.
//!
//! The word is exact or absent: [`Packed::pack`] gives a word only when
//! [`Packed::unpack`] of it, with the same idle time, gives back the very
//! same state; every other state (a distinct sketch, counts or spans past
//! the fields below, a time that does not fit) is kept whole elsewhere and
//! its word is [`Packed::WIDE`]. Times are stored relative to the idle
//! time, which is what makes them short:
//!
//! | kind | fields (after the 3-bit kind) | relative to the idle time |
//! | --- | --- | --- |
//! | fresh | algorithm (3 bits) | |
//! | blocked | algorithm (3 bits); the algorithm's state is fresh | the penalty's end is the idle time |
//! | fixed window | span (29 bits, ms), count (32 bits) | window start = idle - span |
//! | sliding window | unit (1 bit: ms or s), span (20 bits), current (20 bits), previous (20 bits) | window start = idle - span |
//! | token bucket | span (28 bits, ms), spent (33 bits) | last update = idle - span; full again = idle |
//! | leaky bucket | span (28 bits, ms), level (33 bits) | last update = idle - span; empty again = idle |

use std::num::NonZeroU64;

use super::{Algorithm, Inner, SubjectState};
use crate::algorithm::{fixed_window, leaky_bucket, sliding_window, token_bucket};

const KIND_BITS: u32 = 3;
const KIND_MASK: u64 = (1 << KIND_BITS) - 1;
const WIDE: u64 = 1;
const FRESH: u64 = 2;
const BLOCKED: u64 = 3;
const FIXED: u64 = 4;
const SLIDING: u64 = 5;
const TOKEN: u64 = 6;
const LEAKY: u64 = 7;

/// A state packed into a word (never 0: the kind is in the low 3 bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Packed(NonZeroU64);

#[inline]
fn word(w: u64) -> Packed {
    Packed(NonZeroU64::new(w).unwrap_or(NonZeroU64::MIN))
}

/// `v` if it fits in `bits` bits.
#[inline]
fn fits(v: u64, bits: u32) -> Option<u64> {
    (v >> bits == 0).then_some(v)
}

#[inline]
fn field(w: u64, shift: u32, bits: u32) -> u64 {
    (w >> shift) & ((1 << bits) - 1)
}

#[inline]
const fn algorithm_code(a: Algorithm) -> u64 {
    match a {
        Algorithm::FixedWindow => 0,
        Algorithm::SlidingWindow => 1,
        Algorithm::TokenBucket => 2,
        Algorithm::LeakyBucket => 3,
        Algorithm::Distinct => 4,
    }
}

#[inline]
const fn algorithm_of(code: u64) -> Algorithm {
    match code {
        0 => Algorithm::FixedWindow,
        1 => Algorithm::SlidingWindow,
        2 => Algorithm::TokenBucket,
        3 => Algorithm::LeakyBucket,
        _ => Algorithm::Distinct,
    }
}

/// Whether `inner` is what `Inner::new` makes (never for distinct, whose
/// fresh state is an allocation).
#[inline]
fn is_fresh(inner: &Inner) -> bool {
    match inner {
        Inner::Fixed(s) => *s == Default::default(),
        Inner::Sliding(s) => *s == Default::default(),
        Inner::Token(s) => *s == Default::default(),
        Inner::Leaky(s) => *s == Default::default(),
        Inner::Distinct(_) => false,
    }
}

impl Packed {
    /// The word of a state kept whole elsewhere.
    pub(crate) const WIDE: Packed = Packed(NonZeroU64::MIN);

    /// The word of `SubjectState::new(algorithm)`.
    #[inline]
    pub(crate) fn fresh(algorithm: Algorithm) -> Self {
        word(FRESH | algorithm_code(algorithm) << KIND_BITS)
    }

    /// Whether the state is kept whole elsewhere.
    #[inline]
    pub(crate) fn is_wide(self) -> bool {
        self.0.get() & KIND_MASK == WIDE
    }

    /// `s` as a word, given the idle time stored beside it; `None` when it
    /// does not fit (kept whole instead).
    #[inline(always)]
    pub(crate) fn pack(s: &SubjectState, idle: u64) -> Option<Self> {
        let w = Self::pack_inner(s, idle).or_else(|| Self::pack_rare(s, idle))?;
        debug_assert_eq!(w.unpack(idle).as_ref(), Some(s));
        Some(w)
    }

    #[inline(always)]
    fn pack_inner(s: &SubjectState, idle: u64) -> Option<Self> {
        if s.blocked_until != 0 {
            return None;
        }
        let w = match &s.inner {
            Inner::Fixed(f) => f.pack(idle),
            Inner::Sliding(f) => f.pack(idle),
            Inner::Token(f) => f.pack(idle),
            Inner::Leaky(f) => f.pack(idle),
            Inner::Distinct(_) => None,
        };
        w.map(word)
    }

    /// Fresh and blocked states (the algorithm's state is fresh).
    #[inline]
    fn pack_rare(s: &SubjectState, idle: u64) -> Option<Self> {
        if !is_fresh(&s.inner) {
            return None;
        }
        let code = algorithm_code(s.inner.algorithm()) << KIND_BITS;
        match s.blocked_until {
            0 => Some(word(FRESH | code)),
            b if b == idle => Some(word(BLOCKED | code)),
            _ => None,
        }
    }

    /// The state, given the idle time stored beside the word; `None` for
    /// [`Packed::WIDE`].
    #[inline(always)]
    pub(crate) fn unpack(self, idle: u64) -> Option<SubjectState> {
        let w = self.0.get();
        let (blocked_until, inner) = match w & KIND_MASK {
            FRESH => (0, Inner::new(algorithm_of(field(w, 3, 3)))),
            BLOCKED => (idle, Inner::new(algorithm_of(field(w, 3, 3)))),
            FIXED => (0, Inner::Fixed(Layout::unpack(w, idle))),
            SLIDING => (0, Inner::Sliding(Layout::unpack(w, idle))),
            TOKEN => (0, Inner::Token(Layout::unpack(w, idle))),
            LEAKY => (0, Inner::Leaky(Layout::unpack(w, idle))),
            _ => return None,
        };
        Some(SubjectState {
            blocked_until,
            inner,
        })
    }
}

/// How one algorithm's state lies in a word (the table above): the one
/// definition that both [`Packed::pack`] and [`Packed::unpack`] and the
/// in-place count (`packed_count.rs`) use.
trait Layout: Sized {
    /// The word's kind (its low 3 bits).
    const KIND: u64;
    /// The word of `self` (kind included), given the idle time stored
    /// beside it; `None` when it does not fit.
    fn pack(&self, idle: u64) -> Option<u64>;
    /// The state of a word of this kind, given the idle time beside it.
    fn unpack(w: u64, idle: u64) -> Self;
}

impl Layout for fixed_window::State {
    const KIND: u64 = FIXED;

    #[inline(always)]
    fn pack(&self, idle: u64) -> Option<u64> {
        let span = fits(idle.checked_sub(self.window_start)?, 29)?;
        Some(FIXED | span << 3 | fits(self.count, 32)? << 32)
    }

    #[inline(always)]
    fn unpack(w: u64, idle: u64) -> Self {
        Self {
            window_start: idle.wrapping_sub(field(w, 3, 29)),
            count: w >> 32,
        }
    }
}

impl Layout for sliding_window::State {
    const KIND: u64 = SLIDING;

    #[inline(always)]
    fn pack(&self, idle: u64) -> Option<u64> {
        let span = idle.checked_sub(self.window_start)?;
        let (unit, span) = match fits(span / 1000, 20) {
            Some(secs) if span % 1000 == 0 => (1, secs),
            _ => (0, fits(span, 20)?),
        };
        Some(
            SLIDING
                | unit << 3
                | span << 4
                | fits(self.current, 20)? << 24
                | fits(self.previous, 20)? << 44,
        )
    }

    #[inline(always)]
    fn unpack(w: u64, idle: u64) -> Self {
        let unit = if w & (1 << 3) != 0 { 1000 } else { 1 };
        Self {
            window_start: idle.wrapping_sub(field(w, 4, 20) * unit),
            current: field(w, 24, 20),
            previous: w >> 44,
        }
    }
}

impl Layout for token_bucket::State {
    const KIND: u64 = TOKEN;

    #[inline(always)]
    fn pack(&self, idle: u64) -> Option<u64> {
        if self.full_ms != idle {
            return None;
        }
        let span = fits(idle.checked_sub(self.updated_ms)?, 28)?;
        Some(TOKEN | span << 3 | fits(self.spent, 33)? << 31)
    }

    #[inline(always)]
    fn unpack(w: u64, idle: u64) -> Self {
        Self {
            spent: w >> 31,
            updated_ms: idle.wrapping_sub(field(w, 3, 28)),
            full_ms: idle,
        }
    }
}

impl Layout for leaky_bucket::State {
    const KIND: u64 = LEAKY;

    #[inline(always)]
    fn pack(&self, idle: u64) -> Option<u64> {
        if self.empty_ms != idle {
            return None;
        }
        let span = fits(idle.checked_sub(self.updated_ms)?, 28)?;
        Some(LEAKY | span << 3 | fits(self.level, 33)? << 31)
    }

    #[inline(always)]
    fn unpack(w: u64, idle: u64) -> Self {
        Self {
            level: w >> 31,
            updated_ms: idle.wrapping_sub(field(w, 3, 28)),
            empty_ms: idle,
        }
    }
}

mod count;

#[cfg(test)]
mod tests;
