//! A circuit breaker per Valkey node.
//!
//! After `failures` consecutive failed calls (5 by default) the node is not
//! called for `open_for` (1 s by default); then one probe is let through
//! (half-open) while every other call is refused; the probe's success
//! closes the breaker, its failure opens it again. Only transport failures
//! count (time-outs, lost or refused connections): a node that answers,
//! even with an error, is up.
//!
//! Time comes from a [`Clock`] of `ratelimit-core`, so tests drive it: by
//! default a [`TokioClock`](ratelimit_core::TokioClock), which never goes
//! back; tests pass a [`ManualClock`](ratelimit_core::ManualClock) through
//! [`ValkeyBuilder::breaker_clock`](crate::ValkeyBuilder::breaker_clock).
//! The thresholds, [`BreakerConfig`], are public; the breaker itself is not.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ratelimit_core::Clock;

/// The thresholds of the circuit breaker each Valkey node has.
///
/// After `failures` consecutive transport failures (time-outs, lost or
/// refused connections) the node is not called for `open_for`; then one
/// probe goes through while every other call fails at once with
/// `BreakerOpen`; the probe's success closes the breaker, its failure opens
/// it again. A node that answers, even with an error, is up.
///
/// # Examples
///
/// ```
/// use ratelimit_valkey::{BreakerConfig, ValkeyBackend};
/// use std::time::Duration;
///
/// let builder = ValkeyBackend::builder("redis://127.0.0.1:6379")
///     .breaker(BreakerConfig::new(3, Duration::from_millis(500)));
/// # drop(builder);
/// assert_eq!(BreakerConfig::default(), BreakerConfig::new(5, Duration::from_secs(1)));
/// ```
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
    Closed {
        failures: u32,
    },
    /// Open until this time of the clock, in ms.
    Open {
        until: u64,
    },
    HalfOpen,
}

/// Leave to make one call; give it back with [`Breaker::record`].
#[derive(Debug)]
#[must_use]
pub(crate) struct Permit {
    probe: bool,
}

impl Permit {
    /// Whether this is the half-open probe (which may wait for the node's
    /// connection; other calls never do).
    pub(crate) fn is_probe(&self) -> bool {
        self.probe
    }
}

/// One node's circuit breaker. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub(crate) struct Breaker {
    config: BreakerConfig,
    clock: Arc<dyn Clock>,
    state: Mutex<State>,
}

impl Breaker {
    /// A closed breaker.
    #[cfg(test)]
    pub(crate) fn new(config: BreakerConfig, clock: impl Clock) -> Self {
        Self::with_shared_clock(config, Arc::new(clock))
    }

    /// A closed breaker on a shared clock.
    pub(crate) fn with_shared_clock(config: BreakerConfig, clock: Arc<dyn Clock>) -> Self {
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
    pub(crate) fn try_call(&self) -> Option<Permit> {
        let mut state = self.lock();
        match *state {
            State::Closed { .. } => Some(Permit { probe: false }),
            State::Open { until } if self.clock.now_ms() >= until => {
                *state = State::HalfOpen;
                Some(Permit { probe: true })
            }
            State::Open { .. } | State::HalfOpen => None,
        }
    }

    /// Records how the permitted call went. Returns `true` when this opened
    /// the breaker.
    pub(crate) fn record(&self, permit: Permit, success: bool) -> bool {
        let mut state = self.lock();
        if success {
            *state = State::Closed { failures: 0 };
            return false;
        }
        let open_for = u64::try_from(self.config.open_for.as_millis()).unwrap_or(u64::MAX);
        let open = || State::Open {
            until: self.clock.now_ms().saturating_add(open_for),
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
    pub(crate) fn is_open(&self) -> bool {
        !matches!(*self.lock(), State::Closed { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratelimit_core::ManualClock;

    #[test]
    fn five_failures_open_it_then_one_probe_closes_it() {
        let clock = ManualClock::default();
        let breaker = Breaker::new(BreakerConfig::default(), clock.clone());
        for _ in 0..5 {
            let permit = breaker.try_call().unwrap();
            breaker.record(permit, false);
        }
        assert!(breaker.try_call().is_none(), "open");
        clock.advance(Duration::from_secs(1));
        let probe = breaker.try_call().expect("one probe");
        assert!(probe.is_probe());
        assert!(breaker.try_call().is_none(), "only one");
        breaker.record(probe, true);
        assert!(breaker.try_call().is_some(), "closed again");
    }

    fn fail(b: &Breaker) -> bool {
        let p = b.try_call().expect("permitted");
        b.record(p, false)
    }

    #[test]
    fn four_failures_keep_it_closed_and_a_success_resets_the_count() {
        let b = Breaker::new(BreakerConfig::default(), ManualClock::default());
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
        let clock = ManualClock::default();
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
