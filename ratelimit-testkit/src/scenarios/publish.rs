//! What a publish keeps (docs/rules.md): a change of `limit` or `burst`
//! keeps each subject's count or level, refilled or drained at the new
//! rate from the last update on; a change of `period` or `algorithm`
//! starts fresh, and so does a rule removed, unless it comes back while
//! the old state lives; a running penalty keeps its end.

use std::time::Duration;

use ratelimit_core::{Limiter, Outcome};

use super::{limiter_on, req, rules, Backends};

/// A rule `id` of `algorithm` keyed on the IP, with `fields` (JSON, from
/// `"limit"` on).
fn set(id: &str, algorithm: &str, fields: &str) -> String {
    format!(
        r#"[{{"id": "{id}", "expression": "true", "algorithm": "{algorithm}", "key": ["ip"], {fields}}}]"#
    )
}

/// `n` requests of `ip`, each admitted.
async fn admitted(l: &Limiter, ip: &str, n: usize) {
    for i in 0..n {
        let v = l.check(&req(ip, "/")).await;
        assert_eq!(v.outcome, Outcome::Forward, "request {i} of {ip}: {v:?}");
    }
}

/// Issue 39, finding 7: a bucket full at 60 a minute (burst 5),
/// republished at 6 a minute at that instant, keeps its level: 3 s later
/// a request is refused, Retry-After 7 s. Sped up from 6 to 60 a minute,
/// 3 s later 3 requests pass. Both buckets, any backend.
pub async fn a_rate_change_keeps_the_bucket_level(b: &impl Backends) {
    for algorithm in ["token_bucket", "leaky_bucket"] {
        let at = |limit: u32| {
            set(
                "b",
                algorithm,
                &format!(r#""limit": {limit}, "period": "1m", "burst": 5"#),
            )
        };
        let (l, clock) = limiter_on(b.fresh().await, &at(60));
        admitted(&l, "192.0.2.1", 5).await;
        l.publish(rules(&at(6)));
        clock.advance(Duration::from_millis(3_000));
        let v = l.check(&req("192.0.2.1", "/")).await;
        assert_eq!(
            (v.outcome, v.retry_after_ms),
            (Outcome::Limited, 7_000),
            "{algorithm} slowed: {v:?}"
        );

        let (l, clock) = limiter_on(b.fresh().await, &at(6));
        admitted(&l, "192.0.2.2", 5).await;
        l.publish(rules(&at(60)));
        clock.advance(Duration::from_millis(3_000));
        admitted(&l, "192.0.2.2", 3).await;
        let v = l.check(&req("192.0.2.2", "/")).await;
        assert_eq!(
            (v.outcome, v.retry_after_ms),
            (Outcome::Limited, 1_000),
            "{algorithm} sped up: {v:?}"
        );
    }
}

/// A window's count is kept when `limit` changes: 3 of a fixed window
/// counted, the limit lowered to 2 refuses, raised to 5 admits 2 more.
pub async fn a_limit_change_keeps_the_window_count(b: &impl Backends) {
    for algorithm in ["fixed_window", "sliding_window"] {
        let at = |limit: u32| {
            set(
                "w",
                algorithm,
                &format!(r#""limit": {limit}, "period": "1m""#),
            )
        };
        let (l, _clock) = limiter_on(b.fresh().await, &at(3));
        admitted(&l, "192.0.2.3", 3).await;
        l.publish(rules(&at(2)));
        let v = l.check(&req("192.0.2.3", "/")).await;
        assert_eq!(v.outcome, Outcome::Limited, "{algorithm} lowered");
        l.publish(rules(&at(5)));
        admitted(&l, "192.0.2.3", 2).await;
        let v = l.check(&req("192.0.2.3", "/")).await;
        assert_eq!(v.outcome, Outcome::Limited, "{algorithm} raised");
    }
}

/// A burst change keeps the level (leaky bucket) and the tokens spent
/// (token bucket): 4 of 5 taken, the burst lowered to 3 refuses until
/// 1 s of refill (60 a minute) brings the level under it.
pub async fn a_burst_change_keeps_the_level(b: &impl Backends) {
    for algorithm in ["token_bucket", "leaky_bucket"] {
        let at = |burst: u32| {
            set(
                "b",
                algorithm,
                &format!(r#""limit": 60, "period": "1m", "burst": {burst}"#),
            )
        };
        let (l, clock) = limiter_on(b.fresh().await, &at(5));
        admitted(&l, "192.0.2.4", 4).await;
        l.publish(rules(&at(3)));
        let v = l.check(&req("192.0.2.4", "/")).await;
        assert_eq!(
            (v.outcome, v.retry_after_ms),
            (Outcome::Limited, 2_000),
            "{algorithm} burst lowered: {v:?}"
        );
        l.publish(rules(&at(8)));
        admitted(&l, "192.0.2.4", 4).await;
        let v = l.check(&req("192.0.2.4", "/")).await;
        assert_eq!(v.outcome, Outcome::Limited, "{algorithm} burst raised");
        clock.advance(Duration::from_millis(1_000));
        admitted(&l, "192.0.2.4", 1).await;
    }
}

/// A change of `period` or `algorithm` starts every subject fresh; the
/// rule changed back while the old state lives finds it (the state is
/// kept under the old rule's name until it stops mattering), and so
/// does a rule removed and published again.
pub async fn period_algorithm_and_removal_start_fresh_until_changed_back(b: &impl Backends) {
    let fw = |period: &str| {
        set(
            "r",
            "fixed_window",
            &format!(r#""limit": 2, "period": "{period}""#),
        )
    };
    let (l, clock) = limiter_on(b.fresh().await, &fw("1m"));
    admitted(&l, "192.0.2.5", 2).await;
    l.publish(rules(&fw("2m")));
    admitted(&l, "192.0.2.5", 2).await;
    l.publish(rules(&set(
        "r",
        "sliding_window",
        r#""limit": 2, "period": "1m""#,
    )));
    admitted(&l, "192.0.2.5", 2).await;
    l.publish(rules("[]"));
    admitted(&l, "192.0.2.5", 1).await;
    // Back to the first rule within its window: its count of 2 stands.
    clock.advance(Duration::from_millis(30_000));
    l.publish(rules(&fw("1m")));
    let v = l.check(&req("192.0.2.5", "/")).await;
    assert_eq!(
        (v.outcome, v.retry_after_ms),
        (Outcome::Limited, 30_000),
        "the old state, kept: {v:?}"
    );
    // Away past the window's end: fresh.
    l.publish(rules("[]"));
    clock.advance(Duration::from_millis(30_000));
    l.publish(rules(&fw("1m")));
    admitted(&l, "192.0.2.5", 2).await;
}

/// A running penalty keeps its end when a publish shortens or removes
/// the penalty.
pub async fn a_running_penalty_keeps_its_end(b: &impl Backends) {
    let with = |penalty: &str| {
        set(
            "p",
            "fixed_window",
            &format!(r#""limit": 1, "period": "1m"{penalty}"#),
        )
    };
    for later in [r#", "penalty": "1m""#, ""] {
        let (l, clock) = limiter_on(b.fresh().await, &with(r#", "penalty": "10m""#));
        admitted(&l, "192.0.2.6", 1).await;
        let v = l.check(&req("192.0.2.6", "/")).await;
        assert_eq!((v.outcome, v.retry_after_ms), (Outcome::Limited, 600_000));
        l.publish(rules(&with(later)));
        clock.advance(Duration::from_millis(120_000));
        let v = l.check(&req("192.0.2.6", "/")).await;
        assert_eq!(
            (v.outcome, v.retry_after_ms),
            (Outcome::Limited, 480_000),
            "penalty republished as {later:?}: {v:?}"
        );
        clock.advance(Duration::from_millis(480_000));
        admitted(&l, "192.0.2.6", 1).await;
    }
}
