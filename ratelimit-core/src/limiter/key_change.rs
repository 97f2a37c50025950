//! A change of the hash key: what this limiter holds in memory under the
//! old key is dropped.
//!
//! Every subject is a digest under the hash key (see [`crate::HashKey`]).
//! A limiter whose key is not set on its builder takes the backend's, and
//! a shared backend may replace it: the Valkey backend adopts the key
//! stored in Valkey when it differs from its own (after Valkey restarted
//! without persistence and another instance stored a new one), or learns
//! the fleet's key after running on the limiter's own during an outage at
//! start. The penalty cache, the over-limit cache and the local stores
//! (`fail_mode: local`, count rules) hold subjects under the old key: no
//! request reaches them any more, and a subject's refusal or count would
//! live on under a digest nobody asks for. So they are dropped at once;
//! the backend holds the truth, and the next requests ask it.
//!
//! Checking costs two relaxed loads per decision; the key changes rarely.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use super::operator::Operator;
use crate::HashKey;

/// The key the limiter last hashed with.
#[derive(Debug)]
pub(super) struct SeenKey {
    k0: AtomicU64,
    k1: AtomicU64,
    /// Held while the words change, so that one caller sees each change.
    change: Mutex<()>,
}

impl SeenKey {
    pub(super) fn new(key: HashKey) -> Self {
        let (k0, k1) = key.words();
        Self {
            k0: AtomicU64::new(k0),
            k1: AtomicU64::new(k1),
            change: Mutex::new(()),
        }
    }

    /// Records `key`; `true` for exactly one caller when it differs from
    /// the key seen last.
    #[inline]
    pub(super) fn changed(&self, key: HashKey) -> bool {
        let (k0, k1) = key.words();
        if self.k0.load(Ordering::Relaxed) == k0 && self.k1.load(Ordering::Relaxed) == k1 {
            return false;
        }
        self.change_to(k0, k1)
    }

    /// [`SeenKey::changed`] past the fast path (a change, or words read
    /// while another caller wrote them): decided under the lock.
    #[cold]
    fn change_to(&self, k0: u64, k1: u64) -> bool {
        let _turn = self.change.lock().unwrap_or_else(|p| p.into_inner());
        if self.k0.load(Ordering::Relaxed) == k0 && self.k1.load(Ordering::Relaxed) == k1 {
            return false;
        }
        self.k0.store(k0, Ordering::Relaxed);
        self.k1.store(k1, Ordering::Relaxed);
        true
    }
}

impl Operator<'_> {
    /// Drops every subject held in memory: the hash key changed.
    #[cold]
    pub(super) fn forget_subjects(&self) {
        let inner = &self.inner;
        let penalties = inner.caches.penalties.clear();
        let refusals = inner.caches.overlimit.clear();
        let local = inner.caches.local.clear() + inner.counts.clear();
        tracing::info!(
            penalties,
            refusals,
            local,
            "hash key changed: subjects held in memory under the old key dropped"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_caller_sees_each_change_and_none_sees_the_same_key() {
        let (a, b) = (HashKey::new([1; 16]), HashKey::new([2; 16]));
        let seen = SeenKey::new(a);
        assert!(!seen.changed(a));
        assert!(seen.changed(b));
        assert!(!seen.changed(b), "seen once");
        assert!(seen.changed(a), "and back");
    }

    #[test]
    fn concurrent_callers_see_a_change_once() {
        let seen = std::sync::Arc::new(SeenKey::new(HashKey::new([1; 16])));
        let next = HashKey::new([2; 16]);
        let hits: usize = (0..4)
            .map(|_| {
                let seen = seen.clone();
                std::thread::spawn(move || (0..1000).filter(|_| seen.changed(next)).count())
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| t.join().expect("thread"))
            .sum();
        assert_eq!(hits, 1);
    }
}
