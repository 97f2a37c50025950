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
use super::published::Published;
use super::Limiter;
use crate::rules::{Rule, RuleError, RuleSet};

impl Limiter {
    /// Swaps the rule set. Counts of rules whose id, algorithm, period and
    /// `distinct_of` are unchanged carry over; the others start fresh.
    /// Rules added at run time stay, unless one clashes with the new set
    /// (same id, or the combination is invalid): those are dropped, with a
    /// warning event.
    pub fn publish(&self, rules: RuleSet) {
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

    /// Adds a rule at run time, as an autopilot would: it must carry an
    /// `expires_at` at most 24 hours ahead, and it keeps blocking when the
    /// switch "disable blocking by config rules" is on.
    ///
    /// # Errors
    ///
    /// No `expires_at`, one in the past or more than 24 hours ahead, an id
    /// already in use, or a combination the rule set refuses.
    pub fn add_temporary(&self, rule: Rule) -> Result<(), RuleError> {
        let now = self.now_ms();
        let err = |m: &str| RuleError::new(Some(&rule.id), Some("expires_at"), m);
        match rule.expires_at_ms {
            None => return Err(err("is required for a rule added at run time")),
            Some(t) if t <= now => return Err(err("has passed")),
            Some(t) if t - now > MAX_TEMPORARY_MS => {
                return Err(err("must be at most 24 hours ahead"))
            }
            Some(_) => {}
        }
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

    /// The rules added at run time that have not expired.
    pub fn temporary_rules(&self) -> Vec<Arc<Rule>> {
        let now = self.now_ms();
        self.published()
            .temporary
            .iter()
            .filter(|r| !r.expired_at(now))
            .cloned()
            .collect()
    }

    /// Removes a rule added at run time; false when there is none by `id`.
    pub fn remove_temporary(&self, id: &str) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_shared_when_another_rule_s_key_starts_with_it() {
        let rule = |id: &str, key: &str| {
            format!(
                r#"{{"id": "{id}", "expression": "http.request.uri.path eq \"/\"", "algorithm": "fixed_window",
                    "limit": 1, "period": "1m", "key": {key}}}"#
            )
        };
        let json = format!(
            "[{}, {}, {}, {}]",
            rule("ip", r#"["ip"]"#),
            rule("ip-user", r#"["ip", "header:x-user"]"#),
            rule("user-ip", r#"["header:x-user", "ip"]"#),
            rule("user-ip-method", r#"["header:x-user", "ip", "method"]"#),
        );
        let p = Published::new(RuleSet::from_json(&json).unwrap(), Vec::new(), None);
        let shared: Vec<(&str, bool)> = (p.site_wide.iter().chain(&p.others))
            .map(|e| (&*e.id, e.key_shared))
            .collect();
        let want = [
            ("ip", true),
            ("ip-user", false),
            ("user-ip", true),
            ("user-ip-method", false),
        ];
        for w in want {
            assert!(shared.contains(&w), "{w:?} in {shared:?}");
        }
    }

    /// Only a rule with nothing to test but its key, and no key hash to
    /// share, is plain: each field that selection tests clears the flag.
    #[test]
    fn a_rule_is_plain_when_only_its_key_is_tested() {
        use crate::rules::{AllowList, RuleBuilder};
        use std::time::Duration;
        let path = r#"http.request.uri.path eq "/""#;
        let fw = |id: &str| {
            let b = RuleBuilder::new(id).expression(path);
            b.fixed_window(5, Duration::from_secs(60))
        };
        let allow = AllowList::new(["10.0.0.0/8"], []).unwrap();
        let rules = vec![
            fw("plain").key(["header:x-a", "ip"]).build().unwrap(),
            fw("expires")
                .key(["header:x-b", "ip"])
                .expires_at_ms(4_102_444_800_000)
                .build()
                .unwrap(),
            fw("allow")
                .key(["header:x-c", "ip"])
                .allow(allow)
                .build()
                .unwrap(),
            fw("canary")
                .key(["header:x-d", "ip"])
                .canary(10.0)
                .build()
                .unwrap(),
            RuleBuilder::new("distinct")
                .expression(path)
                .distinct("path", 5, Duration::from_secs(60))
                .key(["header:x-e", "ip"])
                .build()
                .unwrap(),
            fw("shared").key(["ip"]).build().unwrap(),
            fw("continues").key(["ip", "method"]).build().unwrap(),
        ];
        let set = RuleSet::from_rules(rules).unwrap();
        let p = Published::new(set, Vec::new(), None);
        let mut plain: Vec<(&str, bool)> = (p.site_wide.iter().chain(&p.others))
            .map(|e| (&*e.id, e.plain))
            .collect();
        plain.sort();
        let want = [
            ("allow", false),
            ("canary", false),
            ("continues", false),
            ("distinct", false),
            ("expires", false),
            ("plain", true),
            ("shared", false),
        ];
        assert_eq!(plain, want);
    }
}
