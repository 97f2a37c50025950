//! What the workflow records with each published version (its
//! annotations): when each rule entered its phase (`log` or a canary) and
//! the fleet's counters then, and for a canary the log phase's baseline
//! the rollback guard compares with.
//!
//! | annotation | value |
//! | --- | --- |
//! | `phase.<rule>` | `log` or `canary` |
//! | `phase.<rule>.since_ms` | when the phase began (Unix ms) |
//! | `phase.<rule>.start` | the fleet's `requests,would_limit,limited` of the rule then |
//! | `guard.<rule>.baseline` | the log phase: `requests,would_limit,subjects,ms` |
//! | `guard.<rule>.bp` | the canary's share, basis points |
//! | `guard.<rule>.subjects` | subjects in the canary's share among the rule's top clients at its start |
//! | `guard.<rule>.previous` | the rule's JSON before the canary (what the guard returns to) |
//! | `rolled_back.<rule>` | why the guard returned the rule to its previous version |
//!
//! A version's annotations for rules it did not change are carried from
//! the version before; a rule that changed starts afresh.

use std::collections::BTreeMap;

use ratelimit_core::control::{FleetView, Published};
use ratelimit_core::rules::RuleSet;
use serde_json::{Map, Value};

use crate::guard::Phase;

/// One rule's counters summed over the fleet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Totals {
    pub(crate) requests: u64,
    pub(crate) would_limit: u64,
    pub(crate) limited: u64,
}

impl Totals {
    pub(crate) fn of(view: &FleetView, rule: &str) -> Self {
        view.rule_totals()
            .into_iter()
            .find(|c| c.rule == rule)
            .map_or_else(Totals::default, |c| Totals {
                requests: c.requests,
                would_limit: c.would_limit,
                limited: c.limited,
            })
    }

    fn encode(&self) -> String {
        format!("{},{},{}", self.requests, self.would_limit, self.limited)
    }

    fn decode(s: &str) -> Option<Self> {
        let mut n = s.split(',').map(|x| x.trim().parse::<u64>());
        let t = Totals {
            requests: n.next()?.ok()?,
            would_limit: n.next()?.ok()?,
            limited: n.next()?.ok()?,
        };
        n.next().is_none().then_some(t)
    }
}

/// The distinct clients of `rule` in the fleet's top lists that `in_share`
/// keeps.
pub(crate) fn subjects(
    view: &FleetView,
    rule: &str,
    in_share: impl Fn(&ratelimit_core::KeyDigest) -> bool,
) -> u64 {
    view.top_subjects(rule)
        .iter()
        .filter(|t| in_share(&t.subject))
        .count() as u64
}

fn rules_by_id(json: &str) -> BTreeMap<String, Map<String, Value>> {
    super::rules_of(json)
        .unwrap_or_default()
        .into_iter()
        .map(|r| (super::id_of(&r).to_owned(), r))
        .collect()
}

/// The annotations of a version publishing `json` after `current`: a
/// rule unchanged keeps its own; a rule new or changed starts its phase
/// now (`log`, or `canary` when it blocks under one) with the fleet's
/// counters of it.
pub(crate) fn carry(
    current: Option<&Published>,
    json: &str,
    view: &FleetView,
    now_ms: u64,
) -> BTreeMap<String, String> {
    let before = current.map(|p| rules_by_id(&p.json)).unwrap_or_default();
    let empty = BTreeMap::new();
    let old = current.map_or(&empty, |p| &p.annotations);
    let mut out = BTreeMap::new();
    for (id, rule) in rules_by_id(json) {
        let mine = |k: &str| {
            k == format!("phase.{id}")
                || k.starts_with(&format!("phase.{id}."))
                || k.starts_with(&format!("guard.{id}."))
                || k == format!("rolled_back.{id}")
        };
        if before.get(&id) == Some(&rule) {
            out.extend(
                old.iter()
                    .filter(|(k, _)| mine(k))
                    .map(|(k, v)| (k.clone(), v.clone())),
            );
            continue;
        }
        let phase = match (
            rule.get("action").and_then(Value::as_str),
            rule.get("canary"),
        ) {
            (Some("log"), _) => "log",
            (_, Some(_)) => "canary",
            _ => continue,
        };
        out.insert(format!("phase.{id}"), phase.into());
        out.insert(format!("phase.{id}.since_ms"), now_ms.to_string());
        out.insert(format!("phase.{id}.start"), Totals::of(view, &id).encode());
    }
    out
}

/// Records, in `ann` (the new version's annotations from [`carry`]), the
/// log phase of rule `id` that a canary of `bp` basis points ends, as the
/// guard's baseline; `current` is the version it ran in `log` under.
pub(crate) fn start_canary(
    ann: &mut BTreeMap<String, String>,
    current: Option<&Published>,
    id: &str,
    set: &RuleSet,
    bp: u32,
    view: &FleetView,
    now_ms: u64,
) {
    let get = |k: String| current.and_then(|p| p.annotations.get(&k).cloned());
    let start = get(format!("phase.{id}.start"))
        .and_then(|s| Totals::decode(&s))
        .unwrap_or_default();
    // A log phase the control did not record has no length: no baseline.
    let since = get(format!("phase.{id}.since_ms"))
        .and_then(|s| s.parse().ok())
        .unwrap_or(now_ms);
    let now = Totals::of(view, id);
    let baseline = Phase::new(
        now.requests.saturating_sub(start.requests),
        now.would_limit.saturating_sub(start.would_limit),
        subjects(view, id, |_| true),
        now_ms.saturating_sub(since),
    );
    let previous = current.and_then(|p| super::rule_of(&p.json, id));
    let rule = set.get(id);
    let in_share = |s: &ratelimit_core::KeyDigest| rule.is_some_and(|r| r.canary_includes(s));
    ann.insert(
        format!("guard.{id}.baseline"),
        format!(
            "{},{},{},{}",
            baseline.requests, baseline.over, baseline.subjects, baseline.ms
        ),
    );
    ann.insert(format!("guard.{id}.bp"), bp.to_string());
    ann.insert(
        format!("guard.{id}.subjects"),
        subjects(view, id, in_share).to_string(),
    );
    if let Some(p) = previous {
        ann.insert(format!("guard.{id}.previous"), Value::Object(p).to_string());
    }
}

/// A canary the guard watches, read from a version's annotations.
#[derive(Debug, Clone)]
pub(crate) struct Watch {
    pub(crate) rule: String,
    pub(crate) bp: u32,
    pub(crate) log: Phase,
    pub(crate) start: Totals,
    pub(crate) since_ms: u64,
    pub(crate) subjects_at_start: u64,
    pub(crate) previous: Map<String, Value>,
}

/// The canaries of `p` that have a baseline and a previous version.
pub(crate) fn watches(p: &Published) -> Vec<Watch> {
    let a = &p.annotations;
    let get = |id: &str, k: &str| a.get(&format!("{id}.{k}")).map(String::as_str);
    let mut out = Vec::new();
    for (k, v) in a {
        let Some(id) = k.strip_prefix("phase.").filter(|_| v == "canary") else {
            continue;
        };
        let g = format!("guard.{id}");
        let p = format!("phase.{id}");
        let nums = |s: Option<&str>| -> Option<Vec<u64>> {
            s?.split(',').map(|x| x.parse().ok()).collect()
        };
        let (Some(b), Some(bp), Some(start), Some(since), Some(subj), Some(prev)) = (
            nums(get(&g, "baseline")).filter(|b| b.len() == 4),
            get(&g, "bp").and_then(|s| s.parse().ok()),
            get(&p, "start").and_then(Totals::decode),
            get(&p, "since_ms").and_then(|s| s.parse().ok()),
            get(&g, "subjects").and_then(|s| s.parse().ok()),
            get(&g, "previous").and_then(|s| serde_json::from_str(s).ok()),
        ) else {
            continue;
        };
        out.push(Watch {
            rule: id.to_owned(),
            bp,
            log: Phase::new(b[0], b[1], b[2], b[3]),
            start,
            since_ms: since,
            subjects_at_start: subj,
            previous: prev,
        });
    }
    out
}

/// The rules the guard returned, with why, from `p`'s annotations.
pub(crate) fn rolled_back(p: &Published) -> Vec<(String, String)> {
    p.annotations
        .iter()
        .filter_map(|(k, v)| Some((k.strip_prefix("rolled_back.")?.to_owned(), v.clone())))
        .collect()
}
