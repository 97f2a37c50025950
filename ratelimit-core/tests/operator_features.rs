//! Cost, peek and reset, allow lists, temporary rules, canaries, stats and
//! application-supplied key parts, on the in-memory backend.

mod support;

use std::time::Duration;

use ratelimit_core::limiter::AdminError;
use ratelimit_core::rules::{RuleBuilder, RuleSet};
use ratelimit_core::stats::Event;
use ratelimit_core::{Limiter, Outcome};
use support::*;

#[tokio::test]
async fn cost_from_the_rule_and_from_the_application() {
    let (l, _c, _p) = limiter(&format!(
        "[{}, {}]",
        rule(
            "search",
            r#"http.request.uri.path eq "/search""#,
            r#", "limit": 10, "cost": 4"#
        ),
        rule(
            "api",
            r#"http.request.uri.path eq "/api""#,
            r#", "algorithm": "token_bucket", "limit": 10, "burst": 10"#
        ),
    ));
    let s = req("192.0.2.1", "/search");
    assert!(l.check(&s).await.is_forward());
    assert!(l.check(&s).await.is_forward());
    assert_eq!(l.check(&s).await.outcome, Outcome::Limited, "3 x 4 > 10");
    let a = req("192.0.2.1", "/api").with_cost(10);
    assert!(l.check(&a).await.is_forward());
    assert_eq!(
        l.check(&req("192.0.2.1", "/api")).await.outcome,
        Outcome::Limited
    );
}

#[tokio::test]
async fn peek_does_not_count_and_reset_lifts_a_penalty() {
    let (l, clock, _p) = limiter(&format!(
        "[{}]",
        rule("login", "true", r#", "limit": 2, "penalty": "5m""#)
    ));
    let r = req("192.0.2.1", "/");
    assert_eq!(l.peek("login", &r).await.unwrap().remaining, 2);
    l.check(&r).await;
    for _ in 0..3 {
        assert_eq!(
            l.peek("login", &r).await.unwrap().remaining,
            1,
            "peek does not count"
        );
    }
    l.check(&r).await;
    l.check(&r).await;
    clock.set_ms(T0 + 1000);
    let p = l.peek("login", &r).await.unwrap();
    assert_eq!((p.allowed, p.blocked_until_ms), (false, Some(T0 + 300_000)));
    l.reset("login", &r).await.unwrap();
    assert!(l.check(&r).await.is_forward(), "the customer is unblocked");
    assert_eq!(
        l.peek("nope", &r).await,
        Err(AdminError::UnknownRule("nope".into()))
    );
}

#[tokio::test]
async fn allow_lists_bypass_the_chosen_rule_only() {
    let (l, _c, _p) = limiter(&format!(
        "[{}, {}]",
        rule(
            "ip",
            "true",
            r#", "limit": 1, "allow": {"ips": ["10.0.0.0/8"], "values": {"header:x-probe": ["k8s"]}}"#
        ),
        rule(
            "other",
            r#"http.request.uri.path eq "/o""#,
            r#", "limit": 1"#
        ),
    ));
    for _ in 0..5 {
        assert!(l.check(&req("10.1.2.3", "/")).await.is_forward());
        assert!(l
            .check(&req("192.0.2.9", "/").with_header("x-probe", "k8s"))
            .await
            .is_forward());
    }
    assert!(l.check(&req("10.1.2.3", "/o")).await.is_forward());
    assert_eq!(
        l.check(&req("10.1.2.3", "/o")).await.outcome,
        Outcome::Limited,
        "other rules still apply"
    );
    assert_eq!(l.rule_stats("ip").unwrap().get(Event::Allowlisted), 12);
    assert!(RuleSet::from_json(&format!(
        "[{}]",
        rule("x", "true", r#", "allow": {"ips": ["300.0.0.1"]}"#)
    ))
    .is_err());
}

#[tokio::test]
async fn temporary_rules_expire_within_a_day_and_keep_blocking() {
    let (l, clock, _p) = limiter("[]");
    let build = |expires: u64| {
        RuleBuilder::new("auto-1")
            .fixed_window(1, Duration::from_secs(60))
            .key(["ip"])
            .expires_at_ms(expires)
            .build()
            .unwrap()
    };
    let no_expiry = RuleBuilder::new("t")
        .fixed_window(1, Duration::from_secs(60))
        .key(["ip"])
        .build()
        .unwrap();
    assert_eq!(
        l.add_temporary(no_expiry).unwrap_err().field(),
        Some("expires_at")
    );
    assert!(
        l.add_temporary(build(T0 + 86_400_001)).is_err(),
        "more than 24 h ahead"
    );
    assert!(l.add_temporary(build(T0)).is_err(), "already past");
    l.add_temporary(build(T0 + 3_600_000)).unwrap();
    assert!(
        l.add_temporary(build(T0 + 3_600_000)).is_err(),
        "same id twice"
    );
    assert_eq!(l.temporary_rules().len(), 1);
    l.switches().set_disable_config_blocking(true);
    let r = req("192.0.2.1", "/");
    l.check(&r).await;
    assert_eq!(
        l.check(&r).await.outcome,
        Outcome::Limited,
        "run-time rules keep blocking"
    );
    l.publish(rules("[]"));
    assert_eq!(l.temporary_rules().len(), 1, "publishing config keeps them");
    clock.set_ms(T0 + 3_600_000);
    assert!(l.check(&r).await.is_forward(), "expired");
    assert!(l.temporary_rules().is_empty());
    assert!(!l.remove_temporary("auto-1") || l.temporary_rules().is_empty());
}

#[tokio::test]
async fn canary_blocks_for_its_share_of_subjects_and_logs_for_the_rest() {
    let (l, _c, _p) = limiter(&format!(
        "[{}]",
        rule("new", "true", r#", "limit": 1, "canary": 25"#)
    ));
    let (mut blocked, mut logged) = (0, 0);
    for i in 0..400 {
        let r = req(&format!("198.51.{}.{}", i / 200, i % 200), "/");
        l.check(&r).await;
        let v = l.check(&r).await;
        match v.outcome {
            Outcome::Limited => blocked += 1,
            _ => {
                assert_eq!(v.would_limit, ["new"]);
                logged += 1;
            }
        }
    }
    assert!(
        (60..=140).contains(&blocked),
        "about 25% blocked: {blocked}"
    );
    assert_eq!(blocked + logged, 400);
    // Stable: the same subject gets the same treatment on every request.
    let r = req("198.51.0.0", "/");
    let first = l.check(&r).await.outcome;
    assert_eq!(l.check(&r).await.outcome, first);
}

#[tokio::test]
async fn stats_show_the_top_subjects_a_log_rule_would_have_limited() {
    let (l, _c, _p) = limiter(&format!(
        "[{}]",
        rule("shadow", "true", r#", "limit": 1, "action": "log""#)
    ));
    for _ in 0..10 {
        l.check(&req("203.0.113.7", "/")).await;
    }
    for i in 0..5 {
        l.check(&req(&format!("192.0.2.{i}"), "/")).await;
        l.check(&req(&format!("192.0.2.{i}"), "/")).await;
    }
    let stats = l.rule_stats("shadow").unwrap();
    assert_eq!(stats.get(Event::WouldLimit), 9 + 5);
    let top = stats.top_limited();
    let heavy = l.subject_of("shadow", &req("203.0.113.7", "/")).unwrap();
    assert_eq!(top[0], (heavy, 9));
}

#[tokio::test]
async fn login_recipe_limits_ip_and_username_together() {
    // 003's login pattern: (ip, username), (ip) and (username) at once. A
    // username comes from the login form, so it is an application value,
    // chosen by the client: the site-wide per-ip rule is its partner.
    let set = r#"[
      {"id": "per-ip", "expression": "true", "algorithm": "sliding_window",
       "limit": 300, "period": "1m", "key": ["ip"]},
      {"id": "login-ip-user", "expression": "http.request.uri.path eq \"/login\"",
       "algorithm": "sliding_window", "limit": 3, "period": "1m", "key": ["ip", "app:username"]},
      {"id": "login-ip", "expression": "http.request.uri.path eq \"/login\"",
       "algorithm": "sliding_window", "limit": 10, "period": "1m", "key": ["ip"]},
      {"id": "login-user", "expression": "http.request.uri.path eq \"/login\"",
       "algorithm": "sliding_window", "limit": 5, "period": "1m", "key": ["app:username"],
       "on_missing_key": "skip"}
    ]"#;
    let (l, _c, _p) = limiter(set);
    let login = |ip: &str, user: &str| req(ip, "/login").with_app_value("username", user);
    // One IP guessing one user's password: (ip, username) stops it at 3.
    for _ in 0..3 {
        assert!(l.check(&login("192.0.2.1", "alice")).await.is_forward());
    }
    assert_eq!(
        l.check(&login("192.0.2.1", "alice")).await.outcome,
        Outcome::Limited
    );
    // Many IPs on one user: (username) stops it at 5 in all.
    for i in 2..4 {
        assert!(l
            .check(&login(&format!("192.0.2.{i}"), "bob"))
            .await
            .is_forward());
        assert!(l
            .check(&login(&format!("192.0.2.{i}"), "bob"))
            .await
            .is_forward());
    }
    assert!(l.check(&login("192.0.2.9", "bob")).await.is_forward());
    assert_eq!(
        l.check(&login("192.0.2.10", "bob")).await.outcome,
        Outcome::Limited
    );
    // One IP spraying many users: (ip) stops it at 10.
    let mut passed = 0;
    for u in 0..20 {
        passed += l
            .check(&login("198.51.100.1", &format!("user{u}")))
            .await
            .is_forward() as u32;
    }
    assert_eq!(passed, 10);
    // Without the per-ip partner, a username-only key is refused.
    let lone = r#"[{"id": "u", "expression": "http.request.uri.path eq \"/login\"", "algorithm": "fixed_window",
        "limit": 5, "period": "1m", "key": ["app:username"]}]"#;
    assert_eq!(RuleSet::from_json(lone).unwrap_err().field(), Some("key"));
    let _ = Limiter::new(rules("[]"));
}
