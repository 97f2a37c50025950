//! What one instance tells the fleet about itself.

use super::SwitchState;
use crate::stats::{Event, TopSubject};
use crate::Limiter;

/// Cumulative counters of one rule on one instance (or, summed, on the
/// fleet), as [`crate::stats::RuleStats`] keeps them.
///
/// Exhaustive on purpose: a control store outside this crate
/// (`ratelimit-valkey`, a test's fake) builds it field by field from what
/// it stored; a new field changes the stored schema, a breaking release.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleCounts {
    /// The rule id.
    pub rule: String,
    /// Requests the rule decided: the sum of the five counts below.
    pub requests: u64,
    /// Admitted.
    pub allowed: u64,
    /// Refused by the rule (blocking).
    pub limited: u64,
    /// Over the limit of the rule in `log` (or under a switch), let through.
    pub would_limit: u64,
    /// Let through because the backend did not answer.
    pub fail_open: u64,
    /// Refused (503) because the backend did not answer.
    pub fail_closed: u64,
}

impl RuleCounts {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &RuleCounts) {
        self.requests += other.requests;
        self.allowed += other.allowed;
        self.limited += other.limited;
        self.would_limit += other.would_limit;
        self.fail_open += other.fail_open;
        self.fail_closed += other.fail_closed;
    }
}

/// One instance's report to the fleet's registry.
///
/// Exhaustive on purpose: a control store outside this crate
/// (`ratelimit-valkey`, a test's fake) builds it field by field from what
/// it stored; a new field changes the stored schema, a breaking release.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InstanceReport {
    /// The instance's unique name.
    pub id: String,
    /// The published version it runs (0: none yet, its start-up set).
    pub running_version: u64,
    /// The [`Published::SCHEMA`](super::Published::SCHEMA) it reads.
    pub schema: u32,
    /// When it reported, in milliseconds since the Unix epoch.
    pub last_report_ms: u64,
    /// The last version it refused to load, and why.
    pub refused: Option<(u64, String)>,
    /// Its per-rule counters.
    pub rules: Vec<RuleCounts>,
    /// Its top subjects per rule.
    pub top: Vec<TopSubject>,
    /// The switches it runs (`None` from a build that does not say).
    pub switches: Option<SwitchState>,
    /// The last lift it applied (its sequence number; 0: none).
    pub lift_seq: u64,
    /// The rules added at run time it runs: id and `expires_at` (Unix ms).
    pub temporary: Vec<(String, u64)>,
    /// The parts of the control state it cannot read, each naming the
    /// key and what it should hold.
    pub problems: Vec<String>,
}

impl InstanceReport {
    /// Reads `limiter`'s counters into a report of instance `id` running
    /// `running_version`, at the limiter's clock.
    ///
    /// # Examples
    ///
    /// ```
    /// use ratelimit_core::control::InstanceReport;
    /// use ratelimit_core::rules::RuleSet;
    /// use ratelimit_core::Limiter;
    ///
    /// let rules = RuleSet::from_json(r#"[{"id": "api", "expression": "true",
    ///     "algorithm": "fixed_window", "limit": 1, "period": "1m", "key": ["ip"]}]"#).unwrap();
    /// let limiter = Limiter::new(rules);
    /// let report = InstanceReport::of(&limiter, "edge-1", 3, None);
    /// assert_eq!((report.id.as_str(), report.running_version), ("edge-1", 3));
    /// assert_eq!(report.rules[0].rule, "api");
    /// ```
    pub fn of(
        limiter: &Limiter,
        id: &str,
        running_version: u64,
        refused: Option<(u64, String)>,
    ) -> Self {
        let mut rules = Vec::new();
        let mut top = Vec::new();
        let set = limiter.rules();
        let temporary = limiter.temporary_rules();
        let ids = set.rules().iter().chain(&temporary).map(|r| r.id.as_str());
        for rule in ids {
            let Some(stats) = limiter.rule_stats(rule) else {
                continue;
            };
            let get = |e| stats.get(e);
            let mut c = RuleCounts {
                rule: rule.to_owned(),
                allowed: get(Event::Allowed),
                limited: get(Event::Limited),
                would_limit: get(Event::WouldLimit),
                fail_open: get(Event::FailOpen),
                fail_closed: get(Event::FailClosed),
                ..RuleCounts::default()
            };
            c.requests = c.allowed + c.limited + c.would_limit + c.fail_open + c.fail_closed;
            rules.push(c);
            top.extend(stats.top_hitters());
        }
        InstanceReport {
            id: id.to_owned(),
            running_version,
            schema: super::Published::SCHEMA,
            last_report_ms: limiter.now_ms(),
            refused,
            rules,
            top,
            switches: Some(SwitchState::of(limiter.switches())),
            lift_seq: 0,
            temporary: temporary
                .iter()
                .map(|r| (r.id.clone(), r.expires_at_ms.unwrap_or(0)))
                .collect(),
            problems: Vec::new(),
        }
    }
}
