//! What the fault tests check of the backend calls: the breaker's opening
//! and probes, the calls by result, and no call sent twice.

use ratelimit_core::backend::BackendErrorKind;

use super::record::Sample;

/// How the breaker of `instance` behaved over `[from, to]`: when it was
/// first seen open, and the calls that went out after that (the probes).
#[derive(Debug)]
pub struct Breaker {
    /// When a refused call first returned (Unix ms).
    pub first_open_ms: u64,
    /// When each probe was sent (Unix ms).
    pub probes: Vec<u64>,
}

/// The breaker of `instance` over `[from, to]`, checked: it opened, and
/// its probes went out at most once a second (at least one after 1 s).
pub fn breaker(what: &str, samples: &[Sample], instance: usize, from: u64, to: u64) -> Breaker {
    let mine: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.instance == instance && s.sent_ms >= from && s.sent_ms < to)
        .collect();
    // The breaker was open by the time the first refused call returned: a
    // call that started after that and still went out is a probe. (A
    // call's start is recorded before it asks the breaker, so refusals'
    // start times do not bound the opening.)
    let first_open_ms = mine
        .iter()
        .filter(|s| s.result == Err(BackendErrorKind::BreakerOpen))
        .map(|s| s.done_ms)
        .min()
        .unwrap_or_else(|| panic!("{what}: instance {instance}: the breaker never opened"));
    let mut probes: Vec<&Sample> = mine
        .iter()
        .copied()
        .filter(|s| s.sent_ms > first_open_ms && s.result != Err(BackendErrorKind::BreakerOpen))
        .collect();
    // A probe is a call: the checks of one request's batch went out
    // together, as one call, and count once.
    probes.sort_by_key(|s| (s.sent_ms, s.call));
    probes.dedup_by_key(|s| s.call);
    // Each probe is let through 1 s after the previous one failed: it ends
    // at least 1 s after the previous one started.
    for w in probes.windows(2) {
        assert!(
            w[1].done_ms - w[0].sent_ms >= 999,
            "{what}: instance {instance}: probes {} ms apart while the breaker was open",
            w[1].done_ms - w[0].sent_ms
        );
    }
    let allowed = (to - first_open_ms) / 1000 + 1;
    assert!(
        probes.len() as u64 <= allowed,
        "{what}: instance {instance}: {} calls in {} ms with the breaker open",
        probes.len(),
        to - first_open_ms
    );
    if to - first_open_ms > 1_300 {
        assert!(
            !probes.is_empty(),
            "{what}: instance {instance}: no probe after 1 s"
        );
    }
    Breaker {
        first_open_ms,
        probes: probes.iter().map(|s| s.sent_ms).collect(),
    }
}

/// The calls by result: ok, timeout, connection, breaker open.
pub fn kinds(samples: &[Sample]) -> String {
    let count = |k: Option<BackendErrorKind>| {
        samples
            .iter()
            .filter(|s| match k {
                None => s.result.is_ok(),
                Some(k) => s.result == Err(k),
            })
            .count()
    };
    format!(
        "ok {}, timeout {}, connection {}, breaker open {}",
        count(None),
        count(Some(BackendErrorKind::Timeout)),
        count(Some(BackendErrorKind::Connection)),
        count(Some(BackendErrorKind::BreakerOpen))
    )
}

/// Checks the server ran no more `EVALSHA` than the instances sent: at
/// least one per answered check, at most one per check that may have
/// reached it. A timed-out check may have run (once); a check that failed
/// on a lost connection may have run only if `lost_may_have_run` (a cut
/// connection; not a refused or never-made one). A retry would exceed the
/// upper bound.
pub fn assert_not_retried(
    what: &str,
    ran: u64,
    samples: &[Sample],
    lost_may_have_run: bool,
) -> String {
    let count = |k: BackendErrorKind| samples.iter().filter(|s| s.result == Err(k)).count() as u64;
    let ok = samples.iter().filter(|s| s.result.is_ok()).count() as u64;
    let timeout = count(BackendErrorKind::Timeout);
    let lost = if lost_may_have_run {
        count(BackendErrorKind::Connection)
    } else {
        0
    };
    assert!(
        ok <= ran && ran <= ok + timeout + lost,
        "{what}: the server ran {ran} EVALSHA for {ok} answered checks, {timeout} timed out and \
         {lost} lost on a cut connection: a call was sent more than once"
    );
    format!("server ran {ran} EVALSHA for {ok} answered + {timeout} timed out + {lost} cut")
}
