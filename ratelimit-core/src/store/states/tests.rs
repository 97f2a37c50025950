use std::collections::HashMap;

use proptest::prelude::*;

use super::*;
use crate::algorithm::CheckMode;
use crate::algorithm::{CheckQuota, Decision};
use crate::store::State;

const T0: u64 = 1_767_225_600_000;

fn k(n: u8) -> KeyDigest {
    crate::HashKey::DEFAULT.digest(&[n])
}

/// A check with a penalty of 1 s, as the memory backend runs it.
fn check(t: &States, key: KeyDigest, a: Algorithm, now: u64, q: &CheckQuota, bit: u16) -> Decision {
    t.check(
        key,
        now,
        a,
        CheckMode::Count,
        q,
        Some(1000),
        Some(bit),
        || (),
    )
}

/// A state kept whole is counted through it: the in-place count leaves it
/// to the general path.
#[test]
fn a_whole_state_is_counted_whole() {
    let t = States::new(10, 1);
    let big = CheckQuota::new(1 << 40, 60_000).with_cost(1 << 21);
    for i in 0..3 {
        let d = t.check(
            k(1),
            T0 + i,
            Algorithm::SlidingWindow,
            CheckMode::Count,
            &big,
            None,
            None,
            || (),
        );
        assert_eq!(d.remaining, (1 << 40) - (i + 1) * (1 << 21));
        assert_eq!(t.wide.len(), 1);
    }
}

#[test]
fn a_live_state_evicted_for_a_check_is_reported() {
    let t = States::new(1, 1);
    let q = CheckQuota::per_minute(5);
    let mut evicted = 0;
    for n in 0..3u8 {
        let a = Algorithm::LeakyBucket;
        t.check(k(n), T0, a, CheckMode::Charge, &q, None, None, || {
            evicted += 1
        });
    }
    assert_eq!((evicted, t.len()), (2, 1));
}

#[test]
fn an_optional_word_takes_8_bytes() {
    use std::mem::size_of;
    assert_eq!(size_of::<Option<Packed>>(), 8);
}

#[test]
fn whole_states_go_with_their_placeholders() {
    // Distinct states never pack: each one is kept whole.
    let t = States::new(4, 1);
    let q = CheckQuota::per_minute(100);
    for n in 0..50u8 {
        check(&t, k(n), Algorithm::Distinct, T0 + u64::from(n), &q, 1);
        assert!(t.len() <= 4);
        assert_eq!(t.wide.len(), t.len(), "after {n}");
    }
    for n in 46..50u8 {
        t.remove(&k(n));
    }
    assert_eq!((t.len(), t.wide.len()), (0, 0));
}

#[test]
fn a_state_that_packs_again_leaves_the_whole_table() {
    let t = States::new(10, 1);
    // A count past the packed field: kept whole.
    let big = CheckQuota::new(1 << 40, 60_000).with_cost(1 << 21);
    check(&t, k(1), Algorithm::SlidingWindow, T0, &big, 0);
    assert_eq!(t.wide.len(), 1);
    // Two periods later the counts are gone and it packs again.
    check(
        &t,
        k(1),
        Algorithm::SlidingWindow,
        T0 + 120_000,
        &CheckQuota::per_minute(5),
        0,
    );
    assert_eq!((t.len(), t.wide.len()), (1, 0));
}

/// A charge of `q.cost` (forced past the limit), as the memory backend
/// runs it.
fn charge(t: &States, key: KeyDigest, a: Algorithm, now: u64, q: &CheckQuota) -> Decision {
    t.check(key, now, a, CheckMode::Charge, q, Some(1000), None, || ())
}

/// The whole state of a stored one.
fn whole(s: Option<&State>) -> Option<SubjectState> {
    s.map(|s| s.clone().into_parts().0)
}

#[derive(Debug, Clone)]
enum Op {
    /// Key, algorithm, large quota, time step, penalty.
    Check(u8, usize, bool, u64, bool),
    /// A charge of a multiple of the quota's cost (no distinct).
    Charge(u8, usize, bool, u64, u64),
    /// A check through `replace` (the store seam's general path): key,
    /// algorithm, large quota, time step, penalty.
    Replace(u8, usize, bool, u64, bool),
    Peek(u8, usize, bool),
    Remove(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u8..6, 0usize..5, any::<bool>(), 0u64..5_000, any::<bool>())
            .prop_map(|(n, a, b, dt, p)| Op::Check(n, a, b, dt, p)),
        2 => (0u8..6, 0usize..4, any::<bool>(), 1u64..40, 0u64..5_000)
            .prop_map(|(n, a, b, m, dt)| Op::Charge(n, a, b, m, dt)),
        3 => (0u8..6, 0usize..5, any::<bool>(), 0u64..5_000, any::<bool>())
            .prop_map(|(n, a, b, dt, p)| Op::Replace(n, a, b, dt, p)),
        2 => (0u8..6, 0usize..5, any::<bool>()).prop_map(|(n, a, b)| Op::Peek(n, a, b)),
        1 => (0u8..6).prop_map(Op::Remove),
    ]
}

proptest! {
    /// Below its capacity the table is a map of whole states: the same
    /// decisions as a `HashMap` of `SubjectState`s, whatever packs and
    /// whatever is kept whole (the large quota's counts do not pack), and
    /// whatever charges past the limit leave.
    #[test]
    fn it_decides_as_a_map_of_whole_states(ops in prop::collection::vec(op(), 1..200)) {
        let t = States::new(64, 4);
        let mut model: HashMap<u8, SubjectState> = HashMap::new();
        let small = CheckQuota::per_second(3);
        let large = CheckQuota::new(1 << 40, 1000).with_cost(1 << 19);
        let mut now = T0;
        for op in ops {
            match op {
                Op::Check(n, a, big, dt, penalty) => {
                    now += dt;
                    let (a, q) = (Algorithm::ALL[a], if big { large } else { small });
                    let bit = u16::from(n) + 1;
                    let penalty = penalty.then_some(1000);
                    let s = model.entry(n).or_insert_with(|| SubjectState::new(a));
                    let want = s.check(a, now, &q, penalty, Some(bit));
                    let got = t.check(k(n), now, a, CheckMode::Count, &q, penalty, Some(bit), || ());
                    prop_assert_eq!(got, want);
                }
                Op::Charge(n, a, big, m, dt) => {
                    now += dt;
                    let (a, q) = (Algorithm::ALL[a], if big { large } else { small });
                    let q = q.with_cost(q.cost.saturating_mul(m));
                    let s = model.entry(n).or_insert_with(|| SubjectState::new(a));
                    let want = s.charge(a, now, &q, Some(1000));
                    prop_assert_eq!(charge(&t, k(n), a, now, &q), want);
                }
                Op::Replace(n, a, big, dt, penalty) => {
                    now += dt;
                    let (a, q) = (Algorithm::ALL[a], if big { large } else { small });
                    let (bit, penalty) = (Some(u16::from(n) + 1), penalty.then_some(1000));
                    let s = model.entry(n).or_insert_with(|| SubjectState::new(a));
                    let want = s.check(a, now, &q, penalty, bit);
                    let got = t.replace(k(n), now, |found| {
                        let mut s = whole(found).unwrap_or_else(|| SubjectState::new(a));
                        let d = s.check(a, now, &q, penalty, bit);
                        let idle = s.expires_at(&q);
                        (d, Some(State::from_parts(s, idle)))
                    }, || ());
                    prop_assert_eq!(got, want);
                }
                Op::Peek(n, a, big) => {
                    let (a, q) = (Algorithm::ALL[a], if big { large } else { small });
                    let want = match model.get(&n) {
                        Some(s) => s.peek(a, now, &q),
                        None => SubjectState::new(a).peek(a, now, &q),
                    };
                    let got = t.peek(&k(n), |s| {
                        whole(s).unwrap_or_else(|| SubjectState::new(a)).peek(a, now, &q)
                    });
                    prop_assert_eq!(got, want);
                    // And a probe of the quota's cost, as the memory
                    // backend runs it.
                    let want = match model.get(&n) {
                        Some(s) => s.probe(a, now, &q),
                        None => SubjectState::new(a).probe(a, now, &q),
                    };
                    prop_assert_eq!(t.probe(&k(n), a, now, &q), want);
                }
                Op::Remove(n) => {
                    model.remove(&n);
                    t.remove(&k(n));
                }
            }
            prop_assert_eq!(t.len(), model.len());
            prop_assert!(t.wide.len() <= t.len());
        }
    }
}
