//! A batch in cluster mode: its checks grouped by the node serving their
//! slot, one round trip per node, all in parallel, and one more hop for the
//! checks a node redirected with `MOVED` or `ASK` (see [`crate::cluster`]:
//! those did not run, so they were not counted).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ratelimit_core::backend::{BackendError, BackendErrorKind};
use redis::Value;
use tokio::task::JoinSet;

use crate::backend::ClusterState;
use crate::cluster::{self, redirect, Addr};
use crate::metrics::{error, redirected};
use crate::scripts::Invocation;

/// The checks (by position) sent to one node, and its replies.
pub(crate) type Group = (Vec<usize>, Result<Vec<Value>, BackendError>);

/// Checks bound for one node: positions and invocations.
type Bound = (Vec<usize>, Vec<Invocation>);

/// Sends `invs` to the nodes serving their slots within `deadline`, and
/// the redirected ones once more to the node named, within what is left.
pub(crate) async fn route(
    state: &ClusterState,
    invs: Vec<(usize, Invocation)>,
    deadline: Duration,
) -> Vec<Group> {
    let start = Instant::now();
    let map = state.map();
    let mut by_node: HashMap<Addr, Bound> = HashMap::new();
    let mut out = Vec::new();
    for (i, inv) in invs {
        match map.node_of(cluster::slot(inv.key.as_bytes())) {
            Some(addr) => {
                let g = by_node.entry(addr.clone()).or_default();
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
    let mut hops: HashMap<(Addr, bool), Bound> = HashMap::new();
    for (addr, (idx, invs), outcome) in send_all(state, by_node, deadline, false, &mut out).await {
        match outcome {
            Err(e) => out.push((idx, Err(e))),
            Ok(values) => {
                let mut kept: Bound = Default::default();
                let mut kept_values = Vec::new();
                for ((i, inv), v) in idx.into_iter().zip(invs).zip(values) {
                    match redirect(&v, &addr) {
                        Some(r) => {
                            redirected(r.ask);
                            if !r.ask {
                                state.stale.notify_one();
                            }
                            let hop = hops.entry((r.addr, r.ask)).or_default();
                            hop.0.push(i);
                            hop.1.push(inv);
                        }
                        None => {
                            kept.0.push(i);
                            kept_values.push(v);
                        }
                    }
                }
                if !kept.0.is_empty() {
                    out.push((kept.0, Ok(kept_values)));
                }
            }
        }
    }
    let left = deadline.saturating_sub(start.elapsed());
    let mut by_ask: [HashMap<Addr, Bound>; 2] = Default::default();
    for ((addr, ask), bound) in hops {
        by_ask[usize::from(ask)].insert(addr, bound);
    }
    for (ask, bound) in by_ask.into_iter().enumerate() {
        if bound.is_empty() {
            continue;
        }
        if left.is_zero() {
            for (idx, _) in bound.into_values() {
                let e = BackendError::new(
                    BackendErrorKind::Timeout,
                    "valkey cluster: redirected, no time left to follow",
                );
                error(e.kind(), idx.len());
                out.push((idx, Err(e)));
            }
            continue;
        }
        for (_, (idx, _), outcome) in send_all(state, bound, left, ask == 1, &mut out).await {
            out.push((idx, outcome));
        }
    }
    out
}

/// One round trip to each node of `by_node`, in parallel. Nodes that
/// cannot be had go straight to `out`.
async fn send_all(
    state: &ClusterState,
    by_node: HashMap<Addr, Bound>,
    deadline: Duration,
    asking: bool,
    out: &mut Vec<Group>,
) -> Vec<(Addr, Bound, Result<Vec<Value>, BackendError>)> {
    let mut tasks = JoinSet::new();
    for (addr, (idx, invs)) in by_node {
        match state.node(&addr) {
            Ok(node) => {
                tasks.spawn(async move {
                    let r = node.call(&invs, deadline, asking).await;
                    (addr, (idx, invs), r)
                });
            }
            Err(e) => {
                error(e.kind(), idx.len());
                out.push((idx, Err(e)));
            }
        }
    }
    let mut done = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(r) => done.push(r),
            Err(e) => tracing::error!(error = %e, "valkey node task failed"),
        }
    }
    done
}
