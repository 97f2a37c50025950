use proptest::prelude::*;

use super::super::SubjectState;
use super::*;
use crate::algorithm::CheckMode::{self, Charge, Count, Probe};
use crate::store::IDLE_MAX;

const T0: u64 = 1_767_225_600_000;

/// The general path of the in-memory store: the whole state, checked (or
/// charged), and its word (or [`Packed::WIDE`]) with its idle time.
fn whole(
    s: &mut SubjectState,
    a: Algorithm,
    mode: CheckMode,
    now: u64,
    q: &CheckQuota,
    penalty: Option<u64>,
) -> (Decision, Packed, u64) {
    let d = match mode {
        Charge => s.charge(a, now, q, penalty),
        _ => s.check(a, now, q, penalty, None),
    };
    let idle = s.expires_at(q);
    let w = match idle <= IDLE_MAX {
        true => Packed::pack(s, idle).unwrap_or(Packed::WIDE),
        false => Packed::WIDE,
    };
    (d, w, idle)
}

#[test]
fn fresh_and_live_words_are_counted_in_place() {
    let q = CheckQuota::per_minute(2);
    for a in Algorithm::ALL[..4].iter().copied() {
        let (mut w, mut idle) = (Packed::fresh(a), 0);
        let mut s = SubjectState::new(a);
        let steps = [
            (Count, 0, &q, Some(5000), (true, 1)),
            (Count, 1, &q, Some(5000), (true, 0)),
            // Refused without a penalty.
            (Count, 2, &q, None, (false, 0)),
            // A charge past the limit, without a penalty.
            (Charge, 2, &q.with_cost(5), None, (false, 0)),
        ];
        for (mode, dt, q, penalty, want) in steps {
            let d = w.count(&mut idle, IDLE_MAX, a, mode, T0 + dt, q, penalty);
            let (d2, w2, idle2) = whole(&mut s, a, mode, T0 + dt, q, penalty);
            assert_eq!(d.map(|d| (d.allowed, d.remaining)), Some(want), "{a:?}");
            assert_eq!((d, w, idle), (Some(d2), w2, idle2), "{a:?} {mode:?}");
        }
    }
}

#[test]
fn another_algorithms_fresh_word_is_counted_fresh() {
    let q = CheckQuota::per_minute(2);
    let (a, other) = (Algorithm::LeakyBucket, Algorithm::FixedWindow);
    let mut s = SubjectState::new(other);
    let (want, w, i) = whole(&mut s, a, Count, T0, &q, None);
    let (mut word, mut idle) = (Packed::fresh(other), 0);
    assert_eq!(
        word.count(&mut idle, IDLE_MAX, a, Count, T0, &q, None),
        Some(want)
    );
    assert_eq!((word, idle), (w, i));
}

#[test]
fn what_the_general_path_decides_is_left_untouched() {
    let q = CheckQuota::per_minute(1);
    let (a, other) = (Algorithm::SlidingWindow, Algorithm::TokenBucket);
    let mut s = SubjectState::new(a);
    let (_, live, idle) = whole(&mut s, a, Count, T0, &q, None);
    let untouched_in = |mode, w: Packed, algorithm, penalty, idle_max| {
        let (mut w2, mut idle2) = (w, idle);
        let d = w2.count(&mut idle2, idle_max, algorithm, mode, T0 + 1, &q, penalty);
        d.is_none() && (w2, idle2) == (w, idle)
    };
    let untouched =
        |w, algorithm, penalty, idle_max| untouched_in(Count, w, algorithm, penalty, idle_max);
    // A probe, a charge over the limit that starts a penalty.
    assert!(untouched_in(Probe, live, a, None, IDLE_MAX));
    assert!(untouched_in(Charge, live, a, Some(5000), IDLE_MAX));
    // A refusal that starts a penalty.
    assert!(untouched(live, a, Some(5000), IDLE_MAX));
    // Another algorithm's live state, a state kept whole, a distinct check.
    assert!(untouched(live, other, None, IDLE_MAX));
    assert!(untouched(Packed::WIDE, a, None, IDLE_MAX));
    assert!(untouched(
        Packed::fresh(Algorithm::Distinct),
        Algorithm::Distinct,
        None,
        IDLE_MAX
    ));
    // Idle past what the table holds.
    assert!(untouched(Packed::fresh(a), a, None, T0));
    // A penalty running.
    let (d, blocked, _) = whole(&mut s, a, Count, T0 + 1, &q, Some(5000));
    assert_eq!(d.blocked_until_ms, Some(T0 + 5001));
    let (mut w, mut idle) = (blocked, T0 + 5001);
    assert_eq!(
        w.count(&mut idle, IDLE_MAX, a, Count, T0 + 2, &q, None),
        None
    );
}

fn quota() -> impl Strategy<Value = CheckQuota> {
    let limit = prop_oneof![6 => 1..=20u64, 2 => 1_000..=2_000_000u64, 1 => Just(u64::MAX / 2)];
    let period = prop_oneof![3 => 1..=3600u64, 1 => Just(86_400u64 * 7)];
    (limit, period, 0..=20u64, 1..=3u64, any::<bool>()).prop_map(
        |(limit, secs, burst, cost, odd_ms)| {
            let burst = if burst == 0 { limit } else { burst };
            let period = secs * 1000 + u64::from(odd_ms) * 7;
            CheckQuota::new(limit, period)
                .allow_burst(burst)
                .with_cost(cost.min(limit).min(burst))
        },
    )
}

#[derive(Debug, Clone)]
enum Op {
    /// A check after `gap` ms, with or without the penalty.
    Check(u64, bool),
    /// A charge of `cost` after `gap` ms, with or without the penalty
    /// (debts, long spans, blocks).
    Charge(u64, u64, bool),
    /// A check under another algorithm (the state starts fresh).
    Switch(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let gap = prop_oneof![Just(0u64), 0..2_000u64, 0..10_000_000u64];
    prop_oneof![
        8 => (gap.clone(), any::<bool>()).prop_map(|(g, p)| Op::Check(g, p)),
        2 => (gap, 1..100u64, any::<bool>()).prop_map(|(g, c, p)| Op::Charge(g, c, p)),
        1 => (0usize..5).prop_map(Op::Switch),
    ]
}

proptest! {
    /// Whatever word the store holds, counting (or charging) in place
    /// decides as the whole state does and leaves the word and idle time
    /// that the whole state packs to; when it declines, it leaves both as
    /// they were.
    #[test]
    fn counting_in_place_is_the_general_path(
        algo in 0usize..4,
        q in quota(),
        penalty in 1..=600_000u64,
        ops in prop::collection::vec(op(), 1..120),
    ) {
        let mut a = Algorithm::ALL[algo];
        let mut s = SubjectState::new(a);
        let (mut word, mut idle) = (Packed::fresh(a), 0);
        let mut now = T0;
        for op in ops {
            let (gap, penalty, mode, q) = match op {
                Op::Check(gap, p) => (gap, p.then_some(penalty), Count, q),
                Op::Charge(gap, cost, p) => (gap, p.then_some(penalty), Charge, q.with_cost(cost)),
                Op::Switch(b) => {
                    a = Algorithm::ALL[b];
                    (0, None, Count, q)
                }
            };
            // The store answers a distinct charge elsewhere.
            if mode == Charge && a == Algorithm::Distinct {
                continue;
            }
            now += gap;
            let (mut w2, mut idle2) = (word, idle);
            let fast = w2.count(&mut idle2, IDLE_MAX, a, mode, now, &q, penalty);
            let (d, w, i) = whole(&mut s, a, mode, now, &q, penalty);
            match fast {
                Some(fast) => {
                    prop_assert_eq!(fast, d);
                    prop_assert_eq!((w2, idle2), (w, i));
                }
                None => {
                    prop_assert_eq!((w2, idle2), (word, idle));
                    // Declined only where the general path must decide.
                    let live = word.unpack(idle).is_some_and(|s| {
                        s.blocked_until == 0
                            && (s.inner.algorithm() == a || super::super::is_fresh(&s.inner))
                    });
                    let general = w == Packed::WIDE || d.blocked_until_ms.is_some();
                    prop_assert!(!live || general || a == Algorithm::Distinct);
                }
            }
            (word, idle) = (w, i);
        }
    }
}
