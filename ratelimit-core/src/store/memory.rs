//! The in-memory backend: the embedded default, a [`StateStore`] of packed
//! states in process ([`States`]) behind a [`StoreBackend`].
//!
//! Bounded: it holds at most a configured number of subjects. When full, it
//! evicts an idle subject (one whose state has run out) among the least
//! recently used; when none of those is idle it evicts the least recently
//! used one anyway and counts it in `ratelimit_memory_evicted_live_total`.

use super::state_store::unsupported_mode;
use super::States;
use super::{State, StateStore, StoreBackend};
use crate::algorithm::Decision;
use crate::backend::{Backend, BackendError, Batch, BoxFuture, Check, CheckMode};
use crate::{HashKey, KeyDigest};

/// Subjects held by default.
pub(crate) const DEFAULT_CAPACITY: usize = 1_000_000;

/// The in-memory backend: the limiter's default, a bounded store of
/// 1,000,000 subjects (`Default`), or as many as
/// [`with_capacity`](MemoryBackend::with_capacity) says; the least recently
/// used subject (approximately) is evicted when it is full.
///
/// # Examples
///
/// ```
/// use ratelimit_core::backend::MemoryBackend;
///
/// let backend = MemoryBackend::with_capacity(10_000);
/// assert_eq!(backend.len(), 0);
/// ```
///
/// Each store draws a secret hash key of its own ([`HashKey::random`]) and
/// gives it to the limiters that use it ([`Backend::hash_key`]), so
/// limiters sharing one store hash subjects alike, and nobody outside the
/// process can craft values that collide.
///
/// It is a [`StoreBackend`] over a [`StateStore`] of the core's own: one
/// 32-byte slot per subject (digest, idle time and recency, the packed
/// state), counting on the packed word in place where it can.
#[derive(Debug)]
pub struct MemoryBackend {
    store: StoreBackend<States>,
}

impl Default for MemoryBackend {
    fn default() -> Self {
        Self::with_capacity(DEFAULT_CAPACITY)
    }
}

impl MemoryBackend {
    /// A store of at most `capacity` subjects.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            store: StoreBackend::new(States::new(capacity, 64)),
        }
    }

    /// Subjects held.
    pub fn len(&self) -> usize {
        self.store.store().len()
    }

    /// Whether no subject is held.
    pub fn is_empty(&self) -> bool {
        self.store.store().is_empty()
    }

    /// Answers one batch synchronously, each check in its
    /// [`mode`](Check::mode). A `distinct` rule only counts: its
    /// [`CheckMode::Probe`] and [`CheckMode::Charge`] checks are
    /// `Unsupported` errors.
    pub fn check_now(&self, batch: &Batch) -> Vec<Result<Decision, BackendError>> {
        (batch.checks.iter())
            .map(|c| self.answer(c, batch.now_ms))
            .collect()
    }

    /// Answers one check at `now` (Unix ms), in its [`mode`](Check::mode).
    /// A `distinct` check in a mode other than [`CheckMode::Count`] is
    /// answered as a distinct check without a value (admitted, nothing
    /// counted); [`check_now`](Self::check_now) refuses it instead.
    pub fn check_one(&self, c: &Check, now: u64) -> Decision {
        step_packed(self.store.store(), c, now)
    }

    /// One check of [`check_now`](Self::check_now): `StoreBackend::answer`
    /// calling [`check_one`](Self::check_one) out of line (inlined into the
    /// batch loop it cost 4 instructions more a check, `layer_calls` under
    /// callgrind).
    #[inline(always)]
    fn answer(&self, c: &Check, now: u64) -> Result<Decision, BackendError> {
        if c.algorithm.answers(c.mode) {
            Ok(self.check_one(c, now))
        } else {
            Err(unsupported_mode(c))
        }
    }
}

/// The in-memory store: [`State::step`](super::State::step) on the packed states, a
/// count or a charge on the packed word in place where it can.
impl StateStore for States {
    fn measure_and_replace<T>(
        &self,
        key: &KeyDigest,
        now_ms: u64,
        f: impl FnOnce(Option<&State>) -> (T, Option<State>),
    ) -> T {
        self.replace(*key, now_ms, f, evicted_live)
    }

    fn remove(&self, key: &KeyDigest) {
        States::remove(self, key);
    }

    fn peek<T>(&self, key: &KeyDigest, _now_ms: u64, f: impl FnOnce(Option<&State>) -> T) -> T {
        States::peek(self, key, f)
    }

    /// The answers of [`State::step`](super::State::step), on the packed word in place
    /// (`States::check`, `States::probe`).
    fn step(&self, c: &Check, now: u64) -> Decision {
        step_packed(self, c, now)
    }
}

/// [`StateStore::step`] of the in-memory store.
fn step_packed(states: &States, c: &Check, now: u64) -> Decision {
    if c.mode != CheckMode::Count {
        return probe_or_charge(states, c, now);
    }
    count(states, c, now, CheckMode::Count)
}

/// [`StateStore::step`] in the modes other than [`CheckMode::Count`], off
/// the count path.
#[inline(never)]
fn probe_or_charge(states: &States, c: &Check, now: u64) -> Decision {
    if c.mode == CheckMode::Probe {
        // Reads the subject without inserting, moving or counting it.
        return states.probe(&c.state_key, c.algorithm, now, &c.quota);
    }
    count(states, c, now, CheckMode::Charge)
}

/// A count or a charge (`mode`, a constant for each caller).
#[inline(always)]
fn count(states: &States, c: &Check, now: u64, mode: CheckMode) -> Decision {
    states.check(
        c.state_key,
        now,
        c.algorithm,
        mode,
        &c.quota,
        c.penalty_ms,
        c.bit,
        evicted_live,
    )
}

/// Counts a live subject evicted to make room.
#[cold]
#[inline(never)]
fn evicted_live() {
    metrics::counter!("ratelimit_memory_evicted_live_total").increment(1);
}

impl Backend for MemoryBackend {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<Result<Decision, BackendError>>> {
        let out = self.check_now(batch);
        Box::pin(std::future::ready(out))
    }

    fn check_now(&self, batch: &Batch) -> Option<Vec<Result<Decision, BackendError>>> {
        Some(MemoryBackend::check_now(self, batch))
    }

    fn check_now_each(
        &self,
        batch: &Batch,
        answer: &mut dyn FnMut(Result<Decision, BackendError>),
    ) -> bool {
        // One call of `answer` in each branch: merged, the answer took two
        // copies more a check (`layer_calls` under callgrind).
        for c in &batch.checks {
            if c.algorithm.answers(c.mode) {
                answer(Ok(self.check_one(c, batch.now_ms)));
            } else {
                answer(Err(unsupported_mode(c)));
            }
        }
        true
    }

    fn peek<'a>(
        &'a self,
        check: &'a Check,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Decision, BackendError>> {
        self.store.peek(check, now_ms)
    }

    fn reset<'a>(&'a self, check: &'a Check) -> BoxFuture<'a, Result<(), BackendError>> {
        self.store.reset(check)
    }

    fn hash_key(&self) -> Option<HashKey> {
        self.store.hash_key()
    }

    fn hash_key_changes(&self) -> bool {
        self.store.hash_key_changes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::BackendErrorKind;
    use crate::rules::RuleBuilder;
    use std::sync::Arc;
    use std::time::Duration;

    const T0: u64 = 1_767_225_600_000;

    fn check(rule: RuleBuilder, cost: u64, mode: CheckMode) -> Check {
        let rule = Arc::new(rule.key(["ip"]).build().expect("rule"));
        let subject = HashKey::DEFAULT.digest(b"203.0.113.7");
        let (ns, quota) = (Check::namespace_of(&rule).into(), rule.quota(cost));
        Check::new(rule, ns, subject, quota, None, Some(3)).with_mode(mode)
    }

    fn run(store: &MemoryBackend, now: u64, c: Check) -> Result<Decision, BackendError> {
        store.check_now(&Batch::new(now, vec![c])).remove(0)
    }

    /// 100 tokens a minute: probes count nothing (an admitted one answers
    /// the budget it found), charges pass the limit.
    #[test]
    fn checks_follow_their_mode() {
        let store = MemoryBackend::default();
        let rule = || RuleBuilder::new("tokens").fixed_window(100, Duration::from_secs(60));
        let probe = || check(rule(), 1, CheckMode::Probe);
        for _ in 0..3 {
            assert_eq!(run(&store, T0, probe()), Ok(Decision::allow(100, 60_000)));
        }
        assert!(store.is_empty(), "a probe of a new subject stores nothing");
        let d = run(&store, T0, check(rule(), 250, CheckMode::Charge));
        assert_eq!(d, Ok(Decision::deny(60_000, 0, 60_000)));
        assert_eq!(
            run(&store, T0 + 1, probe()),
            Ok(Decision::deny(59_999, 0, 59_999))
        );
        let d = run(&store, T0 + 1, check(rule(), 1, CheckMode::Count));
        assert_eq!(d, Ok(Decision::deny(59_999, 0, 59_999)));
        let d = run(&store, T0 + 60_000, probe());
        assert_eq!(d, Ok(Decision::allow(100, 60_000)));
    }

    #[test]
    fn distinct_rules_only_count() {
        let store = MemoryBackend::default();
        let rule = || RuleBuilder::new("spray").distinct("path", 10, Duration::from_secs(60));
        assert!(run(&store, T0, check(rule(), 1, CheckMode::Count)).is_ok());
        for mode in [CheckMode::Probe, CheckMode::Charge] {
            let err = run(&store, T0, check(rule(), 1, mode)).unwrap_err();
            assert_eq!(err.kind(), BackendErrorKind::Unsupported);
            assert!(err.to_string().contains("rule spray"), "{err}");
        }
    }
}
