//! Penalties: the penalty cache, a penalty shared by the fleet, log rules.

use std::sync::Arc;

use ratelimit_core::backend::Check;
use ratelimit_core::{Limiter, ManualClock, Outcome, RequestAttrs};

use super::{limiter_on, req, rule, rules, Backends, Probe, T0};

/// A client serving a penalty is answered from the penalty cache, without
/// a backend call, with the Retry-After of the penalty's end.
pub async fn penalty_cache_answers_without_the_backend(b: &impl Backends) {
    let probe = Arc::new(Probe::new(b.fresh().await));
    let (l, clock) = limiter_on(
        probe.clone(),
        &format!(
            "[{}]",
            rule("login", "true", r#", "limit": 1, "penalty": "5m""#)
        ),
    );
    let r = req("192.0.2.1", "/");
    assert!(l.check(&r).await.is_forward());
    let v = l.check(&r).await;
    assert_eq!(
        (v.outcome, v.retry_after_secs()),
        (Outcome::Limited, Some(300))
    );
    let calls = probe.calls();
    clock.set_ms(T0 + 65_000);
    let v = l.snapshot().reports(true).check(&r).await;
    assert_eq!(v.retry_after_secs(), Some(235));
    assert!(v.reports[0].from_penalty_cache);
    assert_eq!(probe.calls(), calls, "no backend call while blocked");
}

/// A second instance on the shared state learns the first one's penalty
/// from the backend, then caches it.
pub async fn another_instance_learns_a_penalty_from_the_shared_backend(b: &impl Backends) {
    let [one, two] = b.pair().await;
    let clock = ManualClock::new(T0);
    let make = |backend| {
        Limiter::builder(rules(&format!(
            "[{}]",
            rule("login", "true", r#", "limit": 1, "penalty": "5m""#)
        )))
        .clock(clock.clone())
        .backend_arc(backend)
        .reports(true)
        .build()
    };
    let (a, b) = (make(one), make(two));
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

/// A penalty started through one instance is read (peek) and lifted
/// (reset) through another, in the shared state.
pub async fn a_penalty_seen_by_another_instance_and_reset_there(b: &impl Backends) {
    let [one, two] = b.pair().await;
    let json = format!(
        "[{}]",
        rule("login", "true", r#", "limit": 1, "penalty": "5m""#)
    );
    let (a, _) = limiter_on(one, &json);
    let (b, b_clock) = limiter_on(two, &json);
    let r = req("192.0.2.1", "/");
    a.check(&r).await;
    assert_eq!(a.check(&r).await.outcome, Outcome::Limited);
    b_clock.set_ms(T0 + 10_000);
    let p = b.peek("login", &r).await.expect("peek");
    assert_eq!(
        p.blocked_until_ms,
        Some(T0 + 300_000),
        "b reads the block from the backend"
    );
    b.reset("login", &r).await.expect("reset");
    assert!(
        b.check(&r).await.is_forward(),
        "reset in the backend: b counts afresh"
    );
}

/// A log rule over its limit records "would limit" and never starts a
/// penalty that blocks.
pub async fn log_rule_records_would_limit_and_a_penalty_never_blocks(b: &impl Backends) {
    let (l, _c) = limiter_on(
        b.fresh().await,
        &format!(
            "[{}]",
            rule(
                "shadow",
                "true",
                r#", "limit": 1, "action": "log", "penalty": "5m""#
            )
        ),
    );
    let r = req("192.0.2.1", "/");
    l.check(&r).await;
    for _ in 0..3 {
        let v = l.check(&r).await;
        assert!(v.is_forward());
        assert_eq!(v.would_limit, ["shadow"]);
    }
    let rule = l.rules().get("shadow").expect("rule").clone();
    let subject = subject_of_check(&l, &r).await;
    assert_eq!(
        l.penalty_cache().blocked_until(
            &Check::state_key_of(&Check::namespace_of(&rule), &subject),
            T0
        ),
        None
    );
}

async fn subject_of_check(l: &Limiter, r: &RequestAttrs) -> ratelimit_core::KeyDigest {
    l.snapshot().reports(true).check(r).await.reports[0].subject
}
