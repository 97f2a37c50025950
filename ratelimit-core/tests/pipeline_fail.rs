//! Penalties, the penalty cache, fail modes and concurrency.

mod support;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use ratelimit_core::backend::{state_key, Backend};
use ratelimit_core::limiter::namespace;
use ratelimit_core::stats::Event;
use ratelimit_core::switches::StaticFleet;
use ratelimit_core::{Limiter, ManualClock, Outcome};
use support::*;

#[tokio::test]
async fn penalty_cache_answers_without_the_backend() {
    let (l, clock, probe) = limiter(&format!(
        "[{}]",
        rule("login", "true", r#", "limit": 1, "penalty": "5m""#)
    ));
    let r = req("192.0.2.1", "/");
    assert!(l.check(&r).await.is_forward());
    let v = l.check(&r).await;
    assert_eq!(
        (v.outcome, v.retry_after_secs()),
        (Outcome::Limited, Some(300))
    );
    let calls = probe.calls.load(Ordering::SeqCst);
    clock.set_ms(T0 + 65_000);
    let v = l.check(&r).await;
    assert_eq!(v.retry_after_secs(), Some(235));
    assert!(v.reports[0].from_penalty_cache);
    assert_eq!(
        probe.calls.load(Ordering::SeqCst),
        calls,
        "no backend call while blocked"
    );
}

#[tokio::test]
async fn another_instance_learns_a_penalty_from_the_shared_backend() {
    let shared = Arc::new(ratelimit_core::store::MemoryBackend::default());
    let clock = ManualClock::new(T0);
    let make = || {
        Limiter::builder(rules(&format!(
            "[{}]",
            rule("login", "true", r#", "limit": 1, "penalty": "5m""#)
        )))
        .clock(clock.clone())
        .backend_arc(shared.clone() as Arc<dyn Backend>)
        .build()
    };
    let (a, b) = (make(), make());
    let r = req("192.0.2.1", "/");
    a.check(&r).await;
    a.check(&r).await;
    clock.set_ms(T0 + 10_000);
    let v = b.check(&r).await;
    assert_eq!(
        (v.outcome, v.retry_after_secs()),
        (Outcome::Limited, Some(290))
    );
    assert!(!v.reports[0].from_penalty_cache);
    let v = b.check(&r).await;
    assert!(v.reports[0].from_penalty_cache, "b cached it");
}

#[tokio::test]
async fn fail_modes_open_closed_and_log_never_closed() {
    let json = format!(
        "[{}, {}, {}]",
        rule("open", "true", r#", "fail_mode": "open""#),
        rule(
            "closed",
            r#"http.request.uri.path eq "/c""#,
            r#", "fail_mode": "closed""#
        ),
        rule(
            "logc",
            r#"http.request.uri.path eq "/l""#,
            r#", "fail_mode": "closed", "action": "log""#
        ),
    );
    let (l, _c, probe) = limiter(&json);
    probe.down.store(true, Ordering::SeqCst);
    for _ in 0..5 {
        assert!(l.check(&req("192.0.2.1", "/")).await.is_forward());
    }
    let v = l.check(&req("192.0.2.1", "/c")).await;
    assert_eq!(
        (v.outcome, v.retry_after_secs()),
        (Outcome::Unavailable, Some(1))
    );
    assert!(
        l.check(&req("192.0.2.1", "/l")).await.is_forward(),
        "a log rule never fails closed"
    );
    assert_eq!(l.rule_stats("open").unwrap().get(Event::FailOpen), 7);
    assert_eq!(l.rule_stats("closed").unwrap().get(Event::FailClosed), 1);
    assert_eq!(l.rule_stats("logc").unwrap().get(Event::FailOpen), 1);
}

#[tokio::test]
async fn limited_beats_unavailable() {
    let json = format!(
        "[{}, {}]",
        rule("closed", "true", r#", "fail_mode": "closed""#),
        rule(
            "local",
            r#"http.request.uri.path eq "/x""#,
            r#", "fail_mode": "local", "limit": 1"#
        ),
    );
    let (l, _c, probe) = limiter(&json);
    probe.down.store(true, Ordering::SeqCst);
    assert_eq!(
        l.check(&req("192.0.2.1", "/x")).await.outcome,
        Outcome::Unavailable
    );
    assert_eq!(
        l.check(&req("192.0.2.1", "/x")).await.outcome,
        Outcome::Limited
    );
}

#[tokio::test]
async fn local_fail_mode_counts_limit_divided_by_fleet() {
    let clock = ManualClock::new(T0);
    let probe = Arc::new(Probe::default());
    probe.down.store(true, Ordering::SeqCst);
    let l = Limiter::builder(rules(&format!(
        "[{}]",
        rule("login", "true", r#", "fail_mode": "local", "limit": 9"#)
    )))
    .clock(clock.clone())
    .backend(probe.clone())
    .fleet_size(StaticFleet(4))
    .build();
    let r = req("192.0.2.1", "/");
    assert!(l.check(&r).await.is_forward());
    assert!(l.check(&r).await.is_forward());
    assert_eq!(
        l.check(&r).await.outcome,
        Outcome::Limited,
        "9 / 4 = 2 per instance"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_tasks_on_one_key_admit_exactly_the_limit() {
    let (l, _c, _p) = limiter(&format!("[{}]", rule("api", "true", r#", "limit": 100"#)));
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let l = l.clone();
        tasks.push(tokio::spawn(async move {
            let mut ok = 0;
            for _ in 0..50 {
                ok += l.check(&req("192.0.2.1", "/")).await.is_forward() as u32;
            }
            ok
        }));
    }
    let mut admitted = 0;
    for t in tasks {
        admitted += t.await.unwrap();
    }
    assert_eq!(admitted, 100);
}

#[tokio::test]
async fn log_rule_records_would_limit_and_a_penalty_never_blocks() {
    let (l, _c, _p) = limiter(&format!(
        "[{}]",
        rule(
            "shadow",
            "true",
            r#", "limit": 1, "action": "log", "penalty": "5m""#
        )
    ));
    let r = req("192.0.2.1", "/");
    l.check(&r).await;
    for _ in 0..3 {
        let v = l.check(&r).await;
        assert!(v.is_forward());
        assert_eq!(v.would_limit, ["shadow"]);
    }
    let rule = l.rules().get("shadow").unwrap().clone();
    let subject = v_subject(&l, &r).await;
    assert_eq!(
        l.penalty_cache()
            .blocked_until(&state_key(&namespace(&rule), &subject), T0),
        None
    );
}

async fn v_subject(l: &Limiter, r: &ratelimit_core::RequestAttrs) -> ratelimit_core::KeyDigest {
    l.check(r).await.reports[0].subject
}
