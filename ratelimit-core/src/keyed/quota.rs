//! A quota written in code: a rate, a burst, an algorithm and what to do
//! when the backend cannot answer.

use std::num::NonZeroU32;
use std::time::Duration;

use crate::algorithm::Algorithm;
use crate::rules::{Action, FailMode, OnMissingKey, Rule};
use crate::Expression;

/// The longest period of a quota: 24 hours, as for rules.
const MAX_PERIOD_MS: u64 = 86_400_000;

/// A rate limit declared in code, read like the rate: `limit` per period,
/// with a burst.
///
/// By default a quota is a token bucket whose burst is its limit (a full
/// period's worth may be spent at once, then it refills evenly), and it
/// fails open (admits) when the backend cannot answer. Every constructor is
/// a `const fn` and takes non-zero numbers, so a quota can be a constant.
///
/// Not to be confused with [`algorithm::CheckQuota`](crate::algorithm::CheckQuota),
/// the plain numbers one algorithm step runs on.
///
/// # Examples
///
/// ```
/// use std::num::NonZeroU32;
/// use std::time::Duration;
/// use ratelimit_core::algorithm::Algorithm;
/// use ratelimit_core::keyed::Quota;
/// use ratelimit_core::rules::FailMode;
///
/// const HUNDRED: NonZeroU32 = NonZeroU32::new(100).unwrap();
/// const TWENTY: NonZeroU32 = NonZeroU32::new(20).unwrap();
///
/// // 100 per minute, at most 20 at once.
/// const API: Quota = Quota::per_minute(HUNDRED).allow_burst(TWENTY);
/// assert_eq!(API.burst(), TWENTY);
/// assert_eq!(API.algorithm(), Algorithm::TokenBucket);
///
/// // 100 per sliding minute; 503-like errors when the backend is down.
/// let strict = Quota::per_minute(HUNDRED).sliding_window().fail_mode(FailMode::Closed);
/// assert_eq!(strict.period(), Duration::from_secs(60));
///
/// // One every 250 ms.
/// let paced = Quota::with_period(NonZeroU32::MIN, Duration::from_millis(250)).unwrap();
/// assert_eq!(paced.limit(), NonZeroU32::MIN);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    limit: NonZeroU32,
    period_ms: u64,
    burst: Option<NonZeroU32>,
    algorithm: Algorithm,
    fail_mode: FailMode,
}

impl Quota {
    const fn new(limit: NonZeroU32, period_ms: u64) -> Self {
        Self {
            limit,
            period_ms,
            burst: None,
            algorithm: Algorithm::TokenBucket,
            fail_mode: FailMode::Open,
        }
    }

    /// `limit` per second.
    pub const fn per_second(limit: NonZeroU32) -> Self {
        Self::new(limit, 1000)
    }

    /// `limit` per minute.
    pub const fn per_minute(limit: NonZeroU32) -> Self {
        Self::new(limit, 60_000)
    }

    /// `limit` per hour.
    pub const fn per_hour(limit: NonZeroU32) -> Self {
        Self::new(limit, 3_600_000)
    }

    /// `limit` per `period`, counted in whole milliseconds; `None` unless
    /// the period is 1 ms to 24 hours.
    pub const fn with_period(limit: NonZeroU32, period: Duration) -> Option<Self> {
        let ms = period.as_millis();
        if ms == 0 || ms > MAX_PERIOD_MS as u128 {
            return None;
        }
        Some(Self::new(limit, ms as u64))
    }

    /// The most that may be spent at once (the bucket's size). It applies
    /// to the buckets; the windows hold `limit` per period.
    ///
    /// With a burst of 1 no span of one period holds more than `limit`
    /// admissions (they are at least `period / limit` apart): what a partner
    /// that counts a rolling window requires. With a burst `b`, a span of
    /// one period may hold up to `b + limit - 1`; the windows up to about
    /// twice the limit (the guide's Rules chapter, "What a period holds").
    #[must_use]
    pub const fn allow_burst(mut self, burst: NonZeroU32) -> Self {
        self.burst = Some(burst);
        self
    }

    /// A token bucket (the default): starts full with `burst`, refills
    /// `limit` per period.
    #[must_use]
    pub const fn token_bucket(self) -> Self {
        self.with_algorithm(Algorithm::TokenBucket)
    }

    /// A leaky bucket (GCRA, governor's algorithm): admits what the token
    /// bucket admits, paced evenly.
    #[must_use]
    pub const fn leaky_bucket(self) -> Self {
        self.with_algorithm(Algorithm::LeakyBucket)
    }

    /// A fixed window: `limit` per calendar period (a minute starts on the
    /// minute).
    #[must_use]
    pub const fn fixed_window(self) -> Self {
        self.with_algorithm(Algorithm::FixedWindow)
    }

    /// A sliding window: `limit` per period ending now, estimated from the
    /// previous window and rounded against the caller.
    #[must_use]
    pub const fn sliding_window(self) -> Self {
        self.with_algorithm(Algorithm::SlidingWindow)
    }

    const fn with_algorithm(mut self, algorithm: Algorithm) -> Self {
        self.algorithm = algorithm;
        self
    }

    /// What to do when the backend cannot answer: `Open` (admit, the
    /// default), `Closed` (an error) or `Local` (count on this instance at
    /// `limit / fleet size`).
    #[must_use]
    pub const fn fail_mode(mut self, mode: FailMode) -> Self {
        self.fail_mode = mode;
        self
    }

    /// The limit per period.
    pub const fn limit(&self) -> NonZeroU32 {
        self.limit
    }

    /// The period.
    pub const fn period(&self) -> Duration {
        Duration::from_millis(self.period_ms)
    }

    /// The most that may be spent at once: the burst for buckets (the limit
    /// unless set), the limit for windows.
    pub const fn burst(&self) -> NonZeroU32 {
        match (self.algorithm, self.burst) {
            (algorithm, Some(b)) if algorithm.takes_burst() => b,
            _ => self.limit,
        }
    }

    /// The algorithm that counts.
    pub const fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// Whether calls that wait for each other (back-to-back
    /// [`until_ready`](super::KeyedLimit::until_ready)) get the full rate.
    ///
    /// Time is kept in whole milliseconds and a wait is rounded up to the
    /// next one. A bucket refilled at `limit` per period keeps the exact
    /// fraction of a token, but not past its size: a call that wakes up to
    /// a millisecond late into a bucket with room for only the token it
    /// waited for loses what refilled in that part of a millisecond. With
    /// a burst of 1 that is every call whose interval (`period / limit`) is
    /// not a whole number of milliseconds: `per_second(1500)` gets 1,000
    /// calls a second, `per_second(16)` one every 63 ms instead of 62.5.
    /// A burst of [`rate_keeping_burst`](Self::rate_keeping_burst) or more
    /// absorbs the rounding. Windows always keep their rate.
    ///
    /// [`Limiter::keyed_quota`](crate::Limiter::keyed_quota) logs a warning
    /// for a quota that does not keep it.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::num::NonZeroU32;
    /// use ratelimit_core::keyed::Quota;
    ///
    /// let fast = Quota::per_second(NonZeroU32::new(1500).unwrap());
    /// assert!(fast.keeps_rate()); // its burst is 1,500
    /// assert!(!fast.allow_burst(NonZeroU32::MIN).keeps_rate());
    /// assert_eq!(fast.rate_keeping_burst().get(), 2);
    /// // A whole number of ms between calls: nothing to round.
    /// assert!(Quota::per_second(NonZeroU32::new(10).unwrap()).allow_burst(NonZeroU32::MIN).keeps_rate());
    /// ```
    pub const fn keeps_rate(&self) -> bool {
        self.burst().get() >= self.rate_keeping_burst().get()
    }

    /// The smallest burst with which waiting calls get the full rate (see
    /// [`keeps_rate`](Self::keeps_rate)): 1 when the interval between calls
    /// is a whole number of milliseconds, else one more than the calls that
    /// fit in a millisecond, rounded up. 1 for windows.
    pub const fn rate_keeping_burst(&self) -> NonZeroU32 {
        if !self.algorithm.takes_burst() {
            return NonZeroU32::MIN;
        }
        // In units of 1 / period of a token: one token is `period` units,
        // a millisecond refills `limit`, and every level is a multiple of
        // g = gcd(limit, period). A call that waits for its token from a
        // level with less than one token of room wakes with its token
        // and less than `limit - g` units more; with `burst - 1` tokens of
        // room above it, none is cut off when (burst - 1) * period >=
        // limit - g.
        let (limit, period) = (self.limit.get() as u64, self.period_ms);
        let mut a = limit;
        let mut b = period;
        while b != 0 {
            let r = a % b;
            a = b;
            b = r;
        }
        let extra = (limit - a).div_ceil(period);
        match NonZeroU32::new(1 + extra as u32) {
            Some(n) => n,
            None => NonZeroU32::MIN,
        }
    }

    /// The rule the backends run for this quota under `name`: the same
    /// numbers, no expression, key or penalty.
    pub(crate) fn rule(&self, name: &str) -> Rule {
        let buckets = self.algorithm.takes_burst();
        Rule {
            id: name.to_owned(),
            expression: Expression::always_true(),
            algorithm: self.algorithm,
            limit: u64::from(self.limit.get()),
            period_ms: self.period_ms,
            burst: buckets.then_some(u64::from(self.burst().get())),
            distinct_of: None,
            count_statuses: Vec::new(),
            key: Vec::new(),
            on_missing_key: OnMissingKey::Skip,
            action: Action::Block,
            penalty_ms: None,
            fail_mode: self.fail_mode,
            expires_at_ms: None,
            ratelimit_headers: false,
            cost: 1,
            charge: crate::rules::Charge::Request,
            allow: None,
            canary_bp: None,
        }
    }

    /// Where the state of quota `name` lives. It starts with `~`, which no
    /// rule id holds, so it never meets a rule's state; like a rule's, it
    /// names the algorithm and the period, so changing them starts fresh.
    pub(crate) fn namespace(&self, name: &str) -> String {
        format!("~keyed:{name}:{}:{}", self.algorithm.tag(), self.period_ms)
    }
}

#[cfg(test)]
mod tests;
