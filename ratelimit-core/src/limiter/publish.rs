//! Publishing a rule set: swapping it at run time without losing the counts
//! of unchanged rules.
//!
//! Each rule's state lives under a namespace made of its id, algorithm,
//! period and `distinct_of`: publishing a rule with the same ones keeps its
//! subjects' counts (a new limit or burst applies on the next request);
//! changing any of them starts its subjects fresh.

use std::collections::HashMap;
use std::sync::Arc;

use super::Limiter;
use crate::rules::{FailMode, Rule, RuleSet};
use crate::stats::RuleStats;

/// One published rule.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) rule: Arc<Rule>,
    pub(crate) namespace: Arc<str>,
    pub(crate) stats: Arc<RuleStats>,
    pub(crate) added_at_run_time: bool,
}

/// A rule set as the request path reads it.
#[derive(Debug, Default)]
pub(crate) struct Published {
    pub(crate) set: RuleSet,
    pub(crate) site_wide: Vec<Entry>,
    pub(crate) others: Vec<Entry>,
    pub(crate) counts: Vec<Entry>,
    pub(crate) local_rules: usize,
}

/// The namespace of a rule's state.
pub fn namespace(rule: &Rule) -> String {
    let mut ns = format!(
        "{}:{}:{}",
        rule.id,
        rule.algorithm.tag(),
        rule.period_ms / 1000
    );
    if let Some(d) = &rule.distinct_of {
        ns.push(':');
        ns.push_str(&d.to_string());
    }
    ns
}

impl Published {
    pub(crate) fn new(set: RuleSet, previous: Option<&Published>) -> Self {
        let mut p = Published {
            set: set.clone(),
            ..Published::default()
        };
        for rule in set.rules() {
            let stats = previous
                .and_then(|old| old.stats_of(&rule.id))
                .unwrap_or_default();
            let entry = Entry {
                rule: rule.clone(),
                namespace: namespace(rule).into(),
                stats,
                added_at_run_time: false,
            };
            if rule.is_count_rule() {
                p.counts.push(entry);
            } else if rule.is_site_wide() {
                p.site_wide.push(entry);
            } else {
                p.others.push(entry);
            }
        }
        p.local_rules = set
            .rules()
            .iter()
            .filter(|r| r.fail_mode == FailMode::Local && !r.is_count_rule())
            .count();
        p
    }

    pub(crate) fn stats_of(&self, id: &str) -> Option<Arc<RuleStats>> {
        self.site_wide
            .iter()
            .chain(&self.others)
            .chain(&self.counts)
            .find(|e| e.rule.id == id)
            .map(|e| e.stats.clone())
    }
}

impl Limiter {
    /// Swaps the rule set. Counts of rules whose id, algorithm, period and
    /// `distinct_of` are unchanged carry over; the others start fresh.
    pub fn publish(&self, rules: RuleSet) {
        let mut slot = self
            .inner
            .published
            .write()
            .unwrap_or_else(|p| p.into_inner());
        let next = Published::new(rules, Some(&slot));
        let keep: HashMap<Arc<str>, ()> = next
            .site_wide
            .iter()
            .chain(&next.others)
            .chain(&next.counts)
            .map(|e| (e.namespace.clone(), ()))
            .collect();
        self.inner.counts.retain(|ns| keep.contains_key(ns));
        *slot = Arc::new(next);
    }
}
