use super::*;

#[test]
fn a_state_is_at_most_40_bytes() {
    // The in-memory store's per-key budget (benches/README.md) counts
    // on it; the memory bench measures the whole entry.
    assert!(std::mem::size_of::<SubjectState>() <= 40);
}

#[test]
fn changing_algorithm_starts_fresh() {
    let q = CheckQuota::per_minute(1);
    let mut s = SubjectState::new(Algorithm::FixedWindow);
    assert!(s.check(Algorithm::FixedWindow, 0, &q, None, None).allowed);
    assert!(!s.check(Algorithm::FixedWindow, 1, &q, None, None).allowed);
    assert!(s.check(Algorithm::SlidingWindow, 2, &q, None, None).allowed);
}

#[test]
fn penalty_clears_the_algorithm_state() {
    let q = CheckQuota::per_minute(1);
    let mut s = SubjectState::new(Algorithm::FixedWindow);
    assert!(
        s.check(Algorithm::FixedWindow, 1000, &q, Some(5000), None)
            .allowed
    );
    let d = s.check(Algorithm::FixedWindow, 1001, &q, Some(5000), None);
    assert_eq!(d.blocked_until_ms, Some(6001));
    assert_eq!(
        s,
        SubjectState {
            blocked_until: 6001,
            ..SubjectState::new(Algorithm::FixedWindow)
        }
    );
    assert!(
        !s.check(Algorithm::FixedWindow, 6000, &q, Some(5000), None)
            .allowed
    );
    assert!(
        s.check(Algorithm::FixedWindow, 6001, &q, Some(5000), None)
            .allowed
    );
}

#[test]
fn a_probe_counts_nothing_and_starts_no_penalty() {
    let q = CheckQuota::per_minute(1);
    let mut s = SubjectState::new(Algorithm::FixedWindow);
    for _ in 0..3 {
        assert!(s.probe(Algorithm::FixedWindow, 1000, &q).allowed);
    }
    assert!(
        s.check(Algorithm::FixedWindow, 1000, &q, None, None)
            .allowed
    );
    let before = s.clone();
    let d = s.probe(Algorithm::FixedWindow, 1001, &q);
    assert_eq!((d.allowed, d.retry_after_ms), (false, 58_999));
    assert_eq!(d.blocked_until_ms, None);
    assert_eq!(s, before);
}

#[test]
fn a_charge_over_the_limit_starts_the_penalty_and_a_running_one_adds_nothing() {
    let q = CheckQuota::per_minute(10);
    let algo = Algorithm::TokenBucket;
    let mut s = SubjectState::new(algo);
    let d = s.charge(algo, 1000, &q.with_cost(10), Some(5000));
    assert_eq!(d, Decision::allow(0, 60_000));
    let d = s.charge(algo, 1001, &q.with_cost(3), Some(5000));
    assert_eq!((d.allowed, d.retry_after_ms), (false, 5000));
    assert_eq!(d.blocked_until_ms, Some(6001));
    let blocked = s.clone();
    let d = s.charge(algo, 2000, &q.with_cost(50), Some(5000));
    assert_eq!((d.retry_after_ms, d.blocked_until_ms), (4001, Some(6001)));
    assert_eq!(s, blocked);
    let d = s.probe(algo, 6000, &q);
    assert_eq!((d.allowed, d.blocked_until_ms), (false, Some(6001)));
    // Counting starts fresh after the block: the debt went with it.
    let d = s.charge(algo, 6001, &q.with_cost(1), Some(5000));
    assert_eq!((d.allowed, d.remaining), (true, 9));
}
