//! The byte format: round trips, refusals, hostile numbers.

use super::*;
use crate::algorithm::CheckMode;
use crate::backend::Check;
use crate::rules::RuleBuilder;
use crate::HashKey;
use proptest::prelude::*;
use std::sync::Arc;
use std::time::Duration;

const T0: u64 = 1_767_225_600_000;

fn check(algorithm: u8, cost: u64, mode: CheckMode) -> Check {
    let b = RuleBuilder::new("r");
    let minute = Duration::from_secs(60);
    let b = match algorithm {
        0 => b.fixed_window(10, minute),
        1 => b.sliding_window(10, minute),
        2 => b.token_bucket(10, minute, 20),
        3 => b.leaky_bucket(10, minute, 5),
        _ => b.distinct("path", 10, minute),
    };
    let rule = Arc::new(b.key(["ip"]).penalty(minute).build().expect("rule"));
    let subject = HashKey::DEFAULT.digest(b"203.0.113.7");
    let (ns, quota) = (Check::namespace_of(&rule).into(), rule.quota(cost));
    let mode = if algorithm == 4 {
        CheckMode::Count
    } else {
        mode
    };
    Check::new(rule, ns, subject, quota, Some(60_000), Some(7)).with_mode(mode)
}

#[test]
fn every_algorithm_round_trips_and_refuses_other_lengths_versions_and_far_numbers() {
    for a in 0..5u8 {
        let mut state = None;
        for i in 0..4 {
            let (_, next) = State::step(&check(a, 3, CheckMode::Count), T0 + i, state.as_ref());
            state = next.or(state);
        }
        let state = state.expect("counted");
        let bytes = state.encode();
        assert_eq!((bytes[0], bytes[1]), (State::FORMAT_VERSION, a));
        assert_eq!(State::decode(&bytes), Ok(state.clone()), "algorithm {a}");
        let err = State::decode(&bytes[..bytes.len() - 1]).unwrap_err();
        assert!(err.to_string().contains("bytes for a"), "{err}");
        let mut far = bytes.clone();
        far[10..18].copy_from_slice(&u64::MAX.to_le_bytes());
        let err = State::decode(&far).unwrap_err().to_string();
        assert!(err.contains("past 2^53"), "{err}");
        let mut v2 = bytes.clone();
        v2[0] = 2;
        let err = State::decode(&v2).unwrap_err().to_string();
        assert!(err.contains("format version 2"), "{err}");
    }
    assert!(State::decode(&[]).is_err());
    assert!(State::decode(&[1, 9])
        .unwrap_err()
        .to_string()
        .contains("algorithm 9"));
}

proptest! {
    /// Any numbers of the right length up to [`MAX_NUMBER`] decode to a
    /// state the algorithms answer without panicking, in every mode, at
    /// any time a clock gives.
    #[test]
    fn hostile_numbers_decide_without_panicking(
        a in 0..5u8,
        numbers in proptest::collection::vec(prop_oneof![Just(0u64), Just(MAX_NUMBER), any::<u64>()], 19),
        now in prop_oneof![Just(0u64), Just(T0), 0..MAX_NUMBER],
        cost in 1..1000u64,
        mode in prop_oneof![Just(CheckMode::Count), Just(CheckMode::Probe), Just(CheckMode::Charge)],
    ) {
        let n = SubjectState::word_count(algorithm(a).expect("known")) + 2;
        let mut bytes = vec![State::FORMAT_VERSION, a];
        for x in &numbers[..n] {
            bytes.extend_from_slice(&(x % (MAX_NUMBER + 1)).to_le_bytes());
        }
        let state = State::decode(&bytes).expect("right length");
        let _ = State::step(&check(a, cost, mode), now, Some(&state));
        let _ = crate::store::state::peek(&check(a, cost, mode), now, Some(&state));
    }
}
