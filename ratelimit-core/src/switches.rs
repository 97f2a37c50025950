//! The emergency switches and the fleet size.

use std::fmt::Debug;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// The emergency switches, flipped at run time.
///
/// - `disable_rate_limiting`: every rule acts as `log`; the backstop still
///   applies.
/// - `disable_config_blocking`: rules of the published rule set act as
///   `log`, while rules added at run time keep blocking.
/// - `disable_jwt`: every claim counts as missing.
///
/// # Examples
///
/// ```
/// use ratelimit_core::rules::RuleSet;
/// use ratelimit_core::Limiter;
///
/// let limiter = Limiter::new(RuleSet::default());
/// limiter.switches().set_disable_rate_limiting(true);
/// assert!(limiter.switches().rate_limiting_disabled());
/// ```
#[derive(Debug, Default)]
pub struct Switches {
    disable_rate_limiting: AtomicBool,
    disable_config_blocking: AtomicBool,
    disable_jwt: AtomicBool,
}

impl Switches {
    /// Turns every rule into `log` (or back).
    pub fn set_disable_rate_limiting(&self, on: bool) {
        self.disable_rate_limiting.store(on, Ordering::SeqCst);
    }

    /// Turns the published rules' block into log (or back).
    pub fn set_disable_config_blocking(&self, on: bool) {
        self.disable_config_blocking.store(on, Ordering::SeqCst);
    }

    /// Treats every JWT claim as missing (or back).
    pub fn set_disable_jwt(&self, on: bool) {
        self.disable_jwt.store(on, Ordering::SeqCst);
    }

    /// Whether rate limiting is disabled.
    pub fn rate_limiting_disabled(&self) -> bool {
        self.disable_rate_limiting.load(Ordering::Relaxed)
    }

    /// Whether the published rules' blocking is disabled.
    pub fn config_blocking_disabled(&self) -> bool {
        self.disable_config_blocking.load(Ordering::Relaxed)
    }

    /// Whether JWT claims are off.
    pub fn jwt_disabled(&self) -> bool {
        self.disable_jwt.load(Ordering::Relaxed)
    }

    /// Whether a rule that blocks by configuration blocks now.
    pub(crate) fn blocks(&self, configured_block: bool, added_at_run_time: bool) -> bool {
        configured_block
            && !self.rate_limiting_disabled()
            && (added_at_run_time || !self.config_blocking_disabled())
    }
}

/// How many instances share the limits (for `fail_mode: local`).
pub trait FleetSize: Debug + Send + Sync + 'static {
    /// The current count, at least 1.
    fn fleet_size(&self) -> u64;
}

/// A fixed expected count (`EXPECTED_REPLICAS`): `0` counts as 1.
///
/// ```
/// use ratelimit_core::control::FleetSize;
///
/// assert_eq!(4u64.fleet_size(), 4);
/// assert_eq!(0u64.fleet_size(), 1);
/// ```
impl FleetSize for u64 {
    fn fleet_size(&self) -> u64 {
        (*self).max(1)
    }
}

/// A count updated at run time (for instance from a live count of the
/// fleet's instances): share it as an `Arc<AtomicU64>` and `store` the new
/// count; `0` counts as 1.
///
/// ```
/// use ratelimit_core::control::FleetSize;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::sync::Arc;
///
/// let fleet = Arc::new(AtomicU64::new(3));
/// let seen = fleet.clone(); // give this one to `LimiterBuilder::fleet_size`
/// fleet.store(5, Ordering::SeqCst);
/// assert_eq!(seen.fleet_size(), 5);
/// ```
impl FleetSize for AtomicU64 {
    fn fleet_size(&self) -> u64 {
        self.load(Ordering::SeqCst).max(1)
    }
}

/// The count of the shared value.
impl<T: FleetSize + ?Sized> FleetSize for Arc<T> {
    fn fleet_size(&self) -> u64 {
        (**self).fleet_size()
    }
}
