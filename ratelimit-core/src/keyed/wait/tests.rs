//! The waits of `until_ready`: the jitter's random draws, and (issue
//! 27.17) the long-run rate of back-to-back calls, on the memory backend
//! with a manual clock that the sleeps move.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

use super::random_up_to;
use crate::keyed::Quota;
use crate::rules::RuleSet;
use crate::{Clock, Limiter, ManualClock};

const T0: u64 = 1_767_225_600_000;

#[test]
fn random_draws_stay_in_range_and_vary() {
    let draws: Vec<u64> = (0..200).map(|_| random_up_to(10)).collect();
    assert!(draws.iter().all(|&d| d <= 10));
    assert!(draws.iter().any(|&d| d != draws[0]));
    assert_eq!(random_up_to(0), 0);
    let _ = random_up_to(u64::MAX); // no overflow
}

fn nz(n: u32) -> NonZeroU32 {
    NonZeroU32::new(n).expect("non-zero")
}

/// Runs `calls` back-to-back `until_ready` calls of `quota`; returns the
/// ms from the first call to the last admission.
fn elapsed_for(quota: Quota, calls: u64) -> u64 {
    let clock = ManualClock::new(T0);
    let limiter = Limiter::builder(RuleSet::default())
        .clock(clock.clone())
        .build();
    let q = limiter.keyed_quota("rate", quota);
    let sleeper = clock.clone();
    let sleep = move |d: Duration| {
        sleeper.advance(d);
        std::future::ready(())
    };
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(async {
            for i in 0..calls {
                let d = q
                    .until_ready(&(), Duration::from_secs(3600), &sleep)
                    .await
                    .unwrap_or_else(|e| panic!("call {i}: {e}"));
                assert!(d.is_allowed());
            }
        });
    clock.now_ms() - T0
}

/// How many calls the quota admits by `ms` after a full start: the burst,
/// then `limit` per period, exactly.
fn ideal_by(quota: Quota, ms: u64) -> u64 {
    let refilled = u128::from(ms) * u128::from(quota.limit().get()) / quota.period().as_millis();
    u64::from(quota.burst().get()) + refilled as u64
}

/// `calls` back-to-back calls take as long as the quota says, within one
/// call: when the last is admitted the quota allows `calls` (never faster
/// than the rate), and a ms earlier it allowed at most `calls` (at most one
/// call behind).
fn assert_full_rate(quota: Quota, calls: u64) {
    let ms = elapsed_for(quota, calls);
    let (by, before) = (ideal_by(quota, ms), ideal_by(quota, ms.saturating_sub(1)));
    assert!(
        calls <= by && before <= calls,
        "{quota:?}: {calls} calls took {ms} ms; the quota allows {before} a ms earlier"
    );
}

/// Rates up to 10,000 per second, both buckets, with the burst that
/// absorbs the rounding: the rate holds at any interval.
#[test]
fn waiting_calls_get_the_full_rate_with_a_rate_keeping_burst() {
    for per_second in [1, 7, 16, 333, 999, 1000, 1001, 1500, 3000, 7777, 10_000] {
        let q = Quota::per_second(nz(per_second));
        let q = q.allow_burst(q.rate_keeping_burst());
        assert!(q.keeps_rate());
        let calls = u64::from(per_second).clamp(200, 4000);
        assert_full_rate(q, calls);
        assert_full_rate(q.leaky_bucket(), calls);
    }
    for q in [
        Quota::per_minute(nz(6)).allow_burst(nz(1)),
        Quota::per_minute(nz(7)).allow_burst(nz(2)),
        Quota::per_hour(nz(5000)).allow_burst(nz(3)),
        Quota::with_period(nz(3), Duration::from_millis(7)).expect("valid"),
    ] {
        assert!(q.keeps_rate(), "{q:?}");
        assert_full_rate(q, 300);
    }
}

/// The figures of the issue: a burst of 1 cannot keep the part of a token
/// refilled before the next whole ms. Flagged, and the shortfall is real.
#[test]
fn a_burst_too_small_for_the_rounding_is_flagged_and_loses_rate() {
    for (per_second, calls, keeping) in [(1500, 3000, 2), (16, 400, 2), (10_000, 4000, 10)] {
        let q = Quota::per_second(nz(per_second)).allow_burst(nz(1));
        assert!(!q.keeps_rate(), "{per_second}/s");
        assert_eq!(q.rate_keeping_burst().get(), keeping, "{per_second}/s");
        let ms = elapsed_for(q, calls);
        assert!(
            ideal_by(q, ms - 1) > calls + 1,
            "{per_second}/s: {calls} calls in {ms} ms"
        );
    }
    // 1,500/s with a burst of 1: one call per ms.
    let q = Quota::per_second(nz(1500)).allow_burst(nz(1));
    assert_eq!(elapsed_for(q, 1001), 1000);
}

#[test]
fn whole_ms_intervals_and_windows_keep_their_rate_with_any_burst() {
    for q in [
        Quota::per_second(nz(10)),
        Quota::per_second(nz(1000)),
        Quota::per_minute(nz(60)),
    ] {
        assert!(q.allow_burst(nz(1)).keeps_rate(), "{q:?}");
    }
    let q = Quota::per_second(nz(1500)).allow_burst(nz(1));
    assert!(q.fixed_window().keeps_rate() && q.sliding_window().keeps_rate());
    assert_eq!(
        Quota::per_second(nz(u32::MAX)).rate_keeping_burst().get(),
        4_294_969
    );
}

/// Counts the warnings logged.
#[derive(Default)]
struct Warnings(Arc<AtomicUsize>);

impl Subscriber for Warnings {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, e: &Event<'_>) {
        if *e.metadata().level() == Level::WARN {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// `keyed_quota` warns for a quota that does not keep its rate, only then.
#[test]
fn a_quota_that_loses_rate_is_warned_about() {
    let warned = |quota: Quota| {
        let count = Arc::new(AtomicUsize::new(0));
        let limiter = Limiter::new(RuleSet::default());
        tracing::subscriber::with_default(Warnings(count.clone()), || {
            tracing::callsite::rebuild_interest_cache();
            let _ = limiter.keyed_quota("q", quota);
        });
        count.load(Ordering::Relaxed)
    };
    let fast = Quota::per_second(nz(1500));
    assert_eq!(warned(fast.allow_burst(nz(1))), 1);
    assert_eq!(warned(fast.allow_burst(nz(2))), 0);
    assert_eq!(warned(fast.leaky_bucket().allow_burst(nz(1))), 1);
    assert_eq!(warned(fast.allow_burst(nz(1)).fixed_window()), 0);
}
