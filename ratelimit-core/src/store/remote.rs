//! The seam for a store outside the process: [`RemoteStore`], an async
//! compare-and-set over encoded states ([`State::encode`]), and
//! [`RemoteBackend`], the [`Backend`] over any of them.
//!
//! A networked store (a database, a key-value service) keeps each subject's
//! state as opaque bytes with a version, and reuses the core's algorithms:
//! [`RemoteBackend`] reads a state, runs [`State::step`] on it, and writes
//! the new one only if nobody wrote in between (the version it read is
//! still there); when somebody did, it reads again and steps again. The
//! store writes no algorithm, and decides exactly as the in-memory backend
//! does. Two awaits per check (read, then write) and one more pair per
//! lost race: a store that can run code next to the data (Valkey's scripts)
//! does better with a `Backend` of its own, one round trip a request.

use std::fmt;

use super::state::{peek, State};
use super::state_store::unsupported_mode;
use crate::algorithm::Decision;
use crate::backend::{Backend, BackendError, BackendErrorKind, Batch, BoxFuture, Check};
use crate::{HashKey, KeyDigest};

/// The bytes a [`RemoteStore`] keeps under a key, and their version.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stored {
    /// The encoded state ([`State::encode`]).
    pub bytes: Vec<u8>,
    /// Any number the store changes on every write of the key (a counter,
    /// a revision): what [`RemoteStore::write_if`] compares.
    pub version: u64,
}

impl Stored {
    /// `bytes` at `version`.
    pub fn new(bytes: Vec<u8>, version: u64) -> Self {
        Self { bytes, version }
    }
}

/// Where encoded states are kept outside the process, by key, with a
/// version per key for compare-and-set.
///
/// Every method may await (a network round trip). `RemoteBackend` calls
/// `read`, then `write_if` with the version it read; a store that cannot
/// compare versions cannot be a `RemoteStore` (a lost update would admit
/// more than the limit).
///
/// `ratelimit-core/tests/remote_backend.rs` is one over a map, which
/// awaits between the read and the write as a network store would, and
/// passes the backend-generic suite.
pub trait RemoteStore: fmt::Debug + Send + Sync + 'static {
    /// The bytes kept under `key`, `None` when there are none (or they
    /// expired).
    fn read<'a>(
        &'a self,
        key: &'a KeyDigest,
    ) -> BoxFuture<'a, Result<Option<Stored>, BackendError>>;

    /// Keeps `bytes` under `key` if the key is still at `expected` (its
    /// version as read; `None`: the key was absent), and returns `true`;
    /// `false`, writing nothing, when another write came first. The store
    /// may drop the key after `expires_at_ms` (Unix ms).
    fn write_if<'a>(
        &'a self,
        key: &'a KeyDigest,
        expected: Option<u64>,
        bytes: Vec<u8>,
        expires_at_ms: u64,
    ) -> BoxFuture<'a, Result<bool, BackendError>>;

    /// Forgets the bytes kept under `key`, if any.
    fn remove<'a>(&'a self, key: &'a KeyDigest) -> BoxFuture<'a, Result<(), BackendError>>;
}

/// How many times a check reads and steps again after losing the
/// compare-and-set before it answers an error.
pub const REMOTE_TRIES: u32 = 1_000;

/// The [`Backend`] over a [`RemoteStore`]: each check is [`State::step`] on
/// its subject's state, read and written back with compare-and-set (see
/// the module docs). A `distinct` rule only counts: its probe and charge
/// checks are `Unsupported` errors, as in every backend. Undecodable bytes
/// are a `Protocol` error naming the check's rule; a check that lost the
/// compare-and-set [`REMOTE_TRIES`] times is a `Timeout` (nothing it wrote).
///
/// Subjects are hashed with the key given ([`RemoteBackend::new`]): every
/// process sharing the store must use the same one.
#[derive(Debug)]
pub struct RemoteBackend<S> {
    store: S,
    hash_key: HashKey,
}

impl<S: RemoteStore> RemoteBackend<S> {
    /// The backend over `store`, hashing subjects with `hash_key` (the same
    /// in every process that shares the store).
    pub fn new(store: S, hash_key: HashKey) -> Self {
        Self { store, hash_key }
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The state kept for `check`, decoded, with its version.
    async fn read(&self, check: &Check) -> Result<Option<(State, u64)>, BackendError> {
        let Some(stored) = self.store.read(&check.state_key).await? else {
            return Ok(None);
        };
        match State::decode(&stored.bytes) {
            Ok(state) => Ok(Some((state, stored.version))),
            Err(e) => Err(BackendError::new(
                BackendErrorKind::Protocol,
                format!("rule {}: {e}", check.rule_id()),
            )),
        }
    }

    /// Answers one check at `now_ms`: read, step, compare-and-set, again
    /// while another writer wins.
    pub async fn answer(&self, check: &Check, now_ms: u64) -> Result<Decision, BackendError> {
        if !check.algorithm.answers(check.mode) {
            return Err(unsupported_mode(check));
        }
        for _ in 0..REMOTE_TRIES {
            let found = self.read(check).await?;
            let live = found.as_ref().filter(|(s, _)| s.expires_at_ms() > now_ms);
            let (d, next) = State::step(check, now_ms, live.map(|(s, _)| s));
            // Nothing to write (a probe, or a refusal that left the state as
            // it was): the answer holds as of the read.
            let Some(next) = next.filter(|n| live.is_none_or(|(s, _)| s != n)) else {
                return Ok(d);
            };
            let version = found.map(|(_, v)| v);
            let (bytes, until) = (next.encode(), next.expires_at_ms());
            if self
                .store
                .write_if(&check.state_key, version, bytes, until)
                .await?
            {
                return Ok(d);
            }
        }
        Err(BackendError::new(
            BackendErrorKind::Timeout,
            format!(
                "rule {}: the state changed under {REMOTE_TRIES} tries",
                check.rule_id()
            ),
        ))
    }
}

impl<S: RemoteStore> Backend for RemoteBackend<S> {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<Result<Decision, BackendError>>> {
        Box::pin(async move {
            let mut out = Vec::with_capacity(batch.checks.len());
            for c in &batch.checks {
                out.push(self.answer(c, batch.now_ms).await);
            }
            out
        })
    }

    fn peek<'a>(
        &'a self,
        check: &'a Check,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Decision, BackendError>> {
        Box::pin(async move {
            let found = self.read(check).await?;
            let live = found.as_ref().filter(|(s, _)| s.expires_at_ms() > now_ms);
            Ok(peek(check, now_ms, live.map(|(s, _)| s)))
        })
    }

    fn reset<'a>(&'a self, check: &'a Check) -> BoxFuture<'a, Result<(), BackendError>> {
        self.store.remove(&check.state_key)
    }

    fn hash_key(&self) -> Option<HashKey> {
        Some(self.hash_key)
    }

    fn hash_key_changes(&self) -> bool {
        false
    }
}
