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
    // Each request is 0.0864 ms of drain: the last one leaves T0 + 99.0864.
    assert_eq!(expires_at(&s, &q), T0 + 100);
    assert_eq!(s.tat_frac, 86_400_000);
}

/// `check` as it was written on the TAT in ticks (128-bit divisions).
fn check_in_ticks(state: &mut State, now: u64, q: &CheckQuota) -> Decision {
    let limit = q.limit.max(1) as u128;
    let t = q.period_ms.max(1) as u128;
    let tolerance = q.burst as u128 * t;
    let now_t = now as u128 * limit;
    let tat = state.ticks(limit).max(now_t);
    let new_tat = tat + q.cost as u128 * t;
    if new_tat - now_t <= tolerance {
        *state = State::from_ticks(new_tat, limit);
        let remaining = narrow((tolerance - (new_tat - now_t)) / t);
        return Decision::allow(remaining, narrow(ceil_div(new_tat - now_t, limit)));
    }
    let level = tat - now_t;
    let remaining = narrow(tolerance.saturating_sub(level) / t);
    let retry = if q.cost > q.burst {
        q.period_ms
    } else {
        narrow(ceil_div(new_tat - now_t - tolerance, limit))
    };
    Decision::deny(retry, remaining, narrow(ceil_div(level, limit)))
}

proptest::proptest! {
    /// Counting the level past `now` decides and moves the TAT exactly
    /// as counting the TAT in ticks does, small numbers or huge.
    #[test]
    fn the_level_is_the_tat_in_ticks(
        limit in proptest::prop_oneof![1..=20u64, 1..=u64::MAX],
        period in proptest::prop_oneof![1..=86_400_000u64, 1..=u64::MAX],
        burst in proptest::prop_oneof![0..=20u64, 0..=u64::MAX],
        cost in proptest::prop_oneof![0..=3u64, 0..=u64::MAX],
        tat_ms in proptest::prop_oneof![T0 - 10_000..T0 + 10_000_000, 0..=u64::MAX],
        tat_frac in 0..=u64::MAX,
        now in proptest::prop_oneof![T0..T0 + 100_000, 0..=u64::MAX],
    ) {
        let q = CheckQuota::new(limit, period).allow_burst(burst).with_cost(cost);
        let s = State { tat_ms, tat_frac: tat_frac % limit };
        // Where the ticks form does not overflow (quotas are far below).
        let (l, t) = (limit as u128, period as u128);
        let tat = s.ticks(l).max(now as u128 * l);
        proptest::prop_assume!(tat.checked_add(cost as u128 * t).is_some());
        let (mut a, mut b) = (s, s);
        proptest::prop_assert_eq!(check(&mut a, now, &q), check_in_ticks(&mut b, now, &q));
        proptest::prop_assert_eq!(a, b);
    }
}

/// The token bucket's debt example: 8 charged into a bucket of 5.
#[test]
fn a_charge_overflows_the_bucket_and_drains_at_the_rate() {
    let q = CheckQuota::per_minute(10).allow_burst(5);
    let mut s = State::default();
    let d = charge(&mut s, T0, &q.with_cost(8));
    assert_eq!(d, Decision::deny(24_000, 0, 48_000));
    assert_eq!(s.tat_ms, T0 + 48_000);
    assert!(!check(&mut s.clone(), T0 + 23_999, &q).allowed);
    let d = check(&mut s, T0 + 24_000, &q);
    assert_eq!((d.allowed, d.remaining), (true, 0));
    let d = charge(&mut s, T0 + 24_000, &q.with_cost(0));
    assert_eq!(d, Decision::allow(0, 30_000));
}
