use super::*;

const T0: u64 = 1_767_225_600_000;

/// Seed table: limit 10 per 1m, burst 5: one token every 6 s.
#[test]
fn seed_scenario_table() {
    let q = CheckQuota::per_minute(10).allow_burst(5);
    let mut s = State::default();
    for i in 0..5 {
        assert!(check(&mut s, T0, &q).allowed, "request {i} at 0:00");
    }
    let d = check(&mut s, T0, &q);
    assert_eq!((d.allowed, d.retry_after_ms), (false, 6_000));
    assert!(check(&mut s, T0 + 6_000, &q).allowed);
    let d = check(&mut s, T0 + 6_000, &q);
    assert_eq!((d.allowed, d.retry_after_ms), (false, 6_000));
    for i in 0..4 {
        assert!(check(&mut s, T0 + 30_000, &q).allowed, "0:30 #{i}");
    }
    for _ in 0..2 {
        let d = check(&mut s, T0 + 30_000, &q);
        assert_eq!((d.allowed, d.retry_after_ms), (false, 6_000));
    }
}

#[test]
fn fractional_refill_is_exact() {
    // 7 per minute: a token every 8571.43 ms; the next fits at 8572 ms.
    let q = CheckQuota::per_minute(7).allow_burst(1);
    let mut s = State::default();
    assert!(check(&mut s, T0, &q).allowed);
    let d = check(&mut s, T0, &q);
    assert_eq!(d.retry_after_ms, 8_572);
    assert!(!check(&mut s, T0 + 8_571, &q).allowed);
    assert!(check(&mut s, T0 + 8_572, &q).allowed);
}

#[test]
fn remaining_counts_whole_tokens() {
    let q = CheckQuota::per_minute(10).allow_burst(5);
    let mut s = State::default();
    let d = check(&mut s, T0, &q);
    assert_eq!((d.remaining, d.reset_ms), (4, 6_000));
}

/// 10 per minute, burst 5, 8 charged at once: a debt of 3 tokens; one
/// more fits after 4 tokens refill, 24 s; whole again after 48 s.
#[test]
fn a_charge_leaves_a_debt_refilled_at_the_rate() {
    let q = CheckQuota::per_minute(10).allow_burst(5);
    let mut s = State::default();
    let d = charge(&mut s, T0, &q.with_cost(8));
    assert_eq!(d, Decision::deny(24_000, 0, 48_000));
    assert_eq!(s.spent, 8 * 60_000);
    assert!(!check(&mut s.clone(), T0 + 23_999, &q).allowed);
    let d = check(&mut s, T0 + 24_000, &q);
    assert_eq!((d.allowed, d.remaining), (true, 0));
}

/// Issue 39, finding 7: tokens kept across a rate change, refilled at
/// the new rate. Empty at 60 a minute (burst 5), slowed to 6 a minute
/// at that instant: 3 s later 0.3 tokens, the next in 7 s.
#[test]
fn a_slower_rate_keeps_the_tokens_and_refills_at_the_new_rate() {
    let fast = CheckQuota::per_minute(60).allow_burst(5);
    let slow = CheckQuota::per_minute(6).allow_burst(5);
    let mut s = State::default();
    for _ in 0..5 {
        assert!(check(&mut s, T0, &fast).allowed);
    }
    let d = check(&mut s, T0 + 3_000, &slow);
    assert_eq!((d.allowed, d.retry_after_ms), (false, 7_000), "{d:?}");
    assert!(check(&mut s, T0 + 10_000, &slow).allowed);
}

/// Empty at 6 a minute, sped up to 60 a minute: 3 s later 3 tokens.
#[test]
fn a_faster_rate_keeps_the_tokens_and_refills_at_the_new_rate() {
    let slow = CheckQuota::per_minute(6).allow_burst(5);
    let fast = CheckQuota::per_minute(60).allow_burst(5);
    let mut s = State::default();
    for _ in 0..5 {
        assert!(check(&mut s, T0, &slow).allowed);
    }
    for i in 0..3 {
        assert!(check(&mut s, T0 + 3_000, &fast).allowed, "request {i}");
    }
    assert!(!check(&mut s, T0 + 3_000, &fast).allowed);
}

#[test]
fn a_charge_within_the_bucket_is_admitted() {
    let q = CheckQuota::per_minute(10).allow_burst(5);
    let mut s = State::default();
    assert_eq!(
        charge(&mut s, T0, &q.with_cost(5)),
        Decision::allow(0, 30_000)
    );
}
