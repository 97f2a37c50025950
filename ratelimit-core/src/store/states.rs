//! The in-memory store's table of subject states: each state packed into
//! an 8-byte word beside its digest and idle time (a 32-byte slot, see
//! [`Packed`]), and the few that do not pack (distinct sketches, counts or
//! spans past the packed fields) kept whole in a second table, behind a
//! placeholder word in the first.
//!
//! The first table alone decides what is held: every whole state has its
//! placeholder there, so the capacity, the recency and the eviction are
//! the first table's, and evicting or removing a placeholder drops the
//! whole state with it. Each shard of the second table holds only keys of
//! the same shard of the first, so it never fills. Locks are taken in one
//! order: a shard of the first table, then the same shard of the second.
//!
//! A count or a charge ([`States::check`]) runs on the packed word in
//! place when it can (`Packed::count`), a probe ([`States::probe`]) on a
//! copy of it, and only otherwise through the whole state, unpacked,
//! checked and packed again (or kept whole).

use super::lru::Entry;
use super::{CacheLine, HalfLine, Inserted, Lru, Sharded, WhenFull, IDLE_MAX};
use crate::algorithm::{
    probe_answer, Algorithm, CheckMode, CheckQuota, Decision, Packed, SubjectState,
};
use crate::KeyDigest;

/// Subject states by state key, bounded, least recently used evicted.
#[derive(Debug)]
pub(crate) struct States {
    /// One 32-byte slot per subject: digest, idle time and recency, word.
    packed: Sharded<Packed, HalfLine>,
    /// The states whose word is [`Packed::WIDE`].
    wide: Sharded<SubjectState, CacheLine>,
}

/// `s` as a word, given its idle time; `None` when it must be kept whole.
#[inline(always)]
fn pack(s: &SubjectState, idle: u64) -> Option<Packed> {
    // The table saturates idle times at IDLE_MAX: past it, not exact.
    if idle > IDLE_MAX {
        return None;
    }
    Packed::pack(s, idle)
}

/// A count or charge (`mode`) on the packed word of the entry `e` in
/// place (`Packed::count`), recording its new idle time; `None`, the
/// entry untouched, when the whole state must decide.
#[inline(always)]
fn count_word(
    now: u64,
    algorithm: Algorithm,
    mode: CheckMode,
    mut e: Entry<'_, Packed>,
    q: &CheckQuota,
    penalty_ms: Option<u64>,
) -> Option<Decision> {
    let mut idle = e.idle_at();
    let d = e
        .value
        .count(&mut idle, IDLE_MAX, algorithm, mode, now, q, penalty_ms)?;
    e.set_idle_at(idle);
    Some(d)
}

impl States {
    /// At most `capacity` states over `shards` shards.
    pub(crate) fn new(capacity: usize, shards: usize) -> Self {
        Self {
            packed: Sharded::new(capacity, shards),
            wide: Sharded::new(capacity, shards),
        }
    }

    /// States held.
    pub(crate) fn len(&self) -> usize {
        self.packed.len()
    }

    /// Whether no state is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.packed.is_empty()
    }

    /// Counts one request of `key` in `mode` ([`CheckMode::Count`] or
    /// [`CheckMode::Charge`]: a probe goes through [`States::peek`]): as
    /// [`SubjectState::check`] or [`SubjectState::charge`] of its state
    /// (`SubjectState::new(algorithm)` when absent; the least recently
    /// used state is evicted when full, and `on_live_evicted` called when
    /// it was live), which is kept, idle at its `expires_at`. On the packed
    /// word in place when it can (`Packed::count`), else through the whole
    /// state. Admitted with `q.limit` left when the table holds nothing to
    /// evict (never when full: the capacity is at least 1).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn check(
        &self,
        key: KeyDigest,
        now: u64,
        algorithm: Algorithm,
        mode: CheckMode,
        q: &CheckQuota,
        penalty_ms: Option<u64>,
        bit: Option<u16>,
        on_live_evicted: impl FnOnce(),
    ) -> Decision {
        debug_assert_ne!(mode, CheckMode::Probe, "a probe goes through peek");
        let mut shard = self.packed.shard(&key);
        // A subject seen before (the common case): its entry without the
        // insertion's and eviction's bookkeeping.
        if let Some(e) = shard.found(&key) {
            if let Some(d) = count_word(now, algorithm, mode, e, q, penalty_ms) {
                return d;
            }
        } else {
            let Some(e) = self.insert(&mut shard, key, now, algorithm) else {
                return Decision::allow(q.limit, 0);
            };
            if e.how == Inserted::EvictedLive {
                on_live_evicted();
            }
            if let Some(d) = count_word(now, algorithm, mode, e, q, penalty_ms) {
                return d;
            }
        }
        self.check_whole(&mut shard, key, now, algorithm, mode, q, penalty_ms, bit)
    }

    /// [`States::check`] through the whole state of `key`, in `shard` (its
    /// shard, found or just inserted: the word left untouched by
    /// [`count_word`]). The entry is found again rather than handed over:
    /// held across this call, it was written to memory on the common path
    /// too (about 10 instructions a request, `layer_calls`).
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn check_whole(
        &self,
        shard: &mut Lru<Packed, HalfLine>,
        key: KeyDigest,
        now: u64,
        algorithm: Algorithm,
        mode: CheckMode,
        q: &CheckQuota,
        penalty_ms: Option<u64>,
        bit: Option<u16>,
    ) -> Decision {
        let Some(e) = shard.found(&key) else {
            return Decision::allow(q.limit, 0);
        };
        let mut d = None;
        self.update_entry(
            key,
            now,
            algorithm,
            e,
            |s| {
                d = Some(match mode {
                    CheckMode::Charge => s.charge(algorithm, now, q, penalty_ms),
                    _ => s.check(algorithm, now, q, penalty_ms, bit),
                })
            },
            |s| s.expires_at(q),
        );
        d.unwrap_or(Decision::allow(q.limit, 0))
    }

    /// The new entry of `key` (absent from `shard`, its shard of the first
    /// table), fresh for `algorithm`, with the whole state of an evicted
    /// placeholder dropped.
    #[inline(always)]
    fn insert<'a>(
        &self,
        shard: &'a mut Lru<Packed, HalfLine>,
        key: KeyDigest,
        now: u64,
        algorithm: Algorithm,
    ) -> Option<Entry<'a, Packed>> {
        let new = || Packed::fresh(algorithm);
        let mut e = shard.insert_absent(key, now, WhenFull::EvictLru, new)?;
        if let Some((k, w)) = e.evicted.take() {
            if w.is_wide() {
                self.wide.shard(&k).remove(&k);
            }
        }
        Some(e)
    }

    /// Runs `f` on the state of the entry `e` of `key` and keeps what it
    /// leaves, idle at `idle_at` of it.
    // `f` returns nothing: its caller writes its result in place. Moving
    // a just-written `Decision` out of here cost up to 10 ns a call
    // (store-to-load forwarding stalls).
    #[inline(always)]
    fn update_entry(
        &self,
        key: KeyDigest,
        now: u64,
        algorithm: Algorithm,
        mut e: Entry<'_, Packed>,
        f: impl FnOnce(&mut SubjectState),
        idle_at: impl FnOnce(&SubjectState) -> u64,
    ) {
        let Some(mut s) = e.value.unpack(e.idle_at()) else {
            return self.update_whole(key, now, algorithm, e, f, idle_at);
        };
        f(&mut s);
        let idle = idle_at(&s);
        e.set_idle_at(idle);
        *e.value = match pack(&s, idle) {
            Some(w) => w,
            None => self.keep_whole(key, now, s),
        };
    }

    /// Keeps `s` whole; its word is then [`Packed::WIDE`].
    #[cold]
    fn keep_whole(&self, key: KeyDigest, now: u64, s: SubjectState) -> Packed {
        let mut wide = self.wide.shard(&key);
        wide.remove(&key);
        wide.entry(key, now, WhenFull::EvictLru, move || s);
        Packed::WIDE
    }

    /// `update_entry` of a state kept whole (`e` is its placeholder).
    #[cold]
    fn update_whole(
        &self,
        key: KeyDigest,
        now: u64,
        algorithm: Algorithm,
        mut e: Entry<'_, Packed>,
        f: impl FnOnce(&mut SubjectState),
        idle_at: impl FnOnce(&SubjectState) -> u64,
    ) {
        let mut wide = self.wide.shard(&key);
        // The whole state is there while its placeholder is: `new` is
        // only a fallback.
        let mut fresh = None;
        let s = match wide.entry(key, now, WhenFull::EvictLru, || {
            SubjectState::new(algorithm)
        }) {
            Some(w) => w.value,
            None => fresh.insert(SubjectState::new(algorithm)),
        };
        f(s);
        let idle = idle_at(s);
        e.set_idle_at(idle);
        if let Some(packed) = pack(s, idle) {
            *e.value = packed;
            wide.remove(&key);
        }
    }

    /// What a count of `q.cost` at `now` would decide for `key`
    /// ([`SubjectState::probe`]), changing and moving nothing: on a copy of
    /// the packed word when it can (`Packed::count`).
    #[inline(always)]
    pub(crate) fn probe(
        &self,
        key: &KeyDigest,
        algorithm: Algorithm,
        now: u64,
        q: &CheckQuota,
    ) -> Decision {
        let shard = self.packed.shard(key);
        let found = shard.peek_idle(key).map(|(w, idle)| (*w, idle));
        let (w, idle) = found.unwrap_or((Packed::fresh(algorithm), 0));
        // A probe starts no penalty: a count without one, on a copy; the
        // budget it answers is a count of cost 0's (`probe_answer`).
        let count = |q: &CheckQuota| {
            let (mut w, mut idle) = (w, idle);
            w.count(
                &mut idle,
                IDLE_MAX,
                algorithm,
                CheckMode::Count,
                now,
                q,
                None,
            )
        };
        match count(q) {
            Some(d) if !d.allowed => return d,
            Some(d) => {
                if let Some(found) = count(&q.with_cost(0)) {
                    return probe_answer(d, || found);
                }
            }
            None => {}
        }
        self.peek_in(&shard, key, algorithm, |s| s.probe(algorithm, now, q))
    }

    /// [`States::peek`] with the shard of `key` locked.
    fn peek_in<R>(
        &self,
        shard: &Lru<Packed, HalfLine>,
        key: &KeyDigest,
        algorithm: Algorithm,
        f: impl FnOnce(&SubjectState) -> R,
    ) -> R {
        let Some((w, idle)) = shard.peek_idle(key) else {
            return f(&SubjectState::new(algorithm));
        };
        if let Some(s) = w.unpack(idle) {
            return f(&s);
        }
        match self.wide.shard(key).peek(key) {
            Some(s) => f(s),
            None => f(&SubjectState::new(algorithm)),
        }
    }

    /// Forgets the state of `key`.
    pub(crate) fn remove(&self, key: &KeyDigest) {
        // The first table's lock is held until the whole state is gone.
        let mut shard = self.packed.shard(key);
        if shard.remove(key).is_some_and(Packed::is_wide) {
            self.wide.shard(key).remove(key);
        }
    }
}

mod replace;

#[cfg(test)]
mod tests;
