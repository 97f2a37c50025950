//! [`Operator`]: the operator's side of a limiter, everything that is not
//! deciding a request or accounting for its response.
//!
//! Publishing rule sets and rules added at run time (`publish.rs`), peek,
//! reset and lift of one subject (`admin.rs`), explaining a request
//! (`explain.rs`), and reading the switches, the counters and the state
//! gauges (here and `state_gauges.rs`). Each of those files is an
//! `impl Operator<'_>` block; [`Limiter`]'s public methods of the same
//! names are one-line delegations (`front.rs`).
//!
//! An `Operator` borrows the limiter's shared parts for one call and holds
//! nothing of its own. The one thing it asks the front for is the hash key
//! ([`Limiter::hash_key`]), which subjects are digested under: the
//! pipeline owns the rule that picks it (the builder's, the backend's, or
//! this process's) and notices when it changes (`pipeline.rs`,
//! `key_change.rs`: the subjects held under the old key are dropped by
//! `Caches::forget`).

use std::sync::Arc;

use super::published::Published;
use super::{Inner, Limiter};
use crate::penalty_cache::PenaltyCache;
use crate::stats::{LimiterStats, RuleStats};
use crate::switches::Switches;
use crate::HashKey;

/// The operator's side of one [`Limiter`], borrowed for a call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Operator<'a> {
    front: &'a Limiter,
    /// The limiter's shared parts, which the files of the operator's side
    /// read.
    pub(super) inner: &'a Inner,
}

impl<'a> Operator<'a> {
    /// The operator's side of `front`.
    #[inline]
    pub(super) fn new(front: &'a Limiter) -> Self {
        Self {
            front,
            inner: &front.inner,
        }
    }

    /// The hash key subjects are digested under now (see
    /// [`Limiter::hash_key`]).
    pub(super) fn hash_key(&self) -> HashKey {
        self.front.hash_key()
    }

    /// The published rule set.
    pub(super) fn published(&self) -> Arc<Published> {
        self.inner.current.load()
    }

    /// The clock decisions read.
    pub(super) fn now_ms(&self) -> u64 {
        self.inner.clock.now_ms()
    }

    /// See [`Limiter::switches`].
    #[inline]
    pub(crate) fn switches(&self) -> &'a Switches {
        &self.inner.switches
    }

    /// See [`Limiter::penalty_cache`].
    #[inline]
    pub(crate) fn penalty_cache(&self) -> &'a PenaltyCache {
        &self.inner.caches.penalties
    }

    /// See [`Limiter::stats`].
    #[inline]
    pub(crate) fn stats(&self) -> &'a LimiterStats {
        &self.inner.stats
    }

    /// See [`Limiter::rule_stats`].
    pub(crate) fn rule_stats(&self, id: &str) -> Option<Arc<RuleStats>> {
        self.published().stats_of(id)
    }

    /// See [`Limiter::local_untracked`].
    pub(crate) fn local_untracked(&self) -> u64 {
        self.inner.caches.local.untracked() + self.inner.counts.untracked()
    }

    /// See [`Limiter::overlimit_cache_dropped`].
    pub(crate) fn overlimit_cache_dropped(&self) -> u64 {
        self.inner.caches.overlimit.dropped()
    }
}
