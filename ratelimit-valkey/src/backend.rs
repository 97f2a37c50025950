//! [`ValkeyBackend`]: the core's [`Backend`] seam over Valkey.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use ratelimit_core::backend::{
    Backend, BackendError, BackendErrorKind, Batch, BoxFuture, Check, CheckResult,
};
use redis::Value;
use tokio::task::JoinSet;

use crate::builder::NodeFactory;
use crate::cluster::{self, is_redirect, Addr, SlotMap};
use crate::hashkey::FleetKey;
use crate::metrics::error;
use crate::node::Node;
use crate::reply;
use crate::scripts::{self, Invocation, TimeSource};

/// The Valkey backend: every check of a batch in one pipelined round trip
/// (one per node in cluster mode), never retried.
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

/// The cluster's slot map and its nodes' connections.
#[derive(Debug)]
pub(crate) struct ClusterState {
    pub(crate) map: RwLock<Arc<SlotMap>>,
    pub(crate) nodes: Mutex<HashMap<Addr, Node>>,
    pub(crate) factory: NodeFactory,
    pub(crate) stale: Arc<tokio::sync::Notify>,
}

impl ClusterState {
    /// The node at `addr`, connecting in the background from its first use.
    pub(crate) fn node(&self, addr: &str) -> Result<Node, BackendError> {
        let mut nodes = self.nodes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = nodes.get(addr) {
            return Ok(n.clone());
        }
        let node = self.factory.node(addr).map_err(|e| {
            BackendError::new(
                BackendErrorKind::Connection,
                format!("valkey at {addr}: {e}"),
            )
        })?;
        nodes.insert(addr.to_string(), node.clone());
        Ok(node)
    }

    /// The nodes known now.
    pub(crate) fn nodes(&self) -> Vec<Node> {
        let nodes = self.nodes.lock().unwrap_or_else(|e| e.into_inner());
        nodes.values().cloned().collect()
    }

    pub(crate) fn map(&self) -> Arc<SlotMap> {
        self.map.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Reads `CLUSTER SLOTS` from the first node that answers.
    pub(crate) async fn refresh(&self) -> Result<(), String> {
        let mut addrs: Vec<Addr> = self.map().nodes.clone();
        addrs.extend(self.factory.seeds.iter().cloned());
        let mut last = String::from("no node known");
        for addr in addrs {
            let node = match self.node(&addr) {
                Ok(n) => n,
                Err(e) => {
                    last = e.to_string();
                    continue;
                }
            };
            let cmd = redis::cmd("CLUSTER").arg("SLOTS").to_owned();
            match node.command(&cmd, self.factory.connect_timeout).await {
                Ok(v) => {
                    let map = SlotMap::parse(&v).map_err(|e| node.says(e))?;
                    self.adopt(map);
                    return Ok(());
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// Uses `map`: its primaries start connecting, nodes that are neither
    /// primaries nor seeds are dropped (their connections close).
    fn adopt(&self, map: SlotMap) {
        for addr in &map.nodes {
            if let Err(e) = self.node(addr) {
                tracing::warn!(error = %e, "cannot use a cluster node");
            }
        }
        {
            let mut nodes = self.nodes.lock().unwrap_or_else(|e| e.into_inner());
            nodes.retain(|a, _| map.nodes.contains(a) || self.factory.seeds.contains(a));
        }
        *self.map.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(map);
    }

    /// Reads the fleet's hash key from the node serving its slot.
    pub(crate) async fn read_key(&self, key: &FleetKey, name: &str) -> Result<(), String> {
        if key.get().is_some() {
            return Ok(());
        }
        let map = self.map();
        let addr = map
            .node_of(cluster::slot(name.as_bytes()))
            .ok_or_else(|| format!("valkey cluster: no node serves {name}"))?;
        let node = self.node(addr).map_err(|e| e.to_string())?;
        key.read(&node, name, self.factory.connect_timeout).await
    }
}

/// The checks (by position) sent to one node, and its replies.
type Group = (Vec<usize>, Result<Vec<Value>, BackendError>);

/// Turns one raw reply into the check's answer.
fn answer(value: &Value) -> (CheckResult, bool) {
    if let Value::ServerError(e) = value {
        let redirect = is_redirect(e.code());
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

    async fn run(&self, batch: &Batch) -> Vec<CheckResult> {
        let inner = &self.inner;
        let n = batch.checks.len();
        if let Some(e) = self.key_unknown() {
            error(e.kind(), n);
            return vec![Err(e); n];
        }
        let mut results: Vec<Option<CheckResult>> = vec![None; n];
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
            Topology::Single(node) => {
                let (idx, invs): (Vec<usize>, Vec<Invocation>) = invs.into_iter().unzip();
                if idx.is_empty() {
                    Vec::new()
                } else {
                    vec![(idx, node.call(&invs, inner.deadline).await)]
                }
            }
            Topology::Cluster(state) => self.run_cluster(state, invs).await,
        };
        let mut redirected = false;
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
                    for &i in &idx {
                        results[i] = Some(Err(e.clone()));
                    }
                }
            }
        }
        if let (true, Topology::Cluster(state)) = (redirected, &inner.topology) {
            state.stale.notify_one();
        }
        results
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|| Err(BackendError::new(BackendErrorKind::Protocol, "no reply")))
            })
            .collect()
    }

    /// Groups by node and calls every node in parallel.
    async fn run_cluster(
        &self,
        state: &ClusterState,
        invs: Vec<(usize, Invocation)>,
    ) -> Vec<Group> {
        let map = state.map();
        let mut by_node: HashMap<&Addr, (Vec<usize>, Vec<Invocation>)> = HashMap::new();
        let mut out = Vec::new();
        for (i, inv) in invs {
            match map.node_of(cluster::slot(inv.key.as_bytes())) {
                Some(addr) => {
                    let g = by_node.entry(addr).or_default();
                    g.0.push(i);
                    g.1.push(inv);
                }
                None => {
                    let e = BackendError::new(
                        BackendErrorKind::Connection,
                        "valkey cluster: slot not served (or the slot map not read yet)",
                    );
                    error(e.kind(), 1);
                    state.stale.notify_one();
                    out.push((vec![i], Err(e)));
                }
            }
        }
        let deadline = self.inner.deadline;
        let mut tasks = JoinSet::new();
        for (addr, (idx, invs)) in by_node {
            match state.node(addr) {
                Ok(node) => {
                    tasks.spawn(async move {
                        let r = node.call(&invs, deadline).await;
                        (idx, r)
                    });
                }
                Err(e) => {
                    error(e.kind(), idx.len());
                    out.push((idx, Err(e)));
                }
            }
        }
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok(group) => out.push(group),
                Err(e) => tracing::error!(error = %e, "valkey node task failed"),
            }
        }
        out
    }
}

impl ValkeyBackend {
    /// Reads a subject's state without counting: the check's script runs
    /// with a cost of 0 and no penalty, which leaves the state as it was.
    async fn peek_one(&self, check: &Check, now_ms: u64) -> CheckResult {
        let mut probe = check.clone();
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
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<CheckResult>> {
        Box::pin(self.run(batch))
    }

    fn peek<'a>(&'a self, check: &'a Check, now_ms: u64) -> BoxFuture<'a, CheckResult> {
        Box::pin(self.peek_one(check, now_ms))
    }

    fn reset<'a>(&'a self, check: &'a Check) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(self.reset_one(check))
    }

    fn hash_key(&self) -> Option<ratelimit_core::HashKey> {
        self.inner.key.get()
    }
}
