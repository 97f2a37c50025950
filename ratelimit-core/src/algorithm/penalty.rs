//! Penalty: once a blocking rule is over its limit, the subject is blocked
//! for the whole penalty, and counting starts fresh after it.
//!
//! [`check`] wraps any algorithm: while blocked it refuses without counting;
//! the first refusal of the algorithm starts the block and clears the
//! algorithm's state.

use super::Decision;

/// Runs `algo` under a penalty.
///
/// `blocked_until` is the stored end of the current block (0 for none).
/// `penalty_ms` is `None` for a rule without penalty, or a log rule (which
/// only records that a penalty would have started). When the returned
/// decision carries `blocked_until_ms`, the caller clears the algorithm's
/// state: counting starts fresh after the block.
#[inline(always)]
pub(crate) fn check(
    blocked_until: &mut u64,
    now: u64,
    penalty_ms: Option<u64>,
    algo: impl FnOnce() -> Decision,
) -> Decision {
    if *blocked_until > now {
        let left = *blocked_until - now;
        let mut d = Decision::deny(left, 0, left);
        d.blocked_until_ms = Some(*blocked_until);
        return d;
    }
    *blocked_until = 0;
    let mut d = algo();
    if let (false, Some(p)) = (d.allowed, penalty_ms.filter(|&p| p > 0)) {
        *blocked_until = now.saturating_add(p);
        d = Decision::deny(p, 0, p);
        d.blocked_until_ms = Some(now.saturating_add(p));
    }
    d
}

#[cfg(test)]
mod tests {
    use super::super::{sliding_window, CheckQuota};
    use super::*;

    const T0: u64 = 1_767_225_600_000;

    /// Seed table: the login rule, sliding window 5 per 1m, penalty 5m.
    #[test]
    fn seed_scenario_login_penalty() {
        let q = CheckQuota::per_minute(5);
        let mut s = sliding_window::State::default();
        let mut until = 0;
        let mut run = |secs: u64| {
            let now = T0 + secs * 1000;
            let d = check(&mut until, now, Some(300_000), || {
                sliding_window::check(&mut s, now, &q)
            });
            if d.blocked_until_ms.is_some() {
                s = sliding_window::State::default();
            }
            d
        };
        for t in 0..5 {
            assert!(run(t).allowed, "0:0{t}");
        }
        let d = run(5);
        assert_eq!((d.allowed, d.retry_after_ms), (false, 300_000));
        assert_eq!(d.blocked_until_ms, Some(T0 + 305_000));
        assert_eq!(run(70).retry_after_ms, 235_000);
        assert_eq!(run(304).retry_after_ms, 1_000);
        let d = run(305);
        assert!(d.allowed, "penalty over; counting starts fresh");
        assert_eq!(d.remaining, 4);
    }

    #[test]
    fn without_penalty_nothing_is_blocked() {
        let mut until = 0;
        let d = check(&mut until, 10, None, || Decision::deny(5, 0, 5));
        assert_eq!((d.retry_after_ms, until), (5, 0));
    }
}
