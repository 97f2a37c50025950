//! The published rule set as each request reads it: without a lock and
//! without touching a shared reference count, in the common case.
//!
//! The set lives behind an `RwLock`, next to a generation that every
//! publish bumps while it holds the write lock. Each thread keeps the set
//! it last read ([`Pinned`]), with the limiter and the generation it was
//! read at; a request loads the generation (one atomic load, no write to a
//! shared cache line) and uses its thread's copy when both still match,
//! else reads the set under the lock as before. A publish is therefore
//! seen by every request that starts after it returns: the new generation
//! no longer matches any thread's copy.
//!
//! A thread's copy keeps its set alive until that thread's next request
//! to a limiter: a superseded set per thread at most (as the checks kept
//! in the thread's batch, in `decide.rs`, keep their rules).

use std::cell::Cell;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockWriteGuard};

use super::published::Published;

/// Identifies a limiter for the per-thread copies (never reused, unlike
/// an address).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A published set as one thread read it.
struct ThreadCopy {
    limiter: u64,
    generation: u64,
    published: Arc<Published>,
}

thread_local! {
    /// The set this thread read last (taken out while a request uses it).
    static COPY: Cell<Option<Box<ThreadCopy>>> = const { Cell::new(None) };
}

/// The published rule set of one limiter, and its generation.
#[derive(Debug)]
pub(crate) struct Current {
    slot: RwLock<Arc<Published>>,
    /// Publishes so far; bumped under the write lock.
    generation: AtomicU64,
    id: u64,
}

impl Current {
    pub(crate) fn new(published: Published) -> Self {
        Self {
            slot: RwLock::new(Arc::new(published)),
            generation: AtomicU64::new(0),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The set, under the lock (for the paths that are not per request).
    pub(crate) fn load(&self) -> Arc<Published> {
        self.slot.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Runs `f` on the set for one request: this thread's copy when it is
    /// still the published one, else the set read under the lock (and kept
    /// for the next). One access to the thread's storage; a nested call
    /// (from within `f`) finds no copy and reads under the lock.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl Fn(&Published) -> R) -> R {
        let generation = self.generation.load(Ordering::Acquire);
        let run = |slot: &Cell<Option<Box<ThreadCopy>>>| {
            let copy = self.valid(slot.take(), generation);
            let r = f(&copy.published);
            slot.set(Some(copy));
            r
        };
        // After the thread's storage is gone: under the lock.
        COPY.try_with(run).unwrap_or_else(|_| f(&self.load()))
    }

    /// The set for one request, as [`Current::with`], held until dropped.
    // Always inlined: a call of its own cost more than its body's lookup.
    #[inline(always)]
    pub(crate) fn pin(&self) -> Pinned {
        let generation = self.generation.load(Ordering::Acquire);
        let copy = COPY.try_with(Cell::take).ok().flatten();
        Pinned {
            copy: Some(self.valid(copy, generation)),
        }
    }

    /// `copy` when it is this limiter's set at `generation`, else the set
    /// read under the lock. Always inlined, as `pin` is: the copy's test
    /// is a few instructions, a call of its own more.
    #[inline(always)]
    fn valid(&self, copy: Option<Box<ThreadCopy>>, generation: u64) -> Box<ThreadCopy> {
        match copy {
            Some(c) if c.limiter == self.id && c.generation == generation => c,
            // The box is reused: alternating limiters allocate nothing.
            Some(mut c) => {
                *c = self.read_copy();
                c
            }
            None => Box::new(self.read_copy()),
        }
    }

    #[cold]
    fn read_copy(&self) -> ThreadCopy {
        let slot = self.slot.read().unwrap_or_else(|p| p.into_inner());
        ThreadCopy {
            limiter: self.id,
            // Under the lock: the generation of this very set.
            generation: self.generation.load(Ordering::Acquire),
            published: slot.clone(),
        }
    }

    /// The set for a publish: [`Writer::replace`] swaps it.
    pub(crate) fn write(&self) -> Writer<'_> {
        Writer {
            slot: self.slot.write().unwrap_or_else(|p| p.into_inner()),
            generation: &self.generation,
        }
    }
}

/// The published set, locked for writing.
pub(crate) struct Writer<'a> {
    slot: RwLockWriteGuard<'a, Arc<Published>>,
    generation: &'a AtomicU64,
}

impl Writer<'_> {
    /// Publishes `next`: every request from now on reads it.
    pub(crate) fn replace(&mut self, next: Published) {
        *self.slot = Arc::new(next);
        self.generation.fetch_add(1, Ordering::Release);
    }
}

impl Deref for Writer<'_> {
    type Target = Published;

    #[inline]
    fn deref(&self) -> &Published {
        &self.slot
    }
}

/// The set one request reads; given back to its thread when dropped.
pub(crate) struct Pinned {
    /// Always `Some` until dropped. Boxed, as in the thread's slot: the
    /// copy moves in and out as one pointer.
    copy: Option<Box<ThreadCopy>>,
}

impl Deref for Pinned {
    type Target = Published;

    #[inline]
    fn deref(&self) -> &Published {
        match &self.copy {
            Some(c) => &c.published,
            None => unreachable!("a pinned set is taken only when dropped"),
        }
    }
}

impl Drop for Pinned {
    #[inline]
    fn drop(&mut self) {
        // The copy back in the thread's slot, which `pin` left empty; the
        // rare drops (a copy left in the slot, or the thread's storage
        // gone) out of line, so that a snapshot's drop is in line.
        let mut copy = self.copy.take();
        let _ = COPY.try_with(|slot| {
            if let Some(old) = slot.replace(copy.take()) {
                drop_copy(old);
            }
        });
        if let Some(copy) = copy {
            drop_copy(copy);
        }
    }
}

/// A thread's copy, dropped.
#[cold]
#[inline(never)]
fn drop_copy(copy: Box<ThreadCopy>) {
    drop(copy);
}

#[cfg(test)]
mod tests;
