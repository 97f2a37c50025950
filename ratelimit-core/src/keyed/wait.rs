//! Waiting for admission: sleep until the earliest admission and retry,
//! within a time budget, with optional jitter.
//!
//! The core has no runtime, so the sleeping is the caller's: a [`Sleep`] is
//! any `Fn(Duration) -> impl Future` (`tokio::time::sleep`,
//! `async_io::Timer::after` wrapped in a closure, ...). This is a seam
//! rather than an optional `tokio` feature: `ratelimit-core` stays free of
//! any runtime dependency and feature combination, the same code runs on any
//! executor, and tests hand it tokio's paused clock directly.

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::{Key, KeyedDecision, KeyedError, KeyedLimit};

/// Sleeps for a while: the runtime's timer, handed to the waiting calls.
///
/// Implemented for every `Fn(Duration) -> F` where `F` is a `Send` future,
/// so `tokio::time::sleep` is a `Sleep` as it stands.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ratelimit_core::keyed::Sleep;
///
/// fn takes(_: impl Sleep) {}
/// takes(tokio::time::sleep);
/// // Another runtime's timer, wrapped in a closure:
/// takes(|d: Duration| async move { std::thread::sleep(d) });
/// ```
pub trait Sleep {
    /// A future that completes after `duration`.
    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send;
}

impl<F, Fut> Sleep for F
where
    F: Fn(Duration) -> Fut,
    Fut: Future<Output = ()> + Send,
{
    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send {
        self(duration)
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A random number in `0..=max`, from std's randomly keyed hasher (a fresh
/// key per process, a counter per draw): spreads waiters, nothing more.
fn random_up_to(max: u64) -> u64 {
    static DRAWS: AtomicU64 = AtomicU64::new(0);
    if max == 0 {
        return 0;
    }
    let mut h = RandomState::new().build_hasher();
    h.write_u64(DRAWS.fetch_add(1, Ordering::Relaxed));
    h.finish() % (max.saturating_add(1)).max(1)
}

impl KeyedLimit {
    /// Adds a random extra wait, from 0 to `max`, to every sleep of the
    /// waiting calls, so that a fleet of waiters refused together does not
    /// wake and retry together. The extra never carries a sleep past the
    /// caller's `max_wait`, and a waiter never wakes before its admission
    /// time. Whole milliseconds; none by default.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::num::NonZeroU32;
    /// use std::time::Duration;
    /// use ratelimit_core::keyed::Quota;
    /// use ratelimit_core::rules::RuleSet;
    /// use ratelimit_core::Limiter;
    ///
    /// let limiter = Limiter::new(RuleSet::default());
    /// let api = limiter
    ///     .keyed_quota("partner-api", Quota::per_second(NonZeroU32::new(10).unwrap()))
    ///     .with_jitter(Duration::from_millis(50));
    /// ```
    #[must_use]
    pub fn with_jitter(mut self, max: Duration) -> Self {
        self.jitter_ms = ms(max);
        self
    }

    /// Waits until a call for `key` is admitted, at the default cost. See
    /// [`KeyedLimit::until_ready_n`].
    ///
    /// # Errors
    ///
    /// As [`KeyedLimit::until_ready_n`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::num::NonZeroU32;
    /// use std::time::Duration;
    /// use ratelimit_core::keyed::Quota;
    /// use ratelimit_core::rules::RuleSet;
    /// use ratelimit_core::Limiter;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let limiter = Limiter::new(RuleSet::default());
    /// let api = limiter.keyed_quota("partner-api", Quota::per_second(NonZeroU32::new(10).unwrap()));
    /// let d = api.until_ready("host-a", Duration::from_secs(5), tokio::time::sleep).await?;
    /// assert!(d.is_allowed());
    /// // ... call the partner API ...
    /// # Ok::<(), ratelimit_core::keyed::KeyedError>(())
    /// # }).unwrap();
    /// ```
    pub async fn until_ready<K, S>(
        &self,
        key: &K,
        max_wait: Duration,
        sleep: S,
    ) -> Result<KeyedDecision, KeyedError>
    where
        K: Key + ?Sized,
        S: Sleep,
    {
        self.wait(key, None, max_wait, sleep).await
    }

    /// Waits until a call for `key` costing `cost` is admitted: checks,
    /// and while refused sleeps until the earliest admission (plus the
    /// jitter, see [`KeyedLimit::with_jitter`]) and checks again. Each check
    /// is one backend call; a refused check counts nothing.
    ///
    /// Time is read from the limiter's clock; the time slept counts too, so
    /// the budget holds even if that clock stands still.
    ///
    /// # Errors
    ///
    /// [`KeyedError::WaitTooLong`] as soon as the earliest admission is
    /// further than what is left of `max_wait`: without sleeping for it.
    /// [`KeyedError::InsufficientCapacity`] at once when `cost` can never
    /// fit. The errors of [`KeyedLimit::check_n`] otherwise.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::num::NonZeroU32;
    /// use std::time::Duration;
    /// use ratelimit_core::keyed::{KeyedError, Quota};
    /// use ratelimit_core::rules::RuleSet;
    /// use ratelimit_core::Limiter;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let limiter = Limiter::new(RuleSet::default());
    /// let rows = limiter.keyed_quota("db-writes",
    ///     Quota::per_second(NonZeroU32::new(1000).unwrap()));
    /// let batch_len = 200;
    /// rows.until_ready_n("orders", batch_len, Duration::from_secs(1), tokio::time::sleep).await?;
    /// // A batch larger than the bucket would wait forever: refused at once.
    /// let e = rows.until_ready_n("orders", 5000, Duration::from_secs(1), tokio::time::sleep).await;
    /// assert!(matches!(e, Err(KeyedError::InsufficientCapacity { .. })));
    /// # Ok::<(), KeyedError>(())
    /// # }).unwrap();
    /// ```
    pub async fn until_ready_n<K, S>(
        &self,
        key: &K,
        cost: u64,
        max_wait: Duration,
        sleep: S,
    ) -> Result<KeyedDecision, KeyedError>
    where
        K: Key + ?Sized,
        S: Sleep,
    {
        self.wait(key, Some(cost), max_wait, sleep).await
    }

    async fn wait<K, S>(
        &self,
        key: &K,
        cost: Option<u64>,
        max_wait: Duration,
        sleep: S,
    ) -> Result<KeyedDecision, KeyedError>
    where
        K: Key + ?Sized,
        S: Sleep,
    {
        let budget = ms(max_wait);
        let start = self.limiter.now_ms();
        let mut slept = 0u64;
        loop {
            let d = self.check_cost(key, cost).await?;
            if d.is_allowed() {
                return Ok(d);
            }
            let waited = self.limiter.now_ms().saturating_sub(start).max(slept);
            let left = budget.saturating_sub(waited);
            let wait = d.retry_after_ms().max(1);
            if wait > left {
                return Err(KeyedError::WaitTooLong {
                    wait: Duration::from_millis(wait),
                    max_wait,
                });
            }
            let nap = wait + random_up_to(self.jitter_ms.min(left - wait));
            sleep.sleep(Duration::from_millis(nap)).await;
            slept = slept.saturating_add(nap);
        }
    }
}

#[cfg(test)]
mod tests;
