//! The JSON of registry reports and history entries. Whatever Valkey
//! returns is untrusted: a malformed entry decodes to an error, never a
//! panic.

use std::collections::BTreeMap;

use ratelimit_core::control::{
    InstanceReport, Published, RuleCounts, Switch, SwitchState, TopSubject,
};
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
    let switches = r.switches.map(|s| {
        let on: Map<String, Value> = Switch::ALL
            .iter()
            .map(|w| (w.name().to_owned(), s.get(*w).into()))
            .collect();
        on
    });
    let temporary: Vec<Value> = r
        .temporary
        .iter()
        .map(|(id, until)| json!({"id": id, "expires_at_ms": until}))
        .collect();
    json!({"id": r.id, "running_version": r.running_version, "schema": r.schema,
        "last_report_ms": r.last_report_ms, "refused": refused, "rules": rules, "top": top,
        "switches": switches, "lift_seq": r.lift_seq, "temporary": temporary,
        "problems": r.problems})
    .to_string()
}

/// The switches of a report; `None` from a build that does not write them.
fn switches_in(o: &Map<String, Value>) -> Result<Option<SwitchState>, String> {
    let Some(v) = o.get("switches").filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let on = object(v)?;
    let mut s = SwitchState::default();
    for w in Switch::ALL {
        s.set(
            w,
            on.get(w.name()).and_then(Value::as_bool).unwrap_or(false),
        );
    }
    Ok(Some(s))
}

/// A list field of a report that older builds do not write: empty when
/// absent.
fn optional_list<'a>(o: &'a Map<String, Value>, k: &str) -> Result<&'a [Value], String> {
    match o.get(k) {
        None | Some(Value::Null) => Ok(&[]),
        Some(_) => list_of(o, k).map(Vec::as_slice),
    }
}

fn running_temporary(v: &Value) -> Result<(String, u64), String> {
    let o = object(v)?;
    Ok((str_of(o, "id")?, u64_of(o, "expires_at_ms")?))
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
        switches: switches_in(o)?,
        lift_seq: o.get("lift_seq").and_then(Value::as_u64).unwrap_or(0),
        temporary: optional_list(o, "temporary")?
            .iter()
            .map(running_temporary)
            .collect::<Result<_, _>>()?,
        problems: optional_list(o, "problems")?
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or("field \"problems\": expected strings")
            })
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
            switches: Some({
                let mut on = SwitchState::default();
                on.set(Switch::DisableRateLimiting, true);
                on
            }),
            lift_seq: 12,
            temporary: vec![("surge".into(), 1_767_229_200_000)],
            problems: vec!["rl:control{ctl}:lift_seq holds a list: it should hold ...".into()],
        };
        assert_eq!(report_from_json(&report_to_json(&r)).unwrap(), r);
    }

    #[test]
    fn a_report_of_an_older_build_reads_without_the_new_fields() {
        let old = r#"{"id": "a", "running_version": 1, "schema": 1, "last_report_ms": 5,
            "refused": null, "rules": [], "top": []}"#;
        let r = report_from_json(old).unwrap();
        assert_eq!((r.switches, r.lift_seq), (None, 0));
        assert!(r.temporary.is_empty() && r.problems.is_empty());
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
