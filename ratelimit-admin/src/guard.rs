//! The rollback guard's decision: a pure function of what a rule would
//! have limited while it only logged and what it blocks under a canary.
//!
//! # The arithmetic
//!
//! At promotion (the change from `log` to `block` under a canary of
//! `bp` basis points, 1000 = 10%) the log phase's figures are recorded:
//! the requests the rule would have limited (`would_limit`) and the
//! distinct subjects among them, over the phase's length. Each is a rate
//! per minute:
//!
//! ```text
//! shadow_rpm      = log.over     * 60_000 / log.ms
//! shadow_spm      = log.subjects * 60_000 / log.ms
//! ```
//!
//! Under the canary the rule blocks only for `bp / 10_000` of the
//! subjects, so what it blocked is scaled up to the whole traffic before
//! it is compared:
//!
//! ```text
//! blocked_rpm     = canary.over     * 60_000 / canary.ms * 10_000 / bp
//! blocked_spm     = canary.subjects * 60_000 / canary.ms * 10_000 / bp
//! ```
//!
//! The guard rolls back when either scaled rate passes its shadow figure
//! by more than the margin:
//!
//! ```text
//! blocked_rpm > shadow_rpm * (100 + margin_percent) / 100     (or the same for subjects)
//! ```
//!
//! It never acts on a log phase that saw no traffic (nothing to compare
//! with: `log.requests == 0` or `log.ms == 0`), nor before the canary phase
//! has seen [`GuardConfig::min_requests`] requests of the rule. The
//! comparison is made in integers (cross-multiplied, in `u128`, each
//! count capped at 2^40), so no
//! rounding decides it.

use std::fmt;

mod driver;

pub use driver::{Guard, RolledBack};

/// The guard's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct GuardConfig {
    /// How far (in percent) the scaled blocked rate may pass the shadow
    /// rate before the guard acts. Default 50: half as much again.
    pub margin_percent: u32,
    /// Requests of the rule the canary phase must have seen before the
    /// guard acts. Default 100.
    pub min_requests: u64,
}

impl GuardConfig {
    /// The defaults: a 50% margin, 100 requests.
    pub const DEFAULT: GuardConfig = GuardConfig {
        margin_percent: 50,
        min_requests: 100,
    };

    /// Sets the margin, in percent.
    #[must_use]
    pub const fn margin_percent(mut self, percent: u32) -> Self {
        self.margin_percent = percent;
        self
    }

    /// Sets the requests the canary phase must see before the guard acts.
    #[must_use]
    pub const fn min_requests(mut self, n: u64) -> Self {
        self.min_requests = n;
        self
    }
}

impl Default for GuardConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What a rule did over one phase, summed over the fleet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Phase {
    /// Requests the rule decided.
    pub requests: u64,
    /// Requests over its limit: would-limit in the log phase, limited (in
    /// the canary) in the canary phase.
    pub over: u64,
    /// Distinct subjects among them.
    pub subjects: u64,
    /// How long the phase ran, in milliseconds.
    pub ms: u64,
}

impl Phase {
    /// A phase of `ms` milliseconds with these counts.
    pub const fn new(requests: u64, over: u64, subjects: u64, ms: u64) -> Self {
        Self {
            requests,
            over,
            subjects,
            ms,
        }
    }
}

/// The guard's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GuardVerdict {
    /// The log phase saw no traffic: nothing to compare with, never acts.
    NoBaseline,
    /// The canary phase has seen fewer requests than the minimum.
    TooFewRequests {
        /// Requests seen.
        seen: u64,
        /// Requests needed.
        need: u64,
    },
    /// Within the margin: keep the canary.
    Keep,
    /// Past the margin: return the rule to its previous version.
    RollBack(String),
}

/// Counts and lengths are capped here (a trillion requests, 34 years) so
/// that every product below fits in a `u128`.
const CAP: u64 = 1 << 40;

/// Whether `lhs_n / lhs_d > rhs_n / rhs_d`, in integers.
fn exceeds(lhs_n: u128, lhs_d: u128, rhs_n: u128, rhs_d: u128) -> bool {
    lhs_n * rhs_d > rhs_n * lhs_d
}

/// Decides whether to roll a canary back. See the [module](self) docs for
/// the arithmetic.
///
/// # Examples
///
/// ```
/// use ratelimit_admin::guard::{decide, GuardConfig, GuardVerdict, Phase};
///
/// // Log phase: 10 minutes, 600 requests over the limit (60/min), 20 subjects.
/// let log = Phase::new(5_000, 600, 20, 600_000);
/// // Canary at 10%: 5 minutes, 30 blocked (6/min, 60/min scaled), 1 subject
/// // (2/min scaled).
/// let same = Phase::new(2_500, 30, 1, 300_000);
/// assert_eq!(decide(&log, &same, 1_000, GuardConfig::DEFAULT), GuardVerdict::Keep);
/// // The traffic changed: 300 blocked in the canary (600/min scaled).
/// let worse = Phase::new(2_500, 300, 1, 300_000);
/// assert!(matches!(decide(&log, &worse, 1_000, GuardConfig::DEFAULT), GuardVerdict::RollBack(_)));
/// ```
pub fn decide(log: &Phase, canary: &Phase, canary_bp: u32, cfg: GuardConfig) -> GuardVerdict {
    let cap = |p: &Phase| {
        Phase::new(
            p.requests,
            p.over.min(CAP),
            p.subjects.min(CAP),
            p.ms.min(CAP),
        )
    };
    let (log, canary) = (&cap(log), &cap(canary));
    if log.requests == 0 || log.ms == 0 {
        return GuardVerdict::NoBaseline;
    }
    if canary.requests < cfg.min_requests.max(1) || canary.ms == 0 {
        return GuardVerdict::TooFewRequests {
            seen: canary.requests,
            need: cfg.min_requests.max(1),
        };
    }
    let bp = u128::from(canary_bp.clamp(1, 10_000));
    let margin = 100 + u128::from(cfg.margin_percent);
    // blocked * 10_000 / (bp * canary.ms)  >  shadow * margin / (100 * log.ms)
    let past = |blocked: u64, shadow: u64| {
        exceeds(
            u128::from(blocked) * 10_000,
            bp * u128::from(canary.ms),
            u128::from(shadow) * margin,
            100 * u128::from(log.ms),
        )
    };
    // The figures in the message (rounded down; the test above decides).
    let rate = |n: u64, ms: u64, scale: u128| u128::from(n) * 60_000 * scale / u128::from(ms);
    for (what, blocked, shadow) in [
        ("requests", canary.over, log.over),
        ("subjects", canary.subjects, log.subjects),
    ] {
        if past(blocked, shadow) {
            return GuardVerdict::RollBack(format!(
                "{what} blocked per minute, scaled to the whole traffic ({}), passed what the \
                 log phase would have limited ({}) by more than {}%",
                rate(blocked, canary.ms, 10_000) / bp,
                rate(shadow, log.ms, 1),
                cfg.margin_percent
            ));
        }
    }
    GuardVerdict::Keep
}

impl fmt::Display for GuardVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GuardVerdict::NoBaseline => f.write_str("the log phase saw no traffic: not acting"),
            GuardVerdict::TooFewRequests { seen, need } => {
                write!(f, "{seen} of the {need} requests needed before acting")
            }
            GuardVerdict::Keep => f.write_str("within the margin"),
            GuardVerdict::RollBack(why) => f.write_str(why),
        }
    }
}

#[cfg(test)]
mod tests;
