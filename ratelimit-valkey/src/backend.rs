//! [`ValkeyBackend`]: the core's [`Backend`] seam over Valkey.

use std::sync::Arc;
use std::time::Duration;

use ratelimit_core::algorithm::Decision;
use ratelimit_core::backend::{
    Backend, BackendError, BackendErrorKind, Batch, BoxFuture, Check, CheckMode,
};
use redis::Value;

use crate::call;
use crate::cluster::{self, is_stale, ClusterState};
use crate::hashkey::FleetKey;
use crate::metrics::error;
use crate::node::Node;
use crate::reply;
use crate::route::{route, Group};
use crate::scripts::{self, Invocation, TimeSource};

/// The Valkey backend: every check of a batch in one script call, one
/// round trip (in cluster mode one call per hash slot, one round trip per
/// node), never retried.
///
/// Cheap to clone: clones share connections and breakers. See the
/// [crate docs](crate) for an example.
#[derive(Debug, Clone)]
pub struct ValkeyBackend {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) prefix: String,
    pub(crate) deadline: Duration,
    pub(crate) time: TimeSource,
    pub(crate) topology: Topology,
    /// The fleet's hash key (see [`crate::hashkey`]).
    pub(crate) key: Arc<FleetKey>,
}

#[derive(Debug)]
pub(crate) enum Topology {
    Single(Box<Node>),
    Cluster(Arc<ClusterState>),
}

/// Turns one raw reply into the check's answer, and whether the slot map
/// looks out of date.
fn answer(value: &Value) -> (Result<Decision, BackendError>, bool) {
    if let Value::ServerError(e) = value {
        let redirect = is_stale(e.code());
        let err = BackendError::new(BackendErrorKind::Protocol, format!("server error: {e:?}"));
        return (Err(err), redirect);
    }
    (reply::decode(value), false)
}

impl ValkeyBackend {
    /// The key prefix.
    pub fn key_prefix(&self) -> &str {
        &self.inner.prefix
    }

    /// The Valkey key of `check` (`<prefix>{<subject>}<namespace>`, see [`crate::key_of`]).
    pub fn key_of(&self, check: &ratelimit_core::backend::Check) -> String {
        scripts::key_of(&self.inner.prefix, check)
    }

    /// Why no check can be sent yet: the fleet's hash key is not known.
    fn key_unknown(&self) -> Option<BackendError> {
        if self.inner.key.get().is_some() {
            return None;
        }
        let status = match &self.inner.topology {
            Topology::Single(node) => node.status(),
            Topology::Cluster(_) => "valkey cluster".into(),
        };
        Some(BackendError::new(
            BackendErrorKind::Connection,
            format!("{status}: the fleet's hash key is not read yet"),
        ))
    }

    async fn run(&self, batch: &Batch) -> Vec<Result<Decision, BackendError>> {
        let inner = &self.inner;
        let n = batch.checks.len();
        if let Some(e) = self.key_unknown() {
            error(e.kind(), n);
            return vec![Err(e); n];
        }
        let mut results: Vec<Option<Result<Decision, BackendError>>> = vec![None; n];
        let mut invs: Vec<(usize, Invocation)> = Vec::with_capacity(n);
        for (i, c) in batch.checks.iter().enumerate() {
            match scripts::invocation(&inner.prefix, c, batch.now_ms, inner.time) {
                Ok(inv) => invs.push((i, inv)),
                Err(e) => {
                    error(e.kind(), 1);
                    results[i] = Some(Err(e));
                }
            }
        }
        let groups: Vec<Group> = match &inner.topology {
            // A standalone server enforces no slots: the whole batch in one
            // script call.
            Topology::Single(node) => match call::one_call(invs) {
                None => Vec::new(),
                Some(c) => {
                    let out = node.call(std::slice::from_ref(&c), inner.deadline, false);
                    let first = |v: Vec<Value>| v.into_iter().next().unwrap_or(Value::Nil);
                    let replies = out.await.map(|v| c.replies(first(v)));
                    vec![(c.idx, replies)]
                }
            },
            Topology::Cluster(state) => route(state, invs, inner.deadline).await,
        };
        let mut redirected = false;
        let mut failed = false;
        for (idx, outcome) in groups {
            match outcome {
                Ok(values) => {
                    for (&i, v) in idx.iter().zip(&values) {
                        let (a, redirect) = answer(v);
                        redirected |= redirect;
                        if let Err(e) = &a {
                            error(e.kind(), 1);
                        }
                        results[i] = Some(a);
                    }
                }
                Err(e) => {
                    failed |= e.kind() != BackendErrorKind::Protocol;
                    for &i in &idx {
                        results[i] = Some(Err(e.clone()));
                    }
                }
            }
        }
        if let Topology::Cluster(state) = &inner.topology {
            if redirected {
                state.stale.notify_one();
            } else if failed {
                state.suspect();
            }
        }
        results
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|| Err(BackendError::new(BackendErrorKind::Protocol, "no reply")))
            })
            .collect()
    }
}

impl ValkeyBackend {
    /// Reads a subject's state without counting: the check's script runs
    /// as a probe (distinct: a count) with a cost of 0 and no penalty,
    /// which writes nothing.
    async fn peek_one(&self, check: &Check, now_ms: u64) -> Result<Decision, BackendError> {
        let mode = if check.algorithm.answers(CheckMode::Probe) {
            CheckMode::Probe
        } else {
            CheckMode::Count
        };
        let mut probe = check.clone().with_mode(mode);
        probe.quota = probe.quota.with_cost(0);
        probe.penalty_ms = None;
        probe.bit = None;
        let batch = Batch::new(now_ms, vec![probe]);
        self.run(&batch)
            .await
            .pop()
            .unwrap_or_else(|| Err(BackendError::new(BackendErrorKind::Protocol, "no reply")))
    }

    /// Deletes a subject's key (its count, or its penalty).
    async fn reset_one(&self, check: &Check) -> Result<(), BackendError> {
        let key = self.key_of(check);
        let node = match &self.inner.topology {
            Topology::Single(node) => (**node).clone(),
            Topology::Cluster(state) => {
                let map = state.map();
                let addr = map.node_of(cluster::slot(key.as_bytes())).ok_or_else(|| {
                    BackendError::new(BackendErrorKind::Connection, "slot not served")
                })?;
                state.node(addr)?
            }
        };
        node.command(redis::cmd("DEL").arg(&key), self.inner.deadline)
            .await
            .map(|_| ())
            .map_err(|e| BackendError::new(BackendErrorKind::Connection, e))
    }
}

// `check_now` keeps its default (`None`): every answer needs a round trip,
// so the limiter awaits `check`.
impl Backend for ValkeyBackend {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<Result<Decision, BackendError>>> {
        Box::pin(self.run(batch))
    }

    fn peek<'a>(
        &'a self,
        check: &'a Check,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Decision, BackendError>> {
        Box::pin(self.peek_one(check, now_ms))
    }

    fn reset<'a>(&'a self, check: &'a Check) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(self.reset_one(check))
    }

    fn hash_key(&self) -> Option<ratelimit_core::HashKey> {
        self.inner.key.get()
    }

    fn hash_key_changes(&self) -> bool {
        self.inner.key.changes()
    }
}
