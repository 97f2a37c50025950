//! Target `rules_json`: the JSON rule loader on any bytes.

use std::net::{IpAddr, Ipv4Addr};

use ratelimit_core::backend;
use ratelimit_core::rules::{DistinctOf, KeyPart, RuleError, RuleSet};
use ratelimit_core::{Expression, HashKey, RequestAttrs};

use super::limiter::run_limiter;
use super::rules_value::rules_value;
use super::T0_MS;

/// Target `rules_json`: [`RuleSet::from_json_at`] on the input as text
/// (when UTF-8) and, when it is a JSON list or a `{"rules": [...]}` object,
/// on the other shape too; then on the rule set that [`rules_value`] builds
/// from the same bytes. A set that loads is exercised through its accessors
/// and one [`Limiter`](ratelimit_core::Limiter) check; an error must display and name its rule and
/// field without panicking.
pub fn rules_json(data: &[u8]) {
    load_rules(&rules_value(data).to_string());
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    load_rules(text);
    // The other accepted shape of the same rules.
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(list @ serde_json::Value::Array(_)) => {
            load_rules(&serde_json::json!({ "rules": list }).to_string());
        }
        Ok(serde_json::Value::Object(obj)) => {
            if let Some(list) = obj.get("rules") {
                load_rules(&list.to_string());
            }
        }
        _ => {}
    }
}

fn load_rules(text: &str) {
    match RuleSet::from_json_at(text, T0_MS) {
        Ok(set) => exercise_rules(&set),
        Err(err) => check_rule_error(&err),
    }
}

/// The error shows each of its errors (it first, then its others, which
/// have none of their own), one a line: rule, field, message.
fn check_rule_error(err: &RuleError) {
    let shown = err.to_string();
    let mut rest = shown.as_str();
    for (i, e) in std::iter::once(err).chain(err.others()).enumerate() {
        assert!(i == 0 || e.others().is_empty(), "{shown:?}");
        let head = match (e.rule(), e.field()) {
            (Some(r), Some(f)) => format!("rule {r:?}, field {f:?}: "),
            (Some(r), None) => format!("rule {r:?}: "),
            (None, Some(f)) => format!("field {f:?}: "),
            (None, None) => String::new(),
        };
        if i > 0 {
            rest = rest
                .strip_prefix('\n')
                .unwrap_or_else(|| panic!("{shown:?}"));
        }
        let line = format!("{head}{}", e.message());
        rest = rest
            .strip_prefix(line.as_str())
            .unwrap_or_else(|| panic!("{shown:?}"));
    }
    assert!(rest.is_empty(), "{shown:?}");
}

fn exercise_rules(set: &RuleSet) {
    for warning in set.warnings() {
        let _ = warning.to_string();
        assert!(set.get(&warning.rule).is_some(), "{warning}");
    }
    let req = RequestAttrs::new(IpAddr::V4(Ipv4Addr::new(203, 0, 113, 7)))
        .with_method("POST")
        .with_path("/login")
        .with_query("q=1")
        .with_header("x-tenant", "acme")
        .with_header("cookie", "sid=s1");
    for rule in set.rules() {
        assert!(set.get(&rule.id).is_some());
        assert!(rule.same_state_as(rule));
        let again = Expression::parse(rule.expression.source());
        assert!(again.is_ok(), "{:?} no longer parses", rule.expression);
        for part in &rule.key {
            assert_eq!(KeyPart::parse(&part.to_string()).as_ref(), Ok(part));
        }
        if let Some(of) = &rule.distinct_of {
            assert_eq!(DistinctOf::parse(&of.to_string()).as_ref(), Ok(of));
        }
        let _ = rule.quota(rule.cost);
        let _ = (rule.is_site_wide(), rule.expired_at(T0_MS));
        let _ = (rule.counts_status(404), rule.counts_status(200));
        let _ = rule.expression.matches(&req);
        let _ = backend::subject(rule, &req, &HashKey::DEFAULT, false);
    }
    assert!(set.check_with(&[]).is_ok());
    run_limiter(set.clone(), &req, 2, 1500, 404);
}
