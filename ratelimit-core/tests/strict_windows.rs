//! What each algorithm guarantees over any span of one period, for a
//! partner that enforces "at most `n` in any period" (issue 27, item 12):
//!
//! - a bucket (token or leaky) of burst 1 admits at most `limit` in any
//!   span of `period`: its admissions are at least `period / limit` apart;
//! - the default bucket (burst = limit) and both windows do not: up to
//!   about twice the limit gets through in one period.

use std::num::NonZeroU32;
use std::time::Duration;

use proptest::prelude::*;
use ratelimit_core::keyed::{KeyedLimit, Quota};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, ManualClock};

/// A minute boundary, so that windows start at `T0`.
const T0: u64 = 1_767_225_600_000;

fn nz(n: u32) -> NonZeroU32 {
    NonZeroU32::new(n).expect("non-zero")
}

fn handle(quota: Quota) -> (KeyedLimit, ManualClock) {
    let clock = ManualClock::new(T0);
    let limiter = Limiter::builder(RuleSet::default())
        .clock(clock.clone())
        .build();
    (limiter.keyed_quota("partner", quota), clock)
}

/// The times (ms after `T0`) at which calls at `offsets` were admitted.
fn admitted(quota: Quota, offsets: &[u64]) -> Vec<u64> {
    let (limit, clock) = handle(quota);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    offsets
        .iter()
        .copied()
        .filter(|&at| {
            clock.set_ms(T0 + at);
            rt.block_on(limit.check(&()))
                .expect("the memory backend answers")
                .is_allowed()
        })
        .collect()
}

/// The most admissions in any half-open span `[t, t + period)`.
fn most_in_a_period(times: &[u64], period: u64) -> usize {
    let mut most = 0;
    let mut first = 0;
    for (last, &t) in times.iter().enumerate() {
        while times[first] + period <= t {
            first += 1;
        }
        most = most.max(last - first + 1);
    }
    most
}

/// Sorted arrival offsets: gaps from 0 to twice the even spacing.
fn arrivals(limit: u32, period: u64) -> impl Strategy<Value = Vec<u64>> {
    let spacing = (period / u64::from(limit)).max(1);
    prop::collection::vec(0..=2 * spacing, 1..300).prop_map(|gaps| {
        gaps.iter()
            .scan(0, |at, gap| {
                *at += gap;
                Some(*at)
            })
            .collect()
    })
}

fn case() -> impl Strategy<Value = (u32, u64, Vec<u64>)> {
    (
        1u32..=40,
        prop::sample::select(vec![1000u64, 250, 60_000, 7, 3]),
    )
        .prop_flat_map(|(limit, period)| (Just(limit), Just(period), arrivals(limit, period)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Burst 1, both buckets: never more than `limit` in a period.
    #[test]
    fn a_bucket_of_burst_one_admits_at_most_the_limit_in_any_period(
        (limit, period, offsets) in case()
    ) {
        let base = Quota::with_period(nz(limit), Duration::from_millis(period))
            .expect("a valid period")
            .allow_burst(NonZeroU32::MIN);
        for quota in [base.token_bucket(), base.leaky_bucket()] {
            let times = admitted(quota, &offsets);
            prop_assert!(!times.is_empty(), "the first call is admitted");
            let most = most_in_a_period(&times, period);
            prop_assert!(
                most <= limit as usize,
                "{:?}: {most} admitted within {period} ms, limit {limit}: {times:?}",
                quota.algorithm()
            );
        }
    }
}

#[test]
fn the_span_counter_counts_half_open_spans() {
    assert_eq!(most_in_a_period(&[0, 100, 999, 1000, 1001], 1000), 4);
    assert_eq!(most_in_a_period(&[0, 1000, 2000], 1000), 1);
    assert_eq!(most_in_a_period(&[5, 5, 5], 1), 3);
}

/// The figures the guide quotes: 10 per second, calls every millisecond
/// from 0.900 s to 2 s.
#[test]
fn the_default_bucket_and_the_windows_pass_more_than_the_limit_in_a_period() {
    let ten = Quota::per_second(nz(10));
    let every_ms: Vec<u64> = (900..2000).collect();
    let most = |q: Quota| most_in_a_period(&admitted(q, &every_ms), 1000);
    assert_eq!(most(ten), 19, "burst 10: 10 at once, 9 refilled");
    assert_eq!(most(ten.leaky_bucket()), 19);
    assert_eq!(most(ten.fixed_window()), 20, "10 before the edge, 10 after");
    assert_eq!(most(ten.allow_burst(NonZeroU32::MIN)), 10);
    // The sliding window, ten calls at 0.999 s: at 1.950 s the previous
    // window weighs ⌈10 × 5%⌉ = 1, so 9 more pass, 951 ms after the ten.
    let mut late = vec![999; 10];
    late.extend([1950; 10]);
    let times = admitted(ten.sliding_window(), &late);
    assert_eq!(times.len(), 19, "{times:?}");
    assert_eq!(most_in_a_period(&times, 1000), 19);
}
