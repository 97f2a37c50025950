//! What the fault tests check of the answers: in time, by fail mode while
//! Valkey is away, healthy while it answers, the `local` share, recovery
//! and a count shared again after it.

use std::net::IpAddr;
use std::time::Duration;

use ratelimit_core::Outcome;

use super::faults::{ip, ms, within, Fleet, BOUND_MS, DEADLINE, MARGIN_MS};
use super::load::{ask, latencies, Answer, Load};
use super::record::Sample;
use super::{wall_ms, Latencies};

/// Every answer in time: at most the deadline plus the margin.
pub fn assert_latency(what: &str, answers: &[Answer]) -> Latencies {
    let l = latencies(answers);
    let slow: Vec<String> = answers
        .iter()
        .filter(|a| ms(a) > BOUND_MS)
        .take(5)
        .map(|a| {
            format!(
                "{} {} at {} took {} ms",
                a.instance,
                a.path,
                a.start_ms,
                ms(a)
            )
        })
        .collect();
    assert!(
        slow.is_empty(),
        "{what}: answers slower than {BOUND_MS} ms (deadline {DEADLINE:?} + {MARGIN_MS} ms): {slow:?}"
    );
    l
}

/// While Valkey can't answer: `open` passes, `closed` is 503 with
/// `Retry-After: 1`. Returns how many of each were seen.
pub fn assert_fail_modes(what: &str, answers: &[Answer], from: u64, to: u64) -> (usize, usize) {
    let mut n = (0, 0);
    for a in within(answers, from, to) {
        match a.path {
            "/open" => {
                assert_eq!(a.outcome, Outcome::Forward, "{what}: fail_mode open: {a:?}");
                n.0 += 1;
            }
            "/closed" => {
                assert_eq!(
                    (a.outcome, a.retry_after),
                    (Outcome::Unavailable, Some(1)),
                    "{what}: fail_mode closed: {a:?}"
                );
                n.1 += 1;
            }
            _ => {}
        }
    }
    assert!(
        n.0 >= 20 && n.1 >= 20,
        "{what}: too few requests during the fault: {n:?}"
    );
    n
}

/// While Valkey answers, both rules pass (their limits are high).
///
/// This machine is shared and small: a stall of another process can fail
/// a few calls of a healthy Valkey (both instances at once). So up to 2% of
/// the requests may fail, provided each failure followed its fail_mode
/// (`closed`: 503 with `Retry-After: 1`); the failures are printed with the
/// backend calls around them. Returns (requests, failures).
pub fn assert_healthy(
    what: &str,
    answers: &[Answer],
    samples: &[Sample],
    from: u64,
    to: u64,
) -> (usize, usize) {
    let w = within(answers, from, to);
    let bad: Vec<&&Answer> = w.iter().filter(|a| a.outcome != Outcome::Forward).collect();
    for a in &bad {
        assert_eq!(
            (a.path, a.outcome, a.retry_after),
            ("/closed", Outcome::Unavailable, Some(1)),
            "{what}: a failure that did not follow its fail_mode"
        );
    }
    if let Some(a) = bad.first() {
        let errs: Vec<String> = samples
            .iter()
            .filter(|s| s.failed() && s.sent_ms + 200 >= a.start_ms && s.sent_ms <= a.start_ms + 50)
            .take(12)
            .map(|s| {
                format!(
                    "{}@{}+{}ms:{:?}",
                    s.instance,
                    s.sent_ms,
                    s.done_ms - s.sent_ms,
                    s.result
                )
            })
            .collect();
        eprintln!(
            "WARNING {what}: {} of {} requests failed while Valkey was up (window from {from}); \
             first {a:?}; backend calls around it: {}",
            bad.len(),
            w.len(),
            errs.join(", ")
        );
    }
    assert!(
        w.len() >= 20,
        "{what}: too few healthy requests: {}",
        w.len()
    );
    assert!(
        bad.len() * 50 <= w.len(),
        "{what}: {} of {} requests failed while Valkey was up",
        bad.len(),
        w.len()
    );
    (w.len(), bad.len())
}

/// `fail_mode: local` during the fault: each instance admits
/// `limit / fleet` = 10 / 2 = 5 of a fresh subject, then 429.
pub async fn assert_local_share(what: &str, fleet: &Fleet, who: IpAddr) -> Vec<Answer> {
    let mut all = Vec::new();
    for (i, limiter) in fleet.limiters.iter().enumerate() {
        let mut got = Vec::new();
        for _ in 0..7 {
            got.push(ask(limiter, i, "/local", who).await);
        }
        let outcomes: Vec<Outcome> = got.iter().map(|a| a.outcome).collect();
        let mut want = vec![Outcome::Forward; 5];
        want.extend([Outcome::Limited; 2]);
        assert_eq!(
            outcomes, want,
            "{what}: instance {i}, fail_mode local at 10 / 2 instances"
        );
        assert!(got[5].retry_after.unwrap_or(0) >= 1);
        all.extend(got);
    }
    all
}

/// Polls until every instance is answered by Valkey again; how long that took.
pub async fn wait_recovered(what: &str, fleet: &Fleet, since: u64) -> u64 {
    for (i, limiter) in fleet.limiters.iter().enumerate() {
        loop {
            let a = ask(limiter, i, "/closed", ip(250, i as u8)).await;
            if a.outcome == Outcome::Forward {
                break;
            }
            assert!(
                wall_ms() - since < 5_000,
                "{what}: instance {i} not recovered 5 s after the fault ended"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    wall_ms() - since
}

/// After recovery the count is shared again: 4 of a fresh subject on
/// instance 0 pass, then instance 1 admits only the 2 left of 6.
///
/// The fleet's deadline is 50 ms, and a loaded machine (a whole test suite
/// in parallel) now and then misses it on a healthy server: a `503` whose
/// backend call the log shows timed out starts the check again on another
/// fresh subject, at most twice. Any other difference fails at once.
pub async fn assert_shared_again(what: &str, fleet: &Fleet, who: IpAddr) {
    wait_recovered(what, fleet, wall_ms()).await;
    use Outcome::{Forward as F, Limited as L, Unavailable as U};
    let want = vec![F, F, F, F, F, F, L, L];
    for attempt in 0u8..3 {
        let who = next_subject(who, attempt);
        let since = wall_ms();
        let mut seen = Vec::new();
        for (i, n) in [(0usize, 4), (1, 4)] {
            for _ in 0..n {
                seen.push(ask(&fleet.limiters[i], i, "/shared", who).await.outcome);
            }
        }
        let timed_out = timeouts_of(fleet, "shared", since);
        if seen == want || !seen.contains(&U) || timed_out == 0 || attempt == 2 {
            assert_eq!(
                seen, want,
                "{what}: after recovery, instance 1 must see instance 0's count \
                 ({timed_out} calls timed out)"
            );
            return;
        }
        eprintln!("{what}: {timed_out} calls of a healthy server timed out; once more: {seen:?}");
    }
}

/// `who`, moved by `attempt` in its last byte.
fn next_subject(who: IpAddr, attempt: u8) -> IpAddr {
    match who {
        IpAddr::V4(v4) => {
            let [a, b, c, d] = v4.octets();
            IpAddr::from([a, b, c, d.wrapping_add(attempt.wrapping_mul(50))])
        }
        IpAddr::V6(_) => who,
    }
}

/// Calls of `rule` sent since `since` (Unix ms) that timed out.
fn timeouts_of(fleet: &Fleet, rule: &str, since: u64) -> usize {
    fleet
        .log
        .samples()
        .iter()
        .filter(|s| s.sent_ms >= since && &*s.rule == rule)
        .filter(|s| s.result == Err(ratelimit_core::backend::BackendErrorKind::Timeout))
        .count()
}

/// The end of a fault, at `since` (Unix ms): waits until every instance is
/// answered by Valkey again, lets `load` run healthy for 500 ms, stops it,
/// and checks the count is shared again on a fresh subject `who`. Returns
/// how long recovery took (ms), when the load was healthy again (Unix ms),
/// and the load's answers.
pub async fn recover(
    what: &str,
    fleet: &Fleet,
    load: Load,
    since: u64,
    who: IpAddr,
) -> (u64, u64, Vec<Answer>) {
    let recovered_after = wait_recovered(what, fleet, since).await;
    let t_healthy = wall_ms();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let answers = load.stop().await;
    assert_shared_again(what, fleet, who).await;
    (recovered_after, t_healthy, answers)
}
