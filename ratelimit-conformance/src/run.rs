//! Playing one case: every step, every expectation, and the invariants that
//! hold on every case.

use ratelimit_core::control::Published;
use ratelimit_core::rules::{RuleError, RuleSet};

use crate::case::{Case, Expect, Step, ORIGIN_MS};
use crate::harness::{attrs, Harness, Reply};

/// Reads a case file.
///
/// # Errors
///
/// Unreadable file, bad JSON, or a field the runner does not know.
pub fn load_case(path: &std::path::Path) -> Result<Case, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Loads the case's rule set, judging expiry at the origin.
///
/// # Errors
///
/// The rule set is invalid.
pub fn rule_set(case: &Case) -> Result<RuleSet, RuleError> {
    RuleSet::from_json_at(&case.rules.to_string(), ORIGIN_MS)
}

/// Checks a case with `expect_invalid`: loading must fail naming a rule id
/// of the case.
///
/// # Errors
///
/// What went wrong, for the report.
pub fn check_invalid(case: &Case) -> Result<(), String> {
    if case.steps.is_some() {
        return Err("expect_invalid and steps together".into());
    }
    let ids: Vec<String> = case
        .rules
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|r| r.get("id")?.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    match rule_set(case) {
        Ok(_) => Err("the rule set loaded, but must be refused".into()),
        Err(e) => match e.rule() {
            Some(id) if ids.iter().any(|i| i == id) => Ok(()),
            _ => Err(format!(
                "refused, but the error names no rule of the case: {e}"
            )),
        },
    }
}

fn ms(secs: f64) -> Result<u64, String> {
    if !(secs.is_finite() && secs >= 0.0) {
        return Err(format!("bad time {secs}"));
    }
    Ok(ORIGIN_MS + (secs * 1000.0).round() as u64)
}

/// Plays every step of `case` against `h`.
///
/// # Errors
///
/// The first expectation or invariant that does not hold.
pub async fn play<H: Harness>(case: &Case, h: &mut H) -> Result<(), String> {
    let steps = case
        .steps
        .as_deref()
        .ok_or("a case needs steps or expect_invalid")?;
    if case.expect_invalid.is_some() {
        return Err("expect_invalid and steps together".into());
    }
    let mut last = 0.0f64;
    for (n, step) in steps.iter().enumerate() {
        if step.at < last {
            return Err(format!("step {n}: time goes backwards"));
        }
        last = step.at;
        play_step(n, step, h).await?;
    }
    Ok(())
}

async fn play_step<H: Harness>(n: usize, step: &Step, h: &mut H) -> Result<(), String> {
    if let Some(rules) = &step.publish {
        let alone = step.valkey.is_none() && step.request.is_none() && step.expect.is_none();
        if !alone || step.repeat.is_some() || step.every.is_some() || step.instance.is_some() {
            return Err(format!("step {n}: publish goes alone"));
        }
        let set = Published::check_set(&rules.to_string(), Published::SCHEMA)
            .map_err(|e| format!("step {n}: publish refused: {e}"))?;
        return h.publish(set).map_err(|e| format!("step {n}: {e}"));
    }
    if step.instance.is_some() && step.request.is_none() {
        return Err(format!("step {n}: instance goes with a request"));
    }
    match (&step.valkey, &step.request, &step.expect) {
        (Some(state), None, None) if step.repeat.is_none() && step.every.is_none() => {
            let up = match state.as_str() {
                "down" => false,
                "up" => true,
                other => {
                    return Err(format!(
                        "step {n}: valkey must be down or up, not {other:?}"
                    ))
                }
            };
            h.set_backend_up(up).map_err(|e| format!("step {n}: {e}"))
        }
        (None, Some(req), Some(expect)) => {
            let instance = step.instance.unwrap_or(0) as usize;
            h.use_instance(instance)
                .map_err(|e| format!("step {n}: {e}"))?;
            let repeat = step.repeat.unwrap_or(1);
            let every = step.every.unwrap_or(0.0);
            for i in 0..repeat {
                let at = step.at + every * i as f64;
                let attrs = attrs(req).map_err(|e| format!("step {n}: {e}"))?;
                let reply = h
                    .request(
                        ms(at)?,
                        attrs,
                        req.upstream_status.unwrap_or(200),
                        req.response_cost.unwrap_or(0),
                    )
                    .await;
                verify(expect, &reply)
                    .map_err(|e| format!("step {n} (at {at:.3}s, #{}): {e}", i + 1))?;
            }
            Ok(())
        }
        _ => Err(format!(
            "step {n}: needs request and expect, or valkey alone, or publish alone"
        )),
    }
}

/// Checks one answer against its expectation and the invariants.
fn verify(expect: &Expect, reply: &Reply) -> Result<(), String> {
    let retry = reply.header("Retry-After");
    if reply.status == 429 {
        match retry.and_then(|r| r.parse::<u64>().ok()) {
            Some(s) if s >= 1 => {}
            _ => return Err(format!("a 429 needs Retry-After >= 1, got {retry:?}")),
        }
    }
    if reply.status == 503 && retry != Some("1") {
        return Err(format!("a 503 needs Retry-After: 1, got {retry:?}"));
    }
    if !expect.status.contains(reply.status) {
        return Err(format!(
            "expected status {:?}, got {} (Retry-After {retry:?})",
            expect.status, reply.status
        ));
    }
    if let Some(want) = expect.retry_after {
        if retry != Some(want.to_string().as_str()) {
            return Err(format!("expected Retry-After {want}, got {retry:?}"));
        }
    }
    for (name, want) in expect.headers.iter().flatten() {
        let want = want
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| want.to_string());
        let got = reply.header(name);
        if got != Some(want.as_str()) {
            return Err(format!("expected header {name}: {want}, got {got:?}"));
        }
    }
    if let Some(want) = &expect.would_limit {
        let (mut a, mut b) = (want.clone(), reply.would_limit.clone());
        a.sort();
        b.sort();
        if a != b {
            return Err(format!(
                "expected would_limit {want:?}, got {:?}",
                reply.would_limit
            ));
        }
    }
    Ok(())
}
