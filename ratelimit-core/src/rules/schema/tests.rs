//! The JSON Schema against the loader, the export and the algorithm facts.

use super::super::RuleSet;

/// The schema lists exactly the fields an export writes, and an export
/// of a rule using every field writes them all.
#[test]
fn the_schema_names_every_field_the_loader_reads() {
    let set = RuleSet::from_json_at(
        r#"[{"id": "a", "expression": "true", "algorithm": "token_bucket",
                "limit": 10, "burst": 20, "period": "1m", "key": ["ip"],
                "count_statuses": ["404"], "on_missing_key": "reject", "action": "block",
                "penalty": "5m", "fail_mode": "open", "expires_at": "2026-11-01T00:00:00Z",
                "ratelimit_headers": false, "cost": 2, "allow": {}, "canary": 50},
               {"id": "b", "expression": "true", "algorithm": "distinct", "distinct_of": "path",
                "limit": 10, "period": "1m", "key": ["ip"]},
               {"id": "c", "expression": "false", "algorithm": "fixed_window", "limit": 10,
                "period": "1m", "key": ["ip"], "charge": "response"}]"#,
        0,
    )
    .unwrap();
    let mut written: Vec<String> = set
        .to_json_value()
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_object().unwrap().keys().cloned())
        .collect();
    written.sort();
    written.dedup();
    let schema = RuleSet::json_schema();
    let props = schema["$defs"]["rule"]["properties"].as_object().unwrap();
    let mut named: Vec<String> = props.keys().cloned().collect();
    named.sort();
    assert_eq!(named, written);
}

/// The algorithm choices and what each requires or refuses are read
/// from the algorithms' facts.
#[test]
fn the_schema_follows_the_algorithm_facts() {
    use crate::algorithm::Algorithm;
    let schema = RuleSet::json_schema();
    let rule = &schema["$defs"]["rule"];
    assert_eq!(
        rule["properties"]["algorithm"]["enum"],
        serde_json::json!(Algorithm::NAMES)
    );
    let conditions = rule["allOf"].as_array().unwrap();
    let buckets = &conditions[0]["if"]["properties"]["algorithm"]["enum"];
    for a in Algorithm::ALL {
        let name = serde_json::json!(a.as_str());
        assert_eq!(
            buckets.as_array().unwrap().contains(&name),
            a.takes_burst(),
            "{a:?}"
        );
        let own = conditions.iter().find(|c| {
            c["if"]["properties"]["algorithm"]["const"] == name && c.get("else").is_none()
        });
        let limit = own.map(|c| c["then"]["properties"]["limit"]["maximum"].clone());
        let expected = (a.max_limit() != crate::algorithm::MAX_LIMIT).then(|| a.max_limit().into());
        assert_eq!(
            limit,
            expected.or(own.map(|_| serde_json::Value::Null)),
            "{a:?}"
        );
    }
}
