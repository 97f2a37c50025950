//! Charging after the response (`charge: response`): requests are only
//! probed, the response's cost is charged whether or not it fits, and the
//! next request sees the total.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use ratelimit_core::backend::Check;
use ratelimit_core::{Limiter, ManualClock, Outcome};

use super::{limiter_on, req, rule, rules, Backends, Probe, T0};

/// A rule `id` charged after the response: a fixed window of `limit` a
/// minute keyed on the IP, then `extra`.
fn charged(id: &str, limit: u64, extra: &str) -> String {
    format!(
        "[{}]",
        rule(
            id,
            "true",
            &format!(r#", "limit": {limit}, "charge": "response"{extra}"#)
        )
    )
}

/// A charged total past the limit refuses the next request with the exact
/// wait: to the next window (fixed window), until the debt is refilled
/// (token bucket).
pub async fn a_charge_past_the_limit_refuses_the_next_request_with_the_exact_retry(
    b: &impl Backends,
) {
    let (l, clock) = limiter_on(b.fresh().await, &charged("tokens", 1000, ""));
    let r = req("192.0.2.1", "/");
    let v = l.check(&r).await;
    assert!(v.is_forward() && v.ticket.charges());
    l.charge(&v.ticket, 1200).await;
    clock.set_ms(T0 + 15_000);
    let v = l.check(&r).await;
    assert_eq!((v.outcome, v.retry_after_ms), (Outcome::Limited, 45_000));
    assert!(
        l.check(&req("192.0.2.2", "/")).await.is_forward(),
        "another subject"
    );
    clock.set_ms(T0 + 60_000);
    assert!(l.check(&r).await.is_forward(), "the next window");

    // 10 a minute, a bucket of 5, 8 charged: a debt of 3 tokens, one more
    // token after 4 refills of 6 s.
    let json = r#"[{"id": "rows", "expression": "true", "algorithm": "token_bucket",
        "limit": 10, "burst": 5, "period": "1m", "key": ["ip"], "charge": "response"}]"#;
    let (l, clock) = limiter_on(b.fresh().await, json);
    let v = l.check(&r).await;
    l.charge(&v.ticket, 8).await;
    clock.set_ms(T0 + 1_000);
    let v = l.check(&r).await;
    assert_eq!((v.outcome, v.retry_after_ms), (Outcome::Limited, 23_000));
    clock.set_ms(T0 + 24_000);
    assert!(l.check(&r).await.is_forward());

    // The largest cost a response can report: refused, nothing breaks.
    let huge = req("192.0.2.9", "/");
    let v = l.check(&huge).await;
    l.charge(&v.ticket, u64::MAX).await;
    let v = l.check(&huge).await;
    assert_eq!(v.outcome, Outcome::Limited);
    assert!(v.retry_after_ms > 24_000);
}

/// Requests are admitted while the budget is not yet spent, however many
/// are in flight: the probe counts nothing, and the total passes the limit
/// by the costs of the requests in flight.
pub async fn requests_are_admitted_while_the_budget_is_not_spent(b: &impl Backends) {
    let (l, _clock) = limiter_on(b.fresh().await, &charged("tokens", 10, ""));
    let r = req("192.0.2.1", "/");
    let mut in_flight = Vec::new();
    for _ in 0..20 {
        let v = l.check(&r).await;
        assert!(v.is_forward(), "probes count nothing");
        in_flight.push(v.ticket);
    }
    l.charge(&in_flight[0], 4).await;
    assert_eq!(l.peek("tokens", &r).await.expect("peek").remaining, 6);
    for t in &in_flight[1..3] {
        l.charge(t, 4).await;
    }
    // 12 charged against 10: past the limit by what was in flight.
    let v = l.check(&r).await;
    assert_eq!((v.outcome, v.retry_after_ms), (Outcome::Limited, 60_000));
}

/// A charge past the limit of a blocking rule with a penalty starts the
/// penalty, and this instance answers it from its penalty cache; a log
/// rule only counts `would_limit`.
pub async fn a_charge_past_the_limit_starts_the_penalty(b: &impl Backends) {
    let probe = Arc::new(Probe::new(b.fresh().await));
    let json = format!(
        "[{}, {}]",
        rule(
            "tokens",
            "true",
            r#", "limit": 100, "charge": "response", "penalty": "5m""#
        ),
        rule(
            "shadow",
            "true",
            r#", "limit": 100, "charge": "response", "action": "log""#
        )
    );
    let (l, clock) = limiter_on(probe.clone(), &json);
    let r = req("192.0.2.1", "/");
    let v = l.snapshot().reports(true).check(&r).await;
    let subject = v
        .reports
        .iter()
        .find(|x| &*x.rule == "tokens")
        .expect("report")
        .subject;
    clock.set_ms(T0 + 5_000);
    l.charge(&v.ticket, 150).await;
    let rule = l.rules().get("tokens").expect("rule").clone();
    let key = Check::state_key_of(&Check::namespace_of(&rule), &subject);
    assert_eq!(
        l.penalty_cache().blocked_until(&key, T0 + 5_000),
        Some(T0 + 305_000)
    );
    let stats = l.rule_stats("shadow").expect("stats");
    assert_eq!(stats.would_limit(), 1, "the charge passed its limit");
    let calls = probe.calls();
    clock.set_ms(T0 + 45_000);
    let v = l.check(&r).await;
    assert_eq!((v.outcome, v.retry_after_ms), (Outcome::Limited, 260_000));
    assert_eq!(v.would_limit, ["shadow"]);
    assert_eq!(probe.calls(), calls + 1, "one call, for shadow alone");
    clock.set_ms(T0 + 305_000);
    assert!(l.check(&r).await.is_forward(), "counting starts fresh");
}

/// Two instances on one backend charge one total: each sees the other's
/// charges, and both refuse once it passes the limit.
pub async fn instances_on_one_backend_share_the_charged_total(b: &impl Backends) {
    let [one, two] = b.pair().await;
    let clock = ManualClock::new(T0);
    let make = |backend| {
        Limiter::builder(rules(&charged("tokens", 1000, "")))
            .clock(clock.clone())
            .backend_arc(backend)
            .build()
    };
    let (a, b) = (make(one), make(two));
    let r = req("192.0.2.1", "/");
    let (va, vb) = (a.check(&r).await, b.check(&r).await);
    assert!(va.is_forward() && vb.is_forward());
    a.charge(&va.ticket, 300).await;
    b.charge(&vb.ticket, 400).await;
    assert_eq!(a.peek("tokens", &r).await.expect("peek").remaining, 300);
    let v = b.check(&r).await;
    a.charge(&v.ticket, 350).await;
    clock.set_ms(T0 + 20_000);
    for l in [&a, &b] {
        let v = l.check(&r).await;
        assert_eq!((v.outcome, v.retry_after_ms), (Outcome::Limited, 40_000));
    }
}

/// A charge whose rule was published away since the request does nothing
/// (no backend call); the same rule published back finds its state as the
/// requests left it. A charge of 0 does nothing either.
pub async fn a_charge_on_a_rule_published_away_or_of_zero_is_a_no_op(b: &impl Backends) {
    let probe = Arc::new(Probe::new(b.fresh().await));
    let json = charged("tokens", 10, "");
    let (l, _clock) = limiter_on(probe.clone(), &json);
    let r = req("192.0.2.1", "/");
    let v = l.check(&r).await;
    let calls = probe.calls();
    let zero = l.charge(&v.ticket, 0);
    assert!(zero.is_ready());
    zero.await;
    l.publish(rules(&charged("other", 10, "")));
    let gone = l.charge(&v.ticket, 50);
    assert!(gone.is_ready());
    gone.await;
    assert_eq!(probe.calls(), calls, "no backend call");
    l.publish(rules(&json));
    assert_eq!(l.peek("tokens", &r).await.expect("peek").remaining, 10);
    let plain = format!("[{}]", rule("plain", "true", ""));
    let (l, _clock) = limiter_on(b.fresh().await, &plain);
    let v = l.check(&r).await;
    assert!(!v.ticket.charges(), "no rule charged after the response");
    assert!(l.charge(&v.ticket, 5).is_ready());
}

/// The backend down: a charge on a `fail_mode: local` rule goes to this
/// instance's local store (whose next probe refuses); on an `open` rule it
/// is lost, and counted.
pub async fn a_charge_the_backend_cannot_take_goes_local_or_is_counted(b: &impl Backends) {
    let json = format!(
        "[{}, {}]",
        rule(
            "open",
            r#"http.request.uri.path eq "/o""#,
            r#", "limit": 10, "charge": "response""#
        ),
        rule(
            "local",
            r#"http.request.uri.path eq "/l""#,
            r#", "limit": 10, "charge": "response", "fail_mode": "local""#
        ),
    );
    let (backend, outage) = b.breakable().await;
    let clock = ManualClock::new(T0);
    let l = Limiter::builder(rules(&json))
        .clock(clock.clone())
        .backend_arc(backend)
        .fleet_size(2)
        .build();
    outage.set_down(true);
    let (o, lo) = (req("192.0.2.1", "/o"), req("192.0.2.1", "/l"));
    let v = l.check(&o).await;
    assert!(v.is_forward(), "fails open");
    l.charge(&v.ticket, 50).await;
    assert_eq!(l.stats().charge_errors.load(Ordering::Relaxed), 1);
    assert!(l.check(&o).await.is_forward(), "the charge was lost");
    let v = l.check(&lo).await;
    assert!(v.is_forward(), "the local store admits");
    // The local share is 10 / 2 = 5; the charge keeps its whole cost.
    l.charge(&v.ticket, 6).await;
    assert_eq!(l.stats().charge_errors.load(Ordering::Relaxed), 1);
    clock.set_ms(T0 + 10_000);
    let v = l.check(&lo).await;
    assert_eq!((v.outcome, v.retry_after_ms), (Outcome::Limited, 50_000));
}
