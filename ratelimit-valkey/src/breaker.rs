//! A circuit breaker per Valkey node.
//!
//! After `failures` consecutive failed calls (5 by default) the node is not
//! called for `open_for` (1 s by default); then one probe is let through
//! (half-open) while every other call is refused; the probe's success
//! closes the breaker, its failure opens it again. Only transport failures
//! count (time-outs, lost or refused connections): a node that answers,
//! even with an error, is up.
//!
//! Time comes from a [`Monotonic`] clock, so tests drive it.
//!
//! # Examples
//!
//! ```
//! use ratelimit_valkey::breaker::{Breaker, BreakerConfig, ManualMonotonic};
//! use std::time::Duration;
//!
//! let clock = ManualMonotonic::default();
//! let breaker = Breaker::new(BreakerConfig::default(), clock.clone());
//! for _ in 0..5 {
//!     let permit = breaker.try_call().unwrap();
//!     breaker.record(permit, false);
//! }
//! assert!(breaker.try_call().is_none(), "open");
//! clock.advance(Duration::from_secs(1));
//! let probe = breaker.try_call().expect("one probe");
//! assert!(probe.is_probe());
//! assert!(breaker.try_call().is_none(), "only one");
//! breaker.record(probe, true);
//! assert!(breaker.try_call().is_some(), "closed again");
//! ```

use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A monotonic clock for the breaker: time since some fixed start.
pub trait Monotonic: Debug + Send + Sync + 'static {
    /// Time elapsed since the clock's start.
    fn elapsed(&self) -> Duration;
}

/// The real monotonic clock ([`Instant`]).
#[derive(Debug, Clone, Copy)]
pub struct SystemMonotonic(Instant);

impl Default for SystemMonotonic {
    fn default() -> Self {
        Self(Instant::now())
    }
}

impl Monotonic for SystemMonotonic {
    fn elapsed(&self) -> Duration {
        self.0.elapsed()
    }
}

/// A clock that moves only when told to; clones share the time.
#[derive(Debug, Clone, Default)]
pub struct ManualMonotonic(Arc<AtomicU64>);

impl ManualMonotonic {
    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        let ms = u64::try_from(by.as_millis()).unwrap_or(u64::MAX);
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Monotonic for ManualMonotonic {
    fn elapsed(&self) -> Duration {
        Duration::from_millis(self.0.load(Ordering::SeqCst))
    }
}

/// The breaker's thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BreakerConfig {
    /// Consecutive failures that open the breaker.
    pub failures: u32,
    /// How long an open breaker refuses calls before one probe.
    pub open_for: Duration,
}

impl BreakerConfig {
    /// `failures` consecutive failures open the breaker for `open_for`.
    pub const fn new(failures: u32, open_for: Duration) -> Self {
        Self { failures, open_for }
    }
}

impl Default for BreakerConfig {
    fn default() -> Self {
        Self::new(5, Duration::from_secs(1))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Closed { failures: u32 },
    Open { until: Duration },
    HalfOpen,
}

/// Leave to make one call; give it back with [`Breaker::record`].
#[derive(Debug)]
#[must_use]
pub struct Permit {
    probe: bool,
}

impl Permit {
    /// Whether this is the half-open probe (which may wait for the node's
    /// connection; other calls never do).
    pub fn is_probe(&self) -> bool {
        self.probe
    }
}

/// One node's circuit breaker. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct Breaker {
    config: BreakerConfig,
    clock: Arc<dyn Monotonic>,
    state: Mutex<State>,
}

impl Breaker {
    /// A closed breaker.
    pub fn new(config: BreakerConfig, clock: impl Monotonic) -> Self {
        Self::with_shared_clock(config, Arc::new(clock))
    }

    /// A closed breaker on a shared clock.
    pub fn with_shared_clock(config: BreakerConfig, clock: Arc<dyn Monotonic>) -> Self {
        Self {
            config,
            clock,
            state: Mutex::new(State::Closed { failures: 0 }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Leave to call the node, or `None` while the breaker is open (or a
    /// half-open probe is already out).
    pub fn try_call(&self) -> Option<Permit> {
        let mut state = self.lock();
        match *state {
            State::Closed { .. } => Some(Permit { probe: false }),
            State::Open { until } if self.clock.elapsed() >= until => {
                *state = State::HalfOpen;
                Some(Permit { probe: true })
            }
            State::Open { .. } | State::HalfOpen => None,
        }
    }

    /// Records how the permitted call went. Returns `true` when this opened
    /// the breaker.
    pub fn record(&self, permit: Permit, success: bool) -> bool {
        let mut state = self.lock();
        if success {
            *state = State::Closed { failures: 0 };
            return false;
        }
        let open = || State::Open {
            until: self.clock.elapsed() + self.config.open_for,
        };
        match *state {
            _ if permit.probe => {
                *state = open();
                true
            }
            State::Closed { failures } => {
                let failures = failures.saturating_add(1);
                if failures >= self.config.failures {
                    *state = open();
                    true
                } else {
                    *state = State::Closed { failures };
                    false
                }
            }
            // A call that was already out when the breaker opened.
            State::Open { .. } | State::HalfOpen => false,
        }
    }

    /// Whether the breaker currently refuses calls.
    pub fn is_open(&self) -> bool {
        !matches!(*self.lock(), State::Closed { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fail(b: &Breaker) -> bool {
        let p = b.try_call().expect("permitted");
        b.record(p, false)
    }

    #[test]
    fn four_failures_keep_it_closed_and_a_success_resets_the_count() {
        let b = Breaker::new(BreakerConfig::default(), ManualMonotonic::default());
        for _ in 0..4 {
            assert!(!fail(&b));
        }
        let p = b.try_call().expect("closed");
        b.record(p, true);
        for _ in 0..4 {
            assert!(!fail(&b));
        }
        assert!(!b.is_open());
        assert!(fail(&b), "the fifth consecutive failure opens it");
        assert!(b.is_open());
    }

    #[test]
    fn a_failed_probe_opens_it_for_another_second() {
        let clock = ManualMonotonic::default();
        let b = Breaker::new(BreakerConfig::default(), clock.clone());
        for _ in 0..5 {
            fail(&b);
        }
        clock.advance(Duration::from_millis(999));
        assert!(b.try_call().is_none(), "still open at 999 ms");
        clock.advance(Duration::from_millis(1));
        assert!(fail(&b), "probe failed: open again");
        clock.advance(Duration::from_millis(999));
        assert!(b.try_call().is_none());
        clock.advance(Duration::from_millis(1));
        let p = b.try_call().expect("second probe");
        b.record(p, true);
        assert!(!b.is_open());
    }
}
