//! Validation: everything `docs/rules.md` states about a rule and a rule set.

use super::caps::MAX_SITE_WIDE;
use super::duration::MAX_RFC3339_MS;
use super::error::{RuleError, Warning};
use super::parts::{DistinctOf, KeyPart, StatusMatch};
use super::raw::RawRule;
use super::rule::{Action, Charge, FailMode, OnMissingKey, Rule};
use crate::algorithm::{Algorithm, MAX_LIMIT};
use crate::Expression;

/// Shortest and longest period or penalty, in ms.
pub(crate) const PERIOD_RANGE_MS: (u64, u64) = (1000, 86_400_000);
/// Most key parts.
pub(crate) const MAX_KEY_PARTS: usize = 5;

/// A field at fault and why: what each step of [`rule`] answers, named
/// with the rule's id once.
type Fault = (&'static str, String);

/// `Err((field, message))`.
fn fault<T>(field: &'static str, message: impl Into<String>) -> Result<T, Fault> {
    Err((field, message.into()))
}

/// The faults of one rule, at most one a field (the first found): every
/// step reports here, and the rule is refused with all of them.
struct Faults(Vec<(String, String)>);

impl Faults {
    /// The step's value, or `None` with its fault kept.
    fn take<T>(&mut self, step: Result<T, Fault>) -> Option<T> {
        step.map_err(|(field, m)| {
            if !self.0.iter().any(|(f, _)| f == field) {
                self.0.push((field.to_owned(), m));
            }
        })
        .ok()
    }

    /// The rule's error: every fault, named with its id.
    fn error(self, id: &str) -> RuleError {
        let all = self
            .0
            .into_iter()
            .map(|(field, m)| RuleError::new(Some(id), Some(&field), m));
        RuleError::all(all).unwrap_or_else(|| RuleError::new(Some(id), None, "is invalid"))
    }
}

/// Validates one rule on its own: each step checks its fields in the order
/// `docs/rules.md` gives, and every field at fault is reported (a field
/// read badly from the JSON first), named with the rule's id. A check that
/// depends on the algorithm runs once the algorithm is known.
pub(crate) fn rule(mut raw: RawRule) -> Result<Rule, RuleError> {
    let mut f = Faults(std::mem::take(&mut raw.faults));
    f.take(id(&raw.id));
    let expression = f.take(expression(&raw));
    let algorithm = f.take(raw.algorithm.ok_or(("algorithm", "is required".into())));
    let limit = algorithm.and_then(|a| f.take(limit(&raw, a)));
    let period_ms = f.take(period(&raw));
    let burst = algorithm.and_then(|a| f.take(burst(&raw, a)));
    let distinct_of = algorithm.and_then(|a| f.take(distinct_of(&raw, a)));
    let count_statuses = algorithm.and_then(|a| f.take(count_statuses(&raw, a)));
    let key = f.take(key(&raw));
    f.take(penalty(&raw));
    let fail_mode = f.take(fail_mode(&raw, algorithm));
    f.take(canary_and_expiry(&raw));
    let charged = match (algorithm, limit, burst, &count_statuses) {
        (Some(a), Some(limit), Some(burst), Some(statuses)) => {
            f.take(charge_and_cost(&raw, a, statuses, burst.unwrap_or(limit)))
        }
        _ => None,
    };
    let (
        Some(expression),
        Some(algorithm),
        Some(limit),
        Some(period_ms),
        Some(burst),
        Some(distinct_of),
        Some(count_statuses),
        Some(key),
        Some(fail_mode),
        Some((charge, cost)),
        true,
    ) = (
        expression,
        algorithm,
        limit,
        period_ms,
        burst,
        distinct_of,
        count_statuses,
        key,
        fail_mode,
        charged,
        f.0.is_empty(),
    )
    else {
        return Err(f.error(&raw.id));
    };
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
        penalty_ms: raw.penalty_ms,
        fail_mode,
        expires_at_ms: raw.expires_at_ms,
        ratelimit_headers: raw.ratelimit_headers.unwrap_or(false),
        cost,
        charge,
        allow: raw.allow,
        canary_bp: raw.canary_bp,
    })
}

/// The id: 1 to 64 letters, digits, `-`, `_` or `.`.
fn id(id: &str) -> Result<(), Fault> {
    let valid_id = !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if !valid_id {
        return fault("id", "must be 1 to 64 letters, digits, '-', '_' or '.'");
    }
    Ok(())
}

/// The expression, parsed.
fn expression(raw: &RawRule) -> Result<Expression, Fault> {
    let Some(src) = &raw.expression else {
        return fault("expression", "is required (\"true\" matches every request)");
    };
    Expression::parse(src).map_err(|e| ("expression", e.to_string()))
}

/// The limit, in the algorithm's range.
fn limit(raw: &RawRule, algorithm: Algorithm) -> Result<u64, Fault> {
    let limit = raw.limit.ok_or(("limit", "is required".into()))?;
    let max = algorithm.max_limit();
    if !(1..=max).contains(&limit) {
        return fault("limit", format!("must be 1 to {max}"));
    }
    Ok(limit)
}

/// The period: whole seconds, 1s to 24h.
fn period(raw: &RawRule) -> Result<u64, Fault> {
    let period_ms = raw.period_ms.ok_or(("period", "is required".into()))?;
    check_span(period_ms).map_err(|m| ("period", m))?;
    Ok(period_ms)
}

/// The burst: required by the buckets, refused by the others.
fn burst(raw: &RawRule, algorithm: Algorithm) -> Result<Option<u64>, Fault> {
    match (algorithm.takes_burst(), raw.burst) {
        (true, None) => fault("burst", "is required for token_bucket and leaky_bucket"),
        (true, Some(b)) if !(1..=MAX_LIMIT).contains(&b) => {
            fault("burst", format!("must be 1 to {MAX_LIMIT}"))
        }
        (false, Some(_)) => fault("burst", "is only for token_bucket and leaky_bucket"),
        (_, b) => Ok(b),
    }
}

/// The key's parts.
fn key(raw: &RawRule) -> Result<Vec<KeyPart>, Fault> {
    let src = raw
        .key
        .as_deref()
        .ok_or(("key", "is required (1 to 5 parts)".into()))?;
    key_parts(src).map_err(|m| ("key", m))
}

/// What an algorithm that counts values counts the values of.
fn distinct_of(raw: &RawRule, algorithm: Algorithm) -> Result<Option<DistinctOf>, Fault> {
    match (algorithm.counts_values(), &raw.distinct_of) {
        (true, None) => fault("distinct_of", "is required for distinct"),
        (true, Some(s)) => Ok(Some(DistinctOf::parse(s).map_err(|m| ("distinct_of", m))?)),
        (false, Some(_)) => fault("distinct_of", "is only for distinct"),
        (false, None) => Ok(None),
    }
}

/// The statuses a count rule counts (none: the rule counts requests).
fn count_statuses(raw: &RawRule, algorithm: Algorithm) -> Result<Vec<StatusMatch>, Fault> {
    match &raw.count_statuses {
        None => Ok(Vec::new()),
        Some(list) if list.is_empty() => fault("count_statuses", "must list at least one status"),
        Some(_) if !algorithm.takes_cost() => {
            fault("count_statuses", "cannot be used with distinct")
        }
        Some(list) => list
            .iter()
            .map(|s| StatusMatch::parse(s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|m| ("count_statuses", m)),
    }
}

/// The penalty: whole seconds, 1s to 24h.
fn penalty(raw: &RawRule) -> Result<(), Fault> {
    match raw.penalty_ms {
        Some(p) => check_span(p).map_err(|m| ("penalty", m)),
        None => Ok(()),
    }
}

/// The fail mode (`local` judged once the algorithm is known).
fn fail_mode(raw: &RawRule, algorithm: Option<Algorithm>) -> Result<FailMode, Fault> {
    let fail_mode = raw.fail_mode.unwrap_or_default();
    if algorithm.is_some_and(|a| !a.counts_locally()) && fail_mode == FailMode::Local {
        return fault("fail_mode", "local is refused for distinct (one map per subject per instance would outgrow the local store); use open or closed");
    }
    Ok(fail_mode)
}

/// The canary (for blocking rules) and the expiry (a four-digit year).
fn canary_and_expiry(raw: &RawRule) -> Result<(), Fault> {
    if raw.canary_bp.is_some() && raw.action == Some(Action::Log) {
        return fault(
            "canary",
            "is for blocking rules: a log rule already only logs",
        );
    }
    if raw.expires_at_ms.is_some_and(|t| t > MAX_RFC3339_MS) {
        return fault(
            "expires_at",
            "must be before the year 10000 (RFC 3339 has four-digit years)",
        );
    }
    Ok(())
}

/// When the cost is counted, and the cost: at most `cap` (the burst, or
/// the limit).
fn charge_and_cost(
    raw: &RawRule,
    algorithm: Algorithm,
    count_statuses: &[StatusMatch],
    cap: u64,
) -> Result<(Charge, u64), Fault> {
    let charge = raw.charge.unwrap_or_default();
    if charge == Charge::Response {
        if !algorithm.takes_cost() {
            return fault(
                "charge",
                "response is not for distinct (it counts different values, not costs)",
            );
        } else if !count_statuses.is_empty() {
            return fault(
                "charge",
                "response is not for count_statuses (a count rule already counts at response time)",
            );
        } else if raw.cost.is_some() {
            return fault(
                "charge",
                "response takes its cost from the response: remove cost",
            );
        }
    }
    let cost = raw.cost.unwrap_or(1);
    if cost != 1 && !algorithm.takes_cost() {
        return fault("cost", "is not for distinct");
    }
    if !(1..=cap).contains(&cost) {
        return fault(
            "cost",
            format!("must be 1 to {cap} (a larger cost never fits)"),
        );
    }
    Ok((charge, cost))
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
/// and a partner for every attacker-controlled key; every error found.
pub(crate) fn set(rules: &[&Rule]) -> Result<(), RuleError> {
    let mut errors = Vec::new();
    for (i, r) in rules.iter().enumerate() {
        if rules[..i].iter().any(|o| o.id == r.id) {
            errors.push(RuleError::new(
                Some(&r.id),
                Some("id"),
                "appears twice in the rule set",
            ));
        }
    }
    let site_wide: Vec<&Rule> = rules.iter().copied().filter(|r| r.is_site_wide()).collect();
    if let Some(r) = site_wide.get(MAX_SITE_WIDE) {
        errors.push(RuleError::new(
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
            errors.push(RuleError::new(
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
    RuleError::all(errors).map_or(Ok(()), Err)
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
