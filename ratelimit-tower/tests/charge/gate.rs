//! When the charge lands, on a backend that holds every charge at a gate
//! until the test opens it: with `charge_before_end(true)` the body ends
//! only once its charge was answered; by default it ends at once and the
//! charge lands later, in a spawned task; a body dropped while its charge
//! is awaited still gets charged. (Current-thread runtime: a task that
//! could finish has finished by the time the test looks.)

use std::sync::Arc;

use http_body_util::BodyExt;
use ratelimit_core::backend::MemoryBackend;
use ratelimit_core::backend::{Backend, Batch, BoxFuture, Check, CheckMode, CheckResult};
use tokio::sync::{Notify, Semaphore};

use crate::Setup;

/// The in-memory backend behind a gate for charges: a batch of charges
/// says it arrived, then waits for a permit. Probes and peeks pass.
#[derive(Debug)]
struct Gate {
    inner: MemoryBackend,
    arrived: Notify,
    open: Semaphore,
}

impl Gate {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            inner: MemoryBackend::default(),
            arrived: Notify::new(),
            open: Semaphore::new(0),
        })
    }

    /// Lets one held charge through.
    fn let_one_through(&self) {
        self.open.add_permits(1);
    }
}

impl Backend for Gate {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<CheckResult>> {
        Box::pin(async move {
            if batch.checks.iter().any(|c| c.mode == CheckMode::Charge) {
                self.arrived.notify_one();
                if let Ok(permit) = self.open.acquire().await {
                    permit.forget();
                }
            }
            self.inner.check(batch).await
        })
    }

    fn peek<'a>(&'a self, check: &'a Check, now_ms: u64) -> BoxFuture<'a, CheckResult> {
        self.inner.peek(check, now_ms)
    }

    fn hash_key(&self) -> Option<ratelimit_core::HashKey> {
        self.inner.hash_key()
    }
}

#[tokio::test]
async fn charge_before_end_holds_the_body_until_its_charge_is_answered() {
    let gate = Gate::new();
    let s = Setup::new(gate.clone(), true, true);
    let res = s.send("192.0.2.1", "g1", "/v1/complete?head=30").await;
    let reading = tokio::spawn(res.into_body().collect());
    gate.arrived.notified().await;
    assert!(!reading.is_finished(), "the body waits for its charge");
    gate.let_one_through();
    reading.await.unwrap().unwrap();
    // Charged before the body ended: no waiting.
    s.left("g1", 70, false).await;
}

#[tokio::test]
async fn by_default_the_body_ends_before_its_charge_is_answered() {
    let gate = Gate::new();
    let s = Setup::new(gate.clone(), true, false);
    let res = s.send("192.0.2.1", "g2", "/v1/complete?head=30").await;
    res.into_body().collect().await.unwrap();
    gate.arrived.notified().await;
    s.left("g2", 100, false).await;
    gate.let_one_through();
    s.left("g2", 70, false).await;
}

#[tokio::test]
async fn a_body_dropped_while_its_charge_is_awaited_is_still_charged() {
    let gate = Gate::new();
    let s = Setup::new(gate.clone(), true, true);
    let res = s
        .send("192.0.2.1", "g3", "/v1/stream?chunks=4&each=5")
        .await;
    let reading = tokio::spawn(res.into_body().collect());
    gate.arrived.notified().await;
    // The client hangs up while the charge is on its way.
    reading.abort();
    assert!(reading.await.unwrap_err().is_cancelled());
    gate.let_one_through();
    s.left("g3", 80, true).await;
}
