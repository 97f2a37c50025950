//! Fail modes with the backend down: `open`, `closed`, `local`.

use ratelimit_core::{Limiter, ManualClock, Outcome};

use super::{limiter_on, req, rule, rules, Backends, T0};

/// Backend down: `open` lets through, `closed` answers 503 with
/// Retry-After 1, and a log rule never fails closed; each is counted.
pub async fn fail_modes_open_closed_and_log_never_closed(b: &impl Backends) {
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
    let (backend, outage) = b.breakable().await;
    let (l, _c) = limiter_on(backend, &json);
    outage.set_down(true);
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
    let stats = |id| l.rule_stats(id).expect("rule");
    assert_eq!(stats("open").fail_open(), 7);
    assert_eq!(stats("closed").fail_closed(), 1);
    assert_eq!(stats("logc").fail_open(), 1);
}

/// A request refused by one rule and unanswered for another is "limited".
pub async fn limited_beats_unavailable(b: &impl Backends) {
    let json = format!(
        "[{}, {}]",
        rule("closed", "true", r#", "fail_mode": "closed""#),
        rule(
            "local",
            r#"http.request.uri.path eq "/x""#,
            r#", "fail_mode": "local", "limit": 1"#
        ),
    );
    let (backend, outage) = b.breakable().await;
    let (l, _c) = limiter_on(backend, &json);
    outage.set_down(true);
    assert_eq!(
        l.check(&req("192.0.2.1", "/x")).await.outcome,
        Outcome::Unavailable
    );
    assert_eq!(
        l.check(&req("192.0.2.1", "/x")).await.outcome,
        Outcome::Limited
    );
}

/// `local` counts in the instance, the limit divided by the fleet size.
pub async fn local_fail_mode_counts_limit_divided_by_fleet(b: &impl Backends) {
    let (backend, outage) = b.breakable().await;
    outage.set_down(true);
    let l = Limiter::builder(rules(&format!(
        "[{}]",
        rule("login", "true", r#", "fail_mode": "local", "limit": 9"#)
    )))
    .clock(ManualClock::new(T0))
    .backend_arc(backend)
    .fleet_size(4)
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

/// A subject refused by the backend asks again during an outage: its
/// cached refusal (the over-limit cache) stands until the earliest
/// admission the backend gave, a fact known before the outage, as a
/// cached penalty is. From then on the rule's `fail_mode` answers:
/// `open` passes, `closed` answers 503.
pub async fn a_cached_refusal_stands_during_an_outage_until_its_admission(b: &impl Backends) {
    let json = format!(
        "[{}, {}]",
        rule("open", r#"http.request.uri.path eq "/o""#, ""),
        rule(
            "closed",
            r#"http.request.uri.path eq "/c""#,
            r#", "fail_mode": "closed""#
        ),
    );
    let (backend, outage) = b.breakable().await;
    let (l, clock) = limiter_on(backend, &json);
    for path in ["/o", "/c"] {
        let r = req("192.0.2.1", path);
        for _ in 0..2 {
            assert!(l.check(&r).await.is_forward(), "{path}");
        }
        let v = l.check(&r).await;
        assert_eq!(
            (v.outcome, v.retry_after_secs()),
            (Outcome::Limited, Some(60))
        );
    }
    outage.set_down(true);
    clock.set_ms(T0 + 45_000);
    for path in ["/o", "/c"] {
        let v = l.check(&req("192.0.2.1", path)).await;
        assert_eq!(
            (v.outcome, v.retry_after_secs()),
            (Outcome::Limited, Some(15)),
            "{path}: the refusal cached before the outage"
        );
    }
    // Another subject was never refused: its rule's fail mode answers.
    assert!(l.check(&req("192.0.2.2", "/o")).await.is_forward());
    let stats = |id| l.rule_stats(id).expect("rule");
    assert_eq!(stats("open").fail_open(), 1, "the cache asked nothing");
    assert_eq!(stats("closed").fail_closed(), 0);
    // The earliest admission: the cache lets go, the fail mode answers.
    clock.set_ms(T0 + 60_000);
    assert!(l.check(&req("192.0.2.1", "/o")).await.is_forward());
    let v = l.check(&req("192.0.2.1", "/c")).await;
    assert_eq!(v.outcome, Outcome::Unavailable);
    assert_eq!(stats("open").fail_open(), 2);
    assert_eq!(stats("closed").fail_closed(), 1);
}
