//! [`Caches`]: what a decision keeps in this process between requests
//! (the penalty cache, the over-limit cache, the `fail_mode: local`
//! fallback store and the fleet's size that shares it).
//!
//! Settling a decision (`settle.rs`) writes to these and to nothing else
//! of the limiter: it holds a `&Caches`, never the [`Limiter`](super::Limiter),
//! so its arrows point down.

use std::sync::Arc;

use super::overlimit::OverLimitCache;
use crate::algorithm::Decision;
use crate::backend::Check;
use crate::local::LocalStore;
use crate::penalty_cache::PenaltyCache;
use crate::rules::FailMode;
use crate::switches::FleetSize;

/// The decision's local state (see the module docs).
#[derive(Debug)]
pub(super) struct Caches {
    /// Running penalties, answered without the backend.
    pub(super) penalties: PenaltyCache,
    /// Refusals answered locally until their earliest admission.
    pub(super) overlimit: OverLimitCache,
    /// The `fail_mode: local` fallback's states.
    pub(super) local: LocalStore,
    /// How many instances share the fleet's limits (the local fallback
    /// counts a share of them).
    pub(super) fleet: Arc<dyn FleetSize>,
}

impl Caches {
    /// The hook after a backend answer `d` to what was `asked`: a refusal
    /// of a blocking rule is remembered until its earliest admission.
    #[inline]
    pub(super) fn remember_refusal(&self, asked: &Check, d: &Decision, blocks: bool, now: u64) {
        if blocks {
            self.overlimit.remember(asked, d, now);
        }
    }

    /// The decision of `check`'s rule's `fail_mode` when the backend did
    /// not answer it: `local` counts in this instance's fallback store (in
    /// the check's mode: a probe counts nothing, a charge keeps its whole
    /// cost, at this instance's share of the limit); `None` otherwise (open
    /// or closed, which the caller's report tells apart), or when the
    /// fallback does not track the subject.
    pub(super) fn fail_mode(
        &self,
        check: &Check,
        now: u64,
        local_rules: usize,
    ) -> Option<Decision> {
        if check.rule.fail_mode != FailMode::Local {
            return None;
        }
        let fleet = self.fleet.fleet_size();
        self.local.check_fallback(check, fleet, local_rules, now)
    }
}

impl Caches {
    /// Drops every subject held under the old hash key (the key changed,
    /// see `key_change.rs`): these caches and `counts` (the count rules'
    /// local store).
    #[cold]
    pub(super) fn forget(&self, counts: &LocalStore) {
        let penalties = self.penalties.clear();
        let refusals = self.overlimit.clear();
        let local = self.local.clear() + counts.clear();
        tracing::info!(
            penalties,
            refusals,
            local,
            "hash key changed: subjects held in memory under the old key dropped"
        );
    }
}
