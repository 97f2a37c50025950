//! Start-up in the background: the fleet's hash key and, in cluster mode,
//! the slot map, read with a backoff until Valkey answers; and how long
//! `build` waits for them.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{watch, Notify};

use crate::cluster::ClusterState;
use crate::hashkey::{FleetKey, CHECK_EVERY};
use crate::node::Node;
use crate::pool::backoff;
use crate::Error;

/// How often the cluster's slot map is read again.
const REFRESH_EVERY: Duration = Duration::from_secs(5);

/// Rounds of the start-up task so far, and the last one's error.
#[derive(Debug, Default, Clone)]
pub(crate) struct Progress {
    rounds: u64,
    error: Option<String>,
}

/// Checks the hash key on `node` (single node; see [`crate::hashkey`]):
/// at start until it is read, with a backoff, then every [`CHECK_EVERY`]
/// and at each restore of a connection (`restored`). The task ends when
/// the backend is dropped.
pub(crate) fn single(
    node: Node,
    key: Arc<FleetKey>,
    name: String,
    within: Duration,
    restored: Arc<Notify>,
) -> watch::Receiver<Progress> {
    let (tx, rx) = watch::channel(Progress::default());
    let gone = key.gone.clone();
    let weak = Arc::downgrade(&key);
    drop(key);
    tokio::spawn(async move {
        let mut failures = 0;
        let mut known = false;
        loop {
            let Some(key) = weak.upgrade() else { return };
            let r = key.sync(&node, &name, within).await;
            drop(key);
            known |= r.is_ok();
            report(&tx, r, &mut failures, known);
            let wait = if known {
                CHECK_EVERY
            } else {
                backoff(failures)
            };
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = restored.notified() => {}
                _ = gone.notified() => return,
            }
        }
    });
    rx
}

/// Reads the slot map (and checks the hash key) with a backoff until a
/// seed answers, then every few seconds, soon after a redirect and at each
/// restore of a node's connection. The task ends when the backend is
/// dropped.
pub(crate) fn cluster(
    state: &Arc<ClusterState>,
    key: Arc<FleetKey>,
    name: String,
) -> watch::Receiver<Progress> {
    let (tx, rx) = watch::channel(Progress::default());
    let weak = Arc::downgrade(state);
    let stale = state.stale.clone();
    let restored = state.factory.restored.clone();
    tokio::spawn(async move {
        let mut failures = 0;
        let mut known = false;
        loop {
            let Some(state) = weak.upgrade() else { return };
            let r = match state.refresh().await {
                Ok(()) => state.sync_key(&key, &name).await,
                Err(e) => Err(e),
            };
            drop(state);
            known |= r.is_ok();
            report(&tx, r, &mut failures, known);
            if failures > 0 {
                tokio::select! {
                    _ = tokio::time::sleep(backoff(failures)) => {}
                    _ = restored.notified() => {}
                }
                continue;
            }
            tokio::select! {
                _ = tokio::time::sleep(REFRESH_EVERY) => {}
                _ = stale.notified() => {}
                _ = restored.notified() => {}
            }
            // At most ten reads a second, whatever the redirects.
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    rx
}

/// Records a round; its first failure before the first success (start-up)
/// is logged at `WARN` (later ones at `DEBUG`: a lost connection is logged
/// per node, see [`crate::link`]).
fn report(tx: &watch::Sender<Progress>, r: Result<(), String>, failures: &mut u32, started: bool) {
    match &r {
        Ok(()) => *failures = 0,
        Err(e) => {
            *failures = failures.saturating_add(1);
            if *failures == 1 && !started {
                tracing::warn!(error = %e, "valkey start-up: retrying in the background");
            } else {
                tracing::debug!(error = %e, "valkey hash key or slot map check failed");
            }
        }
    }
    tx.send_modify(|p| {
        p.rounds += 1;
        p.error = r.err();
    });
}

/// Waits, at most `within`, for the first round and the node's first
/// connection attempts; with `require`, fails unless connected with the
/// key known.
pub(crate) async fn settle_single(
    node: &Node,
    mut progress: watch::Receiver<Progress>,
    key: &FleetKey,
    within: Duration,
    require: bool,
) -> Result<(), Error> {
    let _ = tokio::time::timeout(within, async {
        let _ = progress.wait_for(|p| p.rounds > 0).await;
        node.first_attempts(within).await;
    })
    .await;
    if !require || (key.get().is_some() && node.is_connected()) {
        return Ok(());
    }
    let reason = match progress.borrow().error.clone() {
        Some(e) => e,
        None if !node.is_connected() => node.status(),
        None => node.says("the hash key is not read yet"),
    };
    Err(Error::Connect {
        addr: node.addr.to_string(),
        reason: strip(&reason, &node.addr),
    })
}

/// As [`settle_single`] for a cluster: the slot map, the key, and each
/// primary's first connection attempts.
pub(crate) async fn settle_cluster(
    state: &ClusterState,
    mut progress: watch::Receiver<Progress>,
    key: &FleetKey,
    within: Duration,
    require: bool,
) -> Result<(), Error> {
    let _ = tokio::time::timeout(within, async {
        let _ = progress.wait_for(|p| p.rounds > 0).await;
        for node in state.nodes() {
            node.first_attempts(within).await;
        }
    })
    .await;
    if !require {
        return Ok(());
    }
    let map = state.map();
    if map.nodes.is_empty() {
        let e = progress.borrow().error.clone();
        return Err(Error::Topology(e.unwrap_or_else(|| "no answer yet".into())));
    }
    for addr in &map.nodes {
        let node = state.node(addr).map_err(|e| Error::Connect {
            addr: addr.clone(),
            reason: e.to_string(),
        })?;
        if !node.is_connected() {
            return Err(Error::Connect {
                addr: addr.clone(),
                reason: strip(&node.status(), addr),
            });
        }
    }
    match (key.get(), progress.borrow().error.clone()) {
        (Some(_), _) => Ok(()),
        (None, e) => Err(Error::Topology(
            e.unwrap_or_else(|| "the hash key is not read yet".into()),
        )),
    }
}

/// `reason` without a leading `valkey at <addr>: ` (the error adds it).
fn strip(reason: &str, addr: &str) -> String {
    let prefix = format!("valkey at {addr}: ");
    reason.strip_prefix(&prefix).unwrap_or(reason).to_owned()
}
