use super::*;

const T0: u64 = 1_767_225_600_000;

/// Seed: same settings as the token bucket, same results.
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
    assert!(!check(&mut s, T0 + 6_000, &q).allowed);
    for i in 0..4 {
        assert!(check(&mut s, T0 + 30_000, &q).allowed, "0:30 #{i}");
    }
    for _ in 0..2 {
        let d = check(&mut s, T0 + 30_000, &q);
        assert_eq!((d.allowed, d.retry_after_ms), (false, 6_000));
    }
}

#[test]
fn huge_limits_do_not_overflow() {
    let q = CheckQuota::new(1_000_000_000, 86_400_000).allow_burst(1_000_000_000);
    let mut s = State::default();
    for i in 0..100 {
        assert!(check(&mut s, T0 + i, &q).allowed);
    }
    // Each request is 0.0864 ms of drain: the last one leaves 0.0864 ms,
    // 86,400,000 units, draining at 10^9 units a ms.
    assert_eq!(expires_at(&s, &q), T0 + 100);
    assert_eq!((s.level, s.updated_ms), (86_400_000, T0 + 99));
}

/// Issue 39, finding 7: a bucket full at 60 a minute (burst 5),
/// republished at 6 a minute at the same instant, keeps its level of 5,
/// which drains at the new rate: 3 s later it holds 4.7, so a request is
/// refused and one fits in 7 s.
#[test]
fn a_slower_rate_keeps_the_level_and_drains_it_at_the_new_rate() {
    let fast = CheckQuota::per_minute(60).allow_burst(5);
    let slow = CheckQuota::per_minute(6).allow_burst(5);
    let mut s = State::default();
    for i in 0..5 {
        assert!(check(&mut s, T0, &fast).allowed, "request {i}");
    }
    let d = check(&mut s, T0 + 3_000, &slow);
    assert_eq!((d.allowed, d.retry_after_ms), (false, 7_000), "{d:?}");
    assert!(!check(&mut s, T0 + 9_999, &slow).allowed);
    assert!(check(&mut s, T0 + 10_000, &slow).allowed);
}

/// Sped up from 6 to 60 a minute: the level of 5 drains a request a
/// second, so 3 s later 3 requests pass and the 4th is refused for 1 s.
#[test]
fn a_faster_rate_keeps_the_level_and_drains_it_at_the_new_rate() {
    let slow = CheckQuota::per_minute(6).allow_burst(5);
    let fast = CheckQuota::per_minute(60).allow_burst(5);
    let mut s = State::default();
    for i in 0..5 {
        assert!(check(&mut s, T0, &slow).allowed, "request {i}");
    }
    for i in 0..3 {
        assert!(
            check(&mut s, T0 + 3_000, &fast).allowed,
            "request {i} at 3 s"
        );
    }
    let d = check(&mut s, T0 + 3_000, &fast);
    assert_eq!((d.allowed, d.retry_after_ms), (false, 1_000), "{d:?}");
}

/// A burst changed keeps the level: lowered below it, the bucket refuses
/// until the level drains under the new burst; raised, the level fits
/// with more room.
#[test]
fn a_burst_change_keeps_the_level() {
    let q = CheckQuota::per_minute(60).allow_burst(5);
    let mut s = State::default();
    for _ in 0..5 {
        assert!(check(&mut s, T0, &q).allowed);
    }
    let lower = q.allow_burst(2);
    let d = check(&mut s.clone(), T0, &lower);
    assert_eq!((d.allowed, d.retry_after_ms), (false, 4_000));
    let higher = q.allow_burst(8);
    let d = check(&mut s, T0, &higher);
    assert_eq!((d.allowed, d.remaining), (true, 2));
}

/// The token bucket's debt example: 8 charged into a bucket of 5.
#[test]
fn a_charge_overflows_the_bucket_and_drains_at_the_rate() {
    let q = CheckQuota::per_minute(10).allow_burst(5);
    let mut s = State::default();
    let d = charge(&mut s, T0, &q.with_cost(8));
    assert_eq!(d, Decision::deny(24_000, 0, 48_000));
    assert_eq!((s.level, s.updated_ms), (8 * 60_000, T0));
    assert_eq!(expires_at(&s, &q), T0 + 48_000);
    assert!(!check(&mut s.clone(), T0 + 23_999, &q).allowed);
    let d = check(&mut s, T0 + 24_000, &q);
    assert_eq!((d.allowed, d.remaining), (true, 0));
    let d = charge(&mut s, T0 + 24_000, &q.with_cost(0));
    assert_eq!(d, Decision::allow(0, 30_000));
}
