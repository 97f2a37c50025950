//! The five algorithms, one file each, as pure functions of
//! (state, now in ms, parameters) returning a [`Decision`] and the new state.
//!
//! Integer arithmetic decides everything: nothing admits on a rounding error.
//! The Valkey scripts compute the same functions, and a differential test
//! proves it. The per-subject states are private to this crate: a backend
//! keeps them (the in-memory [`MemoryBackend`](crate::store::MemoryBackend))
//! or computes the same functions elsewhere (the Valkey scripts). What is
//! public is what a caller or another backend needs: the [`Algorithm`]
//! names and facts, the [`CheckQuota`] and the [`Decision`].
//!
//! # Examples
//!
//! ```
//! use ratelimit_core::algorithm::{Algorithm, CheckQuota};
//!
//! let quota = CheckQuota::new(100, 60_000).allow_burst(20);
//! assert_eq!(quota.limit, 100);
//! assert_eq!(Algorithm::TokenBucket.as_str(), "token_bucket");
//! ```

// The sketch's constants and functions, shared with the Valkey scripts.
#[doc(hidden)]
pub mod distinct;
pub(crate) mod fixed_window;
pub(crate) mod leaky_bucket;
pub(crate) mod penalty;
pub(crate) mod sliding_window;
pub(crate) mod token_bucket;

mod kind;
mod mode;
#[cfg(test)]
mod props;
#[cfg(test)]
mod props_charge;
mod serde_impl;
mod state;
pub(crate) use kind::MAX_DISTINCT_LIMIT;
pub use kind::{Algorithm, MAX_LIMIT};
pub use mode::CheckMode;
pub(crate) use state::{probe_answer, Packed, SubjectState};

/// What one algorithm says about one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Decision {
    /// Whether the request is admitted.
    pub allowed: bool,
    /// When refused: the earliest time, in ms, at which a retry would be
    /// admitted if nothing else happened. Zero when allowed.
    pub retry_after_ms: u64,
    /// How many more requests (of cost 1) would be admitted right now.
    pub remaining: u64,
    /// Time in ms until the subject's quota is whole again.
    pub reset_ms: u64,
    /// When a penalty blocks the subject: the absolute time (Unix ms) it ends.
    pub blocked_until_ms: Option<u64>,
}

impl Decision {
    /// An admitted request.
    pub const fn allow(remaining: u64, reset_ms: u64) -> Self {
        Self {
            allowed: true,
            retry_after_ms: 0,
            remaining,
            reset_ms,
            blocked_until_ms: None,
        }
    }

    /// A refused request.
    pub const fn deny(retry_after_ms: u64, remaining: u64, reset_ms: u64) -> Self {
        Self {
            allowed: false,
            retry_after_ms,
            remaining,
            reset_ms,
            blocked_until_ms: None,
        }
    }
}

/// The numbers one check runs an algorithm on: the rule's and this
/// request's cost.
///
/// `limit` requests per `period_ms`; `burst` for the buckets (the most saved
/// up); `cost` is what this request takes (1 unless the rule or the
/// application says otherwise). Built by the limiter from a rule (see
/// [`Rule::quota`](crate::rules::Rule::quota)); the quota an application
/// gives a keyed limit is [`keyed::Quota`](crate::keyed::Quota).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CheckQuota {
    /// Requests per period (for `distinct`: different values per period).
    pub limit: u64,
    /// The period in milliseconds.
    pub period_ms: u64,
    /// The bucket size of `token_bucket` / `leaky_bucket`.
    pub burst: u64,
    /// What this request costs.
    pub cost: u64,
}

impl CheckQuota {
    /// `limit` per `period_ms`, burst equal to `limit`, cost 1.
    pub const fn new(limit: u64, period_ms: u64) -> Self {
        Self {
            limit,
            period_ms,
            burst: limit,
            cost: 1,
        }
    }

    /// `limit` per second.
    pub const fn per_second(limit: u64) -> Self {
        Self::new(limit, 1000)
    }

    /// `limit` per minute.
    pub const fn per_minute(limit: u64) -> Self {
        Self::new(limit, 60_000)
    }

    /// Sets the burst.
    #[must_use]
    pub const fn allow_burst(mut self, burst: u64) -> Self {
        self.burst = burst;
        self
    }

    /// Sets what the request costs.
    #[must_use]
    pub const fn with_cost(mut self, cost: u64) -> Self {
        self.cost = cost;
        self
    }
}

/// The most a charge leaves in a bucket, in units of `1 / period` of a
/// token (token bucket) or ticks of `1 / limit` ms (leaky bucket), the
/// same measure: 2^51, a debt no refill pays off in practice (2^51 units
/// are 3.7 x 10^10 tokens of a one-minute period). Kept so that the Valkey
/// scripts compute every charged bucket exactly (Lua numbers are doubles).
pub(crate) const MAX_CHARGED_UNITS: u128 = 1 << 51;

/// `ceil(a / b)` for `b > 0`.
#[inline]
pub(crate) const fn ceil_div(a: u128, b: u128) -> u128 {
    if b == 0 {
        return 0;
    }
    // Most operands fit in 64 bits: one hardware division instead of the
    // 128-bit routine (the same result).
    if a <= u64::MAX as u128 && b <= u64::MAX as u128 {
        return (a as u64).div_ceil(b as u64) as u128;
    }
    a / b + !a.is_multiple_of(b) as u128
}

/// `(a / b, a % b)` for `b > 0`: one hardware division when both fit in
/// 64 bits (as most do), else the 128-bit routine (the same result).
#[inline]
pub(crate) const fn div_rem(a: u128, b: u128) -> (u128, u128) {
    if a <= u64::MAX as u128 && b <= u64::MAX as u128 {
        let (a, b) = (a as u64, b as u64);
        return ((a / b) as u128, (a % b) as u128);
    }
    (a / b, a % b)
}

/// Saturating narrowing from u128.
pub(crate) fn narrow(v: u128) -> u64 {
    u64::try_from(v).unwrap_or(u64::MAX)
}
