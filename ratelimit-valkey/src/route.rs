//! A batch in cluster mode: its checks grouped by hash slot into script
//! calls (see [`crate::call`]) and the calls by the node serving their
//! slot, one round trip per node, all in parallel, and one more hop for the
//! calls a node redirected with `MOVED` or `ASK` (see [`crate::cluster`]:
//! those did not run, so they were not counted). A redirect takes the
//! whole call: its keys share one slot.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ratelimit_core::backend::{BackendError, BackendErrorKind};
use redis::Value;
use tokio::task::JoinSet;

use crate::call::{by_slot, Call};
use crate::cluster::ClusterState;
use crate::cluster::{self, redirect, Addr};
use crate::metrics::{error, redirected};
use crate::scripts::Invocation;

/// The checks (by position) sent to one node, and their replies.
pub(crate) type Group = (Vec<usize>, Result<Vec<Value>, BackendError>);

/// Every check position of `calls`.
fn positions(calls: &[Call]) -> Vec<usize> {
    calls.iter().flat_map(|c| c.idx.iter().copied()).collect()
}

/// Calls by node, and the calls redirected by (node, whether an ASK).
type ByNode = HashMap<Addr, Vec<Call>>;
type Hops = HashMap<(Addr, bool), Vec<Call>>;

/// Sends `invs` to the nodes serving their slots within `deadline`, and
/// the redirected calls once more to the node named, within what is left.
pub(crate) async fn route(
    state: &ClusterState,
    invs: Vec<(usize, Invocation)>,
    deadline: Duration,
) -> Vec<Group> {
    let start = Instant::now();
    let mut out = Vec::new();
    let by_node = by_node(state, invs, &mut out);
    let mut hops = Hops::new();
    for (addr, calls, outcome) in send_all(state, by_node, deadline, false, &mut out).await {
        match outcome {
            Err(e) => out.push((positions(&calls), Err(e))),
            Ok(values) => answered(state, &addr, calls, values, &mut hops, &mut out),
        }
    }
    let left = deadline.saturating_sub(start.elapsed());
    follow(state, hops, left, &mut out).await;
    out
}

/// Step 1 of [`route`]: the calls (one per slot) by the node serving their
/// slot; those of a slot no node serves fail into `out` (and ask for the
/// slot map again).
fn by_node(state: &ClusterState, invs: Vec<(usize, Invocation)>, out: &mut Vec<Group>) -> ByNode {
    let map = state.map();
    let mut by_node = ByNode::new();
    for call in by_slot(invs) {
        let slot = call.invs.first().map(|i| cluster::slot(i.key.as_bytes()));
        match slot.and_then(|s| map.node_of(s)) {
            Some(addr) => by_node.entry(addr.clone()).or_default().push(call),
            None => {
                let e = BackendError::new(
                    BackendErrorKind::Connection,
                    "valkey cluster: slot not served (or the slot map not read yet)",
                );
                error(e.kind(), call.idx.len());
                state.stale.notify_one();
                out.push((call.idx, Err(e)));
            }
        }
    }
    by_node
}

/// Step 2 of [`route`]: the replies of `addr` to `calls`, into `out`, or
/// into `hops` when a reply redirects (a MOVED also asks for the slot map
/// again).
fn answered(
    state: &ClusterState,
    addr: &str,
    calls: Vec<Call>,
    values: Vec<Value>,
    hops: &mut Hops,
    out: &mut Vec<Group>,
) {
    for (call, v) in calls.into_iter().zip(values) {
        match redirect(&v, addr) {
            Some(r) => {
                redirected(r.ask);
                if !r.ask {
                    state.stale.notify_one();
                }
                hops.entry((r.addr, r.ask)).or_default().push(call);
            }
            None => {
                let replies = call.replies(v);
                out.push((call.idx, Ok(replies)));
            }
        }
    }
}

/// Step 3 of [`route`]: the redirected calls, once, to the node named
/// (MOVED first, then ASK), within `left`; none when no time is left.
async fn follow(state: &ClusterState, hops: Hops, left: Duration, out: &mut Vec<Group>) {
    let mut by_ask: [ByNode; 2] = Default::default();
    for ((addr, ask), calls) in hops {
        by_ask[usize::from(ask)].insert(addr, calls);
    }
    for (ask, bound) in by_ask.into_iter().enumerate() {
        if bound.is_empty() {
            continue;
        }
        if left.is_zero() {
            for calls in bound.into_values() {
                let e = BackendError::new(
                    BackendErrorKind::Timeout,
                    "valkey cluster: redirected, no time left to follow",
                );
                let idx = positions(&calls);
                error(e.kind(), idx.len());
                out.push((idx, Err(e)));
            }
            continue;
        }
        for (_, calls, outcome) in send_all(state, bound, left, ask == 1, out).await {
            match outcome {
                Err(e) => out.push((positions(&calls), Err(e))),
                Ok(values) => {
                    for (call, v) in calls.into_iter().zip(values) {
                        let replies = call.replies(v);
                        out.push((call.idx, Ok(replies)));
                    }
                }
            }
        }
    }
}

/// One round trip to each node of `by_node`, in parallel. Nodes that
/// cannot be had go straight to `out`.
async fn send_all(
    state: &ClusterState,
    by_node: HashMap<Addr, Vec<Call>>,
    deadline: Duration,
    asking: bool,
    out: &mut Vec<Group>,
) -> Vec<(Addr, Vec<Call>, Result<Vec<Value>, BackendError>)> {
    let mut tasks = JoinSet::new();
    for (addr, calls) in by_node {
        match state.node(&addr) {
            Ok(node) => {
                tasks.spawn(async move {
                    let r = node.call(&calls, deadline, asking).await;
                    (addr, calls, r)
                });
            }
            Err(e) => {
                let idx = positions(&calls);
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
