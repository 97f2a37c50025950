//! The decision pipeline: one request decided, select -> plan -> settle,
//! and nothing else.
//!
//! [`Pipeline`] borrows the limiter's shared parts and owns the request's
//! path: `check.rs` (the one executor, deciding at once or leaving the
//! rest to a future), `decide.rs` (backstop, selection, keys, the caches,
//! the batch), `select.rs`, `compiled.rs` (the plan is data selection
//! reads) and `settle.rs` (answers, fail modes, the verdict, written to the
//! verdict and the decision's caches, never back into the limiter).
//! [`Limiter::check`] and [`Snapshot::check`](super::Snapshot::check) are
//! its front doors; the operator's side and response accounting are types
//! of their own.

use std::sync::Arc;

use super::{Inner, Limiter};
use crate::HashKey;

/// The decision pipeline over a limiter's shared parts (see the module
/// docs).
#[derive(Clone, Copy)]
pub(super) struct Pipeline<'l> {
    pub(super) inner: &'l Arc<Inner>,
}

impl Limiter {
    /// This limiter's decision pipeline.
    #[inline(always)]
    pub(super) fn pipeline(&self) -> Pipeline<'_> {
        Pipeline { inner: &self.inner }
    }
}

impl Pipeline<'_> {
    /// The key that hashes subjects and distinct values: the one set on
    /// the builder, else the backend's key (read once when the backend
    /// fixed it when it was made, else at each decision: the fleet's key
    /// once known), else this process's random key. When it changes, the
    /// subjects held in memory are dropped (see `key_change.rs`).
    #[inline(always)]
    pub(super) fn hash_key(&self) -> HashKey {
        let inner = self.inner;
        if inner.key_is_set {
            return inner.own_key;
        }
        let key = inner.backend.hash_key().unwrap_or(inner.own_key);
        if inner.seen_key.changed(key) {
            inner.caches.forget(&inner.counts);
        }
        key
    }
}
