//! The fleet's control: one seam to publish rule sets, flip the switches,
//! lift penalties, add rules at run time and read the fleet, whatever
//! carries it.
//!
//! [`Control`] is what an operator's tool (the admin page, a script) talks
//! to. [`MemoryControl`] runs it in one process over one [`Limiter`]: a
//! publish applies at once and the fleet is this instance. The Valkey
//! backend's `ValkeyControl` (crate `ratelimit-valkey`) runs it across a
//! fleet: the published set, switches, lifts and rules added at run time
//! live in Valkey, each instance follows them, and each reports itself
//! (what it runs of each) to a registry.
//!
//! Nothing here does I/O: the trait's futures are boxed
//! ([`BoxFuture`]) so either side can implement it.
//!
//! - Publishing is compare-and-set on the version: [`Control::publish`]
//!   takes the version the caller started from and fails with
//!   [`ControlError::Conflict`] (naming the version to start again from)
//!   when another publish came first. Never a silent overwrite.
//! - A set is validated with [`Published::check_set`] ([`RuleSet::from_json`]) before it is stored,
//!   and refused when larger than [`Published::MAX_SET_BYTES`].
//! - Rules added at run time ([`Control::add_temporary`], an autopilot's)
//!   run on every instance until their `expires_at`, at most 24 hours
//!   ahead ([`TemporaryRule::check`]), and survive publishes.
//! - A publish is held ([`ControlError::Held`]) while a live instance reads
//!   an older [`Published::SCHEMA`] than the set needs, naming those instances.
//!
//! # Examples
//!
//! ```
//! use std::collections::BTreeMap;
//! use ratelimit_core::control::{Control, ControlError, MemoryControl, Switch};
//! use ratelimit_core::rules::RuleSet;
//! use ratelimit_core::Limiter;
//!
//! let limiter = Limiter::new(RuleSet::default());
//! let control = MemoryControl::new(limiter.clone(), "local");
//! let json = r#"[{"id": "api", "expression": "true", "algorithm": "fixed_window",
//!     "limit": 100, "period": "1m", "key": ["ip"], "action": "log"}]"#;
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let v1 = control.publish(0, json, "alice: api in log", BTreeMap::new()).await?;
//! assert_eq!(v1, 1);
//! assert_eq!(limiter.rules().get("api").map(|r| r.limit), Some(100));
//! // A second operator who started from version 0 too is told to start again.
//! let late = control.publish(0, json, "bob", BTreeMap::new()).await;
//! assert_eq!(late, Err(ControlError::Conflict { current: 1 }));
//!
//! control.set_switch(Switch::DisableRateLimiting, true).await?;
//! assert!(limiter.switches().rate_limiting_disabled());
//! assert_eq!(control.fleet().await?.fleet_size(), 1);
//! # Ok::<(), ControlError>(())
//! # }).unwrap();
//! ```

mod error;
mod memory;
mod report;
mod switch;
mod temporary;
mod view;

use std::collections::BTreeMap;

pub use crate::backend::BoxFuture;
pub use crate::stats::TopSubject;
pub use crate::switches::{FleetSize, Switches};
pub use error::ControlError;
pub use memory::MemoryControl;
pub use report::{InstanceReport, RuleCounts};
pub use switch::{Switch, SwitchState};
pub use temporary::TemporaryRule;
pub use view::FleetView;

#[cfg(doc)]
use crate::{rules::RuleSet, Limiter};

/// One published version of the rule set.
///
/// Exhaustive on purpose: a control store outside this crate
/// (`ratelimit-valkey`, a test's fake) builds it field by field from what
/// it stored; a new field changes the stored schema, a breaking release.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Published {
    /// The version, from 1; 0 means nothing was published.
    pub version: u64,
    /// The [`Published::SCHEMA`] a reader needs.
    pub schema: u32,
    /// The rule set, as JSON (empty when read without it).
    pub json: String,
    /// Who published it and why: free text from the caller.
    pub note: String,
    /// When, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// Free-form metadata stored with the version (canary, baselines).
    pub annotations: BTreeMap<String, String>,
}

impl Published {
    /// The rule-set schema this build reads. A set published by a build
    /// with a newer schema is refused by older instances (and held while
    /// they run); it goes up when the rule model gains a field an older
    /// build would refuse or misread.
    pub const SCHEMA: u32 = 1;

    /// The largest rule set (JSON bytes) the control accepts: 1 MiB.
    pub const MAX_SET_BYTES: usize = 1 << 20;

    /// How many published versions a control keeps for its history.
    pub const HISTORY_LEN: usize = 20;
}

/// The fleet's control, as an operator's tool sees it.
///
/// Every method acts on the whole fleet. See the [module](self) docs.
pub trait Control: std::fmt::Debug + Send + Sync {
    /// The published version, `None` when nothing was published.
    fn current(&self) -> BoxFuture<'_, Result<Option<Published>, ControlError>>;

    /// The last `limit` published versions, newest first (at most
    /// [`Published::HISTORY_LEN`] are kept).
    fn history(&self, limit: usize) -> BoxFuture<'_, Result<Vec<Published>, ControlError>>;

    /// Publishes `json` as version `expected_version + 1`.
    ///
    /// # Errors
    ///
    /// [`ControlError::Invalid`] for a set that does not load (naming the
    /// rule and field) or is too large; [`ControlError::Conflict`] when the
    /// published version is no longer `expected_version`;
    /// [`ControlError::Held`] while a live instance reads an older schema;
    /// [`ControlError::Unavailable`] when the store does not answer.
    fn publish<'a>(
        &'a self,
        expected_version: u64,
        json: &'a str,
        note: &'a str,
        annotations: BTreeMap<String, String>,
    ) -> BoxFuture<'a, Result<u64, ControlError>>;

    /// Flips a switch on every instance.
    fn set_switch(&self, switch: Switch, on: bool) -> BoxFuture<'_, Result<(), ControlError>>;

    /// Lifts the penalty and count of `subject` under rule `rule`: the
    /// shared state once, and the penalty-cache and over-limit-cache
    /// entries on every instance.
    fn lift<'a>(
        &'a self,
        rule: &'a str,
        subject: crate::KeyDigest,
    ) -> BoxFuture<'a, Result<(), ControlError>>;

    /// Adds `rule` on every instance until its `expires_at` (at most 24
    /// hours ahead), with `note` (who and why), as an autopilot does during
    /// an attack. It keeps blocking under "disable blocking by config
    /// rules", survives publishes (unless a published rule takes its id)
    /// and stops on every instance at its `expires_at`. A rule of the same
    /// id added earlier is replaced.
    ///
    /// # Errors
    ///
    /// [`ControlError::Invalid`] as [`TemporaryRule::check`] says (naming
    /// the rule and field); [`ControlError::Unavailable`] when the store
    /// does not answer.
    fn add_temporary<'a>(
        &'a self,
        rule: crate::rules::Rule,
        note: &'a str,
    ) -> BoxFuture<'a, Result<(), ControlError>>;

    /// Removes the rule added at run time `id` from every instance; false
    /// when there is none by that id.
    fn remove_temporary<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, ControlError>>;

    /// The fleet: the published version, the instances seen in the last
    /// minute, the switches, the rules added at run time.
    fn fleet(&self) -> BoxFuture<'_, Result<FleetView, ControlError>>;

    /// The secret shared by the fleet (for CSRF tokens): the same on
    /// every instance.
    fn csrf_secret(&self) -> BoxFuture<'_, Result<[u8; 32], ControlError>>;
}
