//! A rule as written, before validation; JSON objects become one of these
//! with every type error naming its field.

use serde_json::Value;

use super::allow::AllowList;
use super::duration::{parse_duration_ms, parse_rfc3339_ms};
use super::error::RuleError;
use super::rule::{Action, Charge, FailMode, OnMissingKey};
use crate::algorithm::Algorithm;
use crate::suggest;

/// The fields of a rule as written, each optional until validation.
#[derive(Debug, Clone, Default)]
pub(crate) struct RawRule {
    pub(crate) id: String,
    pub(crate) expression: Option<String>,
    pub(crate) algorithm: Option<Algorithm>,
    pub(crate) limit: Option<u64>,
    pub(crate) period_ms: Option<u64>,
    pub(crate) burst: Option<u64>,
    pub(crate) distinct_of: Option<String>,
    pub(crate) count_statuses: Option<Vec<String>>,
    pub(crate) key: Option<Vec<String>>,
    pub(crate) on_missing_key: Option<OnMissingKey>,
    pub(crate) action: Option<Action>,
    pub(crate) penalty_ms: Option<u64>,
    pub(crate) fail_mode: Option<FailMode>,
    pub(crate) expires_at_ms: Option<u64>,
    pub(crate) ratelimit_headers: Option<bool>,
    pub(crate) cost: Option<u64>,
    pub(crate) allow: Option<AllowList>,
    pub(crate) canary_bp: Option<u32>,
    pub(crate) charge: Option<Charge>,
    /// The fields that could not be read, and why, in the order written:
    /// validation reports them with its own findings.
    pub(crate) faults: Vec<(String, String)>,
}

impl RawRule {
    /// Reads one rule object; `index` names it when it has no usable id.
    /// A field that cannot be read is kept in `faults`, and the others
    /// are still read.
    pub(crate) fn from_json(v: &Value, index: usize) -> Result<RawRule, RuleError> {
        let Some(obj) = v.as_object() else {
            let name = format!("#{index}");
            return Err(RuleError::new(
                Some(&name),
                None,
                "a rule must be a JSON object",
            ));
        };
        let id = match obj.get("id") {
            Some(Value::String(s)) => s.clone(),
            Some(_) => {
                let name = format!("#{index}");
                return Err(RuleError::new(Some(&name), Some("id"), "must be a string"));
            }
            None => {
                let name = format!("#{index}");
                return Err(RuleError::new(Some(&name), Some("id"), "is required"));
            }
        };
        let mut raw = RawRule {
            id,
            ..RawRule::default()
        };
        for (field, value) in obj {
            if let Err(m) = raw.set(field, value) {
                raw.faults.push((field.clone(), m));
            }
        }
        Ok(raw)
    }

    fn set(&mut self, field: &str, v: &Value) -> Result<(), String> {
        match field {
            "id" => {}
            "expression" => self.expression = Some(string(v)?.to_owned()),
            "algorithm" => self.algorithm = Some(algorithm(v)?),
            "limit" => self.limit = Some(integer(v)?),
            "period" => self.period_ms = Some(parse_duration_ms(string(v)?)?),
            "burst" => self.burst = Some(integer(v)?),
            "distinct_of" => self.distinct_of = Some(string(v)?.to_owned()),
            "count_statuses" => self.count_statuses = Some(strings(v)?),
            "key" => self.key = Some(strings(v)?),
            "on_missing_key" => self.on_missing_key = Some(enum_of(v, &ON_MISSING)?),
            "action" => self.action = Some(enum_of(v, &ACTIONS)?),
            "penalty" => self.penalty_ms = Some(parse_duration_ms(string(v)?)?),
            "fail_mode" => self.fail_mode = Some(enum_of(v, &FAIL_MODES)?),
            "expires_at" => self.expires_at_ms = Some(parse_rfc3339_ms(string(v)?)?),
            "ratelimit_headers" => {
                self.ratelimit_headers = Some(v.as_bool().ok_or("must be true or false")?)
            }
            "cost" => self.cost = Some(integer(v)?),
            "charge" => self.charge = Some(enum_of(v, &CHARGES)?),
            "allow" => self.allow = Some(AllowList::from_json(v)?),
            "canary" => {
                let pct = v.as_f64().ok_or("must be a percentage from 0 to 100")?;
                if !(0.0..=100.0).contains(&pct) {
                    return Err("must be a percentage from 0 to 100".into());
                }
                self.canary_bp = Some((pct * 100.0).round() as u32);
            }
            _ => {
                return Err(match suggest::closest(field, &FIELDS) {
                    Some(name) => format!("unknown field: did you mean {name:?}?"),
                    None => "unknown field".to_owned(),
                })
            }
        }
        Ok(())
    }
}

/// Every field of a rule, as [`RawRule::set`] reads them.
pub(crate) const FIELDS: [&str; 19] = [
    "id",
    "expression",
    "algorithm",
    "limit",
    "period",
    "burst",
    "distinct_of",
    "count_statuses",
    "key",
    "on_missing_key",
    "action",
    "penalty",
    "fail_mode",
    "expires_at",
    "ratelimit_headers",
    "cost",
    "charge",
    "allow",
    "canary",
];

pub(crate) const ON_MISSING: [(&str, OnMissingKey); 3] = [
    ("fallback_ip", OnMissingKey::FallbackIp),
    ("skip", OnMissingKey::Skip),
    ("reject", OnMissingKey::Reject),
];
pub(crate) const ACTIONS: [(&str, Action); 2] = [("block", Action::Block), ("log", Action::Log)];
pub(crate) const CHARGES: [(&str, Charge); 2] =
    [("request", Charge::Request), ("response", Charge::Response)];
pub(crate) const FAIL_MODES: [(&str, FailMode); 3] = [
    ("open", FailMode::Open),
    ("closed", FailMode::Closed),
    ("local", FailMode::Local),
];

fn string(v: &Value) -> Result<&str, String> {
    v.as_str().ok_or_else(|| "must be a string".to_owned())
}

fn strings(v: &Value) -> Result<Vec<String>, String> {
    let arr = v.as_array().ok_or("must be a list of strings")?;
    arr.iter()
        .map(|s| {
            string(s)
                .map(str::to_owned)
                .map_err(|_| "must be a list of strings".to_owned())
        })
        .collect()
}

fn integer(v: &Value) -> Result<u64, String> {
    if let Some(n) = v.as_u64() {
        return Ok(n);
    }
    match v.as_f64() {
        Some(f) if f.fract() == 0.0 && (0.0..=1e15).contains(&f) => Ok(f as u64),
        _ => Err("must be a whole number".to_owned()),
    }
}

/// An algorithm by its JSON name (see [`Algorithm::as_str`]); `gcra`, the
/// name governor gives it, points at `leaky_bucket`.
fn algorithm(v: &Value) -> Result<Algorithm, String> {
    let s = string(v)?;
    Algorithm::from_name(s).ok_or_else(|| {
        if s.eq_ignore_ascii_case("gcra") {
            format!(
                "{s:?} is not one of {}: GCRA (governor's algorithm) is \"leaky_bucket\" here, \
                 with burst as governor's burst size",
                Algorithm::NAMES.join(", ")
            )
        } else {
            not_one_of(s, &Algorithm::NAMES)
        }
    })
}

fn enum_of<T: Copy>(v: &Value, options: &[(&str, T)]) -> Result<T, String> {
    let s = string(v)?;
    options
        .iter()
        .find(|(name, _)| *name == s)
        .map(|(_, t)| *t)
        .ok_or_else(|| {
            let names: Vec<&str> = options.iter().map(|(n, _)| *n).collect();
            not_one_of(s, &names)
        })
}

/// `s` is none of `names`: the list, and the closest name when one is near.
fn not_one_of(s: &str, names: &[&str]) -> String {
    match suggest::closest(s, names) {
        Some(name) => format!(
            "{s:?} is not one of {}: did you mean {name:?}?",
            names.join(", ")
        ),
        None => format!("{s:?} is not one of {}", names.join(", ")),
    }
}
