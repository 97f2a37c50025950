//! Shared helpers for the pipeline tests.
#![allow(dead_code, unreachable_pub)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use ratelimit_core::backend::{
    Backend, BackendError, BackendErrorKind, Batch, BoxFuture, Check, CheckResult,
};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::store::MemoryBackend;
use ratelimit_core::{Limiter, ManualClock, RequestAttrs};

pub const T0: u64 = 1_767_225_600_000;

/// The memory backend, counting calls and checks, and able to fail.
#[derive(Debug, Default)]
pub struct Probe {
    pub inner: MemoryBackend,
    pub calls: AtomicUsize,
    pub checks: AtomicUsize,
    pub down: AtomicBool,
}

impl Backend for Probe {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<CheckResult>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.checks.fetch_add(batch.checks.len(), Ordering::SeqCst);
        if self.down.load(Ordering::SeqCst) {
            let err = BackendError::new(BackendErrorKind::Connection, "down");
            return Box::pin(std::future::ready(vec![Err(err); batch.checks.len()]));
        }
        self.inner.check(batch)
    }

    fn peek<'a>(&'a self, check: &'a Check, now_ms: u64) -> BoxFuture<'a, CheckResult> {
        self.inner.peek(check, now_ms)
    }

    fn reset<'a>(&'a self, check: &'a Check) -> BoxFuture<'a, Result<(), BackendError>> {
        self.inner.reset(check)
    }
}

pub fn rules(json: &str) -> RuleSet {
    RuleSet::from_json_at(json, T0).expect("valid rules")
}

pub fn limiter(json: &str) -> (Limiter, ManualClock, Arc<Probe>) {
    let clock = ManualClock::new(T0);
    let probe = Arc::new(Probe::default());
    let l = Limiter::builder(rules(json))
        .clock(clock.clone())
        .backend(probe.clone())
        .build();
    (l, clock, probe)
}

pub fn req(ip: &str, path: &str) -> RequestAttrs {
    RequestAttrs::new(ip.parse().expect("ip")).with_path(path)
}

/// A rule object with the given id, expression and extra fields.
pub fn rule(id: &str, expr: &str, extra: &str) -> String {
    let expr = serde_json_escape(expr);
    format!(
        r#"{{"id": "{id}", "expression": "{expr}", "algorithm": "fixed_window", "limit": 2,
        "period": "1m", "key": ["ip"]{extra}}}"#
    )
}

fn serde_json_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}
