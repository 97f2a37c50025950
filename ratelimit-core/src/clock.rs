//! Time sources: every decision reads the time from a [`Clock`], never from
//! `Instant::now()` directly, so tests and the conformance runner drive time.
//!
//! Time is whole milliseconds since the Unix epoch, because fixed windows are
//! calendar windows (a `1m` window starts on the minute).
//!
//! Three clocks, one trait, for the whole workspace (the limiter, the nginx
//! layers, the Valkey circuit breaker):
//!
//! - [`SystemClock`]: the host's wall clock;
//! - [`ManualClock`]: moves only when told to, for tests;
//! - `TokioClock` (feature `tokio`): the wall time at its creation advanced
//!   by Tokio's monotonic clock, so it never jumps back and follows Tokio's
//!   paused time in tests.
//!
//! # Examples
//!
//! ```
//! use ratelimit_core::{Clock, ManualClock};
//! use std::time::Duration;
//!
//! let clock = ManualClock::new(1_767_225_600_000);
//! clock.advance(Duration::from_millis(1500));
//! assert_eq!(clock.now_ms(), 1_767_225_601_500);
//! ```

use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

mod wall;

/// A source of the current time in milliseconds since the Unix epoch.
pub trait Clock: Debug + Send + Sync + 'static {
    /// The current time, in whole milliseconds since 1970-01-01T00:00:00Z.
    fn now_ms(&self) -> u64;
}

/// The wall clock of this host, in whole milliseconds: read from the
/// system clock once a second, and from the CPU's time-stamp counter
/// (`quanta`) in between, at a fraction of the cost.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    /// The wall clock, read once a second and carried forward by the CPU's
    /// time-stamp counter in between (see `clock/wall.rs`): a step of the
    /// system clock is followed within a second.
    #[inline]
    fn now_ms(&self) -> u64 {
        wall::now_ms()
    }
}

/// A clock that only moves when told to; clones share the same time.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    now: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock standing at `now_ms` milliseconds since the Unix epoch.
    pub fn new(now_ms: u64) -> Self {
        Self {
            now: Arc::new(AtomicU64::new(now_ms)),
        }
    }

    /// Moves the clock forward by `by` (whole milliseconds).
    pub fn advance(&self, by: Duration) {
        self.now.fetch_add(by.as_millis() as u64, Ordering::SeqCst);
    }

    /// Sets the clock to `now_ms`; it may move backwards.
    pub fn set_ms(&self, now_ms: u64) {
        self.now.store(now_ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }
}

/// The wall time at creation, advanced by Tokio's monotonic clock
/// (`tokio::time::Instant`): it never goes back, and in a test on paused
/// time (`#[tokio::test(start_paused = true)]`) it moves exactly as
/// `tokio::time::sleep` and `tokio::time::advance` move it. Clones share the
/// same start. Feature `tokio`.
///
/// # Examples
///
/// ```
/// use ratelimit_core::{Clock, TokioClock};
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let clock = TokioClock::new();
/// let before = clock.now_ms();
/// tokio::time::sleep(Duration::from_secs(3)).await;
/// assert_eq!(clock.now_ms() - before, 3000);
/// # }
/// ```
#[cfg(feature = "tokio")]
#[derive(Debug, Clone, Copy)]
pub struct TokioClock {
    start_ms: u64,
    start: tokio::time::Instant,
}

#[cfg(feature = "tokio")]
impl TokioClock {
    /// A clock reading the wall time now and following Tokio's time from here.
    pub fn new() -> Self {
        Self::starting_at(SystemClock.now_ms())
    }

    /// A clock standing at `start_ms` (Unix ms) now and following Tokio's
    /// time from here: deterministic calendar windows in paused-time tests.
    pub fn starting_at(start_ms: u64) -> Self {
        Self {
            start_ms,
            start: tokio::time::Instant::now(),
        }
    }
}

#[cfg(feature = "tokio")]
impl Default for TokioClock {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(feature = "tokio")]
impl Clock for TokioClock {
    fn now_ms(&self) -> u64 {
        let elapsed = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.start_ms.saturating_add(elapsed)
    }
}

impl<C: Clock> Clock for Arc<C> {
    fn now_ms(&self) -> u64 {
        (**self).now_ms()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_clones_share_time() {
        let a = ManualClock::new(10);
        let b = a.clone();
        a.advance(Duration::from_secs(2));
        assert_eq!(b.now_ms(), 2010);
        b.set_ms(5);
        assert_eq!(a.now_ms(), 5);
    }

    #[cfg(feature = "tokio")]
    #[tokio::test(start_paused = true)]
    async fn tokio_clock_follows_paused_time_and_clones_share_the_start() {
        let a = TokioClock::new();
        let b = a;
        let before = a.now_ms();
        assert!(before > 1_577_836_800_000);
        tokio::time::advance(Duration::from_millis(2500)).await;
        assert_eq!(a.now_ms() - before, 2500);
        assert_eq!(b.now_ms(), a.now_ms());
        let fixed = TokioClock::starting_at(1_000);
        tokio::time::advance(Duration::from_millis(7)).await;
        assert_eq!(fixed.now_ms(), 1_007);
    }

    #[test]
    fn system_clock_is_after_2020() {
        assert!(SystemClock.now_ms() > 1_577_836_800_000);
    }
}
