//! What the page shows, read from the limiter through its public API, and
//! the same as JSON.

use ratelimit_core::limiter::RuleStats;
use ratelimit_core::rules::Action;
use ratelimit_core::{KeyDigest, Limiter};
use serde_json::{json, Value};

/// How a counter is read from a rule's statistics.
type Counter = fn(&RuleStats) -> u64;

/// The counters shown per rule, in order, with their JSON names.
pub(crate) const EVENTS: [(Counter, &str); 8] = [
    (RuleStats::allowed, "allowed"),
    (RuleStats::limited, "limited"),
    (RuleStats::would_limit, "would_limit"),
    (RuleStats::fail_open, "fail_open"),
    (RuleStats::fail_closed, "fail_closed"),
    (RuleStats::expired, "expired"),
    (RuleStats::allowlisted, "allowlisted"),
    (RuleStats::capped, "capped"),
];

/// The place of `would_limit` in [`EVENTS`].
const WOULD_LIMIT: usize = 2;

/// The switches, with their form names and descriptions.
pub(crate) const SWITCHES: [(&str, &str); 3] = [
    (
        "disable_rate_limiting",
        "every rule only logs (the backstop still applies)",
    ),
    (
        "disable_config_blocking",
        "the rules of the published rule set only log; rules added at run time keep blocking",
    ),
    ("disable_jwt", "every JWT claim counts as missing"),
];

/// Peeks per page load at most (each may be a backend round trip).
const MAX_PEEKS: usize = 256;

/// One rule's row.
#[derive(Debug)]
pub(crate) struct RuleRow {
    pub(crate) id: String,
    pub(crate) blocking: bool,
    pub(crate) algorithm: &'static str,
    pub(crate) limit: u64,
    pub(crate) period_s: u64,
    pub(crate) key: String,
    pub(crate) expression: String,
    pub(crate) penalty_s: Option<u64>,
    /// Added at run time (`Limiter::add_temporary`), not in the rule set.
    pub(crate) temporary: bool,
    pub(crate) counts: [u64; 8],
    /// Subjects limited (or, for a log rule, that would have been) most.
    pub(crate) top: Vec<TopRow>,
}

/// A subject among a rule's heaviest hitters.
#[derive(Debug, Clone)]
pub(crate) struct TopRow {
    /// The identity (what a lift names).
    pub(crate) subject: KeyDigest,
    /// Sightings (an upper bound).
    pub(crate) count: u64,
    /// The client, readable (credentials redacted), when known.
    pub(crate) label: Option<String>,
}

impl RuleRow {
    /// `block`, `log`, with `(temporary)` for a rule added at run time.
    pub(crate) fn action_label(&self) -> &'static str {
        match (self.blocking, self.temporary) {
            (true, false) => "block",
            (false, false) => "log",
            (true, true) => "block (temporary)",
            (false, true) => "log (temporary)",
        }
    }

    /// Requests over the limit of the rule in `log`, let through.
    pub(crate) fn would_limit(&self) -> u64 {
        self.counts[WOULD_LIMIT]
    }
}

/// A penalty in force.
#[derive(Debug)]
pub(crate) struct Penalty {
    pub(crate) rule: String,
    pub(crate) subject: KeyDigest,
    /// The client, readable, when the rule's top subjects know it.
    pub(crate) label: Option<String>,
    pub(crate) until_ms: u64,
    pub(crate) remaining_s: u64,
}

/// Everything the page shows.
#[derive(Debug)]
pub(crate) struct Snapshot {
    pub(crate) now_ms: u64,
    pub(crate) switches: [bool; 3],
    pub(crate) rules: Vec<RuleRow>,
    pub(crate) penalties: Vec<Penalty>,
    pub(crate) capped: u64,
    pub(crate) backstop_limited: u64,
    pub(crate) penalty_cache_len: usize,
    pub(crate) penalty_cache_dropped: u64,
    pub(crate) local_untracked: u64,
    pub(crate) rules_json: String,
}

impl Snapshot {
    /// Reads the limiter; peeks the top subjects of rules with a penalty to
    /// list the penalties in force.
    pub(crate) async fn read(limiter: &Limiter) -> Self {
        use std::sync::atomic::Ordering::Relaxed;
        let set = limiter.rules();
        let mut rules = Vec::new();
        let temporary = limiter.temporary_rules();
        let all = set.rules().iter().map(|r| (r, false));
        for (r, temporary) in all.chain(temporary.iter().map(|r| (r, true))) {
            let stats = limiter.rule_stats(&r.id);
            let counts = EVENTS.map(|(get, _)| stats.as_ref().map_or(0, |s| get(s)));
            let top = stats.as_ref().map(|s| top_rows(s)).unwrap_or_default();
            rules.push(RuleRow {
                id: r.id.clone(),
                blocking: r.action == Action::Block,
                algorithm: r.algorithm.as_str(),
                limit: r.limit,
                period_s: r.period_ms / 1000,
                key: r
                    .key
                    .iter()
                    .map(|k| k.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                expression: r.expression.source().to_owned(),
                penalty_s: r.penalty_ms.map(|p| p / 1000),
                temporary,
                counts,
                top,
            });
        }
        let now_ms = limiter.now_ms();
        let mut penalties = Vec::new();
        let mut peeks = 0;
        for row in rules.iter().filter(|r| r.blocking && r.penalty_s.is_some()) {
            for t in &row.top {
                if peeks == MAX_PEEKS {
                    break;
                }
                peeks += 1;
                let Ok(d) = limiter.peek_subject(&row.id, t.subject).await else {
                    continue;
                };
                if let Some(until) = d.blocked_until_ms.filter(|u| *u > now_ms) {
                    penalties.push(Penalty {
                        rule: row.id.clone(),
                        subject: t.subject,
                        label: t.label.clone(),
                        until_ms: until,
                        remaining_s: (until - now_ms).div_ceil(1000),
                    });
                }
            }
        }
        let sw = limiter.switches();
        let stats = limiter.stats();
        Self {
            now_ms,
            switches: [
                sw.rate_limiting_disabled(),
                sw.config_blocking_disabled(),
                sw.jwt_disabled(),
            ],
            rules,
            penalties,
            capped: stats.capped.load(Relaxed),
            backstop_limited: stats.backstop_limited.load(Relaxed),
            penalty_cache_len: limiter.penalty_cache().len(),
            penalty_cache_dropped: limiter.penalty_cache().dropped(),
            local_untracked: limiter.local_untracked(),
            rules_json: set.to_json(),
        }
    }

    /// The rules that would have limited requests: log rules over their
    /// limit, and blocking rules while a switch makes them log.
    pub(crate) fn needs_attention(&self) -> impl Iterator<Item = &RuleRow> {
        self.rules.iter().filter(|r| r.would_limit() > 0)
    }

    /// The JSON behind the page.
    pub(crate) fn to_json(&self) -> Value {
        let top = |t: &[TopRow]| -> Vec<Value> {
            t.iter()
                .map(
                    |t| json!({"subject": t.subject.to_hex(), "client": t.label, "count": t.count}),
                )
                .collect()
        };
        let rules: Vec<Value> = self
            .rules
            .iter()
            .map(|r| {
                let counts: serde_json::Map<String, Value> = EVENTS
                    .iter()
                    .zip(r.counts)
                    .map(|((_, name), n)| ((*name).to_owned(), n.into()))
                    .collect();
                json!({
                    "id": r.id,
                    "action": if r.blocking { "block" } else { "log" },
                    "algorithm": r.algorithm,
                    "limit": r.limit,
                    "period_s": r.period_s,
                    "key": r.key,
                    "expression": r.expression,
                    "penalty_s": r.penalty_s,
                    "temporary": r.temporary,
                    "counts": counts,
                    "top_limited": top(&r.top),
                })
            })
            .collect();
        let attention: Vec<Value> = self
            .needs_attention()
            .map(|r| {
                json!({
                    "id": r.id,
                    "would_limit": r.would_limit(),
                    "subjects": top(&r.top),
                })
            })
            .collect();
        let penalties: Vec<Value> = self
            .penalties
            .iter()
            .map(|p| {
                json!({
                    "rule": p.rule,
                    "subject": p.subject.to_hex(),
                    "client": p.label,
                    "blocked_until_ms": p.until_ms,
                    "remaining_s": p.remaining_s,
                })
            })
            .collect();
        let switches: serde_json::Map<String, Value> = SWITCHES
            .iter()
            .zip(self.switches)
            .map(|((name, _), on)| ((*name).to_owned(), on.into()))
            .collect();
        json!({
            "now_ms": self.now_ms,
            "switches": switches,
            "limiter": {
                "capped": self.capped,
                "backstop_limited": self.backstop_limited,
                "penalty_cache_len": self.penalty_cache_len,
                "penalty_cache_dropped": self.penalty_cache_dropped,
                "local_untracked": self.local_untracked,
            },
            "rules": rules,
            "needs_attention": attention,
            "penalties": penalties,
        })
    }
}

/// A rule's heaviest hitters, for the page.
fn top_rows(stats: &ratelimit_core::limiter::RuleStats) -> Vec<TopRow> {
    stats
        .top_hitters()
        .into_iter()
        .map(|h| TopRow {
            subject: h.subject,
            count: h.count,
            label: h.label,
        })
        .collect()
}

/// Parses a subject's 32-character hex digest.
pub(crate) fn parse_subject(hex: &str) -> Option<KeyDigest> {
    if hex.len() != 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(KeyDigest(out))
}

#[cfg(test)]
mod tests;
