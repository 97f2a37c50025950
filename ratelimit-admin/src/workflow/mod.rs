//! The operator's workflow on rule-set JSON: check a draft, add or
//! replace one rule, move a rule between `log`, a canary and `block`.
//!
//! Pure functions of JSON text (the routes call the [`Control`]); the
//! policy of "Before you block":
//!
//! - a rule that is not in the published set is published as `log`,
//!   whatever the draft says (a note says so);
//! - a rule in `log` goes to `block` only through a canary percentage
//!   first ([`Rollout::Canary`]); a draft that skips it is refused, naming
//!   the rule and the field.
//!
//! [`Control`]: ratelimit_core::control::Control

pub(crate) mod phases;

use ratelimit_core::control::Published;
use ratelimit_core::rules::{Action, RuleSet};
use serde_json::{Map, Value};

/// What checking a draft found.
#[derive(Debug, Default, Clone)]
pub(crate) struct Checked {
    /// The set as it would be published (new rules in `log`), when it loads.
    pub(crate) json: Option<String>,
    /// Why it would not be published: each names the rule and the field.
    pub(crate) errors: Vec<String>,
    /// What loading warns about.
    pub(crate) warnings: Vec<String>,
    /// What publishing changes in it (a new rule added as `log`).
    pub(crate) notes: Vec<String>,
}

impl Checked {
    fn error(e: impl Into<String>) -> Self {
        Self {
            errors: vec![e.into()],
            ..Self::default()
        }
    }
}

/// Where a rule goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Rollout {
    /// Only logs.
    Log,
    /// Blocks for this percentage of subjects (more than 0, less than 100).
    Canary(f64),
    /// Blocks for everyone.
    Block,
}

/// The rules of a set's JSON, as objects.
pub(crate) fn rules_of(json: &str) -> Result<Vec<Map<String, Value>>, String> {
    let v: Value = serde_json::from_str(json).map_err(|e| format!("invalid JSON: {e}"))?;
    let list = match v {
        Value::Array(a) => a,
        Value::Object(mut o) if o.len() == 1 && o.contains_key("rules") => {
            match o.remove("rules") {
                Some(Value::Array(a)) => a,
                _ => return Err("field \"rules\": expected a list of rules".into()),
            }
        }
        _ => return Err("expected a list of rules".into()),
    };
    list.into_iter()
        .enumerate()
        .map(|(i, r)| match r {
            Value::Object(o) => Ok(o),
            _ => Err(format!("rule {}: expected an object", i + 1)),
        })
        .collect()
}

/// A list of rule objects, as pretty JSON.
pub(crate) fn to_json(rules: Vec<Map<String, Value>>) -> String {
    format!(
        "{:#}",
        Value::Array(rules.into_iter().map(Value::Object).collect())
    )
}

fn id_of(r: &Map<String, Value>) -> &str {
    r.get("id").and_then(Value::as_str).unwrap_or("")
}

/// Checks `draft` against the published set `running`: it must load
/// (errors name the rule and the field); new rules become `log`; a rule in
/// `log` may not go straight to `block`.
pub(crate) fn check(draft: &str, running: &RuleSet) -> Checked {
    if draft.len() > Published::MAX_SET_BYTES {
        return Checked::error(format!(
            "the set is {} bytes, more than the {} a publish takes",
            draft.len(),
            Published::MAX_SET_BYTES
        ));
    }
    let mut rules = match rules_of(draft) {
        Ok(r) => r,
        Err(e) => return Checked::error(e),
    };
    let mut out = Checked::default();
    for r in &mut rules {
        let id = id_of(r).to_owned();
        let blocks = r.get("action").and_then(Value::as_str) != Some("log");
        match running.get(&id) {
            None if blocks => {
                r.insert("action".into(), "log".into());
                r.remove("canary");
                out.notes.push(format!(
                    "rule {id:?} is new: it is published as log (shadow mode); \
                     start a canary once its numbers look right"
                ));
            }
            Some(old) if old.action == Action::Log && blocks && !r.contains_key("canary") => {
                out.errors.push(format!(
                    "rule {id:?}, field \"action\": a rule in log goes to block through a \
                     canary first (its Canary button, or \"canary\": 10)"
                ));
            }
            _ => {}
        }
    }
    let json = to_json(rules);
    match RuleSet::from_json(&json) {
        Ok(set) => {
            out.warnings = set.warnings().iter().map(|w| w.to_string()).collect();
            if out.errors.is_empty() {
                out.json = Some(json);
            }
        }
        Err(e) => {
            // Every error of the set (one a line), each a paragraph, first.
            let mut found: Vec<String> = e.to_string().lines().map(str::to_owned).collect();
            found.append(&mut out.errors);
            out.errors = found;
        }
    }
    out
}

/// `json` with rule `id` moved to `to`.
pub(crate) fn set_rollout(json: &str, id: &str, to: Rollout) -> Result<String, String> {
    let mut rules = rules_of(json)?;
    let r = rules
        .iter_mut()
        .find(|r| id_of(r) == id)
        .ok_or_else(|| format!("no rule {id:?} in the published set"))?;
    match to {
        Rollout::Log => {
            r.insert("action".into(), "log".into());
            r.remove("canary");
        }
        Rollout::Canary(pct) => {
            if !(pct > 0.0 && pct < 100.0) {
                return Err(format!(
                    "rule {id:?}, field \"canary\": a canary is more than 0 and less than 100 percent"
                ));
            }
            r.insert("action".into(), "block".into());
            r.insert("canary".into(), pct.into());
        }
        Rollout::Block => {
            r.insert("action".into(), "block".into());
            r.remove("canary");
        }
    }
    Ok(to_json(rules))
}

/// `json` with rule `id` replaced by `rule` (appended when absent; removed
/// when `rule` is `None`).
pub(crate) fn put_rule(
    json: &str,
    id: &str,
    rule: Option<Map<String, Value>>,
) -> Result<String, String> {
    let mut rules = rules_of(json)?;
    let at = rules.iter().position(|r| id_of(r) == id);
    match (at, rule) {
        (Some(i), Some(r)) => rules[i] = r,
        (None, Some(r)) => rules.push(r),
        (Some(i), None) => {
            rules.remove(i);
        }
        (None, None) => {}
    }
    Ok(to_json(rules))
}

/// Rule `id`'s object in `json`.
pub(crate) fn rule_of(json: &str, id: &str) -> Option<Map<String, Value>> {
    rules_of(json).ok()?.into_iter().find(|r| id_of(r) == id)
}

#[cfg(test)]
mod tests;
