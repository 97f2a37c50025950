//! The store seam's other half: [`StateStore`], where states are kept by
//! key, and [`StoreBackend`], the [`Backend`] over any of them.
//!
//! A new backend that keeps states (a map, an embedded database, a shared
//! memory segment) implements [`StateStore`]: a read-modify-write of one
//! key under the store's own lock, and a removal. [`StoreBackend`] does
//! the rest by running [`State::step`] on each check's state: the five
//! algorithms, their modes and penalties come with it. The in-memory
//! backend is one such store ([`MemoryBackend`](super::MemoryBackend)).

use std::fmt;

use super::state::{peek, State};
use crate::algorithm::Decision;
use crate::backend::{Backend, BackendError, BackendErrorKind, Batch, BoxFuture, Check};
use crate::{HashKey, KeyDigest};

/// Where subject states are kept, by key, in the manner of governor's
/// `StateStore::measure_and_replace`: the store runs a function on a
/// key's state and keeps what it returns, atomically for that key.
///
/// # Examples
///
/// A store over a map: the whole of a backend, with
/// [`StoreBackend`].
///
/// ```
/// use ratelimit_core::backend::{State, StateStore, StoreBackend};
/// use ratelimit_core::KeyDigest;
/// use std::collections::HashMap;
/// use std::sync::Mutex;
///
/// #[derive(Debug, Default)]
/// struct MapStore(Mutex<HashMap<KeyDigest, State>>);
///
/// impl StateStore for MapStore {
///     fn measure_and_replace<T>(
///         &self,
///         key: &KeyDigest,
///         _now_ms: u64,
///         f: impl FnOnce(Option<&State>) -> (T, Option<State>),
///     ) -> T {
///         let mut map = self.0.lock().unwrap();
///         let (answer, new) = f(map.get(key));
///         if let Some(state) = new {
///             map.insert(*key, state);
///         }
///         answer
///     }
///
///     fn remove(&self, key: &KeyDigest) {
///         self.0.lock().unwrap().remove(key);
///     }
/// }
///
/// let backend = StoreBackend::new(MapStore::default());
/// # let _ = backend;
/// ```
pub trait StateStore: fmt::Debug + Send + Sync + 'static {
    /// Runs `f` on the state kept under `key` (`None` when there is none)
    /// and keeps what it returns: `Some` replaces the state (the store may
    /// drop it after its [`expires_at_ms`](State::expires_at_ms)), `None`
    /// leaves it as it was. Returns `f`'s answer.
    ///
    /// Atomic for `key`: no other call on `key` may run between reading
    /// the state and replacing it (hold the key's lock around `f`; `f` is
    /// short and never blocks). `now_ms` is the check's time, for a store
    /// that orders or expires its entries by time.
    fn measure_and_replace<T>(
        &self,
        key: &KeyDigest,
        now_ms: u64,
        f: impl FnOnce(Option<&State>) -> (T, Option<State>),
    ) -> T;

    /// Forgets the state kept under `key`, if any.
    fn remove(&self, key: &KeyDigest);

    /// `f` of the state kept under `key`, changing nothing. The default
    /// is a [`StateStore::measure_and_replace`] that keeps the state.
    fn peek<T>(&self, key: &KeyDigest, now_ms: u64, f: impl FnOnce(Option<&State>) -> T) -> T {
        self.measure_and_replace(key, now_ms, |s| (f(s), None))
    }

    /// Answers `check` at `now_ms`: [`State::step`] on the state kept under its
    /// [`state_key`](Check::state_key). The default is all a store needs;
    /// a store with a faster path to the same answers may override it (the
    /// in-memory store counts on its packed words in place).
    fn step(&self, check: &Check, now_ms: u64) -> Decision {
        self.measure_and_replace(&check.state_key, now_ms, |s| State::step(check, now_ms, s))
    }
}

/// The [`Backend`] over a [`StateStore`]: every check is [`State::step`] on its
/// subject's state, answered at once ([`Backend::check_now`]). A `distinct`
/// rule only counts: its probe and charge checks are `Unsupported`
/// errors, as in every backend.
///
/// Subjects are hashed with a random key of the backend's own
/// ([`HashKey::random`]), which suits a store that one process keeps; a
/// store shared between processes takes the fleet's key
/// ([`StoreBackend::with_hash_key`]).
///
/// See [`StateStore`] for an example.
#[derive(Debug)]
pub struct StoreBackend<S> {
    store: S,
    hash_key: HashKey,
}

impl<S: StateStore> StoreBackend<S> {
    /// The backend over `store`, with a random hash key.
    pub fn new(store: S) -> Self {
        Self::with_hash_key(store, HashKey::random())
    }

    /// The backend over `store`, hashing subjects with `hash_key` (the same
    /// in every process that shares the store).
    pub fn with_hash_key(store: S, hash_key: HashKey) -> Self {
        Self { store, hash_key }
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The answer to one check at `now_ms`, in its [`mode`](Check::mode).
    #[inline(always)]
    pub fn answer(&self, check: &Check, now_ms: u64) -> Result<Decision, BackendError> {
        if check.algorithm.answers(check.mode) {
            Ok(self.store.step(check, now_ms))
        } else {
            Err(unsupported_mode(check))
        }
    }
}

/// The error answering a mode the rule's algorithm does not support.
#[cold]
pub(super) fn unsupported_mode(c: &Check) -> BackendError {
    BackendError::new(
        BackendErrorKind::Unsupported,
        format!(
            "rule {}: {} rules only count requests ({:?} check)",
            c.rule_id(),
            c.algorithm.as_str(),
            c.mode
        ),
    )
}

impl<S: StateStore> Backend for StoreBackend<S> {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<Result<Decision, BackendError>>> {
        let out = (batch.checks.iter())
            .map(|c| self.answer(c, batch.now_ms))
            .collect();
        Box::pin(std::future::ready(out))
    }

    fn check_now(&self, batch: &Batch) -> Option<Vec<Result<Decision, BackendError>>> {
        let out = batch.checks.iter().map(|c| self.answer(c, batch.now_ms));
        Some(out.collect())
    }

    fn check_now_each(
        &self,
        batch: &Batch,
        answer: &mut dyn FnMut(Result<Decision, BackendError>),
    ) -> bool {
        for c in &batch.checks {
            answer(self.answer(c, batch.now_ms));
        }
        true
    }

    fn peek<'a>(
        &'a self,
        check: &'a Check,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Decision, BackendError>> {
        let d = (self.store).peek(&check.state_key, now_ms, |s| peek(check, now_ms, s));
        Box::pin(std::future::ready(Ok(d)))
    }

    fn reset<'a>(&'a self, check: &'a Check) -> BoxFuture<'a, Result<(), BackendError>> {
        self.store.remove(&check.state_key);
        Box::pin(std::future::ready(Ok(())))
    }

    fn hash_key(&self) -> Option<HashKey> {
        Some(self.hash_key)
    }

    fn hash_key_changes(&self) -> bool {
        false
    }
}
