//! `Limiter::check`'s future: decided in the call with the in-memory
//! backend, awaited once with a backend that waits on I/O.

mod support;

use ratelimit_core::{Limiter, ManualClock, Outcome};
use support::{limiter, req, rules, T0};

const ONE_PER_MINUTE: &str = r#"[{"id": "one", "expression": "true",
    "algorithm": "fixed_window", "limit": 1, "period": "1m", "key": ["ip"]}]"#;

#[test]
fn the_memory_backend_decides_before_any_poll() {
    let l = Limiter::builder(rules(ONE_PER_MINUTE))
        .clock(ManualClock::new(T0))
        .build();
    let r = req("192.0.2.1", "/");
    let first = l.check(&r);
    assert!(first.is_ready());
    assert!(first.into_ready().expect("ready").is_forward());
    let second = l.check(&r).into_ready().expect("ready");
    assert_eq!(second.outcome, Outcome::Limited);
}

#[tokio::test]
async fn a_ready_verdict_is_also_a_future() {
    let l = Limiter::builder(rules(ONE_PER_MINUTE))
        .clock(ManualClock::new(T0))
        .build();
    let r = req("192.0.2.1", "/");
    assert!(l.check(&r).await.is_forward());
    assert_eq!(l.check(&r).await.outcome, Outcome::Limited);
}

#[tokio::test]
async fn a_backend_without_check_now_is_awaited_once() {
    // The probe only implements the async `check`.
    let (l, _clock, probe) = limiter(ONE_PER_MINUTE);
    let r = req("192.0.2.1", "/");
    let f = l.check(&r);
    assert!(!f.is_ready());
    let f = f.into_ready().expect_err("not decided yet");
    drop(r); // the future owns what it needs
    assert!(f.await.is_forward());
    assert_eq!(probe.calls(), 1);
    let v = l.check(&req("192.0.2.1", "/")).await;
    assert_eq!(v.outcome, Outcome::Limited);
    assert_eq!(probe.calls(), 2);
}

#[test]
fn reports_only_when_asked() {
    // No tracing subscriber here: debug is off, so only asking fills them.
    let quiet = Limiter::builder(rules(ONE_PER_MINUTE))
        .clock(ManualClock::new(T0))
        .build();
    let r = req("192.0.2.1", "/");
    let v = quiet.check(&r).into_ready().expect("ready");
    assert!(
        v.reports.is_empty(),
        "nothing built on the plain allow path"
    );
    let v = quiet.snapshot().reports(true).check(&r).into_ready();
    let v = v.expect("ready");
    assert_eq!(v.outcome, Outcome::Limited);
    assert_eq!((&*v.reports[0].rule, v.reports[0].allowed), ("one", false));

    let loud = Limiter::builder(rules(ONE_PER_MINUTE))
        .clock(ManualClock::new(T0))
        .reports(true)
        .build();
    let v = loud.check(&r).into_ready().expect("ready");
    assert_eq!((&*v.reports[0].rule, v.reports[0].allowed), ("one", true));
}

#[test]
fn a_snapshot_checks_against_the_rules_it_read() {
    let l = Limiter::builder(rules(ONE_PER_MINUTE))
        .clock(ManualClock::new(T0))
        .build();
    let snapshot = l.snapshot();
    // Published after the snapshot was taken: the snapshot's check still
    // decides with the rule set it read.
    l.publish(rules("[]"));
    let r = req("192.0.2.1", "/");
    assert!(snapshot.check(&r).into_ready().expect("ready").is_forward());
    let v = snapshot.check(&r).into_ready().expect("ready");
    assert_eq!(v.outcome, Outcome::Limited);
    assert!(l.check(&r).into_ready().expect("ready").is_forward());
}

/// A penalty (answered by the penalty cache before the backend), a log
/// rule, headers and a sliding window: answers of the backend and of the
/// caches interleave in rule order.
const MIXED: &str = r#"[
    {"id": "site", "expression": "true", "algorithm": "fixed_window", "limit": 4,
     "period": "1m", "key": ["ip"], "penalty": "30s", "ratelimit_headers": true},
    {"id": "login", "expression": "http.request.uri.path eq \"/login\"", "algorithm": "sliding_window",
     "limit": 2, "period": "1m", "key": ["ip"], "ratelimit_headers": true},
    {"id": "watch", "expression": "true", "algorithm": "token_bucket", "limit": 1,
     "burst": 1, "period": "1m", "key": ["ip"], "action": "log"}]"#;

/// The verdict loop is one: a request answered at once (the memory
/// backend) and the same request awaited (a backend with only `check`)
/// get the same verdict, every step of a timeline.
#[tokio::test]
async fn answered_at_once_and_awaited_verdicts_are_the_same() {
    let clock = ManualClock::new(T0);
    let ready = Limiter::builder(rules(MIXED)).clock(clock.clone()).build();
    let (waiting, waiting_clock, probe) = limiter(MIXED);
    let (mut awaited, mut limited) = (0, 0);
    for step in 0..40u64 {
        let r = req(
            ["192.0.2.1", "192.0.2.2"][(step % 3 == 0) as usize],
            ["/", "/login"][(step % 2) as usize],
        );
        let now = l_ready(&ready, &r);
        let f = waiting.check(&r);
        awaited += usize::from(!f.is_ready());
        let then = f.await;
        let key = |v: &ratelimit_core::Verdict| {
            let headers: Vec<_> = v
                .headers
                .iter()
                .map(|h| (h.id.clone(), h.remaining, h.reset_s))
                .collect();
            (v.outcome, v.retry_after_ms, v.would_limit.clone(), headers)
        };
        assert_eq!(key(&now), key(&then), "step {step}");
        limited += usize::from(now.outcome == Outcome::Limited);
        clock.advance(std::time::Duration::from_millis(1500));
        waiting_clock.advance(std::time::Duration::from_millis(1500));
    }
    assert!(awaited > 20 && probe.calls() > 20, "{awaited} awaited");
    assert!((5..35).contains(&limited), "{limited} of 40 limited");
}

fn l_ready(l: &Limiter, r: &ratelimit_core::RequestAttrs) -> ratelimit_core::Verdict {
    l.check(r)
        .into_ready()
        .expect("the memory backend answers at once")
}
