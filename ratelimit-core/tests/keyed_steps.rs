//! A keyed call runs a request's steps: the over-limit cache answers a
//! flood of refused calls without the backend until the earliest
//! admission, with the backend's own answer (asked or cached, a refusal
//! reads the same); a charge is never answered by it.

mod support;

use std::num::NonZeroU32;

use ratelimit_core::keyed::Quota;

#[tokio::test]
async fn a_refused_flood_asks_the_backend_once_per_earliest_admission() {
    let (limiter, clock, backend) = support::limiter("[]");
    let q = limiter.keyed_quota("q", Quota::per_minute(NonZeroU32::new(10).unwrap()));
    // 7 of 10 spent: 3 left, a cost of 5 refused until enough refill.
    assert!(q.check_n("k", 7).await.unwrap().is_allowed());
    let first = q.check_n("k", 5).await.unwrap();
    assert!(!first.is_allowed());
    assert_eq!(first.remaining(), 3);
    let asked = backend.checks();
    assert_eq!(asked, 2);
    for ms in [0, 1, 50] {
        clock.set_ms(support::T0 + ms);
        let again = q.check_n("k", 5).await.unwrap();
        assert!(!again.is_allowed(), "+{ms} ms");
        assert_eq!(again.remaining(), 3, "the backend's answer, cached");
        let wait = first.retry_after().unwrap().as_millis() as u64;
        assert_eq!(again.retry_after().unwrap().as_millis() as u64, wait - ms);
    }
    assert_eq!(backend.checks(), asked, "no call");
    // A smaller cost asks, and fits.
    assert!(q.check_n("k", 3).await.unwrap().is_allowed());
    assert_eq!(backend.checks(), asked + 1);
}

#[tokio::test]
async fn a_charge_is_never_answered_by_the_over_limit_cache() {
    let (limiter, _clock, backend) = support::limiter("[]");
    let q = limiter.keyed_quota("q", Quota::per_minute(NonZeroU32::new(10).unwrap()));
    assert!(q.check_n("k", 10).await.unwrap().is_allowed());
    assert!(!q.check("k").await.unwrap().is_allowed());
    let asked = backend.checks();
    // Refused calls are cached; charges still reach the backend, and
    // each adds to the debt.
    assert!(!q.check("k").await.unwrap().is_allowed());
    assert_eq!(backend.checks(), asked);
    let one = q.charge("k", 6).await.unwrap();
    let two = q.charge("k", 6).await.unwrap();
    assert_eq!(backend.checks(), asked + 2);
    assert!(two.retry_after().unwrap() > one.retry_after().unwrap());
}
