use super::*;

#[test]
fn a_key_is_shared_when_another_rule_s_key_starts_with_it() {
    let rule = |id: &str, key: &str| {
        format!(
            r#"{{"id": "{id}", "expression": "http.request.uri.path eq \"/\"", "algorithm": "fixed_window",
                "limit": 1, "period": "1m", "key": {key}}}"#
        )
    };
    let json = format!(
        "[{}, {}, {}, {}]",
        rule("ip", r#"["ip"]"#),
        rule("ip-user", r#"["ip", "header:x-user"]"#),
        rule("user-ip", r#"["header:x-user", "ip"]"#),
        rule("user-ip-method", r#"["header:x-user", "ip", "method"]"#),
    );
    let p = Published::new(RuleSet::from_json(&json).unwrap(), Vec::new(), None);
    let shared: Vec<(&str, bool)> = (p.site_wide.iter().chain(&p.others))
        .map(|e| (&*e.id, e.key_shared))
        .collect();
    let want = [
        ("ip", true),
        ("ip-user", false),
        ("user-ip", true),
        ("user-ip-method", false),
    ];
    for w in want {
        assert!(shared.contains(&w), "{w:?} in {shared:?}");
    }
}

/// Only a rule with nothing to test but its key, and no key hash to
/// share, is plain: each field that selection tests clears the flag.
#[test]
fn a_rule_is_plain_when_only_its_key_is_tested() {
    use crate::rules::{AllowList, RuleBuilder};
    use std::time::Duration;
    let path = r#"http.request.uri.path eq "/""#;
    let fw = |id: &str| {
        let b = RuleBuilder::new(id).expression(path);
        b.fixed_window(5, Duration::from_secs(60))
    };
    let allow = AllowList::new(["10.0.0.0/8"], []).unwrap();
    let rules = vec![
        fw("plain").key(["header:x-a", "ip"]).build().unwrap(),
        fw("expires")
            .key(["header:x-b", "ip"])
            .expires_at_ms(4_102_444_800_000)
            .build()
            .unwrap(),
        fw("allow")
            .key(["header:x-c", "ip"])
            .allow(allow)
            .build()
            .unwrap(),
        fw("canary")
            .key(["header:x-d", "ip"])
            .canary(10.0)
            .build()
            .unwrap(),
        RuleBuilder::new("distinct")
            .expression(path)
            .distinct("path", 5, Duration::from_secs(60))
            .key(["header:x-e", "ip"])
            .build()
            .unwrap(),
        fw("shared").key(["ip"]).build().unwrap(),
        fw("continues").key(["ip", "method"]).build().unwrap(),
    ];
    let set = RuleSet::from_rules(rules).unwrap();
    let p = Published::new(set, Vec::new(), None);
    let mut plain: Vec<(&str, bool)> = (p.site_wide.iter().chain(&p.others))
        .map(|e| (&*e.id, e.plain))
        .collect();
    plain.sort();
    let want = [
        ("allow", false),
        ("canary", false),
        ("continues", false),
        ("distinct", false),
        ("expires", false),
        ("plain", true),
        ("shared", false),
    ];
    assert_eq!(plain, want);
}
