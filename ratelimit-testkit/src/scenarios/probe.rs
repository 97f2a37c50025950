//! A backend wrapper that counts calls and can be taken down.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use ratelimit_core::algorithm::Decision;
use ratelimit_core::backend::{Backend, BackendError, BackendErrorKind, Batch, BoxFuture, Check};

use super::Outage;

/// Another backend, counting the calls and checks it gets; while down,
/// every check fails with a `Connection` error without reaching it.
#[derive(Debug)]
pub struct Probe {
    inner: Arc<dyn Backend>,
    calls: AtomicUsize,
    checks: AtomicUsize,
    down: AtomicBool,
}

impl Probe {
    /// A probe in front of `inner`, up.
    pub fn new(inner: Arc<dyn Backend>) -> Self {
        Self {
            inner,
            calls: AtomicUsize::new(0),
            checks: AtomicUsize::new(0),
            down: AtomicBool::new(false),
        }
    }

    /// Batches sent so far (one per request that reached the backend).
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// Checks sent so far, over every batch.
    pub fn checks(&self) -> usize {
        self.checks.load(Ordering::SeqCst)
    }
}

impl Backend for Probe {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<Result<Decision, BackendError>>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.checks.fetch_add(batch.checks.len(), Ordering::SeqCst);
        if self.down.load(Ordering::SeqCst) {
            let err = BackendError::new(BackendErrorKind::Connection, "down");
            return Box::pin(std::future::ready(vec![Err(err); batch.checks.len()]));
        }
        self.inner.check(batch)
    }

    fn peek<'a>(
        &'a self,
        check: &'a Check,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Decision, BackendError>> {
        self.inner.peek(check, now_ms)
    }

    fn reset<'a>(&'a self, check: &'a Check) -> BoxFuture<'a, Result<(), BackendError>> {
        self.inner.reset(check)
    }

    fn hash_key(&self) -> Option<ratelimit_core::HashKey> {
        self.inner.hash_key()
    }
}

impl Outage for Arc<Probe> {
    fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }
}
