//! Start-up in the background: the fleet's hash key and, in cluster mode,
//! the slot map, read with a backoff until Valkey answers; and how long
//! `build` waits for them.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::cluster::ClusterState;
use crate::hashkey::FleetKey;
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

/// Reads the hash key from `node` until it is known (single node). The
/// task ends once it is, or when the backend is dropped.
pub(crate) fn single(
    node: Node,
    key: Arc<FleetKey>,
    name: String,
    within: Duration,
) -> watch::Receiver<Progress> {
    let (tx, rx) = watch::channel(Progress::default());
    tokio::spawn(async move {
        let mut failures = 0;
        loop {
            let r = key.read(&node, &name, within).await;
            let done = r.is_ok();
            report(&tx, r, &mut failures);
            // Known, or the backend (the only other owner of `key`) is gone.
            if done || Arc::strong_count(&key) == 1 {
                return;
            }
            tokio::time::sleep(backoff(failures)).await;
        }
    });
    rx
}

/// Reads the slot map (and the hash key) with a backoff until a seed
/// answers, then every few seconds and soon after a redirect. The task
/// ends when the backend is dropped.
pub(crate) fn cluster(
    state: &Arc<ClusterState>,
    key: Arc<FleetKey>,
    name: String,
) -> watch::Receiver<Progress> {
    let (tx, rx) = watch::channel(Progress::default());
    let weak = Arc::downgrade(state);
    let stale = state.stale.clone();
    tokio::spawn(async move {
        let mut failures = 0;
        loop {
            let Some(state) = weak.upgrade() else { return };
            let r = match state.refresh().await {
                Ok(()) => state.read_key(&key, &name).await,
                Err(e) => Err(e),
            };
            drop(state);
            report(&tx, r, &mut failures);
            if failures > 0 {
                tokio::time::sleep(backoff(failures)).await;
                continue;
            }
            tokio::select! {
                _ = tokio::time::sleep(REFRESH_EVERY) => {}
                _ = stale.notified() => {}
            }
            // At most ten reads a second, whatever the redirects.
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    rx
}

fn report(tx: &watch::Sender<Progress>, r: Result<(), String>, failures: &mut u32) {
    match &r {
        Ok(()) => *failures = 0,
        Err(e) => {
            *failures = failures.saturating_add(1);
            if *failures == 1 {
                tracing::warn!(error = %e, "valkey start-up: retrying in the background");
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
