//! The table as a [`StateStore`](crate::store::StateStore) sees it: a
//! whole [`State`] read, or replaced, by key. The store seam's general
//! path; a count runs on the packed word in place instead
//! ([`States::check`]).

use super::{HalfLine, Inserted, Lru, Packed, States};
use crate::store::State;
use crate::KeyDigest;

impl States {
    /// `f` of the state of `key` (`None` when absent), without touching
    /// its recency.
    pub(crate) fn peek<R>(&self, key: &KeyDigest, f: impl FnOnce(Option<&State>) -> R) -> R {
        let shard = self.packed.shard(key);
        f(self.stored(&shard, key).as_ref())
    }

    /// `f` of the state of `key` (`None` when absent), keeping the state
    /// it returns (`Some`), idle at its `expires_at_ms`: inserted when
    /// absent (the least recently used state is evicted when full, and
    /// `on_live_evicted` called when it was live). Through the whole
    /// state: [`States::check`] is the fast path of a count.
    pub(crate) fn replace<T>(
        &self,
        key: KeyDigest,
        now: u64,
        f: impl FnOnce(Option<&State>) -> (T, Option<State>),
        on_live_evicted: impl FnOnce(),
    ) -> T {
        let mut shard = self.packed.shard(&key);
        let present = shard.peek_idle(&key).is_some();
        let old = self.stored(&shard, &key);
        let (answer, new) = f(old.as_ref());
        let Some(new) = new else { return answer };
        let (s, idle) = new.into_parts();
        let algorithm = s.algorithm();
        let e = if present {
            shard.found(&key)
        } else {
            let e = self.insert(&mut shard, key, now, algorithm);
            if e.as_ref().is_some_and(|e| e.how == Inserted::EvictedLive) {
                on_live_evicted();
            }
            e
        };
        if let Some(e) = e {
            self.update_entry(key, now, algorithm, e, |slot| *slot = s, |_| idle);
        }
        answer
    }

    /// The state of `key` (its shard `shard`, locked), a copy.
    fn stored(&self, shard: &Lru<Packed, HalfLine>, key: &KeyDigest) -> Option<State> {
        let (w, idle) = shard.peek_idle(key)?;
        let s = match w.unpack(idle) {
            Some(s) => s,
            None => self.wide.shard(key).peek(key)?.clone(),
        };
        Some(State::from_parts(s, idle))
    }
}
