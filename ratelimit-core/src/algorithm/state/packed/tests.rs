use proptest::prelude::*;

use super::*;
use crate::algorithm::CheckQuota;

const T0: u64 = 1_767_225_600_000;

const COUNTING: [Algorithm; 4] = [
    Algorithm::FixedWindow,
    Algorithm::SlidingWindow,
    Algorithm::TokenBucket,
    Algorithm::LeakyBucket,
];

fn state(blocked_until: u64, inner: Inner) -> SubjectState {
    SubjectState {
        blocked_until,
        inner,
    }
}

#[test]
fn fresh_words_unpack_to_fresh_states() {
    for a in COUNTING.into_iter().chain([Algorithm::Distinct]) {
        for idle in [0, T0, u64::MAX] {
            assert_eq!(Packed::fresh(a).unpack(idle), Some(SubjectState::new(a)));
        }
        assert!(!Packed::fresh(a).is_wide());
    }
    assert!(Packed::WIDE.is_wide());
    assert_eq!(Packed::WIDE.unpack(T0), None);
}

#[test]
fn a_distinct_state_never_packs() {
    let s = SubjectState::new(Algorithm::Distinct);
    assert_eq!(Packed::pack(&s, 0), None);
    assert_eq!(Packed::pack(&s, T0), None);
}

#[test]
fn a_blocked_state_packs_with_its_end_as_the_idle_time() {
    let q = CheckQuota::per_minute(1);
    let mut s = SubjectState::new(Algorithm::SlidingWindow);
    s.check(Algorithm::SlidingWindow, T0, &q, Some(5000), None);
    s.check(Algorithm::SlidingWindow, T0 + 1, &q, Some(5000), None);
    assert_eq!(s.blocked_until, T0 + 5001);
    let idle = s.expires_at(&q);
    let w = Packed::pack(&s, idle).expect("packs");
    assert_eq!(w.unpack(idle), Some(s.clone()));
    // With another idle time it would not be the same state: refused.
    assert_eq!(Packed::pack(&s, idle + 1), None);
}

#[test]
fn values_past_the_fields_are_kept_whole() {
    let cases = [
        // A count past 32 bits.
        state(
            0,
            Inner::Fixed(fixed_window::State {
                window_start: T0,
                count: 1 << 32,
            }),
        ),
        // A current count past 20 bits.
        state(
            0,
            Inner::Sliding(sliding_window::State {
                window_start: T0,
                current: 1 << 20,
                previous: 0,
            }),
        ),
        // Spent past 33 bits.
        state(
            0,
            Inner::Token(token_bucket::State {
                spent: 1 << 33,
                updated_ms: T0,
                full_ms: T0 + 1,
            }),
        ),
        // A level past 33 bits.
        state(
            0,
            Inner::Leaky(leaky_bucket::State {
                level: 1 << 33,
                updated_ms: T0,
                empty_ms: T0 + 1,
            }),
        ),
        // A counting state beside a penalty's end.
        state(
            T0,
            Inner::Fixed(fixed_window::State {
                window_start: T0,
                count: 1,
            }),
        ),
    ];
    for s in cases {
        let idle = T0 + 1000;
        assert_eq!(Packed::pack(&s, idle), None, "{s:?}");
    }
    // A span past its field: a fixed window of 7 days.
    let s = state(
        0,
        Inner::Fixed(fixed_window::State {
            window_start: T0,
            count: 1,
        }),
    );
    assert_eq!(Packed::pack(&s, T0 + 7 * 86_400_000), None);
    assert!(Packed::pack(&s, T0 + 86_400_000).is_some());
    // An idle time before the window start.
    assert_eq!(Packed::pack(&s, T0 - 1), None);
}

#[test]
fn sliding_spans_in_whole_seconds_reach_days() {
    let s = state(
        0,
        Inner::Sliding(sliding_window::State {
            window_start: T0,
            current: 3,
            previous: 7,
        }),
    );
    // Two periods of 6 days, in seconds; 17 minutes and a bit, in ms.
    for span in [12 * 86_400_000, 1_048_575, 1_000_001] {
        let w = Packed::pack(&s, T0 + span).expect("packs");
        assert_eq!(w.unpack(T0 + span), Some(s.clone()));
    }
    assert_eq!(Packed::pack(&s, T0 + 1_048_577), None);
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

proptest! {
    /// Whatever states the algorithms reach, a packed word unpacks to the
    /// very state it was made from, and a run whose state goes through its
    /// word (or is kept whole) decides exactly as a run that never packs.
    #[test]
    fn packing_never_changes_a_decision(
        algo in 0usize..4,
        q in quota(),
        penalty in prop_oneof![Just(None), (1..=600_000u64).prop_map(Some)],
        gaps in prop::collection::vec(prop_oneof![Just(0u64), 0..2_000u64, 0..10_000_000u64], 1..120),
    ) {
        let a = COUNTING[algo];
        let mut plain = SubjectState::new(a);
        let mut word = Packed::fresh(a);
        let mut whole: Option<SubjectState> = None;
        let mut idle = 0;
        let mut now = T0;
        for g in gaps {
            now += g;
            let mut s = match word.unpack(idle) {
                Some(s) => s,
                None => whole.take().expect("kept whole"),
            };
            prop_assert_eq!(&s, &plain);
            let d = s.check(a, now, &q, penalty, None);
            prop_assert_eq!(d, plain.check(a, now, &q, penalty, None));
            idle = s.expires_at(&q);
            match Packed::pack(&s, idle) {
                Some(w) => {
                    prop_assert_eq!(w.unpack(idle), Some(s.clone()));
                    word = w;
                }
                None => {
                    // Small quotas always pack.
                    let small = q.limit <= 20
                        && q.burst <= 20
                        && q.period_ms <= 3_600_007
                        && (q.period_ms % 1000 == 0 || q.period_ms < 500_000);
                    prop_assert!(!small, "{:?} kept whole", s);
                    word = Packed::WIDE;
                    whole = Some(s);
                }
            }
        }
    }
}
