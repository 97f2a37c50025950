//! Publishing a rule set: swapping it at run time without losing the counts
//! of unchanged rules.
//!
//! Each rule's state lives under a namespace made of its id, algorithm,
//! period and `distinct_of`: publishing a rule with the same ones keeps its
//! subjects' counts (a new limit or burst applies on the next request);
//! changing any of them starts its subjects fresh.

use std::collections::HashMap;
use std::sync::Arc;

use super::current::Writer;
use super::operator::Operator;
use super::published::Published;
use crate::rules::{Rule, RuleError, RuleSet};

impl Operator<'_> {
    /// See [`Limiter::publish`](super::Limiter::publish).
    pub(crate) fn publish(&self, rules: RuleSet) {
        let mut slot = self.inner.current.write();
        let mut kept: Vec<Arc<Rule>> = Vec::new();
        for t in &slot.temporary {
            let mut trial: Vec<&Rule> = kept.iter().map(|r| &**r).collect();
            trial.push(t);
            match rules.check_with(&trial) {
                Ok(()) => kept.push(t.clone()),
                Err(e) => {
                    tracing::warn!(rule = %t.id, error = %e, "temporary rule dropped by publish")
                }
            }
        }
        let next = Published::new(rules, kept, Some(&slot));
        self.swap(&mut slot, next);
    }

    fn swap(&self, slot: &mut Writer<'_>, next: Published) {
        let keep: HashMap<Arc<str>, ()> = next
            .site_wide
            .iter()
            .chain(&next.others)
            .chain(&next.counts)
            .map(|e| (e.namespace.clone(), ()))
            .collect();
        self.inner.counts.retain(|ns| keep.contains_key(ns));
        slot.replace(next);
    }

    /// See [`Limiter::add_temporary`](super::Limiter::add_temporary).
    pub(crate) fn add_temporary(&self, rule: Rule) -> Result<(), RuleError> {
        let now = self.now_ms();
        check_expiry(&rule, now)?;
        let mut slot = self.inner.current.write();
        let mut temporary: Vec<Arc<Rule>> = slot
            .temporary
            .iter()
            .filter(|r| !r.expired_at(now))
            .cloned()
            .collect();
        let mut all: Vec<&Rule> = temporary.iter().map(|r| &**r).collect();
        all.push(&rule);
        slot.set.check_with(&all)?;
        temporary.push(Arc::new(rule));
        let next = Published::new(slot.set.clone(), temporary, Some(&slot));
        self.swap(&mut slot, next);
        Ok(())
    }

    /// See [`Limiter::temporary_rules`](super::Limiter::temporary_rules).
    pub(crate) fn temporary_rules(&self) -> Vec<Arc<Rule>> {
        let now = self.now_ms();
        self.published()
            .temporary
            .iter()
            .filter(|r| !r.expired_at(now))
            .cloned()
            .collect()
    }

    /// See [`Limiter::remove_temporary`](super::Limiter::remove_temporary).
    pub(crate) fn remove_temporary(&self, id: &str) -> bool {
        let mut slot = self.inner.current.write();
        if !slot.temporary.iter().any(|r| r.id == id) {
            return false;
        }
        let temporary = slot
            .temporary
            .iter()
            .filter(|r| r.id != id)
            .cloned()
            .collect();
        let next = Published::new(slot.set.clone(), temporary, Some(&slot));
        self.swap(&mut slot, next);
        true
    }
}

/// The furthest ahead a rule added at run time may expire: 24 hours.
pub(crate) const MAX_TEMPORARY_MS: u64 = 86_400_000;

/// A rule added at run time must carry an `expires_at` after `now` and at
/// most [`MAX_TEMPORARY_MS`] ahead.
pub(crate) fn check_expiry(rule: &Rule, now: u64) -> Result<(), RuleError> {
    let err = |m: &str| RuleError::new(Some(&rule.id), Some("expires_at"), m);
    match rule.expires_at_ms {
        None => Err(err("is required for a rule added at run time")),
        Some(t) if t <= now => Err(err("has passed")),
        Some(t) if t - now > MAX_TEMPORARY_MS => Err(err("must be at most 24 hours ahead")),
        Some(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests;
