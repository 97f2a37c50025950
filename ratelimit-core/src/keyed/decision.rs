//! What a keyed check answers.

use std::time::Duration;

use crate::algorithm::Decision;

/// The answer to one keyed check: admitted or not, what is left, and when to
/// come back.
///
/// A refusal is a value, not an error: errors are for what retrying cannot
/// fix soon (see [`KeyedError`](super::KeyedError)).
///
/// # Examples
///
/// ```
/// # use std::num::NonZeroU32;
/// # use ratelimit_core::keyed::Quota;
/// # use ratelimit_core::rules::RuleSet;
/// # use ratelimit_core::{Limiter, ManualClock};
/// # use std::time::Duration;
/// # let limiter = Limiter::builder(RuleSet::default()).clock(ManualClock::new(0)).build();
/// let api = limiter.keyed_quota("api", Quota::per_second(NonZeroU32::MIN));
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let first = api.check("tenant-1").await?;
/// assert!(first.is_allowed());
/// assert_eq!(first.retry_after(), None);
/// let second = api.check("tenant-1").await?;
/// assert!(!second.is_allowed());
/// assert_eq!(second.retry_after(), Some(Duration::from_secs(1)));
/// assert_eq!(second.remaining(), 0);
/// # Ok::<(), ratelimit_core::keyed::KeyedError>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyedDecision {
    allowed: bool,
    remaining: u64,
    reset_ms: u64,
    retry_after_ms: u64,
    degraded: bool,
}

impl KeyedDecision {
    pub(crate) fn from_decision(d: &Decision, degraded: bool) -> Self {
        Self {
            allowed: d.allowed,
            remaining: d.remaining,
            reset_ms: d.reset_ms,
            retry_after_ms: if d.allowed { 0 } else { d.retry_after_ms },
            degraded,
        }
    }

    /// Admitted by the fail mode `open` while the backend could not answer.
    pub(crate) fn failed_open() -> Self {
        Self {
            allowed: true,
            remaining: 0,
            reset_ms: 0,
            retry_after_ms: 0,
            degraded: true,
        }
    }

    /// Whether the call may go ahead (its cost has been counted).
    pub fn is_allowed(&self) -> bool {
        self.allowed
    }

    /// How many more calls of cost 1 would be admitted right now.
    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    /// How long until the quota is whole again.
    pub fn reset(&self) -> Duration {
        Duration::from_millis(self.reset_ms)
    }

    /// When refused: how long until the same call would be admitted, if
    /// nothing else is counted meanwhile (the end of a penalty, if one runs).
    /// `None` when admitted.
    pub fn retry_after(&self) -> Option<Duration> {
        (!self.allowed).then(|| Duration::from_millis(self.retry_after_ms))
    }

    /// Whether the backend could not answer and the fail mode decided:
    /// `open` admits (remaining and reset then read 0), `local` counts on
    /// this instance.
    pub fn is_degraded(&self) -> bool {
        self.degraded
    }

    pub(crate) fn retry_after_ms(&self) -> u64 {
        self.retry_after_ms
    }
}
