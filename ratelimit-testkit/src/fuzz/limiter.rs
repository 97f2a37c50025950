//! One limiter run for the bodies: in-memory backend, manual clock.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, ManualClock, RequestAttrs};

use super::T0_MS;

/// Runs `checks` checks of `req` on a fresh limiter over `set` (in-memory
/// backend, small stores, a [`ManualClock`] at [`T0_MS`] moving `advance_ms`
/// between checks), answering each with the upstream `status`.
pub(crate) fn run_limiter(
    set: RuleSet,
    req: &RequestAttrs,
    checks: usize,
    advance_ms: u64,
    status: u16,
) {
    let clock = ManualClock::new(T0_MS);
    let limiter = Limiter::builder(set)
        .clock(clock.clone())
        .backend(MemoryBackend::with_capacity(64))
        .penalty_cache_capacity(64)
        .local_capacity(64)
        .count_capacity(64)
        .build();
    for _ in 0..checks {
        let verdict = block_on(limiter.check(req));
        let _ = (verdict.retry_after_secs(), verdict.is_forward());
        let _ = (verdict.ratelimit_policy(), verdict.ratelimit());
        limiter.record_response(&verdict.ticket, status);
        clock.advance(Duration::from_millis(advance_ms));
    }
}

/// Polls `fut` once: the in-memory backend answers without waiting.
pub(crate) fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = pin!(fut);
    match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("the in-memory backend never waits"),
    }
}
