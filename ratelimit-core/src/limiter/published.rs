//! A published rule set as the request path reads it: its rules sorted
//! into site-wide, other and count rules, each with its namespace, its
//! stats and what selection may skip (see `publish.rs` for the swap).

use std::sync::Arc;

use crate::backend::Check;
use crate::rules::{FailMode, KeyPart, Rule, RuleSet};
use crate::stats::RuleStats;

/// One published rule.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) rule: Arc<Rule>,
    pub(crate) id: Arc<str>,
    pub(crate) namespace: Arc<str>,
    /// [`crate::backend::Check::namespace_digest_of`] of `namespace`.
    pub(crate) ns_digest: crate::KeyDigest,
    pub(crate) stats: Arc<RuleStats>,
    pub(crate) added_at_run_time: bool,
    /// Whether another rule's key starts with this one's: selection then
    /// keeps this key's hash for it (`subject::KeyPrefix`).
    pub(crate) key_shared: bool,
    /// Decided at publish: no expiry, no allow list, no distinct value, no
    /// canary, and no other rule's key starts with this one's or is the
    /// start of it (no hash to keep or continue). Selection then keys it
    /// with no test but the key itself (`Selector::pick`).
    pub(crate) plain: bool,
    /// The key is the client address alone (`["ip"]`): a plain rule's
    /// subject is then `subject::ip_subject`.
    pub(crate) ip_key: bool,
}

/// A rule set as the request path reads it.
#[derive(Debug, Default)]
pub(crate) struct Published {
    pub(crate) set: RuleSet,
    pub(crate) site_wide: Vec<Arc<Entry>>,
    pub(crate) others: Vec<Arc<Entry>>,
    pub(crate) counts: Vec<Arc<Entry>>,
    pub(crate) local_rules: usize,
    /// Rules added at run time (they must expire within 24 hours).
    pub(crate) temporary: Vec<Arc<Rule>>,
    /// The request headers any rule reads, sorted, lower-case.
    pub(crate) headers_used: Arc<[String]>,
    /// The one rule every request runs, when the set's compiled plan
    /// runs it alone (`compiled.rs`).
    pub(crate) compiled: Option<Arc<Entry>>,
}

impl Published {
    pub(crate) fn new(
        set: RuleSet,
        temporary: Vec<Arc<Rule>>,
        previous: Option<&Published>,
    ) -> Self {
        let mut p = Published {
            set: set.clone(),
            ..Published::default()
        };
        let config = set.rules().iter().map(|r| (r, false));
        let added = temporary.iter().map(|r| (r, true));
        let all: Vec<&Arc<Rule>> = set.rules().iter().chain(&temporary).collect();
        for (i, (rule, added_at_run_time)) in config.chain(added).enumerate() {
            let key_shared = all
                .iter()
                .enumerate()
                .any(|(j, other)| j != i && other.key.starts_with(&rule.key));
            let continues = all
                .iter()
                .enumerate()
                .any(|(j, other)| j != i && rule.key.starts_with(&other.key));
            let plain = !key_shared
                && !continues
                && rule.expires_at_ms.is_none()
                && rule.allow.is_none()
                && rule.distinct_of.is_none()
                && rule.canary_bp.is_none();
            let stats = previous
                .and_then(|old| old.stats_of(&rule.id))
                .unwrap_or_else(|| Arc::new(RuleStats::new(&rule.id)));
            let ns = Check::namespace_of(rule);
            let entry = Arc::new(Entry {
                rule: rule.clone(),
                id: rule.id.as_str().into(),
                ns_digest: crate::backend::Check::namespace_digest_of(&ns),
                namespace: ns.into(),
                stats,
                added_at_run_time,
                key_shared,
                plain,
                ip_key: *rule.key == [KeyPart::Ip],
            });
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
            .chain(&temporary)
            .filter(|r| r.fail_mode == FailMode::Local && !r.is_count_rule())
            .count();
        let mut headers = Vec::new();
        for r in set.rules().iter().chain(&temporary) {
            r.headers_used(&mut headers);
        }
        headers.sort();
        headers.dedup();
        p.headers_used = headers.into();
        p.temporary = temporary;
        p.compiled = p.plan();
        p
    }

    /// The rule the compiled plan (`compiled.rs`) runs for every request
    /// of this set, when it is such a set: one plain site-wide `["ip"]`
    /// rule and nothing else; `None` sends its requests through the
    /// general path.
    fn plan(&self) -> Option<Arc<Entry>> {
        let [e] = self.site_wide.as_slice() else {
            return None;
        };
        let only = self.others.is_empty() && self.counts.is_empty();
        let plain = e.plain && e.ip_key && !e.rule.charges_response();
        (only && plain).then(|| e.clone())
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
