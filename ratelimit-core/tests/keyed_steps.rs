//! A keyed call runs a request's steps: the over-limit cache answers a
//! flood of refused calls without the backend until the earliest
//! admission, with the backend's own answer; a charge is never answered by
//! it; both backends' answers (asked or cached) read the same.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ratelimit_core::algorithm::Decision;
use ratelimit_core::backend::{Backend, BackendError, Batch, BoxFuture, Check, MemoryBackend};
use ratelimit_core::keyed::Quota;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, ManualClock};

const T0: u64 = 1_767_225_600_000;

/// The in-memory backend, counting the checks it is asked.
#[derive(Debug, Default)]
struct Counted {
    memory: MemoryBackend,
    checks: AtomicU64,
}

impl Backend for Counted {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<Result<Decision, BackendError>>> {
        self.checks
            .fetch_add(batch.checks.len() as u64, Ordering::SeqCst);
        self.memory.check(batch)
    }

    fn peek<'a>(
        &'a self,
        check: &'a Check,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Decision, BackendError>> {
        self.memory.peek(check, now_ms)
    }

    fn reset<'a>(&'a self, check: &'a Check) -> BoxFuture<'a, Result<(), BackendError>> {
        self.memory.reset(check)
    }
}

fn limiter() -> (Limiter, Arc<Counted>, ManualClock) {
    let clock = ManualClock::new(T0);
    let backend = Arc::new(Counted::default());
    let limiter = Limiter::builder(RuleSet::default())
        .clock(clock.clone())
        .backend_arc(backend.clone())
        .build();
    (limiter, backend, clock)
}

fn run<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(f)
}

#[test]
fn a_refused_flood_asks_the_backend_once_per_earliest_admission() {
    let (limiter, backend, clock) = limiter();
    let q = limiter.keyed_quota("q", Quota::per_minute(NonZeroU32::new(10).unwrap()));
    run(async {
        // 7 of 10 spent: 3 left, a cost of 5 refused until enough refill.
        assert!(q.check_n("k", 7).await.unwrap().is_allowed());
        let first = q.check_n("k", 5).await.unwrap();
        assert!(!first.is_allowed());
        assert_eq!(first.remaining(), 3);
        let asked = backend.checks.load(Ordering::SeqCst);
        assert_eq!(asked, 2);
        for ms in [0, 1, 50] {
            clock.set_ms(T0 + ms);
            let again = q.check_n("k", 5).await.unwrap();
            assert!(!again.is_allowed(), "+{ms} ms");
            assert_eq!(again.remaining(), 3, "the backend's answer, cached");
            let wait = first.retry_after().unwrap().as_millis() as u64;
            assert_eq!(again.retry_after().unwrap().as_millis() as u64, wait - ms);
        }
        assert_eq!(backend.checks.load(Ordering::SeqCst), asked, "no call");
        // A smaller cost asks, and fits.
        assert!(q.check_n("k", 3).await.unwrap().is_allowed());
        assert_eq!(backend.checks.load(Ordering::SeqCst), asked + 1);
    });
}

#[test]
fn a_charge_is_never_answered_by_the_over_limit_cache() {
    let (limiter, backend, _clock) = limiter();
    let q = limiter.keyed_quota("q", Quota::per_minute(NonZeroU32::new(10).unwrap()));
    run(async {
        assert!(q.check_n("k", 10).await.unwrap().is_allowed());
        assert!(!q.check("k").await.unwrap().is_allowed());
        let asked = backend.checks.load(Ordering::SeqCst);
        // Refused calls are cached; charges still reach the backend, and
        // each adds to the debt.
        assert!(!q.check("k").await.unwrap().is_allowed());
        assert_eq!(backend.checks.load(Ordering::SeqCst), asked);
        let one = q.charge("k", 6).await.unwrap();
        let two = q.charge("k", 6).await.unwrap();
        assert_eq!(backend.checks.load(Ordering::SeqCst), asked + 2);
        assert!(two.retry_after().unwrap() > one.retry_after().unwrap());
    });
}
