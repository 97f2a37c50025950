//! Configuring a [`Limiter`].

use std::sync::Arc;

use super::{Inner, Limiter, Published};
use crate::backend::Backend;
use crate::backstop::{Backstop, BackstopConfig};
use crate::local::{LocalStore, DEFAULT_LOCAL_CAPACITY};
use crate::penalty_cache::{PenaltyCache, DEFAULT_PENALTY_CAPACITY};
use crate::rules::RuleSet;
use crate::stats::LimiterStats;
use crate::store::MemoryBackend;
use crate::switches::{FleetSize, Switches};
use crate::{Clock, HashKey, SystemClock};

/// Builds a [`Limiter`]; every setting has a default.
///
/// # Examples
///
/// ```
/// use ratelimit_core::rules::RuleSet;
/// use ratelimit_core::backend::MemoryBackend;
/// use ratelimit_core::{HashKey, Limiter, SystemClock};
///
/// let limiter = Limiter::builder(RuleSet::default())
///     .backend(MemoryBackend::with_capacity(10_000))
///     .clock(SystemClock)
///     .hash_key(HashKey::random())
///     .penalty_cache_capacity(1_000)
///     .build();
/// assert!(limiter.rules().rules().is_empty());
/// ```
#[derive(Debug)]
#[must_use]
pub struct LimiterBuilder {
    rules: RuleSet,
    backend: Option<Arc<dyn Backend>>,
    clock: Arc<dyn Clock>,
    hash_key: Option<HashKey>,
    penalty_capacity: usize,
    overlimit_capacity: usize,
    local_capacity: usize,
    count_capacity: usize,
    backstop: Option<BackstopConfig>,
    backstop_capacity: Option<usize>,
    fleet: Arc<dyn FleetSize>,
    reports: bool,
    #[cfg(test)]
    general_only: bool,
}

impl LimiterBuilder {
    pub(crate) fn new(rules: RuleSet) -> Self {
        Self {
            rules,
            backend: None,
            clock: Arc::new(SystemClock),
            hash_key: None,
            penalty_capacity: DEFAULT_PENALTY_CAPACITY,
            overlimit_capacity: super::overlimit::DEFAULT_OVERLIMIT_CAPACITY,
            local_capacity: DEFAULT_LOCAL_CAPACITY,
            count_capacity: DEFAULT_LOCAL_CAPACITY,
            backstop: None,
            backstop_capacity: None,
            fleet: Arc::new(1u64),
            reports: false,
            #[cfg(test)]
            general_only: false,
        }
    }

    /// Where shared state lives (the in-memory backend by default).
    pub fn backend(mut self, backend: impl Backend) -> Self {
        self.backend = Some(Arc::new(backend));
        self
    }

    /// A backend already shared.
    pub fn backend_arc(mut self, backend: Arc<dyn Backend>) -> Self {
        self.backend = Some(backend);
        self
    }

    /// The clock (the system clock by default).
    pub fn clock(mut self, clock: impl Clock) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// The secret key that hashes request keys and distinct values. Every
    /// instance of a fleet must use the same one.
    ///
    /// By default the backend's key is used ([`Backend::hash_key`]: the
    /// in-memory backend draws a random one, the Valkey backend keeps the
    /// fleet's in Valkey), else a random key of this limiter
    /// ([`HashKey::random`]). Keep the key secret: anyone who knows it can
    /// craft values that collide in a `distinct` map.
    pub fn hash_key(mut self, key: HashKey) -> Self {
        self.hash_key = Some(key);
        self
    }

    /// Blocks held by the local penalty cache (100,000 by default).
    pub fn penalty_cache_capacity(mut self, n: usize) -> Self {
        self.penalty_capacity = n;
        self
    }

    /// Refusals held by the over-limit cache (100,000 by default; 0 turns
    /// it off): a subject over the limit of a blocking rule without a
    /// penalty is refused locally until its earliest admission, without a
    /// backend call (`fixed_window`, `sliding_window`, `token_bucket`,
    /// `leaky_bucket`; see DESIGN.md, "The over-limit cache").
    pub fn overlimit_cache_capacity(mut self, n: usize) -> Self {
        self.overlimit_capacity = n;
        self
    }

    /// Keys of the `fail_mode: local` store, split between rules (100,000).
    pub fn local_capacity(mut self, n: usize) -> Self {
        self.local_capacity = n;
        self
    }

    /// Keys of the count rules' store, split between rules (100,000).
    pub fn count_capacity(mut self, n: usize) -> Self {
        self.count_capacity = n;
        self
    }

    /// Turns on the per-IP backstop: each client address may average
    /// `per_second` requests, `burst` at once, checked in memory before
    /// every rule (see [`backstop_capacity`](Self::backstop_capacity)).
    ///
    /// ```
    /// use ratelimit_core::{Limiter, RuleSet};
    ///
    /// let limiter = Limiter::builder(RuleSet::default())
    ///     .backstop(100, 200)
    ///     .backstop_capacity(50_000)
    ///     .build();
    /// # let _ = limiter;
    /// ```
    pub fn backstop(mut self, per_second: u64, burst: u64) -> Self {
        self.backstop = Some(BackstopConfig::new(per_second, burst));
        self
    }

    /// Client addresses the backstop tracks at most (100,000); past that,
    /// a new address passes untracked rather than share a bucket. Takes
    /// effect with [`backstop`](Self::backstop), in either order.
    pub fn backstop_capacity(mut self, n: usize) -> Self {
        self.backstop_capacity = Some(n);
        self
    }

    /// How many instances share the limits: a fixed `u64`, an
    /// `Arc<AtomicU64>` updated at run time, or any [`FleetSize`] (a
    /// static 1 by default).
    pub fn fleet_size(mut self, fleet: impl FleetSize) -> Self {
        self.fleet = Arc::new(fleet);
        self
    }

    /// Fills [`Verdict::reports`](crate::Verdict::reports) (what each rule
    /// said) on every check. Off by default: reports are then built only
    /// while `tracing` is enabled at debug level for this crate, or when
    /// the caller asks ([`Snapshot::reports`](super::Snapshot::reports)),
    /// so the plain allow path allocates none.
    pub fn reports(mut self, on: bool) -> Self {
        self.reports = on;
        self
    }

    /// Sends every request through the general path, never a compiled
    /// plan (the reference of the differential tests).
    #[cfg(test)]
    pub(crate) fn general_only(mut self) -> Self {
        self.general_only = true;
        self
    }

    /// Builds the limiter.
    pub fn build(self) -> Limiter {
        let backend = self
            .backend
            .unwrap_or_else(|| Arc::new(MemoryBackend::default()));
        let published = Published::new(self.rules, Vec::new(), None);
        // A key set here, or one the backend fixed when it was made, is
        // read now and never asked again (see `Limiter::hash_key`).
        let key_is_set = self.hash_key.is_some() || !backend.hash_key_changes();
        let fixed = self
            .hash_key
            .or_else(|| key_is_set.then(|| backend.hash_key())?);
        let own_key = fixed.unwrap_or_else(HashKey::random);
        let first_key = match key_is_set {
            true => own_key,
            false => backend.hash_key().unwrap_or(own_key),
        };
        Limiter {
            inner: Arc::new(Inner {
                backend,
                clock: self.clock,
                own_key,
                key_is_set,
                seen_key: super::key_change::SeenKey::new(first_key),
                current: super::current::Current::new(published),
                caches: super::caches::Caches {
                    penalties: PenaltyCache::new(self.penalty_capacity),
                    overlimit: super::overlimit::OverLimitCache::new(self.overlimit_capacity),
                    local: LocalStore::new(self.local_capacity),
                    fleet: self.fleet,
                },
                counts: LocalStore::new(self.count_capacity),
                backstop: self.backstop.map(|b| {
                    Backstop::new(b.capacity(self.backstop_capacity.unwrap_or(b.capacity)))
                }),
                switches: Switches::default(),
                stats: LimiterStats::default(),
                reports: self.reports,
                #[cfg(test)]
                general_only: self.general_only,
            }),
        }
    }
}
