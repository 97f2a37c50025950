//! A transparent [`Backend`] wrapper that records every check it passes on:
//! the subject, the distinct bit, when the call started and ended (wall
//! clock, the clock Valkey `TIME` reads on this host) and what came back.
//!
//! The decision time Valkey used lies inside `[sent_ms, done_ms]`: the
//! script runs after the call starts and before its answer arrives.

use std::sync::{Arc, Mutex};

use ratelimit_core::algorithm::Decision;
use ratelimit_core::backend::{
    Backend, BackendError, BackendErrorKind, Batch, BoxFuture, Check, CheckResult,
};
use ratelimit_core::control::StaticFleet;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{HashKey, KeyDigest, Limiter};

use super::wall_ms;

/// One check as it went through the backend.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Which instance (limiter) sent it.
    pub instance: usize,
    /// The rule's id.
    pub rule: Arc<str>,
    /// The subject's digest.
    pub subject: KeyDigest,
    /// The distinct value's bit.
    pub bit: Option<u16>,
    /// The backend call (one batch, one round trip) it went in: the
    /// checks of one call share it, and calls never do.
    pub call: u64,
    /// Wall clock before the call (Unix ms).
    pub sent_ms: u64,
    /// Wall clock after the answer (Unix ms).
    pub done_ms: u64,
    /// The decision, or the error's kind.
    pub result: Result<Decision, BackendErrorKind>,
}

impl Sample {
    /// Admitted by the backend.
    pub fn admitted(&self) -> bool {
        matches!(self.result, Ok(d) if d.allowed)
    }

    /// The backend could not answer.
    pub fn failed(&self) -> bool {
        self.result.is_err()
    }
}

/// The samples of every recorder sharing it.
#[derive(Debug, Clone, Default)]
pub struct Log(Arc<Mutex<Vec<Sample>>>);

impl Log {
    /// An empty log.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every sample so far.
    pub fn samples(&self) -> Vec<Sample> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// How many samples so far.
    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every sample.
    pub fn clear(&self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// A limiter over `backend` whose checks are recorded here as instance
    /// `instance`, in a fleet of `fleet`, under the public test hash key
    /// (the tests compute subjects with it).
    pub fn limiter<B: Backend + 'static>(
        &self,
        rules: RuleSet,
        backend: B,
        instance: usize,
        fleet: u64,
    ) -> Limiter {
        Limiter::builder(rules)
            .hash_key(HashKey::DEFAULT)
            .backend(Recorder::new(backend, instance, self.clone()))
            .fleet_size(StaticFleet(fleet))
            .build()
    }

    /// Records one call's checks, numbered by the call (the index of its
    /// first sample).
    fn push(&self, batch: impl IntoIterator<Item = Sample>) {
        let mut log = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let call = log.len() as u64;
        log.extend(batch.into_iter().map(|s| Sample { call, ..s }));
    }
}

/// Passes every call to `inner` and records it in a [`Log`].
#[derive(Debug)]
pub struct Recorder<B> {
    inner: B,
    instance: usize,
    log: Log,
}

impl<B: Backend> Recorder<B> {
    /// Records the calls of instance `instance` into `log`.
    pub fn new(inner: B, instance: usize, log: Log) -> Self {
        Self {
            inner,
            instance,
            log,
        }
    }
}

fn sample(instance: usize, c: &Check, sent: u64, done: u64, r: &CheckResult) -> Sample {
    Sample {
        instance,
        rule: c.rule_id().into(),
        subject: c.subject,
        bit: c.bit,
        call: 0,
        sent_ms: sent,
        done_ms: done,
        result: r.clone().map_err(|e: BackendError| e.kind()),
    }
}

impl<B: Backend> Backend for Recorder<B> {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<CheckResult>> {
        Box::pin(async move {
            let sent = wall_ms();
            let out = self.inner.check(batch).await;
            let done = wall_ms();
            self.log.push(
                batch
                    .checks
                    .iter()
                    .zip(&out)
                    .map(|(c, r)| sample(self.instance, c, sent, done, r)),
            );
            out
        })
    }

    fn peek<'a>(&'a self, check: &'a Check, now_ms: u64) -> BoxFuture<'a, CheckResult> {
        self.inner.peek(check, now_ms)
    }

    fn hash_key(&self) -> Option<ratelimit_core::HashKey> {
        self.inner.hash_key()
    }

    fn reset<'a>(&'a self, check: &'a Check) -> BoxFuture<'a, Result<(), BackendError>> {
        self.inner.reset(check)
    }
}
