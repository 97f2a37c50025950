//! `until_ready` on tokio's paused clock: the waits are measured exactly.
//! Needs feature `tokio` (the limiter reads a `TokioClock`).

use std::num::NonZeroU32;
use std::time::Duration;

use ratelimit_core::keyed::{KeyedError, Quota};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, ManualClock, TokioClock};
use tokio::time::{sleep, Instant};

const T0: u64 = 1_767_225_600_000;

fn nz(n: u32) -> NonZeroU32 {
    NonZeroU32::new(n).expect("non-zero")
}

fn limiter() -> Limiter {
    Limiter::builder(RuleSet::default())
        .clock(TokioClock::starting_at(T0))
        .build()
}

fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

#[tokio::test(start_paused = true)]
async fn the_third_call_of_a_one_per_second_bucket_of_two_waits_one_second() {
    let q = limiter().keyed_quota("q", Quota::per_second(nz(1)).allow_burst(nz(2)));
    let mut waits = Vec::new();
    for _ in 0..4 {
        let t = Instant::now();
        let d = q
            .until_ready("k", Duration::from_secs(5), sleep)
            .await
            .expect("admitted");
        assert!(d.is_allowed());
        waits.push(ms(t.elapsed()));
    }
    assert_eq!(waits, [0, 0, 1000, 1000]);
}

#[tokio::test(start_paused = true)]
async fn a_cost_waits_for_enough_tokens() {
    let q = limiter().keyed_quota("q", Quota::per_second(nz(4)));
    q.check_n("k", 4).await.expect("spends the bucket");
    let t = Instant::now();
    q.until_ready_n("k", 3, Duration::from_secs(5), sleep)
        .await
        .expect("admitted");
    assert_eq!(ms(t.elapsed()), 750, "3 tokens at 4/s");
}

#[tokio::test(start_paused = true)]
async fn a_known_wait_past_max_wait_fails_at_once_without_sleeping() {
    let q = limiter().keyed_quota("q", Quota::per_minute(nz(1)));
    q.check("k").await.expect("spends the bucket");
    let t = Instant::now();
    let e = q
        .until_ready("k", Duration::from_secs(5), sleep)
        .await
        .unwrap_err();
    assert_eq!(
        e,
        KeyedError::WaitTooLong {
            wait: Duration::from_secs(60),
            max_wait: Duration::from_secs(5)
        }
    );
    assert_eq!(ms(t.elapsed()), 0);
}

#[tokio::test(start_paused = true)]
async fn a_cost_larger_than_the_bucket_fails_at_once() {
    let q = limiter().keyed_quota("q", Quota::per_second(nz(2)));
    let t = Instant::now();
    let e = q
        .until_ready_n("k", 3, Duration::from_secs(60), sleep)
        .await
        .unwrap_err();
    assert!(matches!(
        e,
        KeyedError::InsufficientCapacity {
            cost: 3,
            capacity: 2
        }
    ));
    assert_eq!(ms(t.elapsed()), 0);
}

#[tokio::test(start_paused = true)]
async fn a_waiter_that_loses_the_race_fails_when_its_budget_runs_short() {
    let q = limiter().keyed_quota("q", Quota::per_second(nz(1)));
    q.check("k").await.expect("spends the bucket");
    let run = |q: ratelimit_core::keyed::KeyedLimit| async move {
        let t = Instant::now();
        let r = q.until_ready("k", Duration::from_millis(1500), sleep).await;
        (r.map(|d| d.is_allowed()), ms(t.elapsed()))
    };
    let (a, b) = tokio::join!(run(q.clone()), run(q.clone()));
    let mut outcomes = [a, b];
    outcomes.sort_by_key(|o| o.0.is_err());
    assert_eq!(outcomes[0], (Ok(true), 1000));
    // The loser is refused at 1000 ms with 1000 ms to go and 500 ms left.
    assert_eq!(outcomes[1].1, 1000);
    assert!(matches!(
        outcomes[1].0,
        Err(KeyedError::WaitTooLong { wait, .. }) if wait == Duration::from_secs(1)
    ));
}

#[tokio::test(start_paused = true)]
async fn jitter_spreads_waiters_within_its_bound() {
    let l = limiter();
    let q = l
        .keyed_quota("q", Quota::per_second(nz(1)))
        .with_jitter(Duration::from_millis(250));
    let mut tasks = Vec::new();
    for key in 0..32u32 {
        q.check(&key).await.expect("spends the key's bucket");
        let q = q.clone();
        tasks.push(tokio::spawn(async move {
            let t = Instant::now();
            q.until_ready(&key, Duration::from_secs(5), sleep)
                .await
                .expect("admitted");
            ms(t.elapsed())
        }));
    }
    let mut waits = Vec::new();
    for t in tasks {
        waits.push(t.await.expect("task"));
    }
    assert!(waits.iter().all(|w| (1000..=1250).contains(w)), "{waits:?}");
    assert!(waits.iter().any(|&w| w != waits[0]), "spread: {waits:?}");
}

#[tokio::test(start_paused = true)]
async fn jitter_never_carries_a_sleep_past_max_wait() {
    let q = limiter()
        .keyed_quota("q", Quota::per_second(nz(1)))
        .with_jitter(Duration::from_secs(10));
    for key in 0..16u32 {
        q.check(&key).await.expect("spends the key's bucket");
        let t = Instant::now();
        q.until_ready(&key, Duration::from_millis(1100), sleep)
            .await
            .expect("admitted");
        let w = ms(t.elapsed());
        assert!((1000..=1100).contains(&w), "{w}");
    }
}

#[tokio::test(start_paused = true)]
async fn the_budget_holds_when_the_limiter_clock_stands_still() {
    let limiter = Limiter::builder(RuleSet::default())
        .clock(ManualClock::new(T0))
        .build();
    let q = limiter.keyed_quota("q", Quota::per_second(nz(1)));
    q.check("k").await.expect("spends the bucket");
    let t = Instant::now();
    let e = q
        .until_ready("k", Duration::from_secs(3), sleep)
        .await
        .unwrap_err();
    assert!(matches!(e, KeyedError::WaitTooLong { .. }));
    assert_eq!(
        ms(t.elapsed()),
        3000,
        "three sleeps of 1 s, then the budget is spent"
    );
}

#[tokio::test(start_paused = true)]
async fn a_penalty_is_waited_out() {
    let rules = RuleSet::from_json(
        r#"[{"id": "api", "expression": "false", "algorithm": "fixed_window",
        "limit": 1, "period": "1s", "key": ["ip"], "penalty": "10s"}]"#,
    )
    .expect("rules");
    let l = Limiter::builder(rules)
        .clock(TokioClock::starting_at(T0))
        .build();
    let api = l.keyed_rule("api").expect("rule");
    api.check("k").await.expect("first");
    assert!(!api.check("k").await.expect("second").is_allowed());
    let t = Instant::now();
    let e = api.until_ready("k", Duration::from_secs(9), sleep).await;
    assert!(
        matches!(e, Err(KeyedError::WaitTooLong { wait, .. }) if wait == Duration::from_secs(10))
    );
    api.until_ready("k", Duration::from_secs(10), sleep)
        .await
        .expect("after the penalty");
    assert_eq!(ms(t.elapsed()), 10_000);
}
