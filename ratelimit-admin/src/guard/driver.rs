//! The guard's driver: reads the published version and the fleet, decides
//! each canary the workflow recorded a baseline for, and returns a rule
//! whose canary passed the margin to its previous version, fleet-wide.
//!
//! Any instance may run it (or several may): the rollback is a publish
//! that starts from the version it read (compare-and-set), so of two
//! guards acting on the same reading one publishes and the other gets a
//! conflict and reads again on its next tick.

use std::sync::Arc;
use std::time::Duration;

use ratelimit_core::control::{Control, ControlError, FleetView, Published};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Clock, SystemClock};

use super::{decide, GuardConfig, GuardVerdict, Phase};
use crate::workflow::phases::{self, Totals, Watch};
use crate::workflow::{put_rule, to_json};

/// A rule the guard returned to its previous version.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RolledBack {
    /// The rule.
    pub rule: String,
    /// Why (also in the version's note and its `rolled_back.<rule>`
    /// annotation).
    pub why: String,
    /// The version the rollback published.
    pub version: u64,
}

/// The rollback guard, over a [`Control`]. Run [`Guard::run`] on one or
/// more instances, or call [`Guard::tick`] from your own scheduler.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use ratelimit_admin::guard::{Guard, GuardConfig};
/// use ratelimit_core::control::MemoryControl;
/// use ratelimit_core::{rules::RuleSet, Limiter};
///
/// let control = Arc::new(MemoryControl::new(Limiter::new(RuleSet::default()), "local"));
/// let guard = Guard::new(control).config(GuardConfig::DEFAULT.margin_percent(25));
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// // Nothing published, no canary: nothing to do.
/// assert_eq!(guard.tick().await.unwrap(), vec![]);
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct Guard {
    control: Arc<dyn Control>,
    config: GuardConfig,
    clock: Arc<dyn Clock>,
}

impl Guard {
    /// A guard over `control` with the default [`GuardConfig`] and the
    /// system clock.
    pub fn new(control: Arc<dyn Control>) -> Self {
        Self {
            control,
            config: GuardConfig::DEFAULT,
            clock: Arc::new(SystemClock),
        }
    }

    /// Its margin and minimum of requests.
    #[must_use]
    pub fn config(mut self, config: GuardConfig) -> Self {
        self.config = config;
        self
    }

    /// The clock the phases are timed with (the one the workflow's
    /// annotations were written with: the admin page's limiter's).
    #[must_use]
    pub fn clock(mut self, clock: impl Clock) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// Decides every watched canary once; returns the rules it returned.
    ///
    /// # Errors
    ///
    /// The control's, when it cannot be read. A conflict on the rollback's
    /// publish (another guard or operator came first) is not an error:
    /// nothing is returned, and the next tick reads again.
    pub async fn tick(&self) -> Result<Vec<RolledBack>, ControlError> {
        let Some(current) = self.control.current().await? else {
            return Ok(Vec::new());
        };
        let watches = phases::watches(&current);
        if watches.is_empty() {
            return Ok(Vec::new());
        }
        let view = self.control.fleet().await?;
        let now = self.clock.now_ms();
        let mut fired = Vec::new();
        for w in &watches {
            let verdict = decide(
                &w.log,
                &self.canary_phase(w, &current, &view, now),
                w.bp,
                self.config,
            );
            tracing::debug!(target: "ratelimit_admin", rule = %w.rule, %verdict, "rollback guard");
            if let GuardVerdict::RollBack(why) = verdict {
                fired.push((w, why));
            }
        }
        let Some((w, why)) = fired.into_iter().next() else {
            return Ok(Vec::new());
        };
        // One rule per publish: the next tick reads the new version.
        match self.roll_back(&current, w, &why, &view, now).await {
            Ok(version) => Ok(vec![RolledBack {
                rule: w.rule.clone(),
                why,
                version,
            }]),
            Err(ControlError::Conflict { .. }) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// What the rule did since its canary began, over the fleet.
    fn canary_phase(&self, w: &Watch, current: &Published, view: &FleetView, now: u64) -> Phase {
        let t = Totals::of(view, &w.rule);
        let rule = RuleSet::from_json(&current.json)
            .ok()
            .and_then(|s| s.get(&w.rule).cloned());
        let in_share =
            |s: &ratelimit_core::KeyDigest| rule.as_ref().is_some_and(|r| r.canary_includes(s));
        Phase::new(
            t.requests.saturating_sub(w.start.requests),
            t.limited.saturating_sub(w.start.limited),
            phases::subjects(view, &w.rule, in_share).saturating_sub(w.subjects_at_start),
            now.saturating_sub(w.since_ms),
        )
    }

    async fn roll_back(
        &self,
        current: &Published,
        w: &Watch,
        why: &str,
        view: &FleetView,
        now: u64,
    ) -> Result<u64, ControlError> {
        let json = put_rule(&current.json, &w.rule, Some(w.previous.clone()))
            .map_err(ControlError::Invalid)?;
        let json = to_json(crate::workflow::rules_of(&json).map_err(ControlError::Invalid)?);
        let mut ann = phases::carry(Some(current), &json, view, now);
        ann.insert(format!("rolled_back.{}", w.rule), why.to_owned());
        let note = format!(
            "rollback guard: rule {:?} returned to its previous version: {why}",
            w.rule
        );
        let version = self
            .control
            .publish(current.version, &json, &note, ann)
            .await?;
        tracing::info!(target: "ratelimit_admin", rule = %w.rule, version, why, "admin: rollback guard returned a rule to its previous version");
        Ok(version)
    }

    /// Runs [`Guard::tick`] every `every` (say 10 s), for ever; errors are
    /// logged at warn and the next tick tries again. Spawn it on a runtime
    /// with a timer.
    pub async fn run(self, every: Duration) {
        loop {
            tokio::time::sleep(every).await;
            if let Err(e) = self.tick().await {
                tracing::warn!(target: "ratelimit_admin", error = %e, "rollback guard: the control did not answer");
            }
        }
    }
}
