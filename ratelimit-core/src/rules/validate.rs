//! Validation: everything `docs/rules.md` states about a rule and a rule set.

use super::caps::MAX_SITE_WIDE;
use super::duration::MAX_RFC3339_MS;
use super::error::{RuleError, Warning};
use super::key::{DistinctOf, KeyPart, StatusMatch};
use super::raw::RawRule;
use super::rule::{Action, Charge, FailMode, OnMissingKey, Rule};
use crate::algorithm::MAX_LIMIT;
use crate::Expression;

/// Shortest and longest period or penalty, in ms.
pub(crate) const PERIOD_RANGE_MS: (u64, u64) = (1000, 86_400_000);
/// Most key parts.
pub(crate) const MAX_KEY_PARTS: usize = 5;

/// Validates one rule on its own.
pub(crate) fn rule(raw: RawRule) -> Result<Rule, RuleError> {
    let id = raw.id.as_str();
    let err = |field: &str, m: String| RuleError::new(Some(id), Some(field), m);
    let valid_id = !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if !valid_id {
        return Err(err(
            "id",
            "must be 1 to 64 letters, digits, '-', '_' or '.'".into(),
        ));
    }
    let src = raw.expression.ok_or_else(|| {
        err(
            "expression",
            "is required (\"true\" matches every request)".into(),
        )
    })?;
    let expression = Expression::parse(&src).map_err(|e| err("expression", e.to_string()))?;
    let algorithm = raw
        .algorithm
        .ok_or_else(|| err("algorithm", "is required".into()))?;
    let distinct = algorithm.counts_values();

    let limit = raw
        .limit
        .ok_or_else(|| err("limit", "is required".into()))?;
    let max = algorithm.max_limit();
    if !(1..=max).contains(&limit) {
        return Err(err("limit", format!("must be 1 to {max}")));
    }
    let period_ms = raw
        .period_ms
        .ok_or_else(|| err("period", "is required".into()))?;
    check_span(period_ms).map_err(|m| err("period", m))?;

    let burst = match (algorithm.takes_burst(), raw.burst) {
        (true, None) => {
            return Err(err(
                "burst",
                "is required for token_bucket and leaky_bucket".into(),
            ))
        }
        (true, Some(b)) if !(1..=MAX_LIMIT).contains(&b) => {
            return Err(err("burst", format!("must be 1 to {MAX_LIMIT}")))
        }
        (false, Some(_)) => {
            return Err(err(
                "burst",
                "is only for token_bucket and leaky_bucket".into(),
            ))
        }
        (_, b) => b,
    };

    let distinct_of = match (distinct, raw.distinct_of) {
        (true, None) => return Err(err("distinct_of", "is required for distinct".into())),
        (true, Some(s)) => Some(DistinctOf::parse(&s).map_err(|m| err("distinct_of", m))?),
        (false, Some(_)) => return Err(err("distinct_of", "is only for distinct".into())),
        (false, None) => None,
    };

    let count_statuses = match raw.count_statuses {
        None => Vec::new(),
        Some(list) if list.is_empty() => {
            return Err(err(
                "count_statuses",
                "must list at least one status".into(),
            ))
        }
        Some(_) if !algorithm.takes_cost() => {
            return Err(err("count_statuses", "cannot be used with distinct".into()))
        }
        Some(list) => list
            .iter()
            .map(|s| StatusMatch::parse(s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|m| err("count_statuses", m))?,
    };

    let key_src = raw
        .key
        .ok_or_else(|| err("key", "is required (1 to 5 parts)".into()))?;
    let key = key_parts(&key_src).map_err(|m| err("key", m))?;

    let penalty_ms = raw.penalty_ms;
    if let Some(p) = penalty_ms {
        check_span(p).map_err(|m| err("penalty", m))?;
    }
    let fail_mode = raw.fail_mode.unwrap_or_default();
    if !algorithm.counts_locally() && fail_mode == FailMode::Local {
        return Err(err("fail_mode", "local is refused for distinct (one map per subject per instance would outgrow the local store); use open or closed".into()));
    }
    if raw.canary_bp.is_some() && raw.action == Some(Action::Log) {
        return Err(err(
            "canary",
            "is for blocking rules: a log rule already only logs".into(),
        ));
    }
    if raw.expires_at_ms.is_some_and(|t| t > MAX_RFC3339_MS) {
        return Err(err(
            "expires_at",
            "must be before the year 10000 (RFC 3339 has four-digit years)".into(),
        ));
    }
    let charge = raw.charge.unwrap_or_default();
    if charge == Charge::Response {
        let why = if !algorithm.takes_cost() {
            Some("response is not for distinct (it counts different values, not costs)")
        } else if !count_statuses.is_empty() {
            Some(
                "response is not for count_statuses (a count rule already counts at response time)",
            )
        } else if raw.cost.is_some() {
            Some("response takes its cost from the response: remove cost")
        } else {
            None
        };
        if let Some(m) = why {
            return Err(err("charge", m.into()));
        }
    }
    let cost = raw.cost.unwrap_or(1);
    if cost != 1 && !algorithm.takes_cost() {
        return Err(err("cost", "is not for distinct".into()));
    }
    let cap = burst.unwrap_or(limit);
    if !(1..=cap).contains(&cost) {
        return Err(err(
            "cost",
            format!("must be 1 to {cap} (a larger cost never fits)"),
        ));
    }
    Ok(Rule {
        id: raw.id.clone(),
        expression,
        algorithm,
        limit,
        period_ms,
        burst,
        distinct_of,
        count_statuses,
        key,
        on_missing_key: raw.on_missing_key.unwrap_or_default(),
        action: raw.action.unwrap_or(Action::Block),
        penalty_ms,
        fail_mode,
        expires_at_ms: raw.expires_at_ms,
        ratelimit_headers: raw.ratelimit_headers.unwrap_or(false),
        cost,
        charge,
        allow: raw.allow,
        canary_bp: raw.canary_bp,
    })
}

fn check_span(ms: u64) -> Result<(), String> {
    let (lo, hi) = PERIOD_RANGE_MS;
    if !ms.is_multiple_of(1000) {
        Err("must be whole seconds".into())
    } else if !(lo..=hi).contains(&ms) {
        Err("must be 1s to 24h".into())
    } else {
        Ok(())
    }
}

fn key_parts(src: &[String]) -> Result<Vec<KeyPart>, String> {
    if src.is_empty() || src.len() > MAX_KEY_PARTS {
        return Err(format!("must have 1 to {MAX_KEY_PARTS} parts"));
    }
    let parts = src
        .iter()
        .map(|s| KeyPart::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    if parts.len() > 1 && parts.contains(&KeyPart::Constant) {
        return Err("constant must be the only part".into());
    }
    for (i, p) in parts.iter().enumerate() {
        if parts[..i].contains(p) {
            return Err(format!("{p} appears twice"));
        }
    }
    Ok(parts)
}

/// Validates what holds across rules: unique ids, at most 2 site-wide rules,
/// and a partner for every attacker-controlled key.
pub(crate) fn set(rules: &[&Rule]) -> Result<(), RuleError> {
    for (i, r) in rules.iter().enumerate() {
        if rules[..i].iter().any(|o| o.id == r.id) {
            return Err(RuleError::new(
                Some(&r.id),
                Some("id"),
                "appears twice in the rule set",
            ));
        }
    }
    let site_wide: Vec<&Rule> = rules.iter().copied().filter(|r| r.is_site_wide()).collect();
    if site_wide.len() > MAX_SITE_WIDE {
        let r = site_wide[MAX_SITE_WIDE];
        return Err(RuleError::new(
            Some(&r.id),
            Some("expression"),
            format!("at most {MAX_SITE_WIDE} site-wide rules (expression true) are allowed"),
        ));
    }
    let ip_backstop = rules.iter().any(|r| is_ip_partner(r));
    for r in rules.iter().copied() {
        let exposed = r.key.iter().find(|p| p.attacker_controlled());
        let partnered = r.key.iter().any(KeyPart::is_partner);
        if let (Some(p), false, false) = (exposed, partnered, ip_backstop) {
            return Err(RuleError::new(
                Some(&r.id),
                Some("key"),
                format!(
                    "{p} is chosen by the client: add ip or jwt_claim to the key, or a site-wide \
                 rule keyed on ip that blocks (action block, no canary, no allow list a client \
                 can pass)"
                ),
            ));
        }
    }
    Ok(())
}

/// Whether `r` is the site-wide `ip` rule that partners client-chosen keys:
/// it must count every client in the shared backend and refuse them, so not
/// `distinct`, not charged after the response (a response may cost 0), not
/// log-only, not a canary, not with an allow list every
/// client can pass. One that expires is a partner until then (a warning
/// says so).
fn is_ip_partner(r: &Rule) -> bool {
    r.is_site_wide()
        && r.key == [KeyPart::Ip]
        && r.algorithm.takes_cost()
        && r.is_blocking()
        && !r.charges_response()
        && r.canary_bp.is_none_or(|bp| bp >= 10_000)
        && !r.allow.as_ref().is_some_and(|a| a.bypassable())
}

/// Warnings: a rule set that loads but may not do what its author meant.
pub(crate) fn warnings(rules: &[Rule], now_ms: u64) -> Vec<Warning> {
    let mut out = super::crowding::crowded(rules);
    let mut warn = |r: &Rule, field: &str, m: &str| {
        out.push(Warning {
            rule: r.id.clone(),
            field: field.to_owned(),
            message: m.to_owned(),
        })
    };
    let partners: Vec<&Rule> = rules.iter().filter(|r| is_ip_partner(r)).collect();
    let lasting = partners.iter().any(|p| p.expires_at_ms.is_none());
    for r in rules {
        let exposed = r.key.iter().any(KeyPart::attacker_controlled);
        let partnered = r.key.iter().any(KeyPart::is_partner);
        if exposed && !partnered && !lasting {
            if let Some(p) = partners.first() {
                let m = format!(
                    "the site-wide ip rule {:?} that partners this client-chosen key expires \
                     (expires_at): from then on a client can rotate the value to get a fresh \
                     counter; add ip or jwt_claim to the key",
                    p.id
                );
                warn(r, "key", &m);
            }
        }
        if r.is_count_rule() && r.fail_mode != FailMode::Open {
            warn(
                r,
                "fail_mode",
                "has no effect on a count rule (it counts locally); only open makes sense",
            );
        }
        if r.is_count_rule() && r.ratelimit_headers {
            warn(
                r,
                "ratelimit_headers",
                "count rules send no RateLimit headers",
            );
        }
        if r.expired_at(now_ms) {
            warn(r, "expires_at", "has passed: the rule will not run");
        }
        if r.on_missing_key == OnMissingKey::Skip {
            warn(
                r,
                "on_missing_key",
                "skip lets a client bypass the rule by leaving the value out",
            );
        }
    }
    out
}
