//! [`Algorithm`] and what the rest of the code needs to know about each
//! one: its name, its storage tag, whether it takes a burst, its limit
//! range, whether it counts values or takes a cost and answers probes and charges, whether
//! the over-limit cache and a local fallback store may keep it.
//!
//! Validation, the JSON Schema, the over-limit cache and the backends read
//! these facts; a new algorithm is added here (and in its own file), each
//! `match` below being exhaustive so the compiler lists what it must say.

use super::CheckMode;

/// Most requests per period (every algorithm but `distinct`).
pub const MAX_LIMIT: u64 = 1_000_000_000;
/// Most different values per period of a `distinct` rule.
pub(crate) const MAX_DISTINCT_LIMIT: u64 = 1000;

/// The five algorithms.
///
/// Serialized as its JSON name, such as `"token_bucket"`.
///
/// # Examples
///
/// ```
/// use ratelimit_core::algorithm::{Algorithm, CheckMode};
///
/// for a in Algorithm::ALL {
///     assert_eq!(Algorithm::from_name(a.as_str()), Some(a));
/// }
/// assert!(Algorithm::TokenBucket.takes_burst());
/// assert_eq!(Algorithm::Distinct.max_limit(), 1000);
/// assert!(!Algorithm::Distinct.answers(CheckMode::Probe));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Algorithm {
    /// Count per calendar window.
    FixedWindow,
    /// Weighted previous window plus the current one.
    SlidingWindow,
    /// Bursts to `burst`, refills at `limit` per `period`.
    TokenBucket,
    /// The meter form of the leaky bucket (GCRA).
    LeakyBucket,
    /// Different values per period, estimated.
    Distinct,
}

impl Algorithm {
    /// Every algorithm, in the order of their storage codes.
    pub const ALL: [Algorithm; 5] = [
        Algorithm::FixedWindow,
        Algorithm::SlidingWindow,
        Algorithm::TokenBucket,
        Algorithm::LeakyBucket,
        Algorithm::Distinct,
    ];

    /// The JSON names of [`Algorithm::ALL`], in its order.
    pub const NAMES: [&'static str; 5] = {
        let mut names = [""; 5];
        let mut i = 0;
        while i < names.len() {
            names[i] = Self::ALL[i].as_str();
            i += 1;
        }
        names
    };

    /// The name used in JSON.
    pub const fn as_str(self) -> &'static str {
        match self {
            Algorithm::FixedWindow => "fixed_window",
            Algorithm::SlidingWindow => "sliding_window",
            Algorithm::TokenBucket => "token_bucket",
            Algorithm::LeakyBucket => "leaky_bucket",
            Algorithm::Distinct => "distinct",
        }
    }

    /// The algorithm named `name` in JSON, if any.
    pub fn from_name(name: &str) -> Option<Algorithm> {
        Self::ALL.into_iter().find(|a| a.as_str() == name)
    }

    /// A two-letter tag, used in storage keys.
    pub const fn tag(self) -> &'static str {
        match self {
            Algorithm::FixedWindow => "fw",
            Algorithm::SlidingWindow => "sw",
            Algorithm::TokenBucket => "tb",
            Algorithm::LeakyBucket => "lb",
            Algorithm::Distinct => "dc",
        }
    }

    /// Whether a rule of this algorithm takes (and requires) a `burst`:
    /// the buckets do, the windows and `distinct` refuse one.
    pub const fn takes_burst(self) -> bool {
        match self {
            Algorithm::TokenBucket | Algorithm::LeakyBucket => true,
            Algorithm::FixedWindow | Algorithm::SlidingWindow | Algorithm::Distinct => false,
        }
    }

    /// The largest `limit` (the smallest is 1): requests per period, or
    /// different values per period for `distinct`.
    pub const fn max_limit(self) -> u64 {
        match self {
            Algorithm::Distinct => MAX_DISTINCT_LIMIT,
            Algorithm::FixedWindow
            | Algorithm::SlidingWindow
            | Algorithm::TokenBucket
            | Algorithm::LeakyBucket => MAX_LIMIT,
        }
    }

    /// Whether it counts different values of a request part (and takes
    /// `distinct_of`, which names the part) rather than requests.
    pub const fn counts_values(self) -> bool {
        match self {
            Algorithm::Distinct => true,
            Algorithm::FixedWindow
            | Algorithm::SlidingWindow
            | Algorithm::TokenBucket
            | Algorithm::LeakyBucket => false,
        }
    }

    /// Whether it counts requests by their cost: one that counts values
    /// does not, so a `cost` other than 1, a charge after the response and
    /// `count_statuses` are not for it.
    pub const fn takes_cost(self) -> bool {
        !self.counts_values()
    }

    /// Whether it answers checks in `mode`: every algorithm counts; only
    /// those that take a cost probe and charge (a set of values has no
    /// cost to charge).
    pub const fn answers(self, mode: CheckMode) -> bool {
        matches!(mode, CheckMode::Count) || self.takes_cost()
    }

    /// Whether the over-limit cache may keep a refusal of it and repeat
    /// it without asking the backend: not for `distinct`, whose next
    /// request may carry a value already counted (admitted).
    pub const fn over_limit_cacheable(self) -> bool {
        self.takes_cost()
    }

    /// Whether `fail_mode: local` may count it in the instance's own store:
    /// not `distinct` (one map per subject per instance would outgrow the
    /// local store).
    pub const fn counts_locally(self) -> bool {
        self.takes_cost()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_tags_are_distinct_and_names_read_back() {
        for (i, a) in Algorithm::ALL.into_iter().enumerate() {
            assert_eq!(Algorithm::from_name(a.as_str()), Some(a));
            for b in &Algorithm::ALL[..i] {
                assert_ne!(a.as_str(), b.as_str());
                assert_ne!(a.tag(), b.tag());
            }
        }
        assert_eq!(Algorithm::from_name("gcra"), None);
    }

    #[test]
    fn only_distinct_refuses_probe_and_charge() {
        for mode in [CheckMode::Count, CheckMode::Probe, CheckMode::Charge] {
            assert!(Algorithm::SlidingWindow.answers(mode));
            assert_eq!(Algorithm::Distinct.answers(mode), mode == CheckMode::Count);
        }
    }
}
