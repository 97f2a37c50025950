//! Replays of the attacks of issue 15 that the core decides: each test fails
//! without its fix.

mod support;

use std::collections::BTreeMap;

use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Outcome, RequestAttrs};
use support::*;

fn set(rules: &[String]) -> String {
    format!("[{}]", rules.join(","))
}

/// Five blocking rules the client can make match, then a login rule with a
/// penalty.
fn five_then_login() -> String {
    let mut rs: Vec<String> = (0..5)
        .map(|i| {
            rule(
                &format!("hdr{i}"),
                r#"http.request.headers["x-a"] ne """#,
                r#", "limit": 1000"#,
            )
        })
        .collect();
    rs.push(rule(
        "login",
        r#"http.request.uri.path eq "/login""#,
        r#", "penalty": "5m""#,
    ));
    set(&rs)
}

/// Item 2: ten logins during the penalty, each with `x-a` set so that five
/// other blocking rules fill the cap, all got 200.
#[tokio::test]
async fn five_matching_rules_do_not_lift_a_running_penalty() {
    let (l, _clock, _probe) = limiter(&five_then_login());
    let login = || req("192.0.2.1", "/login");
    assert!(l.check(&login()).await.is_forward());
    assert!(l.check(&login()).await.is_forward());
    assert_eq!(l.check(&login()).await.outcome, Outcome::Limited);
    for _ in 0..10 {
        let v = l.check(&login().with_header("x-a", "1")).await;
        assert_eq!(v.outcome, Outcome::Limited, "penalty still running");
    }
    // Another client, pushed out by the cap, is not limited by it.
    let v = l
        .check(&req("192.0.2.2", "/login").with_header("x-a", "1"))
        .await;
    assert!(v.is_forward());
}

#[test]
fn more_than_five_blocking_rules_on_one_request_are_warned_about() {
    let s = rules(&five_then_login());
    let w: Vec<_> = s
        .warnings()
        .iter()
        .filter(|w| w.field == "expression")
        .collect();
    assert_eq!(w.len(), 1, "{:?}", s.warnings());
    for id in ["hdr0", "hdr4", "login"] {
        assert!(w[0].message.contains(id), "{}", w[0].message);
    }
    // Six rules on six different paths never match together.
    let rs: Vec<String> = (0..6)
        .map(|i| {
            rule(
                &format!("p{i}"),
                &format!("http.request.uri.path eq \"/p{i}\""),
                "",
            )
        })
        .collect();
    assert!(rules(&set(&rs)).warnings().is_empty());
}

/// Item 8: a log rule, and the kill switch that turns every rule into log,
/// answered 400 for a missing key with `reject`.
#[tokio::test]
async fn a_shadow_rule_never_answers_400() {
    let reject = r#", "key": ["jwt_claim:sub"], "on_missing_key": "reject""#;
    let shadow = rule("shadow", "true", &format!(r#"{reject}, "action": "log""#));
    let (l, _c, _p) = limiter(&set(&[shadow]));
    let v = l.check(&req("192.0.2.1", "/")).await;
    assert!(v.is_forward(), "{:?}", v.outcome);
    assert_eq!(v.would_limit, ["shadow"]);

    let (l, _c, _p) = limiter(&set(&[rule("api", "true", reject)]));
    assert_eq!(
        l.check(&req("192.0.2.1", "/")).await.outcome,
        Outcome::BadRequest
    );
    l.switches().set_disable_rate_limiting(true);
    let v = l.check(&req("192.0.2.1", "/")).await;
    assert!(v.is_forward(), "kill switch: {:?}", v.outcome);
    assert_eq!(v.would_limit, ["api"]);
}

/// Item 11: the partner rule for a client-chosen key must count and block
/// every client.
#[test]
fn partners_that_count_nothing_are_no_partners() {
    let tenant = rule("tenant", "true", r#", "key": ["header:x-tenant"]"#);
    let partner = |extra: &str| rule("per-ip", "true", extra);
    let refused = [
        partner(r#", "action": "log""#),
        partner(r#", "allow": {"ips": ["0.0.0.0/0"]}"#),
        partner(r#", "allow": {"ips": ["::/0"]}"#),
        partner(r#", "allow": {"values": {"header:x-probe": ["k8s"]}}"#),
        partner(r#", "canary": 10"#),
    ];
    for p in &refused {
        let err = RuleSet::from_json_at(&set(&[p.clone(), tenant.clone()]), T0).unwrap_err();
        assert_eq!(
            (err.rule(), err.field()),
            (Some("tenant"), Some("key")),
            "{p}"
        );
    }
    // A partner that counts and blocks: accepted.
    let ok = partner(r#", "allow": {"ips": ["10.0.0.0/8"]}"#);
    assert!(RuleSet::from_json_at(&set(&[ok, tenant.clone()]), T0).is_ok());
    // One that expires: accepted, with a warning on the partnered rule.
    let expiring = partner(r#", "expires_at": "2026-02-01T00:00:00Z""#);
    let s = rules(&set(&[expiring, tenant]));
    assert!(
        s.warnings()
            .iter()
            .any(|w| w.rule == "tenant" && w.field == "key" && w.message.contains("per-ip")),
        "{:?}",
        s.warnings()
    );
}

/// Item 12: a value a client can set to nothing counts as missing.
#[tokio::test]
async fn empty_values_are_missing_keys() {
    let claims = |sub: &str| BTreeMap::from([("sub".to_owned(), sub.to_owned())]);
    let base = || req("192.0.2.1", "/");
    let cases: [(&str, RequestAttrs, RequestAttrs); 4] = [
        (
            "header:x-tenant",
            base().with_header("x-tenant", " "),
            base().with_header("x-tenant", "acme"),
        ),
        (
            "cookie:sid",
            base().with_header("cookie", "sid= ; a=1"),
            base().with_header("cookie", "sid=s1"),
        ),
        (
            "query:t",
            base().with_query("t=%20&u=1"),
            base().with_query("t=x"),
        ),
        (
            "jwt_claim:sub",
            base().with_jwt_claims(claims("")),
            base().with_jwt_claims(claims("user-42")),
        ),
    ];
    for (part, empty, full) in cases {
        let extra = format!(r#", "key": ["ip", "{part}"], "on_missing_key": "reject""#);
        let (l, _c, _p) = limiter(&set(&[rule("r", "true", &extra)]));
        assert_eq!(l.check(&empty).await.outcome, Outcome::BadRequest, "{part}");
        assert!(l.check(&full).await.is_forward(), "{part}");
    }
}

/// Item 6: patterns that cost milliseconds per request were accepted; they
/// are refused when the rules load, naming the rule, the field and the
/// problem.
#[test]
fn costly_patterns_are_refused_at_load() {
    for pattern in [
        r"[\\w\\W]{100}z",
        r"\\w{10,30}\\.\\w{2,5}",
        r"(?:a{60}){60}",
        r"\\w{65}",
    ] {
        let expr = format!(r#"http.request.uri.path matches "{pattern}""#);
        let json = set(&[rule("costly", &expr, "")]);
        let err = RuleSet::from_json_at(&json, T0).unwrap_err();
        assert_eq!(
            (err.rule(), err.field()),
            (Some("costly"), Some("expression")),
            "{pattern}"
        );
        assert!(err.to_string().contains("regular expression"), "{err}");
    }
    // Ordinary patterns still load.
    for pattern in [
        r"^/api/v[0-9]+/users/[0-9a-f]{32}$",
        r"\\.php$",
        r"(?-u:\\w){10,30}\\.(?-u:\\w){2,5}",
        r"[A-Za-z0-9_]{10,30}\\.[a-z]{2,5}",
        r"\\w+@\\w+",
    ] {
        let expr = format!(r#"http.request.uri.path matches "{pattern}""#);
        assert!(
            RuleSet::from_json_at(&set(&[rule("ok", &expr, "")]), T0).is_ok(),
            "{pattern}"
        );
    }
}

/// Issue 27.8: nested counted repetitions without a separator loaded (cost
/// 960 of 1024) and took 14-194 ms per request on a 16 KiB path; they are
/// refused naming the rule, the field and the column of the pattern, and a
/// path of 16 separated segments still loads.
#[test]
fn nested_counted_repetitions_are_refused_at_load() {
    for pattern in [r"(?:[a-z]{1,60}){1,16}z", r"(?:a{1,60}){1,16}b"] {
        let expr = format!(r#"http.request.uri.path matches "{pattern}""#);
        let err = RuleSet::from_json_at(&set(&[rule("nested", &expr, "")]), T0).unwrap_err();
        assert_eq!(
            (err.rule(), err.field()),
            (Some("nested"), Some("expression"))
        );
        assert!(
            err.to_string()
                .contains("column 31: regular expression too costly"),
            "{err}"
        );
    }
    let path = r#"http.request.uri.path matches "^(?:/[a-z0-9_-]{1,60}){1,16}/?$""#;
    assert!(RuleSet::from_json_at(&set(&[rule("ok", path, "")]), T0).is_ok());
}

/// Item 6: `(?i)` was refused (the regex crate was built without Unicode
/// case folding).
#[tokio::test]
async fn case_insensitive_patterns_work() {
    let expr = r#"http.request.uri.path matches "(?i)^/admin""#;
    let (l, _c, _p) = limiter(&set(&[rule("admin", expr, r#", "limit": 1"#)]));
    assert!(l.check(&req("192.0.2.1", "/ADMIN/x")).await.is_forward());
    assert_eq!(
        l.check(&req("192.0.2.1", "/Admin")).await.outcome,
        Outcome::Limited
    );
    assert!(l.check(&req("192.0.2.1", "/user")).await.is_forward());
}
