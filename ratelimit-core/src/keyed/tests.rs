//! The keyed API on the memory backend, time from a `ManualClock`.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::{KeyedError, Quota};
use crate::algorithm::Decision;
use crate::backend::{Backend, BackendError, BackendErrorKind, Batch, BoxFuture, Check};
use crate::rules::{FailMode, RuleSet};
use crate::stats::Event;
use crate::store::MemoryBackend;
use crate::test_runtime::block_on;
use crate::{Clock, Limiter, ManualClock, RequestAttrs};

const T0: u64 = 1_767_225_600_000;

const fn nz(n: u32) -> NonZeroU32 {
    match NonZeroU32::new(n) {
        Some(n) => n,
        None => NonZeroU32::MIN,
    }
}

fn rules(json: &str) -> RuleSet {
    RuleSet::from_json(json).expect("rules")
}

fn limiter(set: RuleSet) -> (Limiter, ManualClock) {
    let clock = ManualClock::new(T0);
    (Limiter::builder(set).clock(clock.clone()).build(), clock)
}

/// Counts backend calls; fails them all when `down`.
#[derive(Debug, Default)]
struct Probe {
    memory: MemoryBackend,
    calls: AtomicU64,
    down: bool,
}

impl Backend for Probe {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<Result<Decision, BackendError>>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let out = if self.down {
            let e = BackendError::new(BackendErrorKind::Connection, "down");
            vec![Err(e); batch.checks.len()]
        } else {
            self.memory.check_now(batch)
        };
        Box::pin(std::future::ready(out))
    }

    fn peek<'a>(
        &'a self,
        check: &'a Check,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Decision, BackendError>> {
        if self.down {
            let e = BackendError::new(BackendErrorKind::Connection, "down");
            return Box::pin(std::future::ready(Err(e)));
        }
        self.memory.peek(check, now_ms)
    }

    fn reset<'a>(&'a self, check: &'a Check) -> BoxFuture<'a, Result<(), BackendError>> {
        self.memory.reset(check)
    }
}

fn with_backend(set: RuleSet, probe: Arc<Probe>) -> (Limiter, ManualClock) {
    let clock = ManualClock::new(T0);
    let l = Limiter::builder(set)
        .clock(clock.clone())
        .backend_arc(probe)
        .build();
    (l, clock)
}

const API_RULE: &str = r#"[{"id": "api", "expression": "true",
    "algorithm": "fixed_window", "limit": 1, "period": "1m", "key": ["ip"],
    "penalty": "5m"}]"#;

#[test]
fn a_token_bucket_of_one_per_second_refuses_the_second_call_for_a_second() {
    let (l, clock) = limiter(RuleSet::default());
    let q = l.keyed_quota("q", Quota::per_second(nz(1)));
    block_on(async {
        let d = q.check("k").await.expect("first");
        assert!(d.is_allowed() && !d.is_degraded(), "at {}", clock.now_ms());
        let d = q.check("k").await.expect("second");
        assert_eq!(d.retry_after(), Some(Duration::from_secs(1)));
        clock.advance(Duration::from_millis(999));
        assert!(!q.check("k").await.expect("at 999 ms").is_allowed());
        clock.advance(Duration::from_millis(1));
        assert!(q.check("k").await.expect("at 1000 ms").is_allowed());
    });
}

#[test]
fn keys_are_counted_apart() {
    let (l, _) = limiter(RuleSet::default());
    let q = l.keyed_quota("q", Quota::per_minute(nz(1)));
    block_on(async {
        assert!(q.check(&("acme", 1u8)).await.unwrap().is_allowed());
        assert!(q.check(&("acme", 2u8)).await.unwrap().is_allowed());
        assert!(q.check(&()).await.unwrap().is_allowed());
        assert!(!q.check(&("acme", 1u64)).await.unwrap().is_allowed());
    });
}

#[test]
fn a_cost_larger_than_the_burst_is_an_error_and_counts_nothing() {
    let (l, _) = limiter(RuleSet::default());
    let q = l.keyed_quota("q", Quota::per_second(nz(10)).allow_burst(nz(4)));
    block_on(async {
        let e = q.check_n("k", 5).await.unwrap_err();
        assert_eq!(
            e,
            KeyedError::InsufficientCapacity {
                cost: 5,
                capacity: 4
            }
        );
        assert_eq!(q.check_n("k", 4).await.unwrap().remaining(), 0);
        // Windows: the limit is the capacity.
        let w = l.keyed_quota("w", Quota::per_second(nz(3)).fixed_window());
        assert!(w.check_n("k", 3).await.unwrap().is_allowed());
        assert!(matches!(
            w.check_n("k", 4).await,
            Err(KeyedError::InsufficientCapacity { capacity: 3, .. })
        ));
    });
}

#[test]
fn a_keyed_call_never_counts_against_an_http_subject() {
    let (l, _) = limiter(rules(API_RULE));
    let api = l.keyed_rule("api").expect("rule");
    let req = RequestAttrs::new("203.0.113.7".parse().unwrap());
    block_on(async {
        assert!(l.check(&req).await.is_forward());
        // The IP's HTTP subject is spent; keyed keys that spell it are not.
        assert!(api.check("203.0.113.7").await.unwrap().is_allowed());
        assert!(api.check(&[203u8, 0, 113, 7]).await.unwrap().is_allowed());
        assert_ne!(
            api.subject(&[203u8, 0, 113, 7]),
            l.subject_of("api", &req).unwrap()
        );
        // And the HTTP subject was not touched by them: still limited.
        assert!(!l.check(&req).await.is_forward());
    });
}

#[test]
fn a_quota_named_like_a_rule_does_not_share_its_state() {
    let (l, _) = limiter(rules(API_RULE));
    let rule = l.keyed_rule("api").unwrap();
    let quota = l.keyed_quota("api", Quota::per_minute(nz(1)).fixed_window());
    block_on(async {
        assert!(rule.check("k").await.unwrap().is_allowed());
        assert!(quota.check("k").await.unwrap().is_allowed());
        // Two handles on the same rule share it.
        let again = l.keyed_rule("api").unwrap();
        assert!(!again.check("k").await.unwrap().is_allowed());
    });
}

#[test]
fn a_named_rule_applies_its_penalty_from_the_penalty_cache() {
    let probe = Arc::new(Probe::default());
    let (l, clock) = with_backend(rules(API_RULE), probe.clone());
    let api = l.keyed_rule("api").unwrap();
    block_on(async {
        assert!(api.check(&9u32).await.unwrap().is_allowed());
        let d = api.check(&9u32).await.unwrap();
        assert_eq!(d.retry_after(), Some(Duration::from_secs(300)));
        let calls = probe.calls.load(Ordering::SeqCst);
        clock.advance(Duration::from_secs(100));
        let d = api.check(&9u32).await.unwrap();
        assert_eq!(d.retry_after(), Some(Duration::from_secs(200)));
        assert_eq!(probe.calls.load(Ordering::SeqCst), calls, "cached");
        let stats = l.rule_stats("api").unwrap();
        assert_eq!(
            (stats.get(Event::Allowed), stats.get(Event::Limited)),
            (1, 2)
        );
        assert_eq!(stats.top_limited(), vec![(api.subject(&9u32), 2)]);
        // A peek sees the penalty and counts nothing.
        let p = api.peek(&9u32).await.unwrap();
        let seen = (p.is_allowed(), p.retry_after());
        assert_eq!(seen, (false, Some(Duration::from_secs(200))));
        assert_eq!(stats.get(Event::Limited), 2);
        // A reset lifts the penalty.
        api.reset(&9u32).await.unwrap();
        assert!(api.check(&9u32).await.unwrap().is_allowed());
    });
}

#[test]
fn a_failing_backend_follows_the_fail_mode() {
    let probe = Arc::new(Probe {
        down: true,
        ..Probe::default()
    });
    let closed = r#"[{"id": "c", "expression": "false", "algorithm": "fixed_window",
        "limit": 2, "period": "1m", "key": ["ip"], "fail_mode": "closed"},
        {"id": "l", "expression": "false", "algorithm": "fixed_window",
        "limit": 2, "period": "1m", "key": ["ip"], "fail_mode": "local"}]"#;
    let (l, _) = with_backend(rules(closed), probe);
    block_on(async {
        let open = l.keyed_quota("o", Quota::per_second(nz(1)));
        for _ in 0..3 {
            let d = open.check("k").await.unwrap();
            assert!(d.is_allowed() && d.is_degraded());
        }
        let q = l.keyed_quota("qc", Quota::per_second(nz(1)).fail_mode(FailMode::Closed));
        assert!(matches!(q.check("k").await, Err(KeyedError::Backend(_))));
        let c = l.keyed_rule("c").unwrap();
        assert!(matches!(c.check("k").await, Err(KeyedError::Backend(_))));
        let local = l.keyed_rule("l").unwrap();
        assert!(local.check("k").await.unwrap().is_degraded());
        assert!(local.check("k").await.unwrap().is_allowed());
        let third = local.check("k").await.unwrap();
        assert!(!third.is_allowed() && third.is_degraded());
        assert!(matches!(c.peek("k").await, Err(KeyedError::Backend(_))));
    });
}

#[test]
fn peek_counts_nothing_and_reset_forgets() {
    let (l, _) = limiter(RuleSet::default());
    let q = l.keyed_quota("q", Quota::per_minute(nz(2)).sliding_window());
    block_on(async {
        assert_eq!(q.peek("k").await.unwrap().remaining(), 2);
        q.check("k").await.unwrap();
        q.check("k").await.unwrap();
        let p = q.peek("k").await.unwrap();
        assert_eq!((p.remaining(), p.is_allowed()), (0, false));
        assert_eq!(q.peek("k").await.unwrap().remaining(), 0);
        q.reset("k").await.unwrap();
        assert!(q.peek("k").await.unwrap().is_allowed());
        assert!(q.check("k").await.unwrap().is_allowed());
    });
}

#[test]
fn distinct_count_and_unknown_rules_are_refused() {
    let set = r#"[{"id": "d", "expression": "false", "algorithm": "distinct",
        "limit": 5, "period": "1m", "key": ["ip"], "distinct_of": "path"},
        {"id": "n", "expression": "false", "algorithm": "fixed_window",
        "limit": 5, "period": "1m", "key": ["ip"], "count_statuses": ["401"]}]"#;
    let (l, _) = limiter(rules(set));
    assert!(matches!(
        l.keyed_rule("d"),
        Err(KeyedError::UnsupportedRule { .. })
    ));
    assert!(matches!(
        l.keyed_rule("n"),
        Err(KeyedError::UnsupportedRule { .. })
    ));
    assert_eq!(
        l.keyed_rule("x").unwrap_err(),
        KeyedError::UnknownRule("x".into())
    );
}

#[test]
fn a_handle_follows_publishes() {
    let (l, _) = limiter(rules(API_RULE));
    let api = l.keyed_rule("api").unwrap();
    block_on(async {
        assert!(api.check("k").await.unwrap().is_allowed());
        l.publish(rules(&API_RULE.replace(r#""limit": 1"#, r#""limit": 3"#)));
        assert_eq!(api.check("k").await.unwrap().remaining(), 1);
        l.publish(RuleSet::default());
        assert_eq!(
            api.check("k").await.unwrap_err(),
            KeyedError::UnknownRule("api".into())
        );
    });
}

#[test]
fn different_hash_keys_give_different_subjects() {
    let a = Limiter::new(RuleSet::default());
    let b = Limiter::builder(RuleSet::default())
        .hash_key(crate::HashKey::new([7; 16]))
        .build();
    let q = Quota::per_second(nz(1));
    assert_ne!(
        a.keyed_quota("q", q).subject("k"),
        b.keyed_quota("q", q).subject("k")
    );
    assert_eq!(
        a.keyed_quota("q", q).subject("k"),
        a.keyed_quota("other", q).subject("k"),
        "the subject is the key's; the namespace keeps quotas apart"
    );
}
