//! Property tests of probes and charges (see `CheckMode`) over random
//! timelines mixing counted requests, probes and charges of random costs,
//! many far past the limit.

use super::props::{quota, times, COUNTING};
use super::{fixed_window, leaky_bucket, sliding_window, token_bucket};
use super::{Algorithm, CheckQuota, Decision, SubjectState, MAX_CHARGED_UNITS};
use proptest::collection::vec;
use proptest::prelude::*;

/// One step of a timeline.
#[derive(Debug, Clone, Copy)]
enum Op {
    /// A request counted at the quota's cost.
    Count,
    /// A probe at cost 1.
    Probe,
    /// A charge of this cost.
    Charge(u64),
}

fn op(limit: u64) -> impl Strategy<Value = Op> {
    let cost = prop_oneof![
        2 => 0..=3u64,
        2 => 0..=2 * limit,
        // Far past the limit, with the stored totals still below u64::MAX
        // units (a token bucket's debt saturates there).
        1 => limit..=(1000 * limit).min(1_000_000_000),
    ];
    prop_oneof![
        2 => Just(Op::Count),
        2 => Just(Op::Probe),
        3 => cost.prop_map(Op::Charge),
    ]
}

fn timeline() -> impl Strategy<Value = (CheckQuota, Vec<(u64, Op)>)> {
    quota().prop_flat_map(|q| {
        let steps = (times(q), vec(op(q.limit), 150))
            .prop_map(|(times, ops)| times.into_iter().zip(ops).collect::<Vec<_>>());
        (Just(q), steps)
    })
}

/// Applies one step; the decision.
fn apply(
    s: &mut SubjectState,
    algo: Algorithm,
    t: u64,
    op: Op,
    q: &CheckQuota,
    pen: Option<u64>,
) -> Decision {
    match op {
        Op::Count => s.check(algo, t, q, pen, None),
        Op::Probe => s.probe(algo, t, &q.with_cost(1)),
        Op::Charge(c) => s.charge(algo, t, &q.with_cost(c), pen),
    }
}

/// Refused at `t` with `r`: a cost-1 probe of `state` admits at `t + r`
/// and not at `t + r - 1`.
fn retry_is_exact(state: &SubjectState, algo: Algorithm, t: u64, r: u64, q: &CheckQuota) -> bool {
    let one = q.with_cost(1);
    r > 0 && state.probe(algo, t + r, &one).allowed && !state.probe(algo, t + r - 1, &one).allowed
}

/// `before + add`, saturating at `cap` (a total already past it stays).
fn capped(before: u128, add: u128, cap: u128) -> u128 {
    if before + add > cap {
        before.max(cap)
    } else {
        before + add
    }
}

proptest! {
    /// A probe decides exactly as a cost-1 count would (without a penalty:
    /// a probe starts none), answers the budget as it found it (a refusal
    /// as the count's; an admission as a count of cost 0's: `r` and `t`
    /// of the state before) and changes nothing; every refusal of a probe
    /// or a charge says exactly when a cost-1 request fits again.
    #[test]
    fn probes_decide_as_counts_and_retry_after_is_exact(
        (q, steps) in timeline(),
        penalty in prop::option::of(1..=3_600_000u64),
    ) {
        for algo in COUNTING {
            let mut s = SubjectState::new(algo);
            for &(t, op) in &steps {
                let probe = s.probe(algo, t, &q.with_cost(1));
                let count = s.clone().check(algo, t, &q.with_cost(1), None, None);
                let found = s.clone().check(algo, t, &q.with_cost(0), None, None);
                let (remaining, reset_ms) = if count.allowed {
                    (found.remaining, found.reset_ms)
                } else {
                    (count.remaining, count.reset_ms)
                };
                prop_assert_eq!(probe, Decision { remaining, reset_ms, ..count }, "{:?} at {}", algo, t);
                let before = s.clone();
                let d = apply(&mut s, algo, t, op, &q, penalty);
                if matches!(op, Op::Probe) {
                    prop_assert_eq!(&s, &before, "{:?}: a probe changed the state", algo);
                }
                prop_assert_eq!(d.retry_after_ms > 0, !d.allowed, "{:?} at {}: {:?}", algo, t, d);
                if !d.allowed && d.blocked_until_ms.is_none() && !matches!(op, Op::Count) {
                    prop_assert!(retry_is_exact(&s, algo, t, d.retry_after_ms, &q),
                        "{:?} {:?} at {}: {:?}", algo, op, t, d);
                }
            }
        }
    }

    /// A charge never loses cost: two charges at one time leave the state
    /// (and answer) one charge of their sum would.
    #[test]
    fn charges_add_up(
        (q, steps) in timeline(),
        a in 0..=5_000u64,
        b in 0..=5_000u64,
    ) {
        for algo in COUNTING {
            let mut s = SubjectState::new(algo);
            for &(t, op) in &steps {
                apply(&mut s, algo, t, op, &q, None);
                let mut split = s.clone();
                split.charge(algo, t, &q.with_cost(a), None);
                let d_split = split.charge(algo, t, &q.with_cost(b), None);
                let mut whole = s.clone();
                let d_whole = whole.charge(algo, t, &q.with_cost(a + b), None);
                prop_assert_eq!(&split, &whole, "{:?} at {}", algo, t);
                prop_assert_eq!(d_split, d_whole, "{:?} at {}", algo, t);
            }
        }
    }

    /// A charge never loses cost: it adds exactly its cost to what the
    /// algorithm holds at that time (its state rolled or refilled to then,
    /// which a charge of 0 does), however far past the limit, up to the
    /// bounds that keep the Valkey scripts exact.
    #[test]
    fn a_charge_adds_its_whole_cost((q, steps) in timeline()) {
        let p = q.period_ms as u128;
        let (mut fw, mut sw) = (fixed_window::State::default(), sliding_window::State::default());
        let (mut tb, mut lb) = (token_bucket::State::default(), leaky_bucket::State::default());
        for &(t, op) in &steps {
            let Op::Charge(c) = op else {
                fixed_window::check(&mut fw, t, &q);
                sliding_window::check(&mut sw, t, &q);
                token_bucket::check(&mut tb, t, &q);
                leaky_bucket::check(&mut lb, t, &q);
                continue;
            };
            let (qc, q0, c128) = (q.with_cost(c), q.with_cost(0), c as u128);
            fixed_window::charge(&mut fw, t, &q0);
            let before = fw.count;
            fixed_window::charge(&mut fw, t, &qc);
            prop_assert_eq!(fw.count, before + c);
            sliding_window::charge(&mut sw, t, &q0);
            let before = sw.current;
            sliding_window::charge(&mut sw, t, &qc);
            prop_assert_eq!(sw.current as u128, capped(before as u128, c128, sliding_window::MAX_CHARGED as u128));
            token_bucket::charge(&mut tb, t, &q0);
            let before = tb.spent as u128;
            token_bucket::charge(&mut tb, t, &qc);
            prop_assert_eq!(tb.spent as u128, capped(before, c128 * p, MAX_CHARGED_UNITS));
            leaky_bucket::charge(&mut lb, t, &q0);
            let before = lb.level as u128;
            leaky_bucket::charge(&mut lb, t, &qc);
            prop_assert_eq!(lb.level as u128, capped(before, c128 * p, MAX_CHARGED_UNITS));
        }
    }

    /// The overshoot bound: when every charge follows an admitted probe (a
    /// request let in because the budget was not yet spent), the total
    /// passes the limit by less than the charged cost.
    #[test]
    fn overshoot_is_less_than_the_cost_charged((q, steps) in timeline()) {
        let one = q.with_cost(1);
        let (p, limit) = (q.period_ms as u128, q.limit as u128);
        let (mut fw, mut sw) = (fixed_window::State::default(), sliding_window::State::default());
        let (mut tb, mut lb) = (token_bucket::State::default(), leaky_bucket::State::default());
        for &(t, op) in &steps {
            let Op::Charge(c) = op else { continue };
            let qc = q.with_cost(c);
            let room = (c as u128).saturating_sub(1);
            if fixed_window::check(&mut fw.clone(), t, &one).allowed {
                fixed_window::charge(&mut fw, t, &qc);
                prop_assert!(fw.count as u128 <= limit + room);
            }
            if sliding_window::check(&mut sw.clone(), t, &one).allowed {
                sliding_window::charge(&mut sw, t, &qc);
                let est = sliding_window::estimate(&sw, t - sw.window_start, p as u64);
                prop_assert!(est <= limit + room);
            }
            if token_bucket::check(&mut tb.clone(), t, &one).allowed {
                token_bucket::charge(&mut tb, t, &qc);
                prop_assert!(tb.spent as u128 <= (q.burst as u128 + room) * p);
            }
            if leaky_bucket::check(&mut lb.clone(), t, &one).allowed {
                leaky_bucket::charge(&mut lb, t, &qc);
                prop_assert!(lb.level as u128 <= (q.burst as u128 + room) * p);
            }
        }
    }

    /// The two buckets agree on charges as they do on counts.
    #[test]
    fn buckets_charge_identically((q, steps) in timeline()) {
        let mut tb = SubjectState::new(Algorithm::TokenBucket);
        let mut lb = SubjectState::new(Algorithm::LeakyBucket);
        for &(t, op) in &steps {
            let dt = apply(&mut tb, Algorithm::TokenBucket, t, op, &q, None);
            let dl = apply(&mut lb, Algorithm::LeakyBucket, t, op, &q, None);
            prop_assert_eq!(dt, dl, "{:?} at {}", op, t);
        }
    }
}
