//! A JSON Schema (draft 2020-12) of the rule format, for editors.
//!
//! Written by hand from the validator's constants rather than derived
//! (`schemars`): the Rust model holds parsed values (`period_ms: u64`, a
//! parsed [`Expression`](crate::Expression)) while the file format holds
//! text (`"period": "1m"`), so a derived schema would describe the wrong
//! thing. The committed `docs/rules.schema.json` is this function's output;
//! a test fails when it is stale.
//!
//! What a schema cannot say is only described: a `cost` at most the
//! `burst` (or `limit`), names up to 128 *bytes*, an ip or `jwt_claim`
//! partner for client-chosen key parts, at most 2 site-wide rules, and
//! the expression language itself.

use serde_json::{json, Value};

use crate::algorithm::{Algorithm, MAX_DISTINCT_LIMIT, MAX_LIMIT};

use super::export::{charge_name, fail_mode_name, on_missing_name};
use super::raw::{ACTIONS, CHARGES, FAIL_MODES, ON_MISSING};
use super::rule::{Charge, FailMode, OnMissingKey};
use super::validate::{MAX_KEY_PARTS, PERIOD_RANGE_MS};
use super::RuleSet;

const DURATION: &str = r"^\s*([0-9]+[smhd])+\s*$";
const KEY_PART: &str = "^(ip|host|method|country|asnum|ja4|locale|constant\
    |(jwt_claim|cookie|query|app):.{1,128}|header:[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128})$";
const ALLOW_PART: &str = "^(host|method|country|asnum|ja4|locale\
    |(jwt_claim|cookie|query|app):.{1,128}|header:[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128})$";
const DISTINCT_OF: &str = "^(path|ip|asnum|ja4|(query|app):.{1,128})$";
const STATUS: &str = "^([1-4][0-9][0-9]|[1-4][xX][xX])$";

impl RuleSet {
    /// A JSON Schema (draft 2020-12) of the rule file [`RuleSet::from_json`]
    /// loads: every field with its type, range, choices and default, and
    /// which fields each algorithm requires or refuses.
    ///
    /// ```
    /// let schema = ratelimit_core::rules::RuleSet::json_schema();
    /// assert_eq!(schema["$defs"]["rule"]["properties"]["limit"]["minimum"], 1);
    /// ```
    pub fn json_schema() -> Value {
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "ratelimit rules",
            "description": "A list of rate-limit rules, or an object {\"rules\": [...]}.",
            "oneOf": [
                {"type": "array", "items": {"$ref": "#/$defs/rule"}},
                {
                    "type": "object",
                    "properties": {"rules": {"type": "array", "items": {"$ref": "#/$defs/rule"}}},
                    "required": ["rules"],
                    "additionalProperties": false
                }
            ],
            "$defs": {"rule": rule(), "duration": duration()}
        })
    }
}

fn duration() -> Value {
    let (lo, hi) = PERIOD_RANGE_MS;
    json!({
        "type": "string",
        "pattern": DURATION,
        "description": format!(
            "Whole seconds from {}s to {}h, units s, m, h, d combinable: \"30s\", \"1m\", \"1h30m\", \"24h\".",
            lo / 1000, hi / 3_600_000
        ),
        "examples": ["30s", "1m", "1h30m", "24h"]
    })
}

fn rule() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["id", "expression", "algorithm", "limit", "period", "key"],
        "properties": properties(),
        "allOf": conditions()
    })
}

fn properties() -> Value {
    json!({
        "id": {
            "type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$",
            "description": "Unique in the set: 1 to 64 letters, digits, '-', '_' or '.'."
        },
        "expression": {
            "type": "string", "maxLength": 16384,
            "description": "Which requests the rule applies to; \"true\" matches all (a site-wide rule, at most 2 per set)."
        },
        "algorithm": {"enum": Algorithm::NAMES},
        "limit": {
            "type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
            "description": format!("Requests per period (1 to {MAX_LIMIT}); different values per period for distinct (1 to {MAX_DISTINCT_LIMIT}).")
        },
        "period": {"$ref": "#/$defs/duration"},
        "burst": {
            "type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
            "description": "The bucket size: required for token_bucket and leaky_bucket, refused otherwise."
        },
        "distinct_of": {
            "type": "string", "pattern": DISTINCT_OF,
            "description": "What distinct counts different values of: path, query:<name>, ip, asnum, ja4 or app:<name>. Required for distinct, refused otherwise."
        },
        "count_statuses": {
            "type": "array", "minItems": 1,
            "items": {"type": "string", "pattern": STATUS},
            "description": "Count upstream answers with these statuses (100 to 499, or 1xx to 4xx) instead of requests; 5xx is refused. Not with distinct."
        },
        "key": {
            "type": "array", "minItems": 1, "maxItems": MAX_KEY_PARTS, "uniqueItems": true,
            "items": {"type": "string", "pattern": KEY_PART},
            "description": format!("1 to {MAX_KEY_PARTS} parts; constant only alone. A part the client chooses (header, cookie, query, host, method, ja4, app) needs ip or jwt_claim in the key, or a site-wide rule keyed on ip. Names up to 128 bytes.")
        },
        "on_missing_key": {"enum": names(&ON_MISSING), "default": on_missing_name(OnMissingKey::default())},
        "action": {"enum": names(&ACTIONS), "default": "block"},
        "penalty": {
            "$ref": "#/$defs/duration",
            "description": "Once over the limit, stay blocked this long (1s to 24h)."
        },
        "fail_mode": {
            "enum": names(&FAIL_MODES), "default": fail_mode_name(FailMode::default()),
            "description": "When the backend cannot answer: pass, answer 503, or count locally. local is refused for distinct."
        },
        "expires_at": {
            "type": "string", "format": "date-time",
            "description": "An RFC 3339 time, before the year 10000: the rule stops running then."
        },
        "ratelimit_headers": {"type": "boolean", "default": false},
        "cost": {
            "type": "integer", "minimum": 1, "default": 1,
            "description": "What one request costs, at most the burst (or the limit). Only 1 for distinct. Not with charge response."
        },
        "charge": {
            "enum": names(&CHARGES), "default": charge_name(Charge::default()),
            "description": "When the cost is counted: at request time, or charged after the response by what the response reports (tokens, rows, bytes); requests are admitted while the budget is not yet spent. response is not for distinct, count_statuses or cost."
        },
        "allow": {
            "type": "object", "additionalProperties": false,
            "properties": {
                "ips": {"type": "array", "items": {"type": "string"},
                        "description": "Addresses or CIDR networks that bypass the rule."},
                "values": {
                    "type": "object",
                    "propertyNames": {"pattern": ALLOW_PART},
                    "additionalProperties": {"type": "array", "items": {"type": "string"}},
                    "description": "Key part to the values that bypass the rule (not ip, not constant)."
                }
            }
        },
        "canary": {
            "type": "number", "minimum": 0, "maximum": 100,
            "description": "The percentage of subjects for which a blocking rule blocks; it only logs for the others. Not with action log."
        }
    })
}

/// The JSON names of a choice, as loading reads them.
fn names<T>(options: &[(&str, T)]) -> Vec<String> {
    options.iter().map(|(n, _)| (*n).to_owned()).collect()
}

/// The names of the algorithms of which `fact` holds.
fn algorithms(fact: fn(Algorithm) -> bool) -> Vec<&'static str> {
    Algorithm::ALL
        .into_iter()
        .filter(|a| fact(*a))
        .map(Algorithm::as_str)
        .collect()
}

/// A condition that `field` is one of `values` (`const` for one).
fn one_of(field: &str, values: &[&str]) -> Value {
    let choice = match values {
        [one] => json!({"const": one}),
        many => json!({"enum": many}),
    };
    json!({"properties": {field: choice}, "required": [field]})
}

/// What each algorithm (and action) requires or refuses, from the
/// algorithms' facts (see [`Algorithm`]).
fn conditions() -> Value {
    let is = |field: &str, value: &str| one_of(field, &[value]);
    let buckets = one_of("algorithm", &algorithms(Algorithm::takes_burst));
    let mut out = vec![
        json!({"if": buckets, "then": {"required": ["burst"]}, "else": {"not": {"required": ["burst"]}}}),
        json!({
            "if": one_of("algorithm", &algorithms(Algorithm::counts_values)),
            "then": {"required": ["distinct_of"]},
            "else": {"not": {"required": ["distinct_of"]}}
        }),
    ];
    for a in Algorithm::ALL {
        out.extend(refusals(a));
    }
    let uncosted = algorithms(|a| !a.takes_cost());
    out.push(json!({"if": is("action", "log"), "then": {"not": {"required": ["canary"]}}}));
    out.push(json!({
        "if": is("charge", "response"),
        "then": {
            "properties": {"algorithm": {"not": one_of("algorithm", &uncosted)["properties"]["algorithm"]}},
            "allOf": [
                {"not": {"required": ["count_statuses"]}},
                {"not": {"required": ["cost"]}}
            ]
        }
    }));
    Value::Array(out)
}

/// What `algorithm` refuses that other algorithms take: a smaller limit,
/// a cost, `count_statuses`, `fail_mode: local` (none when it refuses
/// nothing).
fn refusals(algorithm: Algorithm) -> Option<Value> {
    let mut properties = serde_json::Map::new();
    if algorithm.max_limit() != MAX_LIMIT {
        properties.insert("limit".into(), json!({"maximum": algorithm.max_limit()}));
    }
    if !algorithm.takes_cost() {
        properties.insert("cost".into(), json!({"const": 1}));
    }
    if !algorithm.counts_locally() {
        let modes: Vec<&str> = FAIL_MODES
            .iter()
            .filter(|(_, m)| *m != FailMode::Local)
            .map(|(n, _)| *n)
            .collect();
        properties.insert("fail_mode".into(), json!({"enum": modes}));
    }
    if properties.is_empty() && algorithm.takes_cost() {
        return None;
    }
    let mut then = json!({"properties": properties});
    if !algorithm.takes_cost() {
        then["not"] = json!({"required": ["count_statuses"]});
    }
    Some(json!({"if": one_of("algorithm", &[algorithm.as_str()]), "then": then}))
}

#[cfg(test)]
mod tests;
