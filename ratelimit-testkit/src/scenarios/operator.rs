//! The operator features: cost, peek and reset, allow lists, temporary
//! rules, canaries, stats, the login recipe, and one key under load.

use std::sync::Arc;
use std::time::Duration;

use ratelimit_core::limiter::AdminError;
use ratelimit_core::rules::{RuleBuilder, RuleSet};
use ratelimit_core::{Limiter, Outcome};

use super::{limiter_on, req, rule, rules, Backends, T0};

/// A rule's `cost` and the application's, and what peek says after.
pub async fn cost_from_the_rule_and_from_the_application(b: &impl Backends) {
    let (l, _c) = limiter_on(
        b.fresh().await,
        &format!(
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
        ),
    );
    let s = req("192.0.2.1", "/search");
    assert!(l.check(&s).await.is_forward());
    assert!(l.check(&s).await.is_forward());
    assert_eq!(l.check(&s).await.outcome, Outcome::Limited, "3 x 4 > 10");
    assert_eq!(l.peek("search", &s).await.expect("peek").remaining, 2);
    assert!(
        l.check(&s.clone().with_cost(2)).await.is_forward(),
        "the application charges 2"
    );
    let a = req("192.0.2.1", "/api").with_cost(10);
    assert!(l.check(&a).await.is_forward());
    assert_eq!(
        l.check(&req("192.0.2.1", "/api")).await.outcome,
        Outcome::Limited
    );
}

/// Peek never counts; reset lifts a penalty; an unknown rule is an error.
pub async fn peek_does_not_count_and_reset_lifts_a_penalty(b: &impl Backends) {
    let (l, clock) = limiter_on(
        b.fresh().await,
        &format!(
            "[{}]",
            rule("login", "true", r#", "limit": 2, "penalty": "5m""#)
        ),
    );
    let r = req("192.0.2.1", "/");
    assert_eq!(l.peek("login", &r).await.expect("peek").remaining, 2);
    l.check(&r).await;
    for _ in 0..3 {
        assert_eq!(
            l.peek("login", &r).await.expect("peek").remaining,
            1,
            "peek does not count"
        );
    }
    l.check(&r).await;
    l.check(&r).await;
    clock.set_ms(T0 + 1000);
    let p = l.peek("login", &r).await.expect("peek");
    assert_eq!((p.allowed, p.blocked_until_ms), (false, Some(T0 + 300_000)));
    l.reset("login", &r).await.expect("reset");
    assert!(l.check(&r).await.is_forward(), "the customer is unblocked");
    assert_eq!(
        l.peek("nope", &r).await,
        Err(AdminError::UnknownRule("nope".into()))
    );
}

/// An allow list (IPs, key values) bypasses its rule, not the others.
pub async fn allow_lists_bypass_the_chosen_rule_only(b: &impl Backends) {
    let (l, _c) = limiter_on(
        b.fresh().await,
        &format!(
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
        ),
    );
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
    assert_eq!(l.rule_stats("ip").expect("rule").allowlisted(), 12);
    l.check(&req("192.0.2.1", "/")).await;
    assert_eq!(
        l.check(&req("192.0.2.1", "/")).await.outcome,
        Outcome::Limited,
        "others are limited"
    );
    assert!(RuleSet::from_json(&format!(
        "[{}]",
        rule("x", "true", r#", "allow": {"ips": ["300.0.0.1"]}"#)
    ))
    .is_err());
}

/// Temporary rules: at most a day ahead, never twice, blocking while
/// config blocking is off, kept by publishing, gone when expired.
pub async fn temporary_rules_expire_within_a_day_and_keep_blocking(b: &impl Backends) {
    let (l, clock) = limiter_on(b.fresh().await, "[]");
    let build = |expires: u64| {
        RuleBuilder::new("auto-1")
            .fixed_window(1, Duration::from_secs(60))
            .key(["ip"])
            .expires_at_ms(expires)
            .build()
            .expect("valid")
    };
    let no_expiry = RuleBuilder::new("t")
        .fixed_window(1, Duration::from_secs(60))
        .key(["ip"])
        .build()
        .expect("valid");
    assert_eq!(
        l.add_temporary(no_expiry).unwrap_err().field(),
        Some("expires_at")
    );
    assert!(
        l.add_temporary(build(T0 + 86_400_001)).is_err(),
        "more than 24 h ahead"
    );
    assert!(l.add_temporary(build(T0)).is_err(), "already past");
    l.add_temporary(build(T0 + 3_600_000)).expect("added");
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

/// Blocks among `n` subjects (each asking twice) under a canary of
/// `share`% with a limit of 1; the others are logged as "would limit".
async fn canary_run(b: &impl Backends, share: u32, n: u32, ip: impl Fn(u32) -> String) -> u32 {
    let (l, _c) = limiter_on(
        b.fresh().await,
        &format!(
            "[{}]",
            rule(
                "new",
                "true",
                &format!(r#", "limit": 1, "canary": {share}"#)
            )
        ),
    );
    let (mut blocked, mut logged) = (0, 0);
    for i in 0..n {
        let r = req(&ip(i), "/");
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
    assert_eq!(blocked + logged, n);
    // Stable: the same subject gets the same treatment on every request.
    let r = req(&ip(0), "/");
    let first = l.check(&r).await.outcome;
    assert_eq!(l.check(&r).await.outcome, first);
    blocked
}

/// A canary rule blocks for its share of subjects and logs for the rest.
pub async fn canary_blocks_for_its_share_of_subjects(b: &impl Backends) {
    let quarter = canary_run(b, 25, 400, |i| format!("198.51.{}.{}", i / 200, i % 200)).await;
    assert!(
        (60..=140).contains(&quarter),
        "about 25% blocked: {quarter}"
    );
    let half = canary_run(b, 50, 200, |i| format!("198.51.100.{i}")).await;
    assert!((60..=140).contains(&half), "about half blocked: {half}");
}

/// The stats of a log rule name the subjects it would have limited most.
pub async fn stats_show_the_top_subjects_a_log_rule_would_have_limited(b: &impl Backends) {
    let (l, _c) = limiter_on(
        b.fresh().await,
        &format!(
            "[{}]",
            rule("shadow", "true", r#", "limit": 1, "action": "log""#)
        ),
    );
    for _ in 0..10 {
        l.check(&req("203.0.113.7", "/")).await;
    }
    for i in 0..5 {
        l.check(&req(&format!("192.0.2.{i}"), "/")).await;
        l.check(&req(&format!("192.0.2.{i}"), "/")).await;
    }
    let stats = l.rule_stats("shadow").expect("rule");
    assert_eq!(stats.would_limit(), 9 + 5);
    let top = stats.top_limited();
    let heavy = l
        .subject_of("shadow", &req("203.0.113.7", "/"))
        .expect("subject");
    assert_eq!(top[0], (heavy, 9));
}

/// The login recipe: (ip, username), (ip) and (username) at once, with
/// the site-wide per-ip rule as partner of the client-chosen username.
const LOGIN_RULES: &str = r#"[
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

fn login(ip: &str, user: &str) -> ratelimit_core::RequestAttrs {
    req(ip, "/login").with_app_value("username", user)
}

/// The login recipe on one instance; a username-only key is refused.
pub async fn login_recipe_limits_ip_and_username_together(b: &impl Backends) {
    let (l, _c) = limiter_on(b.fresh().await, LOGIN_RULES);
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
        for _ in 0..2 {
            assert!(l
                .check(&login(&format!("192.0.2.{i}"), "bob"))
                .await
                .is_forward());
        }
    }
    assert!(l.check(&login("192.0.2.9", "bob")).await.is_forward());
    assert_eq!(
        l.check(&login("192.0.2.10", "bob")).await.outcome,
        Outcome::Limited
    );
    // One IP spraying many users: (ip) stops it at 10.
    let mut passed = 0;
    for u in 0..20 {
        passed += u32::from(
            l.check(&login("198.51.100.1", &format!("user{u}")))
                .await
                .is_forward(),
        );
    }
    assert_eq!(passed, 10);
    // Without the per-ip partner, a username-only key is refused.
    let lone = r#"[{"id": "u", "expression": "http.request.uri.path eq \"/login\"", "algorithm": "fixed_window",
        "limit": 5, "period": "1m", "key": ["app:username"]}]"#;
    assert_eq!(RuleSet::from_json(lone).unwrap_err().field(), Some("key"));
    let _ = Limiter::new(rules("[]"));
}

/// The login recipe across two instances taking turns: every limit is
/// the fleet's.
pub async fn login_recipe_across_two_instances(b: &impl Backends) {
    let [one, two] = b.pair().await;
    let pods = [
        limiter_on(one, LOGIN_RULES).0,
        limiter_on(two, LOGIN_RULES).0,
    ];
    let mut ok = 0;
    for i in 0..6 {
        ok += u32::from(
            pods[i % 2]
                .check(&login("192.0.2.1", "alice"))
                .await
                .is_forward(),
        );
    }
    assert_eq!(ok, 3, "(ip, username) is shared by the fleet");
    let mut ok = 0;
    for i in 0..10 {
        ok += u32::from(
            pods[i % 2]
                .check(&login(&format!("192.0.2.{}", 10 + i), "bob"))
                .await
                .is_forward(),
        );
    }
    assert_eq!(ok, 5, "(username) across many IPs");
    let mut ok = 0;
    for u in 0..20 {
        ok += u32::from(
            pods[u % 2]
                .check(&login("198.51.100.1", &format!("user{u}")))
                .await
                .is_forward(),
        );
    }
    assert_eq!(ok, 10, "(ip) across many usernames");
}

/// 16 tasks x 50 requests on one key admit exactly the limit.
pub async fn many_tasks_on_one_key_admit_exactly_the_limit(b: &impl Backends) {
    let (l, _c) = limiter_on(
        b.fresh().await,
        &format!("[{}]", rule("api", "true", r#", "limit": 100"#)),
    );
    let l = Arc::new(l);
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let l = l.clone();
        tasks.push(tokio::spawn(async move {
            let mut ok = 0;
            for _ in 0..50 {
                ok += u32::from(l.check(&req("192.0.2.1", "/")).await.is_forward());
            }
            ok
        }));
    }
    let mut admitted = 0;
    for t in tasks {
        admitted += t.await.expect("task");
    }
    assert_eq!(admitted, 100);
}
