//! Rule selection: site-wide rules, the cap of 5, blocking before log,
//! skipped and expired rules taking no slot, count rules in their own cap.

mod support;

use std::sync::atomic::Ordering;

use ratelimit_core::Outcome;
use support::*;

fn set(rules: &[String]) -> String {
    format!("[{}]", rules.join(","))
}

#[tokio::test]
async fn six_matching_rules_run_five_and_count_the_cap() {
    let mut rs: Vec<String> = (0..6)
        .map(|i| rule(&format!("r{i}"), r#"http.request.uri.path eq "/x""#, ""))
        .collect();
    rs.push(rule("site", "true", ""));
    let (l, _c, probe) = limiter(&set(&rs));
    l.check(&req("192.0.2.1", "/x")).await;
    assert_eq!(probe.checks(), 6, "1 site-wide + 5 others");
    assert_eq!(l.stats().capped.load(Ordering::SeqCst), 1);
    assert_eq!(
        l.rule_stats("r5").unwrap().allowed(),
        0,
        "the 6th did not run"
    );
}

#[tokio::test]
async fn blocking_rules_run_before_log_rules() {
    let mut rs: Vec<String> = (0..5)
        .map(|i| {
            rule(
                &format!("log{i}"),
                r#"http.request.uri.path eq "/x""#,
                r#", "action": "log""#,
            )
        })
        .collect();
    rs.push(rule(
        "login",
        r#"http.request.uri.path eq "/x""#,
        r#", "limit": 1"#,
    ));
    let (l, _c, _p) = limiter(&set(&rs));
    assert!(l.check(&req("192.0.2.1", "/x")).await.is_forward());
    let v = l.check(&req("192.0.2.1", "/x")).await;
    assert_eq!(
        v.outcome,
        Outcome::Limited,
        "five log rules cannot push login out"
    );
    assert_eq!(l.rule_stats("log4").unwrap().allowed(), 0);
}

#[tokio::test]
async fn skipped_and_expired_rules_take_no_slot() {
    let mut rs = vec![
        rule(
            "skip",
            r#"http.request.uri.path eq "/x""#,
            r#", "key": ["jwt_claim:sub"], "on_missing_key": "skip""#,
        ),
        rule(
            "old",
            r#"http.request.uri.path eq "/x""#,
            r#", "expires_at": "2025-12-31T00:00:00Z""#,
        ),
    ];
    rs.extend((0..5).map(|i| rule(&format!("r{i}"), r#"http.request.uri.path eq "/x""#, "")));
    let (l, _c, probe) = limiter(&set(&rs));
    l.check(&req("192.0.2.1", "/x")).await;
    assert_eq!(probe.checks(), 5);
    assert_eq!(l.stats().capped.load(Ordering::SeqCst), 0);
    assert_eq!(l.rule_stats("old").unwrap().expired(), 1);
}

#[tokio::test]
async fn expired_rule_lets_a_client_serving_its_penalty_through() {
    let rs = [rule(
        "login",
        "true",
        r#", "limit": 1, "penalty": "1h", "expires_at": "2026-01-01T00:10:00Z""#,
    )];
    let (l, clock, _p) = limiter(&set(&rs));
    let r = req("192.0.2.1", "/");
    assert!(l.check(&r).await.is_forward());
    assert_eq!(l.check(&r).await.outcome, Outcome::Limited);
    clock.set_ms(T0 + 600_000);
    assert!(
        l.check(&r).await.is_forward(),
        "expired: skipped, penalty ignored"
    );
}

#[tokio::test]
async fn count_rules_have_their_own_cap_of_five() {
    let mut rs: Vec<String> = (0..6)
        .map(|i| rule(&format!("c{i}"), "true", r#", "count_statuses": ["404"]"#))
        .collect();
    rs.push(rule("site", "true", ""));
    let (l, _c, probe) = limiter(&set(&rs));
    let v = l.check(&req("192.0.2.1", "/")).await;
    assert_eq!(probe.checks(), 1, "count rules never call the backend");
    assert_eq!(v.ticket.len(), 5);
}

#[tokio::test]
async fn reject_answers_400_without_counting() {
    let rs = [
        rule(
            "api",
            "true",
            r#", "key": ["jwt_claim:sub"], "on_missing_key": "reject""#,
        ),
        rule("ip", "true", ""),
    ];
    let (l, _c, probe) = limiter(&set(&rs));
    let v = l.check(&req("192.0.2.1", "/")).await;
    assert_eq!(v.outcome, Outcome::BadRequest);
    assert_eq!(probe.calls(), 0);
}

#[tokio::test]
async fn a_rule_keyed_on_the_address_alone_counts_the_subject_the_admin_api_names() {
    // A plain rule keyed on `ip` (hashed in words, `keys::ip_subject`), and
    // the same key where another rule continues it (the general path): the
    // subject decided is the one `subject_of` names, and the same on both
    // paths, for IPv4, IPv6 and IPv4-mapped IPv6.
    use ratelimit_core::rules::RuleSet;
    use ratelimit_core::{HashKey, Limiter, RequestAttrs};
    let fw = |id: &str, key: &str| {
        format!(
            r#"{{"id": "{id}", "expression": "true", "algorithm": "fixed_window",
                 "limit": 100, "period": "1m", "key": {key}}}"#
        )
    };
    let build = |rules: &[String]| {
        let rules = RuleSet::from_json(&set(rules)).unwrap();
        let key = HashKey::new([7; 16]);
        Limiter::builder(rules).hash_key(key).reports(true).build()
    };
    let plain = build(&[fw("plain", r#"["ip"]"#)]);
    let shared = build(&[
        fw("shared", r#"["ip"]"#),
        fw("longer", r#"["ip", "method"]"#),
    ]);
    for ip in ["192.0.2.1", "2001:db8:1:2::7", "::ffff:198.51.100.9"] {
        let q = RequestAttrs::new(ip.parse().unwrap());
        let (a, b) = (plain.check(&q).await, shared.check(&q).await);
        assert_eq!(a.reports[0].subject, plain.subject_of("plain", &q).unwrap());
        assert_eq!(b.reports[0].rule.as_ref(), "shared");
        assert_eq!(
            b.reports[0].subject,
            shared.subject_of("shared", &q).unwrap()
        );
        assert_eq!(a.reports[0].subject, b.reports[0].subject, "{ip}");
    }
}
