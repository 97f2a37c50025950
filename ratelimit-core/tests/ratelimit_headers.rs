//! The `RateLimit-Policy` and `RateLimit` headers agree with each other
//! (issue 27.14): a bucket's `q` is what its `r` can reach, and a 429
//! answered from the penalty cache carries the item of the rule that
//! refused, beside the other rules' items.

mod support;

use ratelimit_core::Outcome;
use support::*;

/// A token bucket of 100 a minute with a burst of 20 allows 20 at once
/// and refills them in 12 s: `q=20;w=12`, and a full bucket says `r=20`.
/// A leaky bucket alike; a window rule keeps its limit and period.
#[tokio::test]
async fn a_bucket_advertises_its_burst_over_its_refill_time() {
    let every_path = r#"starts_with(http.request.uri.path, \"/\")"#;
    let rule = |id: &str, fields: &str| {
        format!(
            r#"{{"id": "{id}", "expression": "{every_path}", "period": "1m", "key": ["ip"],
            "ratelimit_headers": true, {fields}}}"#
        )
    };
    let json = format!(
        "[{}, {}, {}, {}]",
        rule(
            "tb",
            r#""algorithm": "token_bucket", "limit": 100, "burst": 20"#
        ),
        rule(
            "lb",
            r#""algorithm": "leaky_bucket", "limit": 7, "burst": 5"#
        ),
        rule(
            "fast",
            r#""algorithm": "token_bucket", "limit": 600, "burst": 1"#
        ),
        rule("fw", r#""algorithm": "fixed_window", "limit": 50"#),
    );
    let (l, _clock, _p) = limiter(&json);
    let v = l.check(&req("192.0.2.1", "/")).await;
    // 5 in 42.86 s, rounded up to 43; 1 in 0.1 s, at least 1.
    assert_eq!(
        v.ratelimit_policy().as_deref(),
        Some(r#""tb";q=20;w=12, "lb";q=5;w=43, "fast";q=1;w=1, "fw";q=50;w=60"#)
    );
    assert_eq!(
        v.ratelimit().as_deref(),
        Some(r#""tb";r=19;t=1, "lb";r=4;t=9, "fast";r=0;t=1, "fw";r=49;t=60"#)
    );
    // A whole bucket has `q` left: `r` reaches `q`, never passes it.
    let fresh = req("192.0.2.2", "/");
    for (id, q) in [("tb", 20), ("lb", 5), ("fast", 1), ("fw", 50)] {
        assert_eq!(l.peek(id, &fresh).await.unwrap().remaining, q, "{id}");
    }
}

/// Six blocking rules match `/all`; the cap (5) leaves out the last one,
/// `pen`, whose penalty still refuses from the penalty cache. Its 429
/// carries `pen`'s item (`r=0`, `t` the penalty left) beside the items of
/// the rules that ran: before, only theirs, all with room left.
#[tokio::test]
async fn a_refusal_from_the_penalty_cache_carries_its_rules_item() {
    let rule = |id: &str, expr: &str, extra: &str| {
        format!(
            r#"{{"id": "{id}", "expression": "{expr}", "algorithm": "fixed_window",
            "limit": 100, "period": "1m", "key": ["ip"], "ratelimit_headers": true{extra}}}"#
        )
    };
    let mut set: Vec<String> = (1..=5)
        .map(|i| rule(&format!("r{i}"), r#"http.request.uri.path eq \"/all\""#, ""))
        .collect();
    let every_path = r#"starts_with(http.request.uri.path, \"/\")"#;
    set.push(rule("pen", every_path, r#", "limit": 1, "penalty": "5m""#));
    let (l, clock, _p) = limiter(&format!("[{}]", set.join(",")));
    let ip = "192.0.2.1";
    assert!(l.check(&req(ip, "/p")).await.is_forward());
    let v = l.check(&req(ip, "/p")).await;
    assert_eq!(v.outcome, Outcome::Limited, "the penalty starts");
    clock.set_ms(T0 + 60_000);
    let v = l.check(&req(ip, "/all")).await;
    assert_eq!(
        (v.outcome, v.retry_after_secs()),
        (Outcome::Limited, Some(240))
    );
    let current = v.ratelimit().unwrap();
    assert!(current.contains(r#""pen";r=0;t=240"#), "{current}");
    assert!(current.contains(r#""r5";r=99;t=60"#), "{current}");
    let policy = v.ratelimit_policy().unwrap();
    assert!(policy.contains(r#""pen";q=1;w=60"#), "{policy}");
}
