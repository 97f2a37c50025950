//! Stores that count on this instance only: the `fail_mode: local` store
//! (at `limit / fleet size`) and the store of count rules
//! (`count_statuses`, at the full limit).
//!
//! Bounded in total and split evenly between rules; a new subject that
//! finds its rule's share full (and nothing idle) is not counted, and that
//! is counted in `ratelimit_local_untracked_total`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::algorithm::{Decision, Quota, SubjectState};
use crate::rules::Rule;
use crate::store::{Sharded, WhenFull};
use crate::KeyDigest;

/// Keys held by default, over every rule.
pub(crate) const DEFAULT_LOCAL_CAPACITY: usize = 100_000;

/// A bounded per-rule store of subject states.
#[derive(Debug)]
pub(crate) struct LocalStore {
    capacity: usize,
    rules: Mutex<HashMap<Arc<str>, Arc<Sharded<SubjectState>>>>,
    untracked: AtomicU64,
}

impl LocalStore {
    /// A store of at most `capacity` keys over every rule.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity,
            rules: Mutex::new(HashMap::new()),
            untracked: AtomicU64::new(0),
        }
    }

    fn map(&self, namespace: &Arc<str>, rules_sharing: usize) -> Arc<Sharded<SubjectState>> {
        let mut rules = self.rules.lock().unwrap_or_else(|p| p.into_inner());
        rules
            .entry(namespace.clone())
            .or_insert_with(|| {
                let share = (self.capacity / rules_sharing.max(1)).max(1);
                Arc::new(Sharded::new(share, 8))
            })
            .clone()
    }

    /// Counts one request of `subject` under `rule`; `None` when the
    /// subject could not be tracked (the store is full).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn check(
        &self,
        rule: &Rule,
        namespace: &Arc<str>,
        rules_sharing: usize,
        subject: &KeyDigest,
        now: u64,
        quota: &Quota,
        penalty_ms: Option<u64>,
        bit: Option<u16>,
    ) -> Option<Decision> {
        let map = self.map(namespace, rules_sharing);
        let mut shard = map.shard(subject);
        let algorithm = rule.algorithm;
        let Some(mut e) = shard.entry(*subject, now, WhenFull::Refuse, || {
            SubjectState::new(algorithm)
        }) else {
            drop(shard);
            self.untracked.fetch_add(1, Ordering::Relaxed);
            metrics::counter!("ratelimit_local_untracked_total", "rule" => rule.id.clone())
                .increment(1);
            return None;
        };
        let d = e.value.check(algorithm, now, quota, penalty_ms, bit);
        let idle = e.value.expires_at(quota);
        e.set_idle_at(idle);
        Some(d)
    }

    /// Reads a subject's state without counting; `None` when not tracked.
    pub(crate) fn peek(
        &self,
        rule: &Rule,
        namespace: &Arc<str>,
        subject: &KeyDigest,
        now: u64,
        quota: &Quota,
    ) -> Option<Decision> {
        let map = self
            .rules
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(namespace)?
            .clone();
        let shard = map.shard(subject);
        shard
            .peek(subject)
            .map(|s| s.peek(rule.algorithm, now, quota))
    }

    /// Forgets a subject.
    pub(crate) fn reset(&self, namespace: &Arc<str>, subject: &KeyDigest) {
        let map = self
            .rules
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(namespace)
            .cloned();
        if let Some(map) = map {
            map.shard(subject).remove(subject);
        }
    }

    /// Subjects that could not be tracked because the store was full.
    pub(crate) fn untracked(&self) -> u64 {
        self.untracked.load(Ordering::Relaxed)
    }

    /// Drops the stores of rules no longer published.
    pub(crate) fn retain(&self, keep: impl Fn(&str) -> bool) {
        let mut rules = self.rules.lock().unwrap_or_else(|p| p.into_inner());
        rules.retain(|ns, _| keep(ns));
    }
}

/// `quota` shared by `fleet` instances: limit (and burst) divided, rounded
/// down, at least 1.
pub(crate) fn share_of(quota: Quota, fleet: u64) -> Quota {
    let fleet = fleet.max(1);
    let mut q = quota;
    q.limit = (quota.limit / fleet).max(1);
    q.burst = (quota.burst / fleet).max(1);
    q.cost = quota.cost.min(q.burst.min(q.limit).max(1));
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fleet_share_rounds_down_to_at_least_one() {
        let q = Quota::per_minute(5);
        assert_eq!(share_of(q, 4).limit, 1);
        assert_eq!(share_of(q, 2).limit, 2);
        assert_eq!(share_of(q, 10).limit, 1);
        assert_eq!(share_of(q, 0).limit, 5);
    }
}
