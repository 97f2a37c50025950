//! Switches, publishing, headers, counting responses and the bounds.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;

use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::{Limiter, ManualClock, Outcome};
use support::*;

#[tokio::test]
async fn disable_rate_limiting_logs_everything_but_the_backstop_applies() {
    let clock = ManualClock::new(T0);
    let l = Limiter::builder(rules(&format!(
        "[{}]",
        rule("r", "true", r#", "limit": 1"#)
    )))
    .clock(clock.clone())
    .backstop(1, 3)
    .build();
    l.switches().set_disable_rate_limiting(true);
    let r = req("192.0.2.1", "/");
    for _ in 0..3 {
        assert!(l.check(&r).await.is_forward());
    }
    assert_eq!(
        l.check(&r).await.outcome,
        Outcome::Limited,
        "backstop still applies"
    );
    assert_eq!(
        l.stats()
            .backstop_limited
            .load(std::sync::atomic::Ordering::SeqCst),
        1
    );
}

#[tokio::test]
async fn disable_config_blocking_turns_rules_into_log() {
    let (l, _c, _p) = limiter(&format!("[{}]", rule("r", "true", r#", "limit": 1"#)));
    l.switches().set_disable_config_blocking(true);
    let r = req("192.0.2.1", "/");
    l.check(&r).await;
    let v = l.check(&r).await;
    assert!(v.is_forward());
    assert_eq!(v.would_limit, ["r"]);
    l.switches().set_disable_config_blocking(false);
    assert_eq!(l.check(&r).await.outcome, Outcome::Limited);
}

#[tokio::test]
async fn disable_jwt_makes_every_claim_missing() {
    let (l, _c, _p) = limiter(&format!(
        "[{}]",
        rule(
            "api",
            "true",
            r#", "key": ["jwt_claim:sub"], "on_missing_key": "reject""#
        )
    ));
    let mut claims = BTreeMap::new();
    claims.insert("sub".into(), "u1".into());
    let r = req("192.0.2.1", "/").with_jwt_claims(claims);
    assert!(l.check(&r).await.is_forward());
    l.switches().set_disable_jwt(true);
    assert_eq!(l.check(&r).await.outcome, Outcome::BadRequest);
}

#[tokio::test]
async fn publish_keeps_counts_of_unchanged_rules_and_resets_changed_ones() {
    let (l, _c, _p) = limiter(&format!(
        "[{}, {}]",
        rule("a", "true", r#", "limit": 2"#),
        rule("b", "true", r#", "limit": 2"#)
    ));
    let r = req("192.0.2.1", "/");
    l.check(&r).await;
    l.check(&r).await;
    assert_eq!(l.check(&r).await.outcome, Outcome::Limited);
    // a: new limit 3 (same algorithm and period): one more fits.
    // b: new period: starts fresh.
    l.publish(rules(&format!(
        "[{}, {}]",
        rule("a", "true", r#", "limit": 3"#),
        rule("b", "true", r#", "limit": 2, "period": "2m""#)
    )));
    let v = l.check(&r).await;
    assert!(v.is_forward(), "a has 1 left, b is fresh");
    let v = l.snapshot().reports(true).check(&r).await;
    assert_eq!(v.outcome, Outcome::Limited);
    assert_eq!(
        v.reports
            .iter()
            .filter(|x| !x.allowed)
            .map(|x| &*x.rule)
            .collect::<Vec<_>>(),
        ["a"]
    );
}

#[tokio::test]
async fn ratelimit_headers_only_for_blocking_rules_that_ask() {
    let json = format!(
        "[{}, {}, {}]",
        rule("h", "true", r#", "ratelimit_headers": true, "limit": 5"#),
        rule("quiet", "true", r#", "limit": 5"#),
        rule(
            "shadow",
            r#"http.request.uri.path eq "/""#,
            r#", "ratelimit_headers": true, "action": "log""#
        ),
    );
    let (l, clock, _p) = limiter(&json);
    clock.set_ms(T0 + 19_000);
    let v = l.check(&req("192.0.2.1", "/")).await;
    assert_eq!(v.ratelimit_policy().as_deref(), Some(r#""h";q=5;w=60"#));
    assert_eq!(v.ratelimit().as_deref(), Some(r#""h";r=4;t=41"#));
}

#[tokio::test]
async fn count_rule_blocks_after_the_answer_that_goes_over() {
    let (l, clock, _p) = limiter(&format!(
        "[{}]",
        rule(
            "404s",
            "true",
            r#", "limit": 2, "count_statuses": ["404"], "penalty": "10m""#
        )
    ));
    let r = req("192.0.2.1", "/");
    for i in 0..3 {
        let v = l.check(&r).await;
        assert!(v.is_forward(), "answer {i} reaches the upstream");
        l.record_response(&v.ticket, 404);
    }
    clock.set_ms(T0 + 10_000);
    let v = l.check(&r).await;
    assert_eq!(
        (v.outcome, v.retry_after_secs()),
        (Outcome::Limited, Some(590))
    );
    // The limiter's own answers carry no upstream status: nothing is counted.
}

#[tokio::test]
async fn a_log_count_rule_over_its_limit_counts_would_limit_and_blocks_nothing() {
    let (l, _clock, _p) = limiter(&format!(
        "[{}]",
        rule(
            "404s",
            "true",
            r#", "limit": 1, "count_statuses": ["404"], "penalty": "10m", "action": "log""#
        )
    ));
    let r = req("192.0.2.1", "/");
    for i in 0..3 {
        let v = l.check(&r).await;
        assert!(v.is_forward(), "answer {i}: a log rule never refuses");
        l.record_response(&v.ticket, 404);
    }
    // The first 404 fits the limit; the second and third pass it.
    assert_eq!(l.rule_stats("404s").unwrap().would_limit(), 2);
    assert_eq!(l.penalty_cache().len(), 0, "nothing blocked");
}

#[tokio::test]
async fn count_rule_without_penalty_blocks_until_the_count_resets() {
    let (l, clock, _p) = limiter(&format!(
        "[{}]",
        rule("401s", "true", r#", "limit": 1, "count_statuses": ["4xx"]"#)
    ));
    let r = req("192.0.2.1", "/");
    clock.set_ms(T0 + 30_000);
    for status in [401, 200, 403] {
        let v = l.check(&r).await;
        l.record_response(&v.ticket, status);
    }
    let v = l.check(&r).await;
    assert_eq!(
        (v.outcome, v.retry_after_secs()),
        (Outcome::Limited, Some(30))
    );
}

#[tokio::test]
async fn full_penalty_cache_fails_open_and_counts_the_drop() {
    let clock = ManualClock::new(T0);
    let l = Limiter::builder(rules(&format!(
        "[{}]",
        rule(
            "404s",
            "true",
            r#", "limit": 1, "count_statuses": ["404"], "penalty": "10m""#
        )
    )))
    .clock(clock.clone())
    .penalty_cache_capacity(1)
    .build();
    for ip in ["192.0.2.1", "192.0.2.2"] {
        for _ in 0..2 {
            let v = l.check(&req(ip, "/")).await;
            l.record_response(&v.ticket, 404);
        }
    }
    assert_eq!(
        l.check(&req("192.0.2.1", "/")).await.outcome,
        Outcome::Limited
    );
    assert!(
        l.check(&req("192.0.2.2", "/")).await.is_forward(),
        "its block was dropped"
    );
    assert_eq!(l.penalty_cache().dropped(), 1);
}

#[tokio::test]
async fn full_count_store_does_not_count_new_subjects_and_says_so() {
    let clock = ManualClock::new(T0);
    let l = Limiter::builder(rules(&format!(
        "[{}]",
        rule("404s", "true", r#", "limit": 1, "count_statuses": ["404"]"#)
    )))
    .clock(clock.clone())
    .count_capacity(1)
    .build();
    for ip in ["192.0.2.1", "192.0.2.2", "192.0.2.2"] {
        let v = l.check(&req(ip, "/")).await;
        l.record_response(&v.ticket, 404);
    }
    assert!(l.check(&req("192.0.2.2", "/")).await.is_forward());
    assert_eq!(l.local_untracked(), 2);
}

#[tokio::test]
async fn memory_backend_stays_within_its_capacity_under_key_rotation() {
    let clock = ManualClock::new(T0);
    let backend = Arc::new(MemoryBackend::with_capacity(1000));
    let l = Limiter::builder(rules(&format!("[{}]", rule("ip", "true", ""))))
        .clock(clock.clone())
        .backend_arc(backend.clone())
        .build();
    for i in 0..20_000u32 {
        let ip = format!("2001:db8:{:x}:{:x}::1", i >> 16, i & 0xffff);
        l.check(&req(&ip, "/")).await;
    }
    assert!(backend.len() <= 1000, "held {}", backend.len());
}

#[tokio::test]
async fn backstop_table_full_lets_new_ips_through_untracked() {
    let clock = ManualClock::new(T0);
    let l = Limiter::builder(rules("[]"))
        .clock(clock.clone())
        .backstop(1, 1)
        .backstop_capacity(16)
        .build();
    for i in 0..64 {
        assert!(l
            .check(&req(&format!("192.0.2.{i}"), "/"))
            .await
            .is_forward());
    }
    // A second request at once: tracked IPs are out of tokens, untracked
    // ones pass (the table holds 16).
    let mut limited = 0;
    for i in 0..64 {
        limited +=
            (l.check(&req(&format!("192.0.2.{i}"), "/")).await.outcome == Outcome::Limited) as u32;
    }
    assert!((1..=16).contains(&limited), "limited {limited}");
    assert!(
        l.stats()
            .backstop_limited
            .load(std::sync::atomic::Ordering::SeqCst)
            == limited as u64
    );
}
