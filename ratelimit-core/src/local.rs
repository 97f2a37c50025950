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

use crate::algorithm::{CheckQuota, Decision, SubjectState};
use crate::backend::{Check, CheckMode};
use crate::rules::Rule;
use crate::store::{Sharded, WhenFull};
use crate::KeyDigest;

/// Keys held by default, over every rule.
pub(crate) const DEFAULT_LOCAL_CAPACITY: usize = 100_000;

/// Where a subject's state lives: its rule, the rule's namespace, itself.
struct Place<'a> {
    rule: &'a Rule,
    namespace: &'a Arc<str>,
    subject: &'a KeyDigest,
}

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
        quota: &CheckQuota,
        penalty_ms: Option<u64>,
        bit: Option<u16>,
    ) -> Option<Decision> {
        let at = Place {
            rule,
            namespace,
            subject,
        };
        self.update(&at, rules_sharing, now, quota, |s| {
            s.check(rule.algorithm, now, quota, penalty_ms, bit)
        })
    }

    /// The `fail_mode: local` answer to `check`, in its
    /// [`mode`](Check::mode), at this instance's share of the limit
    /// ([`share_of`]; a charge keeps its whole cost). `None` when the
    /// subject could not be tracked (the store is full), or for a mode the
    /// rule's algorithm does not support. A probe counts nothing and does
    /// not track a subject never seen.
    pub(crate) fn check_fallback(
        &self,
        check: &Check,
        fleet: u64,
        rules_sharing: usize,
        now: u64,
    ) -> Option<Decision> {
        let rule = &check.rule;
        let algorithm = rule.algorithm;
        if !algorithm.answers(check.mode) {
            return None;
        }
        let mut quota = share_of(check.quota, fleet);
        let at = Place {
            rule,
            namespace: &check.namespace,
            subject: &check.subject,
        };
        match check.mode {
            CheckMode::Probe => Some(
                self.peek_with(&at, |s| s.probe(algorithm, now, &quota))
                    .unwrap_or_else(|| SubjectState::new(algorithm).probe(algorithm, now, &quota)),
            ),
            CheckMode::Charge => {
                quota.cost = check.quota.cost;
                self.update(&at, rules_sharing, now, &quota, |s| {
                    s.charge(algorithm, now, &quota, check.penalty_ms)
                })
            }
            _ => self.update(&at, rules_sharing, now, &quota, |s| {
                s.check(algorithm, now, &quota, check.penalty_ms, check.bit)
            }),
        }
    }

    /// Runs `f` on the subject's state (created when new); `None` when the
    /// subject could not be tracked.
    fn update(
        &self,
        at: &Place<'_>,
        rules_sharing: usize,
        now: u64,
        quota: &CheckQuota,
        f: impl FnOnce(&mut SubjectState) -> Decision,
    ) -> Option<Decision> {
        let map = self.map(at.namespace, rules_sharing);
        let mut shard = map.shard(at.subject);
        let algorithm = at.rule.algorithm;
        let Some(mut e) = shard.entry(*at.subject, now, WhenFull::Refuse, || {
            SubjectState::new(algorithm)
        }) else {
            drop(shard);
            self.untracked.fetch_add(1, Ordering::Relaxed);
            metrics::counter!("ratelimit_local_untracked_total", "rule" => at.rule.id.clone())
                .increment(1);
            return None;
        };
        let d = f(e.value);
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
        quota: &CheckQuota,
    ) -> Option<Decision> {
        let at = Place {
            rule,
            namespace,
            subject,
        };
        self.peek_with(&at, |s| s.peek(rule.algorithm, now, quota))
    }

    /// `f` of the subject's state, untouched; `None` when not tracked.
    fn peek_with(
        &self,
        at: &Place<'_>,
        f: impl FnOnce(&SubjectState) -> Decision,
    ) -> Option<Decision> {
        let map = self
            .rules
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(at.namespace)?
            .clone();
        let shard = map.shard(at.subject);
        shard.peek(at.subject).map(f)
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

    /// Forgets every subject of every rule; returns how many were held.
    pub(crate) fn clear(&self) -> usize {
        let maps: Vec<_> = {
            let mut rules = self.rules.lock().unwrap_or_else(|p| p.into_inner());
            rules.drain().map(|(_, map)| map).collect()
        };
        maps.iter().map(|m| m.len()).sum()
    }

    /// Drops the stores of rules no longer published.
    pub(crate) fn retain(&self, keep: impl Fn(&str) -> bool) {
        let mut rules = self.rules.lock().unwrap_or_else(|p| p.into_inner());
        rules.retain(|ns, _| keep(ns));
    }
}

/// `quota` shared by `fleet` instances: limit (and burst) divided, rounded
/// down, at least 1.
pub(crate) fn share_of(quota: CheckQuota, fleet: u64) -> CheckQuota {
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
    use crate::backend::namespace;
    use crate::rules::RuleBuilder;
    use crate::HashKey;
    use std::time::Duration;

    const T0: u64 = 1_767_225_600_000;

    fn check(cost: u64, mode: CheckMode) -> Check {
        let rule = RuleBuilder::new("tokens")
            .token_bucket(100, Duration::from_secs(60), 100)
            .key(["ip"])
            .build()
            .expect("rule");
        let rule = Arc::new(rule);
        let subject = HashKey::DEFAULT.digest(b"203.0.113.7");
        let (ns, quota) = (namespace(&rule).into(), rule.quota(cost));
        Check::new(rule, ns, subject, quota, None, None).with_mode(mode)
    }

    /// Two instances share 100 tokens a minute: 50 here. A charge of 80
    /// keeps its whole cost (a debt of 30), and a probe counts nothing.
    #[test]
    fn the_fallback_follows_the_mode_at_the_instance_share() {
        let store = LocalStore::new(100);
        let at = |c: &Check, now| store.check_fallback(c, 2, 1, now).expect("tracked");
        let probe = check(1, CheckMode::Probe);
        // Admitted, as it found the bucket: full, 50 left, nothing to reset.
        assert_eq!(at(&probe, T0), Decision::allow(50, 0));
        assert!(at(&probe, T0).allowed);
        let d = at(&check(80, CheckMode::Charge), T0);
        // 80 - 50 + 1 tokens at 50 a minute: 37.2 s.
        assert_eq!(d, Decision::deny(37_200, 0, 96_000));
        assert!(!at(&probe, T0 + 37_199).allowed);
        assert!(at(&probe, T0 + 37_200).allowed);
        assert!(at(&check(1, CheckMode::Count), T0 + 37_200).allowed);
        assert!(!at(&probe, T0 + 37_200).allowed);
    }

    #[test]
    fn fleet_share_rounds_down_to_at_least_one() {
        let q = CheckQuota::per_minute(5);
        assert_eq!(share_of(q, 4).limit, 1);
        assert_eq!(share_of(q, 2).limit, 2);
        assert_eq!(share_of(q, 10).limit, 1);
        assert_eq!(share_of(q, 0).limit, 5);
    }
}
