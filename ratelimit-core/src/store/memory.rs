//! The in-memory backend: the embedded default, the same algorithm
//! functions in process.
//!
//! Bounded: it holds at most a configured number of subjects. When full, it
//! evicts an idle subject (one whose state has run out) among the least
//! recently used; when none of those is idle it evicts the least recently
//! used one anyway and counts it in `ratelimit_memory_evicted_live_total`.

use super::{Inserted, States};
use crate::algorithm::Decision;
use crate::backend::{Backend, BackendError, Batch, BoxFuture, Check, CheckResult};
use crate::HashKey;

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
/// use ratelimit_core::store::MemoryBackend;
///
/// let backend = MemoryBackend::with_capacity(10_000);
/// assert_eq!(backend.len(), 0);
/// ```
///
/// Each store draws a secret hash key of its own ([`HashKey::random`]) and
/// gives it to the limiters that use it ([`Backend::hash_key`]), so
/// limiters sharing one store hash subjects alike, and nobody outside the
/// process can craft values that collide.
#[derive(Debug)]
pub struct MemoryBackend {
    /// One 32-byte slot per subject: digest, idle time and recency, the
    /// packed state.
    map: States,
    hash_key: HashKey,
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
            map: States::new(capacity, 64),
            hash_key: HashKey::random(),
        }
    }

    /// Subjects held.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether no subject is held.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Answers one batch synchronously.
    pub fn check_now(&self, batch: &Batch) -> Vec<CheckResult> {
        batch
            .checks
            .iter()
            .map(|c| Ok(self.check_one(c, batch.now_ms)))
            .collect()
    }

    /// Answers one check at `now` (Unix ms).
    pub fn check_one(&self, c: &Check, now: u64) -> Decision {
        let algorithm = c.rule.algorithm;
        // Written in place (see `States::update`); `None` is one byte to
        // write before the shard's lock, where every pending store waits.
        let mut d = None;
        self.map.update(
            c.state_key,
            now,
            algorithm,
            |s, how| {
                if how == Inserted::EvictedLive {
                    metrics::counter!("ratelimit_memory_evicted_live_total").increment(1);
                }
                d = Some(s.check(algorithm, now, &c.quota, c.penalty_ms, c.bit));
            },
            |s| s.expires_at(&c.quota),
        );
        d.unwrap_or(Decision::allow(c.quota.limit, 0))
    }
}

impl Backend for MemoryBackend {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<CheckResult>> {
        let out = self.check_now(batch);
        Box::pin(std::future::ready(out))
    }

    fn check_now(&self, batch: &Batch) -> Option<Vec<CheckResult>> {
        Some(MemoryBackend::check_now(self, batch))
    }

    fn peek<'a>(&'a self, check: &'a Check, now_ms: u64) -> BoxFuture<'a, CheckResult> {
        let algorithm = check.rule.algorithm;
        let d = self.map.peek(&check.state_key, algorithm, |s| {
            s.peek(algorithm, now_ms, &check.quota)
        });
        Box::pin(std::future::ready(Ok(d)))
    }

    fn reset<'a>(&'a self, check: &'a Check) -> BoxFuture<'a, Result<(), BackendError>> {
        self.map.remove(&check.state_key);
        Box::pin(std::future::ready(Ok(())))
    }

    fn hash_key(&self) -> Option<HashKey> {
        Some(self.hash_key)
    }
}
