use super::*;

const T0: u64 = 1_767_225_600_000;

fn at(s: &mut State, secs_tenths: u64, q: &CheckQuota) -> Decision {
    check(s, T0 + secs_tenths * 100, q)
}

/// The scenario table of `docs/rules.md`, limit 5 per 1m.
#[test]
fn seed_scenario_table() {
    let q = CheckQuota::per_minute(5);
    let mut s = State::default();
    for t in 590..595 {
        assert!(at(&mut s, t, &q).allowed, "t={t}");
    }
    let d = at(&mut s, 600, &q);
    assert!(!d.allowed, "1:00.0: 0 + 5 x 100% = 5");
    assert!(at(&mut s, 900, &q).allowed, "1:30.0: 2.5 rounds up to 3");
    assert!(at(&mut s, 901, &q).allowed, "1:30.1: 1 + 3 = 4");
    assert!(!at(&mut s, 902, &q).allowed, "1:30.2: 2 + 3 = 5");
    assert!(at(&mut s, 1050, &q).allowed, "1:45.0: 2 + 2 = 4");
    assert!(at(&mut s, 1200, &q).allowed, "2:00.0: 0 + 3 = 3");
    assert_eq!(s.previous, 3);
}

#[test]
fn retry_after_is_the_earliest_admission() {
    let q = CheckQuota::per_minute(5);
    let mut s = State::default();
    for t in 590..595 {
        at(&mut s, t, &q);
    }
    let d = at(&mut s, 600, &q);
    // At 1:12 the estimate is ceil(5 x 48/60) = 4, so one more fits.
    assert_eq!(d.retry_after_ms, 12_000);
    let mut probe = s;
    assert!(!check(&mut probe, T0 + 60_000 + 11_999, &q).allowed);
    assert!(check(&mut s, T0 + 72_000, &q).allowed);
}

/// Found by the `valkey_reply` fuzz target: a state read from a hostile
/// reply with a window start near `u64::MAX` overflowed the roll.
#[test]
fn a_hostile_state_does_not_overflow() {
    let q = CheckQuota::per_minute(5);
    let mut s = State {
        window_start: u64::MAX,
        current: 0,
        previous: 0,
    };
    assert!(check(&mut s, T0, &q).allowed);
    let s = State {
        window_start: u64::MAX,
        ..s
    };
    assert_eq!(expires_at(&s, &q), u64::MAX);
}

#[test]
fn retry_after_may_lie_past_the_window_end() {
    let q = CheckQuota::per_minute(5);
    let mut s = State::default();
    for i in 0..5 {
        check(&mut s, T0 + 50_000 + i, &q);
    }
    let d = check(&mut s, T0 + 55_000, &q);
    // Next window: ceil(5 x (60 - e)/60) <= 4 needs e >= 12s.
    assert_eq!(d.retry_after_ms, 5_000 + 12_000);
}

/// 100 per minute, 150 charged at 0:30: the next window admits once
/// ceil(150 x (60 - e) / 60) + 1 <= 100, at e = 20.4 s.
#[test]
fn a_charge_is_paid_off_in_the_next_window() {
    let q = CheckQuota::per_minute(100);
    let mut s = State::default();
    let d = charge(&mut s, T0 + 30_000, &q.with_cost(150));
    assert_eq!(d, Decision::deny(30_000 + 20_400, 0, 90_000));
    assert_eq!(s.current, 150);
    assert!(!check(&mut s.clone(), T0 + 80_399, &q).allowed);
    assert!(check(&mut s, T0 + 80_400, &q).allowed);
}

#[test]
fn a_charge_within_the_limit_is_admitted() {
    let q = CheckQuota::per_minute(100);
    let mut s = State::default();
    assert_eq!(
        charge(&mut s, T0 + 30_000, &q.with_cost(100)),
        Decision::allow(0, 90_000)
    );
    assert!(!check(&mut s, T0 + 30_000, &q).allowed);
}
