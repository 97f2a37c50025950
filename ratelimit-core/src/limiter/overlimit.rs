//! The over-limit cache: refusals answered locally until the subject's
//! earliest admission.
//!
//! When the backend refuses a request of cost `c` for a subject under a
//! blocking rule without a penalty (or asked with a probe, which starts
//! none), it also says when a retry would be
//! admitted at the earliest, if nothing else happened: `T = now + retry`.
//! Before `T`, no request of cost `c` or more from that subject can be
//! admitted by any instance:
//!
//! - a refused request charges nothing (fixed window, sliding window, token
//!   and leaky bucket leave the state as it was), so the refusals this
//!   cache answers change nothing the backend would have seen;
//! - admitted requests (here or on other instances) only add to the count,
//!   which moves the earliest admission later, never earlier;
//! - a larger cost fits no sooner than a smaller one.
//!
//! Rules charged after the response (`charge: response`) are asked with a
//! probe of cost 1: its refusal is cached as any cost-1 refusal, also
//! under a rule with a penalty (a probe starts none, so the penalty cache
//! would not hold it and every probe of a flood would ask the backend),
//! and so is a charge that passes the limit without a penalty (as the
//! refusal of a cost-1 request, until the wait the backend gave): charges
//! only add, so they too move the earliest admission later, never earlier.
//!
//! `T` is taken from the time read *before* the backend call: the backend
//! decided at that time or later (Valkey `TIME` included, whatever its
//! offset), so its real earliest admission is at `T` or after.
//!
//! Left out: `distinct` rules (a different value may be admitted while the
//! subject is over its limit), count rules and log rules (they never refuse
//! at request time), counts and charges under a penalty (the penalty cache
//! holds those), answers of the `fail_mode: local` fallback (not the
//! backend's), and requests of a smaller cost than the refused one: those
//! still ask.
//!
//! Each entry remembers the published rule it was refused under: after a
//! publish, a rule (even with the same id, algorithm and period, whose
//! state carries over) no longer matches the entries of its predecessor, so
//! a raised limit applies on the next request. An administrative reset
//! lifts this instance's entry; other instances keep theirs until `T`, as
//! with the penalty cache.
//!
//! The table and its policy are the penalty cache's: bounded (100,000 keys
//! by default), expired refusals make room, and when it is full of live
//! ones a new refusal is not stored (counted as
//! `ratelimit_overlimit_cache_dropped_total`): the request after it just
//! asks the backend.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use crate::algorithm::Decision;
use crate::backend::{Check, CheckMode};
use crate::rules::Rule;
use crate::store::{Sharded, WhenFull};
use crate::KeyDigest;

/// Keys held by default.
pub(crate) const DEFAULT_OVERLIMIT_CAPACITY: usize = 100_000;

/// One refusal: until when, for what cost, under which published rule.
#[derive(Debug)]
struct Refusal {
    until: u64,
    cost: u64,
    /// What the backend said was left (a refused cost above it; 0 for a
    /// refused cost of 1).
    remaining: u64,
    /// When the quota is whole again (informational, for the headers).
    reset_at: u64,
    /// The published rule (by identity; `Weak` keeps its address unique).
    rule: Weak<Rule>,
}

/// Refusals by state key. Capacity 0 turns the cache off.
#[derive(Debug)]
pub(crate) struct OverLimitCache {
    map: Option<Sharded<Refusal>>,
    /// Refusals offered so far: while zero, lookups skip the shards.
    stored: AtomicU64,
    dropped: AtomicU64,
}

impl OverLimitCache {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            map: (capacity > 0).then(|| Sharded::new(capacity, 16)),
            stored: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
        }
    }

    /// The cached refusal of a request of `cost` under `rule` for `key` at
    /// `now`, as the backend answered it (its `remaining`, with the time
    /// to wait counted from `now`).
    #[inline]
    pub(crate) fn refused(
        &self,
        key: &KeyDigest,
        rule: &Arc<Rule>,
        cost: u64,
        now: u64,
    ) -> Option<Decision> {
        // Inlined: while nothing was ever refused, this one load.
        if self.stored.load(Ordering::SeqCst) == 0 {
            return None;
        }
        self.lookup(key, rule, cost, now)
    }

    /// [`OverLimitCache::refused`] in the shards (out of line).
    #[inline(never)]
    fn lookup(&self, key: &KeyDigest, rule: &Arc<Rule>, cost: u64, now: u64) -> Option<Decision> {
        let map = self.map.as_ref()?;
        let mut shard = map.shard(key);
        let r = shard.peek(key)?;
        if r.until <= now || r.rule.as_ptr() != Arc::as_ptr(rule) {
            shard.remove(key);
            return None;
        }
        if cost < r.cost {
            return None;
        }
        let left = r.until - now;
        Some(Decision::deny(
            left,
            r.remaining,
            r.reset_at.saturating_sub(now).max(left),
        ))
    }

    /// Remembers the backend's answer `d` to what was `asked` when it is a
    /// refusal this cache may repeat (see the module docs).
    #[inline]
    pub(super) fn remember(&self, asked: &Check, d: &Decision, now: u64) {
        // Inlined: an admission (the common answer) returns here.
        if !d.allowed {
            self.store(asked, d, now);
        }
    }

    /// [`OverLimitCache::remember`] of a refusal (out of line).
    #[inline(never)]
    fn store(&self, asked: &Check, d: &Decision, now: u64) {
        let Some(map) = &self.map else { return };
        let rule = &asked.rule;
        if d.retry_after_ms == 0
            || d.blocked_until_ms.is_some()
            || (asked.mode != CheckMode::Probe && asked.penalty_ms.is_some_and(|p| p > 0))
            || !rule.algorithm.over_limit_cacheable()
            || rule.is_count_rule()
        {
            return;
        }
        // A charge over the limit: the refusal of a cost of 1 (its wait is
        // the wait of a cost of 1), whatever it charged.
        let cost = match asked.mode {
            CheckMode::Charge => 1,
            _ => asked.quota.cost,
        };
        let refusal = Refusal {
            until: now.saturating_add(d.retry_after_ms),
            cost,
            remaining: d.remaining,
            reset_at: now.saturating_add(d.reset_ms),
            rule: Arc::downgrade(rule),
        };
        let until = refusal.until;
        let key = asked.state_key;
        // Before the insert, so no lookup can miss a stored refusal.
        self.stored.fetch_add(1, Ordering::SeqCst);
        let mut shard = map.shard(&key);
        let mut refusal = Some(refusal);
        match shard.entry(key, now, WhenFull::Refuse, || refusal.take().expect("once")) {
            Some(mut e) => {
                if let Some(new) = refusal {
                    // An entry was there: the newer answer replaces it.
                    *e.value = new;
                }
                e.set_idle_at(until);
            }
            None => {
                drop(shard);
                self.dropped.fetch_add(1, Ordering::Relaxed);
                metrics::counter!("ratelimit_overlimit_cache_dropped_total").increment(1);
            }
        }
    }

    /// Forgets the refusal of `key`.
    pub(crate) fn lift(&self, key: &KeyDigest) {
        if let Some(map) = &self.map {
            map.shard(key).remove(key);
        }
    }

    /// Forgets every refusal; returns how many were held.
    pub(crate) fn clear(&self) -> usize {
        self.map.as_ref().map_or(0, Sharded::clear)
    }

    /// Refusals dropped because the cache was full.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests;
