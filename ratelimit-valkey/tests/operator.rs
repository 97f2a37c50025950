//! The operator features on the Valkey backend: cost, peek and reset, allow
//! lists, temporary rules, canaries and the login recipe.

use std::sync::Arc;
use std::time::Duration;

use ratelimit_core::rules::{RuleBuilder, RuleSet};
use ratelimit_core::{Limiter, ManualClock, Outcome, RequestAttrs};
use ratelimit_testkit::valkey::{injected, server};
use ratelimit_valkey::ValkeyBackend;

const T0: u64 = 1_767_225_600_000;

async fn limiter(url: &str, rules: &str) -> (Limiter, ManualClock) {
    with_backend(injected(url).await, rules)
}

fn with_backend(backend: ValkeyBackend, rules: &str) -> (Limiter, ManualClock) {
    let clock = ManualClock::new(T0);
    let rules = RuleSet::from_json_at(rules, T0).expect("valid rules");
    let l = Limiter::builder(rules)
        .clock(clock.clone())
        .backend(backend)
        .build();
    (l, clock)
}

/// A backend of its own (own connections, as another pod) on shared keys.
async fn pod(url: &str, prefix: &str) -> ValkeyBackend {
    ValkeyBackend::builder(url)
        .key_prefix(prefix)
        .injected_time(true)
        .build()
        .await
        .expect("backend builds")
}

fn req(ip: &str, path: &str) -> RequestAttrs {
    RequestAttrs::new(ip.parse().expect("ip")).with_path(path)
}

fn rule(id: &str, expr: &str, extra: &str) -> String {
    let expr = expr.replace('"', "\\\"");
    format!(
        r#"{{"id": "{id}", "expression": "{expr}", "algorithm": "fixed_window", "limit": 2,
        "period": "1m", "key": ["ip"]{extra}}}"#
    )
}

#[tokio::test]
async fn cost_peek_and_reset_on_valkey() {
    let s = server();
    let json = format!(
        "[{}, {}]",
        rule(
            "search",
            r#"http.request.uri.path eq "/s""#,
            r#", "limit": 10, "cost": 4"#
        ),
        rule(
            "login",
            r#"http.request.uri.path eq "/l""#,
            r#", "penalty": "5m""#
        ),
    );
    let (l, clock) = limiter(s.url(), &json).await;
    let search = req("192.0.2.1", "/s");
    assert!(l.check(&search).await.is_forward());
    assert!(l.check(&search).await.is_forward());
    assert_eq!(
        l.check(&search).await.outcome,
        Outcome::Limited,
        "3 x 4 > 10"
    );
    assert_eq!(l.peek("search", &search).await.expect("peek").remaining, 2);
    assert!(
        l.check(&search.clone().with_cost(2)).await.is_forward(),
        "the application charges 2"
    );

    let login = req("192.0.2.1", "/l");
    assert_eq!(l.peek("login", &login).await.expect("peek").remaining, 2);
    l.check(&login).await;
    for _ in 0..3 {
        assert_eq!(
            l.peek("login", &login).await.expect("peek").remaining,
            1,
            "peek does not count"
        );
    }
    l.check(&login).await;
    l.check(&login).await;
    clock.set_ms(T0 + 1000);
    let p = l.peek("login", &login).await.expect("peek");
    assert_eq!((p.allowed, p.blocked_until_ms), (false, Some(T0 + 300_000)));

    l.reset("login", &login).await.expect("reset");
    assert!(
        l.check(&login).await.is_forward(),
        "the customer is unblocked"
    );
}

#[tokio::test]
async fn allow_lists_temporary_rules_and_canary_on_valkey() {
    let s = server();
    let json = format!(
        "[{}, {}]",
        rule(
            "ip",
            r#"http.request.uri.path eq "/a""#,
            r#", "limit": 1, "allow": {"ips": ["10.0.0.0/8"]}"#
        ),
        rule(
            "new",
            r#"http.request.uri.path eq "/c""#,
            r#", "limit": 1, "canary": 50"#
        ),
    );
    let (l, clock) = limiter(s.url(), &json).await;
    for _ in 0..5 {
        assert!(
            l.check(&req("10.9.9.9", "/a")).await.is_forward(),
            "allow-listed"
        );
    }
    l.check(&req("192.0.2.1", "/a")).await;
    assert_eq!(
        l.check(&req("192.0.2.1", "/a")).await.outcome,
        Outcome::Limited,
        "others are limited"
    );
    let auto = RuleBuilder::new("auto-1")
        .expression(r#"http.request.uri.path eq "/t""#)
        .fixed_window(1, Duration::from_secs(60))
        .key(["ip"])
        .expires_at_ms(T0 + 3_600_000)
        .build()
        .expect("valid");
    l.add_temporary(auto).expect("added");
    l.switches().set_disable_config_blocking(true);
    let t = req("10.1.1.1", "/t");
    l.check(&t).await;
    assert_eq!(
        l.check(&t).await.outcome,
        Outcome::Limited,
        "run-time rules keep blocking"
    );
    l.switches().set_disable_config_blocking(false);
    clock.set_ms(T0 + 3_600_000);
    assert!(l.check(&t).await.is_forward(), "expired");

    let (mut blocked, mut logged) = (0, 0);
    for i in 0..200 {
        let r = req(&format!("198.51.100.{i}"), "/c");
        l.check(&r).await;
        match l.check(&r).await.outcome {
            Outcome::Limited => blocked += 1,
            _ => logged += 1,
        }
    }
    assert!(
        (60..=140).contains(&blocked),
        "about half blocked: {blocked} (logged {logged})"
    );
}

#[tokio::test]
async fn login_recipe_on_valkey_across_two_instances() {
    let s = server();
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
    let prefix = ratelimit_testkit::unique("login");
    let (a, _) = with_backend(pod(s.url(), &prefix).await, set);
    let (b, _) = with_backend(pod(s.url(), &prefix).await, set);
    let pods = [Arc::new(a), Arc::new(b)];
    let login = |ip: &str, user: &str| req(ip, "/login").with_app_value("username", user);
    let mut ok = 0;
    for i in 0..6 {
        ok += pods[i % 2]
            .check(&login("192.0.2.1", "alice"))
            .await
            .is_forward() as u32;
    }
    assert_eq!(ok, 3, "(ip, username) is shared by the fleet");
    let mut ok = 0;
    for i in 0..10 {
        ok += pods[i % 2]
            .check(&login(&format!("192.0.2.{}", 10 + i), "bob"))
            .await
            .is_forward() as u32;
    }
    assert_eq!(ok, 5, "(username) across many IPs");
    let mut ok = 0;
    for u in 0..20 {
        ok += pods[u % 2]
            .check(&login("198.51.100.1", &format!("user{u}")))
            .await
            .is_forward() as u32;
    }
    assert_eq!(ok, 10, "(ip) across many usernames");
}

#[tokio::test]
async fn a_penalty_seen_by_another_pod_and_reset_in_valkey() {
    let s = server();
    let prefix = ratelimit_testkit::unique("pen");
    let json = format!(
        "[{}]",
        rule("login", "true", r#", "limit": 1, "penalty": "5m""#)
    );
    let (a, _) = with_backend(pod(s.url(), &prefix).await, &json);
    let (b, b_clock) = with_backend(pod(s.url(), &prefix).await, &json);
    let r = req("192.0.2.1", "/");
    a.check(&r).await;
    assert_eq!(a.check(&r).await.outcome, Outcome::Limited);
    b_clock.set_ms(T0 + 10_000);
    let p = b.peek("login", &r).await.expect("peek");
    assert_eq!(
        p.blocked_until_ms,
        Some(T0 + 300_000),
        "b reads the block from Valkey"
    );
    b.reset("login", &r).await.expect("reset");
    assert!(
        b.check(&r).await.is_forward(),
        "reset in Valkey: b counts afresh"
    );
}
