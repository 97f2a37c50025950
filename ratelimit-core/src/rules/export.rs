//! Rules written back as JSON: the export of what is running.
//!
//! Every field is written in the form loading reads it (durations as
//! `"1m30s"`, times as RFC 3339 in UTC, the canary as a percentage), and
//! the defaults are written out too, so an export says everything a rule
//! does. Loading an export gives back equal rules.
//!
//! # Examples
//!
//! ```
//! use ratelimit_core::rules::RuleSet;
//!
//! let set = RuleSet::from_json(r#"[{"id": "login", "expression": "true",
//!     "algorithm": "sliding_window", "limit": 5, "period": "90s", "key": ["ip"]}]"#)
//! .unwrap();
//! let json = set.to_json();
//! assert!(json.contains(r#""period": "1m30s""#));
//! assert_eq!(RuleSet::from_json(&json).unwrap(), set);
//! ```

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::duration::{format_duration_ms, format_rfc3339_ms};
use super::rule::{Action, Charge, FailMode, OnMissingKey, Rule};
use super::RuleSet;

/// The JSON object of one rule.
pub(crate) fn rule_value(r: &Rule) -> Value {
    let mut o = Map::new();
    let mut put = |k: &str, v: Value| {
        o.insert(k.to_owned(), v);
    };
    put("id", r.id.clone().into());
    put("expression", r.expression.source().into());
    put("algorithm", r.algorithm.as_str().into());
    put("limit", r.limit.into());
    put("period", format_duration_ms(r.period_ms).into());
    if let Some(b) = r.burst {
        put("burst", b.into());
    }
    if let Some(d) = &r.distinct_of {
        put("distinct_of", d.to_string().into());
    }
    if !r.count_statuses.is_empty() {
        let list: Vec<String> = r.count_statuses.iter().map(|s| s.to_string()).collect();
        put("count_statuses", list.into());
    }
    let key: Vec<String> = r.key.iter().map(|p| p.to_string()).collect();
    put("key", key.into());
    put("on_missing_key", on_missing_name(r.on_missing_key).into());
    put("action", action_name(r.action).into());
    if let Some(p) = r.penalty_ms {
        put("penalty", format_duration_ms(p).into());
    }
    put("fail_mode", fail_mode_name(r.fail_mode).into());
    if let Some(t) = r.expires_at_ms {
        put("expires_at", format_rfc3339_ms(t).into());
    }
    put("ratelimit_headers", r.ratelimit_headers.into());
    if !r.charges_response() {
        // A rule charged after the response has no cost of its own.
        put("cost", r.cost.into());
    }
    put("charge", charge_name(r.charge).into());
    if let Some(a) = &r.allow {
        put("allow", a.to_json());
    }
    if let Some(bp) = r.canary_bp {
        // Basis points as a percentage: `bp / 100` reads back to `bp`.
        put("canary", (f64::from(bp) / 100.0).into());
    }
    Value::Object(o)
}

pub(crate) fn on_missing_name(m: OnMissingKey) -> &'static str {
    match m {
        OnMissingKey::FallbackIp => "fallback_ip",
        OnMissingKey::Skip => "skip",
        OnMissingKey::Reject => "reject",
    }
}

pub(crate) fn action_name(a: Action) -> &'static str {
    match a {
        Action::Block => "block",
        Action::Log => "log",
    }
}

pub(crate) fn charge_name(c: Charge) -> &'static str {
    match c {
        Charge::Request => "request",
        Charge::Response => "response",
    }
}

pub(crate) fn fail_mode_name(f: FailMode) -> &'static str {
    match f {
        FailMode::Open => "open",
        FailMode::Closed => "closed",
        FailMode::Local => "local",
    }
}

/// Writes the rule as the JSON object loading reads.
impl Serialize for Rule {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        rule_value(self).serialize(s)
    }
}

/// Writes the set as a JSON list of rules.
impl Serialize for RuleSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json_value().serialize(s)
    }
}

impl RuleSet {
    /// The rules as a pretty-printed JSON list, in the format
    /// [`RuleSet::from_json`] loads: `from_json(&set.to_json())` gives an
    /// equal set. Defaults are written out.
    pub fn to_json(&self) -> String {
        format!("{:#}", self.to_json_value())
    }

    /// The rules as a JSON list value.
    pub(crate) fn to_json_value(&self) -> Value {
        Value::Array(self.rules.iter().map(|r| rule_value(r)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::super::RuleSet;

    const NOW: u64 = 1_767_225_600_000;

    #[test]
    fn every_field_is_written_and_reads_back_equal() {
        let json = r#"[
            {"id": "a", "expression": "http.request.uri.path eq \"/x\"",
             "algorithm": "token_bucket", "limit": 10, "burst": 20, "period": "1h30m",
             "key": ["ip", "header:X-Tenant"], "on_missing_key": "reject", "action": "block",
             "penalty": "90s", "fail_mode": "closed", "expires_at": "2026-11-01T01:00:00+01:00",
             "ratelimit_headers": true, "cost": 3, "canary": 12.5,
             "allow": {"ips": ["10.0.0.0/8"], "values": {"jwt_claim:sub": ["svc"]}}},
            {"id": "b", "expression": "true", "algorithm": "distinct", "distinct_of": "query:q",
             "limit": 100, "period": "24h", "key": ["ip"], "action": "log", "fail_mode": "open"},
            {"id": "c", "expression": "true", "algorithm": "fixed_window", "limit": 5,
             "period": "1m", "key": ["jwt_claim:sub"], "count_statuses": ["404", "4XX"],
             "on_missing_key": "skip"}
        ]"#;
        let set = RuleSet::from_json_at(json, NOW).unwrap();
        let out: serde_json::Value = serde_json::from_str(&set.to_json()).unwrap();
        assert_eq!(out[0]["period"], "1h30m");
        assert_eq!(out[0]["penalty"], "1m30s");
        assert_eq!(out[0]["expires_at"], "2026-11-01T00:00:00Z");
        assert_eq!(out[0]["key"], serde_json::json!(["ip", "header:x-tenant"]));
        assert_eq!(out[0]["canary"], 12.5);
        assert_eq!(out[1]["distinct_of"], "query:q");
        assert_eq!(out[1]["cost"], 1);
        assert_eq!(out[2]["count_statuses"], serde_json::json!(["404", "4xx"]));
        assert_eq!(out[2]["on_missing_key"], "skip");
        assert_eq!(
            serde_json::to_value(&set).unwrap(),
            out,
            "serde writes the same"
        );
        assert_eq!(RuleSet::from_json_at(&set.to_json(), NOW).unwrap(), set);
    }

    #[test]
    fn every_canary_step_reads_back() {
        for bp in 0..=10_000u32 {
            let pct = f64::from(bp) / 100.0;
            assert_eq!((pct * 100.0).round() as u32, bp, "{bp}");
        }
    }
}
