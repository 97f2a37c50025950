//! The JSON of registry reports and history entries. Whatever Valkey
//! returns is untrusted: a malformed entry decodes to an error, never a
//! panic.

use std::collections::BTreeMap;

use ratelimit_core::control::{InstanceReport, Published, RuleCounts, TopSubject};
use ratelimit_core::KeyDigest;
use serde_json::{json, Map, Value};

/// A report as stored in the registry.
pub(crate) fn report_to_json(r: &InstanceReport) -> String {
    let rules: Vec<Value> = r
        .rules
        .iter()
        .map(|c| {
            json!({"rule": c.rule, "requests": c.requests, "allowed": c.allowed,
                "limited": c.limited, "would_limit": c.would_limit,
                "fail_open": c.fail_open, "fail_closed": c.fail_closed})
        })
        .collect();
    let top: Vec<Value> = r
        .top
        .iter()
        .map(|t| json!({"rule": t.rule, "subject": t.subject.to_hex(), "label": t.label, "count": t.count}))
        .collect();
    let refused = r
        .refused
        .as_ref()
        .map(|(v, why)| json!({"version": v, "why": why}));
    json!({"id": r.id, "running_version": r.running_version, "schema": r.schema,
        "last_report_ms": r.last_report_ms, "refused": refused, "rules": rules, "top": top})
    .to_string()
}

fn u64_of(o: &Map<String, Value>, k: &str) -> Result<u64, String> {
    o.get(k)
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("field {k:?}: expected a number"))
}

fn str_of(o: &Map<String, Value>, k: &str) -> Result<String, String> {
    o.get(k)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("field {k:?}: expected a string"))
}

fn list_of<'a>(o: &'a Map<String, Value>, k: &str) -> Result<&'a Vec<Value>, String> {
    o.get(k)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("field {k:?}: expected a list"))
}

fn object(v: &Value) -> Result<&Map<String, Value>, String> {
    v.as_object().ok_or_else(|| "expected an object".to_owned())
}

/// A subject digest from its 32 hex digits.
pub(crate) fn digest_of_hex(hex: &str) -> Option<KeyDigest> {
    if hex.len() != 32 || !hex.is_ascii() {
        return None;
    }
    let mut d = [0u8; 16];
    for (i, b) in d.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(KeyDigest(d))
}

fn rule_counts(v: &Value) -> Result<RuleCounts, String> {
    let o = object(v)?;
    Ok(RuleCounts {
        rule: str_of(o, "rule")?,
        requests: u64_of(o, "requests")?,
        allowed: u64_of(o, "allowed")?,
        limited: u64_of(o, "limited")?,
        would_limit: u64_of(o, "would_limit")?,
        fail_open: u64_of(o, "fail_open")?,
        fail_closed: u64_of(o, "fail_closed")?,
    })
}

fn top_subject(v: &Value) -> Result<TopSubject, String> {
    let o = object(v)?;
    let hex = str_of(o, "subject")?;
    Ok(TopSubject {
        rule: str_of(o, "rule")?,
        subject: digest_of_hex(&hex).ok_or("field \"subject\": expected 32 hex digits")?,
        label: match o.get("label") {
            None | Some(Value::Null) => None,
            Some(_) => Some(str_of(o, "label")?),
        },
        count: u64_of(o, "count")?,
    })
}

/// A report read from the registry.
pub(crate) fn report_from_json(s: &str) -> Result<InstanceReport, String> {
    let v: Value = serde_json::from_str(s).map_err(|e| e.to_string())?;
    let o = object(&v)?;
    let refused = match o.get("refused") {
        None | Some(Value::Null) => None,
        Some(r) => {
            let r = object(r)?;
            Some((u64_of(r, "version")?, str_of(r, "why")?))
        }
    };
    Ok(InstanceReport {
        id: str_of(o, "id")?,
        running_version: u64_of(o, "running_version")?,
        schema: u32::try_from(u64_of(o, "schema")?).map_err(|e| e.to_string())?,
        last_report_ms: u64_of(o, "last_report_ms")?,
        refused,
        rules: list_of(o, "rules")?
            .iter()
            .map(rule_counts)
            .collect::<Result<_, _>>()?,
        top: list_of(o, "top")?
            .iter()
            .map(top_subject)
            .collect::<Result<_, _>>()?,
    })
}

/// Annotations as stored: a JSON object of strings.
pub(crate) fn annotations_to_json(a: &BTreeMap<String, String>) -> String {
    serde_json::to_string(a).unwrap_or_else(|_| "{}".into())
}

/// Annotations read back; anything else is an error.
pub(crate) fn annotations_from_json(s: &str) -> Result<BTreeMap<String, String>, String> {
    if s.is_empty() {
        return Ok(BTreeMap::new());
    }
    let v: Value = serde_json::from_str(s).map_err(|e| format!("annotations: {e}"))?;
    object(&v)?
        .iter()
        .map(|(k, v)| match v.as_str() {
            Some(s) => Ok((k.clone(), s.to_owned())),
            None => Err(format!("annotation {k:?}: expected a string")),
        })
        .collect()
}

/// A history entry, as the publish script wrote it.
pub(crate) fn history_entry(s: &str) -> Result<Published, String> {
    let v: Value = serde_json::from_str(s).map_err(|e| e.to_string())?;
    let o = object(&v)?;
    Ok(Published {
        version: u64_of(o, "version")?,
        schema: u32::try_from(u64_of(o, "schema")?).map_err(|e| e.to_string())?,
        json: str_of(o, "json")?,
        note: str_of(o, "note")?,
        at_ms: u64_of(o, "at_ms")?,
        annotations: annotations_from_json(&str_of(o, "annotations")?)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_round_trips() {
        let r = InstanceReport {
            id: "edge-1".into(),
            running_version: 4,
            schema: 1,
            last_report_ms: 1_767_225_600_000,
            refused: Some((5, "rule \"x\", field \"limit\": too big".into())),
            rules: vec![RuleCounts {
                rule: "api".into(),
                requests: 9,
                allowed: 5,
                limited: 4,
                ..RuleCounts::default()
            }],
            top: vec![
                TopSubject {
                    rule: "api".into(),
                    subject: KeyDigest([0xab; 16]),
                    label: Some("203.0.113.7".into()),
                    count: 4,
                },
                // Not labelled yet: it stays unlabelled across the registry
                // (no hex stand-in for a reader to tell from a label).
                TopSubject {
                    rule: "api".into(),
                    subject: KeyDigest([0xcd; 16]),
                    label: None,
                    count: 2,
                },
            ],
        };
        assert_eq!(report_from_json(&report_to_json(&r)).unwrap(), r);
    }

    #[test]
    fn malformed_entries_are_errors_not_panics() {
        for bad in [
            "",
            "[]",
            "{}",
            r#"{"id": 3}"#,
            "\u{0}",
            r#"{"version": -1}"#,
        ] {
            assert!(report_from_json(bad).is_err(), "{bad:?}");
            assert!(history_entry(bad).is_err(), "{bad:?}");
        }
        assert!(annotations_from_json(r#"{"a": 1}"#).is_err());
        assert_eq!(digest_of_hex("zz"), None);
        assert_eq!(digest_of_hex(&"é".repeat(16)), None);
    }
}
